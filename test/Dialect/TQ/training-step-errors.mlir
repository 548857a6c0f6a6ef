// Errors of tq-training-step: each names what it cannot do and where.
// RUN: not tq-opt %s -split-input-file -tq-training-step 2>&1 | FileCheck %s
// RUN: not tq-opt %s -split-input-file -tq-training-step=function=nosuch 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not tq-opt %s -split-input-file -tq-training-step=momentum=1.0 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not tq-opt %s -split-input-file -tq-training-step=weight-decay=-1 2>&1 | FileCheck %s --check-prefix=MOMENTUM

// NOFUNC: error: tq-training-step: no function 'nosuch' with a body to train
// MOMENTUM: error: tq-training-step: momentum must be in [0, 1) and weight-decay >= 0

// CHECK: :[[@LINE+1]]:1: error: tq-training-step: the forward function must have one block and one result, static [batch, classes] f32 logits
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
// CHECK: :[[@LINE+1]]:1: error: tq-training-step: the module already has a function 'predict'
func.func @predict() {
  return
}

// -----

// A reduction on the path from a parameter to the logits.
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  %w = arith.constant dense<1.0> : tensor<2x3x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %w : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: :[[@LINE+1]]:8: error: 'linalg.generic' op is not an element-wise linalg.generic with one result: no gradient rule
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p : tensor<2x3x4xf32>) outs(%f : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// An element-wise body op with no derivative rule.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = arith.constant dense<1.0> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    // CHECK: :[[@LINE+1]]:10: error: 'math.sin' op has no derivative rule (in the body of an element-wise op being differentiated)
    %s = math.sin %b : f32
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// An op with no gradient rule.
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x5xf32> {
  %w = arith.constant dense<1.0> : tensor<2x4x5xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  // CHECK: :[[@LINE+1]]:8: error: 'linalg.batch_matmul' op has no gradient rule (tq-training-step differentiates linalg.matmul, linalg.conv_2d_nchw_fchw, NCHW max and sum pooling, element-wise linalg.generic, reshapes, pads, slices and transposes)
  %y = linalg.batch_matmul ins(%x, %w : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%f : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s = tensor.extract_slice %y[0, 1, 0] [2, 1, 5] [1, 1, 1] : tensor<2x3x5xf32> to tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}
