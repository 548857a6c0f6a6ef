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
func.func @stochastic(%q: !T) -> !tq.tiled<8x8xi8:4, f32, tile = 8x8, dims = [0, 1], scale = f32> {
  // expected-error @+1 {{'tq.requantize' op is not supported by tq-to-cpu: stochastic rounding is not lowered yet}}
  %r = tq.requantize %q rounding stochastic {seed = 1 : i64} : !T -> !tq.tiled<8x8xi8:4, f32, tile = 8x8, dims = [0, 1], scale = f32>
  return %r : !tq.tiled<8x8xi8:4, f32, tile = 8x8, dims = [0, 1], scale = f32>
}

// -----

func.func @mixed_batched(%a: !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>,
                         %b: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'tq.matmul' op is not supported by tq-to-cpu: batched mixed tiled x float matmuls are not lowered yet}}
  %c = tq.matmul %a, %b : !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %c : tensor<2x8x8xf32>
}

// -----

func.func @per_tile_search(%x: tensor<16x16xf32>) -> tensor<2x2xi32> {
  // expected-error @+1 {{'tq.adaptive_bit_width' op is not supported by tq-to-cpu: per-tile bit-width searches are not lowered yet}}
  %n = tq.adaptive_bit_width %x for !tq.tiled<16x16xi16:per_tile, f32, tile = 8x8, dims = [0, 1], scale = f32> {low = 0.01 : f32, high = 0.05 : f32} : tensor<16x16xf32> -> tensor<2x2xi32>
  return %n : tensor<2x2xi32>
}

// -----

// Per-tile widths are lowered for constants (their values are quantized at
// compile time), not for a tensor quantized at run time.
func.func @per_tile_quantize(%x: tensor<16x16xf32>, %n: tensor<2x2xi32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'tq.quantize' op is not supported by tq-to-cpu: per-tile bit widths computed at run time are not lowered yet (constants may have them)}}
  %q = tq.quantize %x bits(%n : tensor<2x2xi32>) : tensor<16x16xf32> -> !tq.tiled<16x16xi8:per_tile, f32, tile = 8x8, dims = [0, 1], scale = f32>
  %d = tq.dequantize %q : !tq.tiled<16x16xi8:per_tile, f32, tile = 8x8, dims = [0, 1], scale = f32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// A cast from a tiled value must give exactly the tensors it lowers to
// (its values and its tile steps), as tq-cpu-split-batch's casts do.
func.func @cast_parts(%x: tensor<64x32xf32>) -> tensor<64x32xi8> {
  %q = tq.quantize %x : tensor<64x32xf32> -> !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]>
  // expected-error @+1 {{tq-to-cpu: a cast from or to a tiled value must take it apart into its values and tile steps, or put it together from them}}
  %v = builtin.unrealized_conversion_cast %q : !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]> to tensor<64x32xi8>
  return %v : tensor<64x32xi8>
}
