// RUN: tq-opt %s -tq-quantize -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-quantize="min-channels=0" -split-input-file | FileCheck %s --check-prefix=ALL
// RUN: tq-opt %s -tq-quantize="min-channels=8" -split-input-file | FileCheck %s --check-prefix=EIGHT
// min-channels: a layer contracting fewer input channels (a convolution)
// or a shorter K (a matmul) than this stays in float, since its tiles
// would be mostly padding. The default is 4: a 1-channel (gray) or
// 3-channel (RGB) first convolution stays in float, a 4-channel one does
// not; 0 quantizes every layer.

// CHECK-LABEL: func.func @gray
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: tq.conv2d
// ALL-LABEL: func.func @gray
// ALL: tq.conv2d
// ALL-NOT: linalg.conv_2d
func.func @gray(%x: tensor<2x1x6x6xf32>) -> tensor<2x8x4x4xf32> {
  %w = arith.constant dense<0.5> : tensor<8x1x3x3xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x4x4xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<2x1x6x6xf32>, tensor<8x1x3x3xf32>) outs(%i : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %y : tensor<2x8x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @four_channels
// CHECK: tq.conv2d
// EIGHT-LABEL: func.func @four_channels
// EIGHT: linalg.conv_2d_nchw_fchw
// EIGHT-NOT: tq.conv2d
func.func @four_channels(%x: tensor<2x4x6x6xf32>) -> tensor<2x8x4x4xf32> {
  %w = arith.constant dense<0.5> : tensor<8x4x3x3xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x4x4xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) outs(%i : tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %y : tensor<2x8x4x4xf32>
}

// -----

// K = 2: the matmul stays in float; K = 16 is quantized.
// CHECK-LABEL: func.func @short_k
// CHECK: linalg.matmul
// CHECK: tq.matmul
// CHECK-NOT: tq.matmul
// ALL-LABEL: func.func @short_k
// ALL-COUNT-2: tq.matmul
func.func @short_k(%a: tensor<8x2xf32>, %b: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x8xf32>) {
  %w = arith.constant dense<0.25> : tensor<2x16xf32>
  %v = arith.constant dense<0.25> : tensor<16x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%a, %w : tensor<8x2xf32>, tensor<2x16xf32>) outs(%i : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %i2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y2 = linalg.matmul ins(%b, %v : tensor<8x16xf32>, tensor<16x8xf32>) outs(%i2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y, %y2 : tensor<8x16xf32>, tensor<8x8xf32>
}
