// What tq-to-cpu does not lower yet is an error naming the op and why.
// RUN: tq-opt %s --split-input-file --verify-diagnostics --convert-tq-to-cpu

!X = !tq.tiled<1x6x6x8xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>
!W = !tq.tiled<8x3x3x8xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>
func.func @conv(%x: !X, %w: !W) -> tensor<1x4x4x8xf32> {
  // expected-error @+1 {{'tq.conv2d' op is not supported by tq-to-cpu: no CPU lowering for this op yet}}
  %c = tq.conv2d %x, %w : !X, !W -> tensor<1x4x4x8xf32>
  return %c : tensor<1x4x4x8xf32>
}

// -----

func.func @offsets(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'tq.quantize' op is not supported by tq-to-cpu: scales with offsets are not lowered yet}}
  %q = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32, offset>
  %d = tq.dequantize %q : !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32, offset> -> tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}

// -----

func.func @batched(%a: !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>,
                   %b: !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'tq.matmul' op is not supported by tq-to-cpu: batched matmuls are not lowered yet}}
  %c = tq.matmul %a, %b : !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>, !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32> -> tensor<2x8x8xf32>
  return %c : tensor<2x8x8xf32>
}

// -----

!T = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @stochastic(%x: tensor<8x8xf32>) -> !T {
  // expected-error @+1 {{'tq.quantize' op is not supported by tq-to-cpu: stochastic rounding is not lowered yet}}
  %q = tq.quantize %x rounding stochastic {seed = 1 : i64} : tensor<8x8xf32> -> !T
  return %q : !T
}

// -----

!T = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @mixed(%a: !T, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'tq.matmul' op is not supported by tq-to-cpu: the mixed tiled x float matmul is not lowered yet}}
  %c = tq.matmul %a, %b : !T, tensor<8x8xf32> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
