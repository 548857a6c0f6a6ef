// RUN: tq-opt %s -split-input-file -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(tq-cpu-plan-buffers))' | FileCheck %s
// RUN: tq-opt %s -split-input-file -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(tq-cpu-plan-buffers{max-buffer-bytes=128}))' | FileCheck %s --check-prefix=SMALL
// RUN: tq-opt %s -split-input-file -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(tq-cpu-plan-buffers{max-arena-bytes=300}))' | FileCheck %s --check-prefix=CAP
// RUN: not tq-opt %s -split-input-file -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(tq-cpu-plan-buffers{max-buffer-bytes=-1}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: tq-cpu-plan-buffers: max-buffer-bytes and max-arena-bytes must be at least 0, got -1 and 16777216
// The buffers of a function's block that are freed in that block become
// views of one allocation; two share bytes only when their lifetimes do
// not overlap.

// Largest first: %a (256 bytes) at 0; %b (128) is alive with %a, so at 256;
// %c (64) is alive with %b only, so at 0, where %a was. %d (12 bytes) is
// alive with %b and %c, and goes into the first gap, after %c, at the next
// multiple of 64.
// CHECK-LABEL: func.func @lifetimes(
// CHECK-NEXT: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<384xi8>
// CHECK-NEXT: %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[O0]]][] : memref<384xi8> to memref<64xf32>
// CHECK-NEXT: %[[O256:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA]][%[[O256]]][] : memref<384xi8> to memref<32xf32>
// CHECK-NEXT: "test.use"(%[[A]], %[[B]])
// CHECK-NEXT: %[[O0C:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = memref.view %[[ARENA]][%[[O0C]]][] : memref<384xi8> to memref<16xf32>
// CHECK-NEXT: %[[O64:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[D:.*]] = memref.view %[[ARENA]][%[[O64]]][] : memref<384xi8> to memref<3xf32>
// CHECK-NEXT: "test.use"(%[[B]], %[[C]], %[[D]])
// CHECK-NEXT: memref.dealloc %[[ARENA]] : memref<384xi8>
// CHECK-NEXT: return
// With max-buffer-bytes=128, %a keeps its allocation and the others share
// the arena: %b at 0, %c and %d after it.
// SMALL-LABEL: func.func @lifetimes(
// SMALL-NEXT: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<204xi8>
// SMALL: memref.alloc() : memref<64xf32>
// SMALL: memref.view %[[ARENA]]{{.*}} to memref<32xf32>
// SMALL: memref.dealloc %{{.*}} : memref<64xf32>
// SMALL: memref.view %[[ARENA]]{{.*}} to memref<16xf32>
// SMALL: memref.view %[[ARENA]]{{.*}} to memref<3xf32>
// SMALL-NOT: memref.dealloc %{{.*}} : memref<{{.*}}xf32>
// SMALL: memref.dealloc %[[ARENA]] : memref<204xi8>
// With max-arena-bytes=300, %b would end at 384 and keeps its allocation;
// %c and %d are placed as before.
// CAP-LABEL: func.func @lifetimes(
// CAP-NEXT: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
// CAP: memref.view %[[ARENA]]{{.*}} to memref<64xf32>
// CAP: %[[B:.*]] = memref.alloc() : memref<32xf32>
// CAP: %[[O0:.*]] = arith.constant 0 : index
// CAP-NEXT: memref.view %[[ARENA]][%[[O0]]][] : memref<256xi8> to memref<16xf32>
// CAP: %[[O64:.*]] = arith.constant 64 : index
// CAP-NEXT: memref.view %[[ARENA]][%[[O64]]][] : memref<256xi8> to memref<3xf32>
// CAP: memref.dealloc %[[B]] : memref<32xf32>
// CAP-NEXT: memref.dealloc %[[ARENA]]
func.func @lifetimes() {
  %a = memref.alloc() : memref<64xf32>
  %b = memref.alloc() : memref<32xf32>
  "test.use"(%a, %b) : (memref<64xf32>, memref<32xf32>) -> ()
  memref.dealloc %a : memref<64xf32>
  %c = memref.alloc() : memref<16xf32>
  %d = memref.alloc() : memref<3xf32>
  "test.use"(%b, %c, %d) : (memref<32xf32>, memref<16xf32>, memref<3xf32>) -> ()
  memref.dealloc %b : memref<32xf32>
  memref.dealloc %c : memref<16xf32>
  memref.dealloc %d : memref<3xf32>
  return
}

// -----

// A buffer freed by the op right before the next one is allocated: the two
// lifetimes do not overlap, and both views start at 0.
// CHECK-LABEL: func.func @chain(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<8xi8>
// CHECK-COUNT-2: memref.view %{{.*}}[%c0{{.*}}][]
// CHECK-NOT: memref.view
func.func @chain(%x: memref<8xi8>) {
  %a = memref.alloc() : memref<8xi8>
  "test.use"(%x, %a) : (memref<8xi8>, memref<8xi8>) -> ()
  memref.dealloc %a : memref<8xi8>
  %b = memref.alloc() : memref<2x2xi16>
  "test.use"(%b) : (memref<2x2xi16>) -> ()
  memref.dealloc %b : memref<2x2xi16>
  return
}

// -----

// Left alone: a dynamic shape, a layout, element types of less than a
// byte and of 3 bytes (stored in 4), an alignment of 128, a buffer never freed, one freed inside an `scf.if`, one
// allocated inside a loop. What remains is one buffer, which gains nothing from an
// arena.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: memref.view
// CHECK-COUNT-9: memref.alloc
// CHECK-NOT: memref.view
func.func @left_alone(%n: index, %cond: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dyn = memref.alloc(%n) : memref<?xf32>
  %strided = memref.alloc() : memref<4xf32, strided<[2]>>
  %bits = memref.alloc() : memref<16xi12>
  %odd = memref.alloc() : memref<16xi24>
  %aligned = memref.alloc() {alignment = 128 : i64} : memref<16xf32>
  %kept = memref.alloc() : memref<4xf32>
  %inner = memref.alloc() : memref<4xf32>
  %one = memref.alloc() : memref<4xf32>
  "test.use"(%dyn, %strided, %bits, %odd, %aligned, %kept, %inner, %one) : (memref<?xf32>, memref<4xf32, strided<[2]>>, memref<16xi12>, memref<16xi24>, memref<16xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    %loop = memref.alloc() : memref<4xf32>
    "test.use"(%loop) : (memref<4xf32>) -> ()
    memref.dealloc %loop : memref<4xf32>
  }
  scf.if %cond {
    memref.dealloc %inner : memref<4xf32>
  }
  memref.dealloc %dyn : memref<?xf32>
  memref.dealloc %strided : memref<4xf32, strided<[2]>>
  memref.dealloc %bits : memref<16xi12>
  memref.dealloc %odd : memref<16xi24>
  memref.dealloc %aligned : memref<16xf32>
  memref.dealloc %one : memref<4xf32>
  return
}

// -----

// Each share of tq-cpu-split-batch (an scf.forall on buffers) gets its own
// arena, allocated and freed inside the share: the threads do not share
// it.
// CHECK-LABEL: func.func @shares(
// CHECK: scf.forall
// CHECK-NEXT: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<384xi8>
// CHECK: memref.view %[[ARENA]]
// CHECK: memref.view %[[ARENA]]
// CHECK: "test.use"
// CHECK-NEXT: memref.dealloc %[[ARENA]] : memref<384xi8>
// CHECK-NEXT: }
func.func @shares() {
  scf.forall (%t) in (2) {
    %a = memref.alloc() : memref<64xf32>
    %b = memref.alloc() : memref<32xf32>
    "test.use"(%a, %b) : (memref<64xf32>, memref<32xf32>) -> ()
    memref.dealloc %a : memref<64xf32>
    memref.dealloc %b : memref<32xf32>
  }
  return
}
