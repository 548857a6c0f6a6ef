// RUN: tq-opt %s -tq-cpu-inline-alloca-scopes | FileCheck %s
// The allocation scopes that convert-scf-to-openmp puts around loop bodies
// are inlined where they allocate nothing on the stack themselves, a call
// to a kernel included, or in a scope nested in them; a scope with a
// memref.alloca of its own stays.

func.func private @kernel(memref<16xf32>)

// CHECK-LABEL: func.func @share
// CHECK-NOT: memref.alloca_scope
// CHECK: scf.for
// CHECK-NEXT: %[[V:.*]] = memref.load
// CHECK-NEXT: func.call @kernel
// CHECK-NEXT: arith.addf %[[V]]
func.func @share(%a: memref<16xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.alloca_scope -> (f32) {
      %x = memref.load %a[%i] : memref<16xf32>
      func.call @kernel(%a) : (memref<16xf32>) -> ()
      memref.alloca_scope.return %x : f32
    }
    %s = arith.addf %v, %acc : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// CHECK-LABEL: func.func @stack
// CHECK: scf.for
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: memref.alloca()
// CHECK: memref.alloca_scope {
// CHECK-NEXT: memref.alloca()
func.func @stack(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.alloca_scope {
      %t = memref.alloca() : memref<16xf32>
      func.call @kernel(%t) : (memref<16xf32>) -> ()
      memref.alloca_scope {
        %u = memref.alloca() : memref<16xf32>
        func.call @kernel(%u) : (memref<16xf32>) -> ()
      }
    }
  }
  return
}

// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: memref.alloca()
// CHECK-NOT: memref.alloca_scope
// CHECK: return
func.func @nested(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.alloca_scope {
      memref.alloca_scope {
        %u = memref.alloca() : memref<16xf32>
        func.call @kernel(%u) : (memref<16xf32>) -> ()
      }
    }
  }
  return
}
