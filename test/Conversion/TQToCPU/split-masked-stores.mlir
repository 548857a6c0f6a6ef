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
// CHECK-NOT: vector.maskedstore
func.func @six_of_eight(%b: memref<4x10xf32>, %i: index, %j: index, %v: vector<8xf32>) {
  %m = vector.constant_mask [6] : vector<8xi1>
  vector.maskedstore %b[%i, %j], %m, %v : memref<4x10xf32>, vector<8xi1>, vector<8xf32>
  return
}

// -----

// Thirteen i8 lanes of sixteen: 8, 4 and 1 at offsets 0, 8 and 12.
// CHECK-LABEL: func.func @thirteen_bytes(
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [8], strides = [1]} : vector<16xi8> to vector<8xi8>
// CHECK: vector.store %{{.*}} : memref<?xi8>, vector<8xi8>
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [8], sizes = [4], strides = [1]} : vector<16xi8> to vector<4xi8>
// CHECK: vector.store %{{.*}} : memref<?xi8>, vector<4xi8>
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [12], sizes = [1], strides = [1]} : vector<16xi8> to vector<1xi8>
// CHECK: vector.store %{{.*}} : memref<?xi8>, vector<1xi8>
// CHECK-NOT: vector.store
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
// CHECK-NOT: vector.store
// CHECK: vector.store %[[V]], %[[B]][%[[I]]] : memref<?xf32>, vector<8xf32>
// CHECK-NOT: vector.store
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
// CHECK: case 1 {
// CHECK: vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [1], strides = [1]}
// CHECK: vector.store %{{.*}}, %[[B]][%[[I]]] : memref<?xf32>, vector<1xf32>
// CHECK: case 2 {
// CHECK: vector.store %{{.*}}, %[[B]][%[[I]]] : memref<?xf32>, vector<2xf32>
// CHECK: case 3 {
// CHECK: vector.store %{{.*}}, %[[B]][%[[I]]] : memref<?xf32>, vector<2xf32>
// CHECK: vector.store %{{.*}} : memref<?xf32>, vector<1xf32>
// CHECK: default {
// CHECK: vector.store %[[V]], %[[B]][%[[I]]] : memref<?xf32>, vector<4xf32>
// CHECK-NOT: vector.maskedstore
func.func @run_time(%b: memref<?xf32>, %i: index, %n: index, %v: vector<4xf32>) {
  %m = vector.create_mask %n : vector<4xi1>
  vector.maskedstore %b[%i], %m, %v : memref<?xf32>, vector<4xi1>, vector<4xf32>
  return
}

// -----

// Masks that are not the first lanes, and 2-D stores, stay as they are.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-2: vector.maskedstore
// CHECK-NOT: vector.store
func.func @kept(%b: memref<?xf32>, %c: memref<4x8xf32>, %i: index, %m: vector<8xi1>,
                %v: vector<8xf32>, %w: vector<2x8xf32>) {
  vector.maskedstore %b[%i], %m, %v : memref<?xf32>, vector<8xi1>, vector<8xf32>
  %m2 = vector.constant_mask [1, 6] : vector<2x8xi1>
  vector.maskedstore %c[%i, %i], %m2, %w : memref<4x8xf32>, vector<2x8xi1>, vector<2x8xf32>
  return
}
