// RUN: tq-opt %s --tq-cpu-split-masked-stores --split-input-file | FileCheck %s

// Six lanes of eight: a store of 4 and one of 2 after it.
// CHECK-LABEL: func.func @six_of_eight(
// CHECK-SAME: %[[B:.*]]: memref<4x10xf32>, %[[I:.*]]: index, %[[J:.*]]: index, %[[V:.*]]: vector<8xf32>
// CHECK: %[[LO:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
// CHECK: vector.store %[[LO]], %[[B]][%[[I]], %[[J]]] : memref<4x10xf32>, vector<4xf32>
// CHECK: %[[HI:.*]] = vector.extract_strided_slice %[[V]] {offsets = [4], sizes = [2], strides = [1]} : vector<8xf32> to vector<2xf32>
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[J4:.*]] = arith.addi %[[J]], %[[C4]] : index
// CHECK: vector.store %[[HI]], %[[B]][%[[I]], %[[J4]]] : memref<4x10xf32>, vector<2xf32>
// CHECK-NOT: vector.store
// CHECK-NOT: vector.maskedstore
func.func @six_of_eight(%b: memref<4x10xf32>, %i: index, %j: index, %v: vector<8xf32>) {
  %m = vector.constant_mask [6] : vector<8xi1>
  vector.maskedstore %b[%i, %j], %m, %v : memref<4x10xf32>, vector<8xi1>, vector<8xf32>
  return
}

// -----

// Thirteen i8 lanes of sixteen: 8, 4 and 1 at offsets 0, 8 and 12.
// CHECK-LABEL: func.func @thirteen_bytes(
// CHECK-SAME: %[[B:.*]]: memref<?xi8>, %[[I:.*]]: index, %[[V:.*]]: vector<16xi8>
// CHECK: %[[P8:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [8], strides = [1]} : vector<16xi8> to vector<8xi8>
// CHECK: vector.store %[[P8]], %[[B]][%[[I]]] : memref<?xi8>, vector<8xi8>
// CHECK: %[[P4:.*]] = vector.extract_strided_slice %[[V]] {offsets = [8], sizes = [4], strides = [1]} : vector<16xi8> to vector<4xi8>
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[I8:.*]] = arith.addi %[[I]], %[[C8]] : index
// CHECK: vector.store %[[P4]], %[[B]][%[[I8]]] : memref<?xi8>, vector<4xi8>
// CHECK: %[[P1:.*]] = vector.extract_strided_slice %[[V]] {offsets = [12], sizes = [1], strides = [1]} : vector<16xi8> to vector<1xi8>
// CHECK: %[[C12:.*]] = arith.constant 12 : index
// CHECK: %[[I12:.*]] = arith.addi %[[I]], %[[C12]] : index
// CHECK: vector.store %[[P1]], %[[B]][%[[I12]]] : memref<?xi8>, vector<1xi8>
// CHECK-NOT: vector.store
// CHECK-NOT: vector.maskedstore
// CHECK: return
func.func @thirteen_bytes(%b: memref<?xi8>, %i: index, %v: vector<16xi8>) {
  %m = vector.constant_mask [13] : vector<16xi1>
  vector.maskedstore %b[%i], %m, %v : memref<?xi8>, vector<16xi1>, vector<16xi8>
  return
}

// -----

// No lane: nothing stored. Every lane: one store.
// CHECK-LABEL: func.func @none_and_all(
// CHECK-SAME: %[[B:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[V:.*]]: vector<8xf32>
// CHECK-NOT: vector.maskedstore
// CHECK-NOT: vector.store
// CHECK: vector.store %[[V]], %[[B]][%[[I]]] : memref<?xf32>, vector<8xf32>
// CHECK-NOT: vector.store
// CHECK-NOT: vector.maskedstore
// CHECK: return
func.func @none_and_all(%b: memref<?xf32>, %i: index, %v: vector<8xf32>) {
  %none = vector.constant_mask [0] : vector<8xi1>
  vector.maskedstore %b[%i], %none, %v : memref<?xf32>, vector<8xi1>, vector<8xf32>
  %all = vector.constant_mask [8] : vector<8xi1>
  vector.maskedstore %b[%i], %all, %v : memref<?xf32>, vector<8xi1>, vector<8xf32>
  return
}

// -----

// A run-time count: clamped to [0, 4], one case per count under 4, all
// lanes by default.
// CHECK-LABEL: func.func @run_time(
// CHECK-SAME: %[[B:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[N:.*]]: index, %[[V:.*]]: vector<4xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[LO:.*]] = arith.maxsi %[[N]], %[[C0]] : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[K:.*]] = arith.minsi %[[LO]], %[[C4]] : index
// CHECK: scf.index_switch %[[K]]
// CHECK-NEXT: case 0 {
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: case 1 {
// CHECK-NEXT: %[[A1:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [1], strides = [1]}
// CHECK-NEXT: vector.store %[[A1]], %[[B]][%[[I]]] : memref<?xf32>, vector<1xf32>
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: case 2 {
// CHECK-NEXT: %[[A2:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [2], strides = [1]}
// CHECK-NEXT: vector.store %[[A2]], %[[B]][%[[I]]] : memref<?xf32>, vector<2xf32>
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: case 3 {
// CHECK-NEXT: %[[A3:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [2], strides = [1]}
// CHECK-NEXT: vector.store %[[A3]], %[[B]][%[[I]]] : memref<?xf32>, vector<2xf32>
// CHECK-NEXT: %[[B3:.*]] = vector.extract_strided_slice %[[V]] {offsets = [2], sizes = [1], strides = [1]}
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[I2:.*]] = arith.addi %[[I]], %[[C2]] : index
// CHECK-NEXT: vector.store %[[B3]], %[[B]][%[[I2]]] : memref<?xf32>, vector<1xf32>
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK-NEXT: vector.store %[[V]], %[[B]][%[[I]]] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT: }
// CHECK-NOT: vector.maskedstore
func.func @run_time(%b: memref<?xf32>, %i: index, %n: index, %v: vector<4xf32>) {
  %m = vector.create_mask %n : vector<4xi1>
  vector.maskedstore %b[%i], %m, %v : memref<?xf32>, vector<4xi1>, vector<4xf32>
  return
}

// -----

// A create_mask of a constant count is that many lanes (clamped), as a
// constant_mask; a vector of 5 lanes takes pieces of 4 and 1.
// CHECK-LABEL: func.func @five_lanes(
// CHECK-SAME: %[[B:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[V:.*]]: vector<5xf32>
// CHECK-NOT: scf.index_switch
// CHECK: %[[P:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [4], strides = [1]} : vector<5xf32> to vector<4xf32>
// CHECK: vector.store %[[P]], %[[B]][%[[I]]] : memref<?xf32>, vector<4xf32>
// CHECK: %[[Q:.*]] = vector.extract_strided_slice %[[V]] {offsets = [4], sizes = [1], strides = [1]} : vector<5xf32> to vector<1xf32>
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[I4:.*]] = arith.addi %[[I]], %[[C4]] : index
// CHECK: vector.store %[[Q]], %[[B]][%[[I4]]] : memref<?xf32>, vector<1xf32>
// CHECK-NOT: vector.store
// CHECK-NOT: vector.maskedstore
// CHECK: return
func.func @five_lanes(%b: memref<?xf32>, %i: index, %v: vector<5xf32>) {
  %c9 = arith.constant 9 : index
  %m = vector.create_mask %c9 : vector<5xi1>
  vector.maskedstore %b[%i], %m, %v : memref<?xf32>, vector<5xi1>, vector<5xf32>
  return
}

// -----

// Masks that are not the first lanes, 2-D stores, an innermost dim that is
// not contiguous and a 0-D memref stay as they are.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-4: vector.maskedstore
// CHECK-NOT: vector.store
func.func @kept(%b: memref<?xf32>, %c: memref<4x8xf32>, %i: index, %m: vector<8xi1>,
                %v: vector<8xf32>, %w: vector<2x8xf32>,
                %s: memref<8xf32, strided<[2]>>, %z: memref<f32>, %u: vector<1xf32>) {
  vector.maskedstore %b[%i], %m, %v : memref<?xf32>, vector<8xi1>, vector<8xf32>
  %m2 = vector.constant_mask [1, 6] : vector<2x8xi1>
  vector.maskedstore %c[%i, %i], %m2, %w : memref<4x8xf32>, vector<2x8xi1>, vector<2x8xf32>
  %m6 = vector.constant_mask [6] : vector<8xi1>
  vector.maskedstore %s[%i], %m6, %v : memref<8xf32, strided<[2]>>, vector<8xi1>, vector<8xf32>
  %m1 = vector.constant_mask [1] : vector<1xi1>
  vector.maskedstore %z[], %m1, %u : memref<f32>, vector<1xi1>, vector<1xf32>
  return
}
