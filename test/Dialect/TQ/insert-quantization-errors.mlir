// RUN: tq-opt %s -tq-insert-quantization="tile=128 act-bits=16 weight-bits=16" -split-input-file -verify-diagnostics

func.func @overflow(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %i: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{a K-tile of 128 with 16-bit and 16-bit operands may overflow the int32 partial sum (at most 2)}}
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

func.func @unsupported_dims(%x: tensor<2x8x8x16xf32>, %f: tensor<32x3x3x16xf32>, %i: tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32> {
  // expected-error @+1 {{split dims [1, 3] of operand #0 are not supported by tq.conv2d, which needs [0, 3]}}
  %y = linalg.conv_2d_nhwc_fhwc {tq.split_dims = [array<i64: 1, 3>, array<i64: 0, 3>], dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<2x8x8x16xf32>, tensor<32x3x3x16xf32>) outs(%i : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  return %y : tensor<2x6x6x32xf32>
}

// -----

func.func @unsupported_conv(%x: tensor<2x8x8x16xf32>, %f: tensor<3x3x16x32xf32>, %i: tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32> {
  // expected-error @+1 {{'linalg.conv_2d_nhwc_hwcf' op cannot be quantized: not a matmul, batch_matmul, conv_2d_nhwc_fhwc or conv_2d_nchw_fchw; list it in keep-float or mark it tq.keep_float}}
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<2x8x8x16xf32>, tensor<3x3x16x32xf32>) outs(%i : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  return %y : tensor<2x6x6x32xf32>
}

// -----

func.func @unsupported_type(%x: tensor<64x256xf16>, %w: tensor<256x128xf16>, %i: tensor<64x128xf16>) -> tensor<64x128xf16> {
  // expected-error @+1 {{'linalg.matmul' op cannot be quantized: operands are not f32 tensors; list it in keep-float or mark it tq.keep_float}}
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf16>, tensor<256x128xf16>) outs(%i : tensor<64x128xf16>) -> tensor<64x128xf16>
  return %y : tensor<64x128xf16>
}

// -----

// Kept in float on request: no error.
func.func @kept(%x: tensor<2x8x8x16xf32>, %f: tensor<3x3x16x32xf32>, %i: tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32> {
  %y = linalg.conv_2d_nhwc_hwcf {tq.keep_float, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<2x8x8x16xf32>, tensor<3x3x16x32xf32>) outs(%i : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  return %y : tensor<2x6x6x32xf32>
}
