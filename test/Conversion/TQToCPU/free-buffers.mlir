// RUN: tq-opt %s -split-input-file -tq-cpu-free-buffers | FileCheck %s
// A buffer used only in its block, directly or through views and casts, is
// freed right after its last use; a function with a buffer that leaves its
// block goes through upstream ownership-based deallocation instead.

// CHECK-LABEL: func.func @chain(
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.exp ins(%{{.*}} : memref<8xf32>) outs(%[[A]] :
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.exp ins(%[[A]] : memref<8xf32>) outs(%[[B]] :
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[V:.*]] = memref.expand_shape %[[B]]
// CHECK-NEXT: %[[C:.*]] = memref.cast %[[V]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load %[[C]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: %[[U:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.dealloc %[[U]]
// CHECK-NEXT: return
func.func @chain(%x: memref<8xf32>, %y: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<8xf32>
  linalg.exp ins(%x : memref<8xf32>) outs(%a : memref<8xf32>)
  %b = memref.alloc() : memref<8xf32>
  linalg.exp ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  %v = memref.expand_shape %b [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %c = memref.cast %v : memref<2x4xf32> to memref<?x4xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    %e = memref.load %c[%i, %c0] : memref<?x4xf32>
    memref.store %e, %y[%i, %c0] : memref<2x4xf32>
  }
  %unused = memref.alloc() : memref<4xf32>
  return
}

// -----

// A buffer made in a loop body is freed in that body.
// CHECK-LABEL: func.func @in_loop(
// CHECK: scf.for
// CHECK-NEXT: %[[T:.*]] = memref.alloc()
// CHECK-NEXT: linalg.exp ins(%{{.*}} : memref<8xf32>) outs(%[[T]] :
// CHECK-NEXT: linalg.exp ins(%[[T]] : memref<8xf32>) outs(%{{.*}} :
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: }
func.func @in_loop(%x: memref<8xf32>, %y: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    linalg.exp ins(%x : memref<8xf32>) outs(%t : memref<8xf32>)
    linalg.exp ins(%t : memref<8xf32>) outs(%y : memref<8xf32>)
  }
  return
}

// -----

// A buffer carried by a loop (an LSTM's state) is not local: the function
// is left to ownership-based deallocation, whose lowered form frees with
// bufferization.dealloc (lowered after this pass).
// CHECK-LABEL: func.func @carried(
// CHECK-NOT: memref.dealloc
// CHECK: bufferization.dealloc
// CHECK: return
func.func @carried(%a: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = memref.alloc() : memref<4xf32>
  memref.copy %a, %0 : memref<4xf32> to memref<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %0) -> memref<4xf32> {
    %1 = memref.alloc() : memref<4xf32>
    memref.copy %x, %1 : memref<4xf32> to memref<4xf32>
    scf.yield %1 : memref<4xf32>
  }
  memref.copy %r, %a : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A buffer chosen by arith.select may alias either operand: not local.
// CHECK-LABEL: func.func @selected(
// CHECK-NOT: memref.dealloc
// CHECK: bufferization.dealloc
func.func @selected(%a: memref<4xf32>, %c: i1) {
  %0 = memref.alloc() : memref<4xf32>
  %1 = memref.alloc() : memref<4xf32>
  %s = arith.select %c, %0, %1 : memref<4xf32>
  memref.copy %s, %a : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A function that returns a buffer keeps the ownership-based scheme too;
// a function without allocations is left alone.
// CHECK-LABEL: func.func @returned(
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK-LABEL: func.func @none(
// CHECK-NEXT: return
func.func @returned() -> memref<4xf32> {
  %0 = memref.alloc() : memref<4xf32>
  return %0 : memref<4xf32>
}
func.func @none(%a: memref<4xf32>) {
  return
}
