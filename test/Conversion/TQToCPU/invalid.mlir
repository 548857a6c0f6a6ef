// What tq-to-cpu does not lower yet is an error naming the op and why.
// RUN: tq-opt %s --split-input-file --verify-diagnostics --convert-tq-to-cpu


func.func @offsets(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'tq.quantize' op is not supported by tq-to-cpu: scales with offsets are not lowered yet}}
  %q = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32, offset>
  %d = tq.dequantize %q : !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32, offset> -> tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}

// -----


!T = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @stochastic(%x: tensor<8x8xf32>) -> !T {
  // expected-error @+1 {{'tq.quantize' op is not supported by tq-to-cpu: stochastic rounding is not lowered yet}}
  %q = tq.quantize %x rounding stochastic {seed = 1 : i64} : tensor<8x8xf32> -> !T
  return %q : !T
}

// -----

func.func @mixed_batched(%a: !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>,
                         %b: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'tq.matmul' op is not supported by tq-to-cpu: batched mixed tiled x float matmuls are not lowered yet}}
  %c = tq.matmul %a, %b : !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %c : tensor<2x8x8xf32>
}
