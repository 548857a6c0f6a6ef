// RUN: tq-opt %s -tq-cpu-outline-kernels -split-input-file | FileCheck %s
// Printing locations does not make equal nests distinct (the key printed
// them under -mlir-print-debuginfo, and every nest got its own kernel).
// RUN: tq-opt %s -tq-cpu-outline-kernels -split-input-file -mlir-print-debuginfo | FileCheck %s --check-prefix=LOCS
// LOCS-LABEL: func.func @main(
// LOCS: call @main_kernel(
// LOCS-NEXT: call @main_kernel(
// LOCS-NEXT: call @main_kernel_0(
// Each top-level op with regions of a public function moves into a private
// noinline function; equal nests share one; constants are cloned in;
// results are returned; private functions are left alone.

// Two nests that differ only in their buffers share @main_kernel; the
// third (a different constant) gets its own.
// CHECK-LABEL: func.func private @main_kernel(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.0{{0*}}e+00 : f32
// CHECK: scf.for %[[I:.*]] = %[[C0]]
// CHECK: memref.load %[[A]][%[[I]]]
// CHECK: arith.mulf {{.*}}, %[[TWO]]
// CHECK: memref.store {{.*}}, %[[B]][%[[I]]]
// CHECK: return
// CHECK-LABEL: func.func private @main_kernel_0(
// CHECK: arith.constant 3.0{{0*}}e+00 : f32
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>, %[[Z:.*]]: memref<8xf32>)
// CHECK-SAME: attributes {passthrough = ["noinline", "optnone"]}
// CHECK: call @main_kernel(%[[X]], %[[Y]])
// CHECK-NEXT: call @main_kernel(%[[Y]], %[[Z]])
// CHECK-NEXT: call @main_kernel_0(%[[Z]], %[[X]])
// CHECK-NEXT: return
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %z[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %z[%i] : memref<8xf32>
    %w = arith.mulf %v, %three : f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  return
}

// -----

// A nest with results, using a non-constant value from above (%n), gets
// it as an argument and returns its results.
// CHECK-LABEL: func.func private @sum_kernel(
// CHECK-SAME: %{{.*}}: index, %{{.*}}: memref<?xf32>) -> f32 attributes {passthrough = ["noinline"]}
// CHECK: %[[S:.*]] = scf.for
// CHECK: return %[[S]] : f32
// CHECK-LABEL: func.func @sum(
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[R:.*]] = call @sum_kernel(%[[N]], %{{.*}}) : (index, memref<?xf32>) -> f32
// CHECK: return %[[R]]
func.func @sum(%x: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  return %s : f32
}

// -----

// Private functions (helpers) keep their loops.
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: passthrough
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: scf.for
// CHECK-NOT: func.func private @helper_kernel
func.func private @helper(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c4 {
    memref.store %one, %x[%i] : memref<4xf32>
  }
  return
}

// -----

// Program-level control flow stays in the public function and its nests
// are outlined one by one: the branches of an scf.if, and a loop whose
// body holds four nests (a recurrent layer's time loop). A loop with
// fewer nests inside is one kernel.
// CHECK-LABEL: func.func private @flow_kernel(
// CHECK-SAME: %{{.*}}: memref<8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-NEXT: arith.constant
// CHECK: scf.for
// CHECK-LABEL: func.func private @flow_kernel_0(
// CHECK-SAME: %{{.*}}: memref<8xf32>) attributes
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @flow(
// CHECK-SAME: attributes {passthrough = ["noinline", "optnone"]}
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: call @flow_kernel(%{{.*}})
// CHECK-NEXT: } else {
// CHECK-NEXT: call @flow_kernel(%{{.*}})
// CHECK-NEXT: }
// CHECK: scf.for %[[T:.*]] =
// CHECK-COUNT-4: call @flow_kernel(%{{.*}})
// CHECK: }
// CHECK: call @flow_kernel_0(%{{.*}})
// CHECK-NEXT: return
func.func @flow(%x: memref<8xf32>, %y: memref<8xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.if %p {
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%i] : memref<8xf32>
    }
  } else {
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %y[%i] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %y[%i] : memref<8xf32>
    }
  }
  scf.for %t = %c0 to %c8 step %c1 {
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%i] : memref<8xf32>
    }
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %y[%i] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %y[%i] : memref<8xf32>
    }
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%i] : memref<8xf32>
    }
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %y[%i] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %y[%i] : memref<8xf32>
    }
  }
  scf.for %t = %c0 to %c8 step %c1 {
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %x[%t] : memref<8xf32>
      memref.store %v, %x[%i] : memref<8xf32>
    }
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i] : memref<8xf32>
      memref.store %v, %x[%t] : memref<8xf32>
    }
  }
  return
}

// -----

// A loop whose body holds ifs, not other nests, is one kernel however
// many ifs it holds (a convolution's row loop: the micro-kernel, then a guarded
// store per row of its tile): nothing of it stays in the unoptimized
// public function.
// CHECK-LABEL: func.func private @rows_kernel(
// CHECK: scf.for
// CHECK: vector.load
// CHECK: arith.addf %{{.*}} : vector<8xf32>
// CHECK-COUNT-4: scf.if
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @rows(
// CHECK-NOT: scf.for
// CHECK-NOT: scf.if
// CHECK: call @rows_kernel(%{{.*}}, %{{.*}})
// CHECK-NEXT: return
func.func @rows(%x: memref<8x8xf32>, %y: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %r = %c0 to %c8 step %c1 {
    %v = vector.load %x[%r, %c0] : memref<8x8xf32>, vector<8xf32>
    %w = arith.addf %v, %v : vector<8xf32>
    %p0 = arith.cmpi ult, %r, %c4 : index
    scf.if %p0 {
      vector.store %w, %y[%r, %c0] : memref<8x8xf32>, vector<8xf32>
    }
    %p1 = arith.cmpi ult, %r, %c3 : index
    scf.if %p1 {
      vector.store %v, %y[%r, %c0] : memref<8x8xf32>, vector<8xf32>
    }
    %p2 = arith.cmpi ult, %r, %c2 : index
    scf.if %p2 {
      vector.store %w, %x[%r, %c0] : memref<8x8xf32>, vector<8xf32>
    }
    %p3 = arith.cmpi ult, %r, %c1 : index
    scf.if %p3 {
      vector.store %v, %x[%r, %c0] : memref<8x8xf32>, vector<8xf32>
    }
  }
  return
}
