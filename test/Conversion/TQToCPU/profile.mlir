// RUN: tq-opt %s -split-input-file -tq-cpu-profile-kinds -mlir-print-debuginfo | FileCheck %s --check-prefix=KINDS
// RUN: tq-opt %s -split-input-file -tq-cpu-outline-kernels=profile=true | FileCheck %s --check-prefix=CALLS

// tq-cpu-profile-kinds: each op of the function's body and of the control
// flow in it gets a fused location whose metadata is its op name and which
// keeps the original location; constants, terminators and the ops inside a
// kernel's own regions keep theirs.
// KINDS-LABEL: func.func @kinds(
// KINDS: arith.constant 0.{{0+}}e+00 : f32 loc(#[[CST:loc[0-9]*]])
// KINDS: linalg.fill {{.*}} loc(#[[FILL:loc[0-9]+]])
// KINDS: linalg.generic
// KINDS: arith.addf {{.*}} loc(#[[ADD:loc[0-9]+]])
// KINDS: } -> tensor<4xf32> loc(#[[GEN:loc[0-9]+]])
// KINDS-DAG: #[[CST]] = loc("zero")
// KINDS-DAG: #[[FILL]] = loc(fused<"linalg.fill">[#{{.*}}])
// KINDS-DAG: #[[GEN]] = loc(fused<"linalg.generic">[#{{.*}}])
// KINDS-DAG: #[[ADD]] = loc("add")
#map = affine_map<(d0) -> (d0)>
func.func @kinds(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32 loc("zero")
  %e = tensor.empty() : tensor<4xf32> loc("empty")
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc("layer1")
  %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32 loc("add")
    linalg.yield %s : f32
  } -> tensor<4xf32> loc("layer2")
  return %g : tensor<4xf32>
}

// -----

// tq-cpu-outline-kernels{profile}: every kernel call is bracketed by
// tq_profile_begin(id) and tq_profile_end(id); the module's tq.profile
// attribute names each id by its node and kind; equal kernels share one
// function but get one id per call site.
// CALLS: module attributes {tq.profile = {{\[\[}}"layer1", "linalg.fill"], ["layer2", "?"]]}
// CALLS: func.func private @tq_profile_begin(i64)
// CALLS: func.func private @tq_profile_end(i64)
// CALLS-LABEL: func.func @calls(
// CALLS: %[[ID0:.*]] = arith.constant 0 : i64
// CALLS-NEXT: call @tq_profile_begin(%[[ID0]])
// CALLS-NEXT: call @calls_kernel(
// CALLS-NEXT: call @tq_profile_end(%[[ID0]])
// CALLS: %[[ID1:.*]] = arith.constant 1 : i64
// CALLS-NEXT: call @tq_profile_begin(%[[ID1]])
// CALLS-NEXT: call @calls_kernel(
// CALLS-NEXT: call @tq_profile_end(%[[ID1]])
func.func @calls(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i] : memref<8xf32>
  } loc(fused<"linalg.fill">["layer1"])
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %x[%i] : memref<8xf32>
  } loc("layer2")
  return
}
