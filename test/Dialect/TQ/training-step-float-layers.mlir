// RUN: tq-opt %s -tq-training-step -mlir-print-debuginfo=false | FileCheck %s --check-prefix=STEP
// RUN: tq-opt %s -tq-training-step -tq-quantize="tile=4" -mlir-print-debuginfo=false | FileCheck %s
// RUN: tq-opt %s -tq-training-step -tq-quantize="tile=4 min-channels=0" -mlir-print-debuginfo=false | FileCheck %s --check-prefix=ALL
// RUN: tq-opt %s -tq-training-step -tq-quantize="tile=4 quantize=activations" -mlir-print-debuginfo=false | FileCheck %s --check-prefix=MIXED
// tq-training-step numbers the forward GEMMs (tq.layer) and marks each
// gradient GEMM with the one it differentiates (tq.gradient_of):
// tq-quantize leaves the gradients of a layer it leaves in float in float.
// Here the first convolution has one input channel (min-channels = 4):
// its weight gradient stays a float convolution, while the second's two
// gradients and the product's are quantized.
// The product reads Wᵀ (a Gemm with transB): its weight gradient is
// dYᵀ·A in W's layout, not (Aᵀ·dY)ᵀ.

// STEP-LABEL: func.func @train_step(
// STEP-SAME: %[[W3:[^:]*]]: tensor<3x64xf32> {tq.name = "param2", tq.parameter}
// STEP: linalg.conv_2d_nchw_fchw {{{.*}}tq.layer = 0 : i64}
// STEP: linalg.conv_2d_nchw_fchw {{{.*}}tq.layer = 1 : i64}
// STEP: %[[FLAT:.*]] = tensor.collapse_shape
// STEP: linalg.matmul {tq.layer = 2 : i64}
// STEP: linalg.matmul {tq.gradient_of = 2 : i64, tq.roles = [#tq.role<output_grad>, #tq.role<weight>]}
// STEP: %[[DYT:.*]] = linalg.transpose ins(%[[DY:[^ ]*]] : tensor<4x3xf32>)
// STEP: %[[DW3:.*]] = linalg.matmul {tq.gradient_of = 2 : i64, tq.roles = [#tq.role<output_grad>, #tq.role<activation>]} ins(%[[DYT]], %[[FLAT]] : tensor<3x4xf32>, tensor<4x64xf32>) {{.*}} -> tensor<3x64xf32>
// STEP-NOT: linalg.transpose ins(%{{.*}} : tensor<64x3xf32>)
// STEP: linalg.conv_2d_nchw_fchw {{{.*}}tq.gradient_of = 1 : i64, tq.roles = [#tq.role<activation>, #tq.role<output_grad>]}
// STEP: linalg.conv_2d_nchw_fchw {{{.*}}tq.gradient_of = 1 : i64, tq.roles = [#tq.role<output_grad>, #tq.role<weight>]}
// STEP: linalg.conv_2d_nchw_fchw {{{.*}}tq.gradient_of = 0 : i64, tq.roles = [#tq.role<activation>, #tq.role<output_grad>]}
// STEP: linalg.generic {{.*}} ins(%[[W3]], %[[DW3]],

// tq-quantize removes the numbers once it has used them.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: tq.layer
// CHECK: linalg.conv_2d_nchw_fchw {{{.*}}tq.roles = [#tq.role<activation>, #tq.role<weight>]
// CHECK: tq.conv2d
// CHECK: tq.matmul %{{.*}}, %{{.*}} {transpose_b}
// The product's dW = dYᵀ·A, both read as stored.
// CHECK: tq.matmul %{{.*}}, %{{.*}} {transpose_a} {{.*}} -> tensor<3x64xf32>
// CHECK-COUNT-2: tq.conv2d
// CHECK: linalg.conv_2d_nchw_fchw {{{.*}}tq.roles = [#tq.role<activation>, #tq.role<output_grad>]
// CHECK-NOT: tq.conv2d
// CHECK-NOT: tq.gradient_of

// With min-channels=0 every layer and gradient is quantized.
// ALL-LABEL: func.func @train_step(
// ALL-NOT: linalg.conv_2d_nchw_fchw
// ALL-COUNT-4: tq.conv2d
// ALL-NOT: linalg.conv_2d_nchw_fchw

// With only activations quantized, no convolution is (tq.conv2d quantizes
// both operands): neither are their gradients.
// MIXED-LABEL: func.func @train_step(
// MIXED-NOT: tq.conv2d
// MIXED: tq.matmul
// MIXED-NOT: tq.conv2d
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x1x6x6xf32>) -> tensor<4x3xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x1x3x3xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x4x3x3xf32>
  %w3 = arith.constant dense<0.125> : tensor<3x64xf32>
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x1x6x6xf32> to tensor<4x1x8x8xf32>
  %e1 = tensor.empty() : tensor<4x4x6x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x4x6x6xf32>) -> tensor<4x4x6x6xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %w1 : tensor<4x1x8x8xf32>, tensor<4x1x3x3xf32>) outs(%f1 : tensor<4x4x6x6xf32>) -> tensor<4x4x6x6xf32>
  %e2 = tensor.empty() : tensor<4x4x4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y1, %w2 : tensor<4x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%f2 : tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
  %flat = tensor.collapse_shape %y2 [[0], [1, 2, 3]] : tensor<4x4x4x4xf32> into tensor<4x64xf32>
  %et = tensor.empty() : tensor<64x3xf32>
  %w3t = linalg.transpose ins(%w3 : tensor<3x64xf32>) outs(%et : tensor<64x3xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<4x3xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%flat, %w3t : tensor<4x64xf32>, tensor<64x3xf32>) outs(%f3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
