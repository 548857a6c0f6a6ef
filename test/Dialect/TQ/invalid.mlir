// RUN: tq-opt %s -split-input-file -verify-diagnostics
// One case per op verifier message.

func.func @dot_lanes(%acc: vector<4xi32>, %b: vector<16xi8>) {
  // expected-error @+1 {{expects 8 or 16 int32 lanes (vpmaddubsw on ymm or zmm), got 4}}
  %0 = tq.dot_u8s8_pairs %acc, %b, %b : vector<4xi32>, vector<16xi8>
  return
}

// -----

func.func @dot_bytes(%acc: vector<8xi32>, %b: vector<16xi8>) {
  // expected-error @+1 {{expects 4 bytes per lane: 32 i8 operands for 8 lanes}}
  %0 = tq.dot_u8s8_pairs %acc, %b, %b : vector<8xi32>, vector<16xi8>
  return
}

// -----

func.func @f0(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{input shape 64x64 does not match the tiled shape 64x128}}
  %0 = tq.quantize %x : tensor<64x64xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f1(%x: tensor<64x128xf16>) {
  // expected-error @+1 {{input element type 'f16' does not match the expressed type 'f32'}}
  %0 = tq.quantize %x : tensor<64x128xf16> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f2(%x: tensor<64x128xf32>, %s: tensor<2x4xf32>) {
  // expected-error @+1 {{given scales cannot be used with an offset (the offsets would be undefined)}}
  %0 = tq.quantize %x scales(%s : tensor<2x4xf32>) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], offset>
  return
}

// -----

func.func @f3(%x: tensor<64x128xf32>, %s: tensor<4x2xf32>) {
  // expected-error @+1 {{scales must have the tile-grid shape 2x4, got 4x2}}
  %0 = tq.quantize %x scales(%s : tensor<4x2xf32>) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f4(%x: tensor<64x128xf32>, %n: i32) {
  // expected-error @+1 {{'bits' operand given but the result type has a fixed bit width}}
  %0 = tq.quantize %x bits(%n : i32) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f5(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{a dynamic bit width requires a 'bits' operand of type i32}}
  %0 = tq.quantize %x : tensor<64x128xf32> -> !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f6(%x: tensor<64x128xf32>, %n: i32) {
  // expected-error @+1 {{a per-tile bit width requires a 'bits' operand of type tensor<2x4xi32>}}
  %0 = tq.quantize %x bits(%n : i32) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:per_tile, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f7(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{stochastic rounding requires a 'seed' attribute}}
  %0 = tq.quantize %x rounding stochastic : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f8(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{'seed' is only meaningful with stochastic rounding}}
  %0 = tq.quantize %x {seed = 1 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @seed_offset_without_stochastic(%x: tensor<64x128xf32>, %i: i32) {
  // expected-error @+1 {{'seed_offset' is only meaningful with stochastic rounding}}
  %0 = tq.quantize %x seed_offset(%i) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

// expected-note @+1 {{prior use here}}
func.func @seed_offset_not_i32(%x: tensor<64x128xf32>, %i: i64) {
  // expected-error @+1 {{use of value '%i' expects different type than prior uses: 'i32' vs 'i64'}}
  %0 = tq.quantize %x rounding stochastic seed_offset(%i) {seed = 1 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f9(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{result shape 64x64 does not match the tiled shape 64x128}}
  %0 = tq.dequantize %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x64xf32>
  return
}

// -----

func.func @refresh_without_scales(%x: tensor<64x128xf32>, %r: i1) {
  // expected-error @+1 {{refresh needs scales (the steps kept when it is false)}}
  %0 = tq.quantize %x refresh(%r) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @steps_shape(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{result must have the tile-grid shape 2x4, got 4x2}}
  %0 = tq.steps %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<4x2xf32>
  return
}

// -----

func.func @f10(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{result element type 'bf16' does not match the expressed type 'f32'}}
  %0 = tq.dequantize %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x128xbf16>
  return
}

// -----

func.func @f11() {
  // expected-error @+1 {{a constant must have a static shape}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<?x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f12() {
  // expected-error @+1 {{a constant cannot have a dynamic bit width}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:?, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f13() {
  // expected-error @+1 {{values must be a 'tensor<2x2xi8>', got 'tensor<2x2xi16>'}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi16>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f14() {
  // expected-error @+1 {{scales must be a 'tensor<1x1xf32>', got 'tensor<2x2xf32>'}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<2x2xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f15() {
  // expected-error @+1 {{an offset scale kind requires 'offsets'}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], offset>
  return
}

// -----

func.func @f16() {
  // expected-error @+1 {{'offsets' given but the type has no offset}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>, offsets = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f17() {
  // expected-error @+1 {{offsets must be a 'tensor<1x1xf32>', got 'tensor<1xf32>'}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>, offsets = dense<0.0> : tensor<1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], offset>
  return
}

// -----

func.func @f18() {
  // expected-error @+1 {{a per-tile bit width requires 'tile_bits'}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:per_tile, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f19() {
  // expected-error @+1 {{'tile_bits' given but the bit width is not per-tile}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>, tile_bits = dense<4> : tensor<1x1xi8>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f20() {
  // expected-error @+1 {{tile_bits must be a 'tensor<1x1xi8>', got 'tensor<1x1xi32>'}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>, tile_bits = dense<4> : tensor<1x1xi32>} : !tq.tiled<2x2xi8:per_tile, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f21() {
  // expected-error @+1 {{tile bit width 9 is out of range [2, 8]}}
  %0 = tq.constant {values = dense<0> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>, tile_bits = dense<9> : tensor<1x1xi8>} : !tq.tiled<2x2xi8:per_tile, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f22() {
  // expected-error @+1 {{value 8 at [1, 0] is outside the 4-bit range [-7, 7]}}
  %0 = tq.constant {values = dense<[[1, 2], [8, 0]]> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:4, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f23() {
  // expected-error @+1 {{value -8 at [0, 1] is outside the 4-bit range [-7, 7]}}
  %0 = tq.constant {values = dense<[[1, -8], [5, 0]]> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>, tile_bits = dense<4> : tensor<1x1xi8>} : !tq.tiled<2x2xi8:per_tile, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @f24(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{permutation must be a permutation of [0, 2)}}
  %0 = tq.requantize %q permutation([0, 0]) : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f25(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{result shape 128x64 does not match the input shape 64x128}}
  %0 = tq.requantize %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<128x64xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f26(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{result shape 64x128 does not match the permuted input shape 128x64}}
  %0 = tq.requantize %q permutation([1, 0]) : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f27(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{expressed types differ: 'f32' vs 'bf16'}}
  %0 = tq.requantize %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi8:8, bf16, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f28(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{a dynamic bit width requires a 'bits' operand of type i32}}
  %0 = tq.requantize %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f29(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{permutation must be a permutation of [0, 2)}}
  %0 = tq.transpose %q [1, 2] : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f30(%q: !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]>) {
  // expected-error @+1 {{transposing non-square tiles (1x32) swaps the split dims and cannot reuse the scales; use 'tq.requantize' with a permutation}}
  %0 = tq.transpose %q [1, 0] : !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]> -> !tq.tiled<128x64xi8:8, f32, tile = 32x1, dims = [0, 1]>
  return
}

// -----

func.func @f31(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{result type '!tq.tiled<128x64xi8:4, f32, tile = 32x32, dims = [0, 1], scale = f32>' does not match the expected '!tq.tiled<128x64xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>'}}
  %0 = tq.transpose %q [1, 0] : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<128x64xi8:4, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f32(%a: !tq.tiled<4x64x128xi8:8, f32, tile = 32x32, dims = [0, 2]>, %b: tensor<4x128x8xf32>) {
  // expected-error @+1 {{lhs must be split on its two innermost dims [1, 2], got [0, 2]}}
  %0 = tq.matmul %a, %b : !tq.tiled<4x64x128xi8:8, f32, tile = 32x32, dims = [0, 2]>, tensor<4x128x8xf32> -> tensor<4x64x8xf32>
  return
}

// -----

func.func @f33(%a: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %b: !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1], offset>) {
  // expected-error @+1 {{rhs has an offset; asymmetric operands are not supported, requantize without offset first}}
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1], offset> -> tensor<64x256xf32>
  return
}

// -----

func.func @f34(%a: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %b: tensor<128x8xf16>) {
  // expected-error @+1 {{float rhs must have f32 elements}}
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, tensor<128x8xf16> -> tensor<64x8xf32>
  return
}

// -----

func.func @f35(%a: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %b: tensor<128xf32>) {
  // expected-error @+1 {{rhs must have rank >= 2}}
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, tensor<128xf32> -> tensor<64xf32>
  return
}

// -----

func.func @f36(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{at least one operand must be a tiled tensor; use linalg.matmul for float operands}}
  %0 = tq.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @f37(%a: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %b: tensor<2x128x8xf32>) {
  // expected-error @+1 {{operands must have the same rank, got 2 and 3}}
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, tensor<2x128x8xf32> -> tensor<64x8xf32>
  return
}

// -----

func.func @f38(%a: !tq.tiled<4x64x128xi8:8, f32, tile = 32x32, dims = [1, 2]>, %b: tensor<2x128x8xf32>) {
  // expected-error @+1 {{batch dimension 0 differs: 4 vs 2}}
  %0 = tq.matmul %a, %b : !tq.tiled<4x64x128xi8:8, f32, tile = 32x32, dims = [1, 2]>, tensor<2x128x8xf32> -> tensor<4x64x8xf32>
  return
}

// -----

func.func @f39(%a: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %b: !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{contracting dimensions differ: 128 vs 256}}
  %0 = tq.matmul %a, %b {transpose_b} : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x128xf32>
  return
}

// -----

func.func @f40(%a: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %b: !tq.tiled<128x256xi8:8, f32, tile = 16x16, dims = [0, 1]>) {
  // expected-error @+1 {{K-tile extents differ: lhs 32 vs rhs 16}}
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<128x256xi8:8, f32, tile = 16x16, dims = [0, 1]> -> tensor<64x256xf32>
  return
}

// -----

func.func @f41(%a: !tq.tiled<64x128xi16:16, f32, tile = 32x32, dims = [0, 1]>, %b: !tq.tiled<128x256xi16:?, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{int32 partial sum may overflow: a K-tile of 32 with 16-bit and 16-bit operands exceeds 2^31 - 1 (at most 2)}}
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi16:16, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<128x256xi16:?, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x256xf32>
  return
}

// -----

// A bounded run-time width (?(9)) is checked by its bound, not its i16
// container: 9-bit operands take K-tiles of up to 8256, but 16-bit ones
// overflow.
func.func @f41b(%a: !tq.tiled<64x128xi16:9, f32, tile = 32x32, dims = [0, 1]>, %b: !tq.tiled<128x256xi16:?(9), f32, tile = 32x32, dims = [0, 1]>, %n: i32) {
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi16:9, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<128x256xi16:?(9), f32, tile = 32x32, dims = [0, 1]> -> tensor<64x256xf32>
  // expected-error @+1 {{bit widths must satisfy 2 <= min <= init <= max <= 9 (the target type's largest width), got min = 2, init = 8, max = 12}}
  %1 = tq.adaptive_bit_width %0 for !tq.tiled<64x256xi16:?(9), f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32, max = 12} : tensor<64x256xf32> -> i32
  return
}

// -----

func.func @f42(%a: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %b: !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  // expected-error @+1 {{result shape 64x128 does not match the expected 64x256}}
  %0 = tq.matmul %a, %b : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x128xf32>
  return
}

// -----

func.func @f43(%x: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{input and filter must have rank 4 (NHWC, KRSC)}}
  %0 = tq.conv2d %x, %w : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f44(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [2, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{input must be split on (N, C) = [0, 3]}}
  %0 = tq.conv2d %x, %w : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [2, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f45(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [1, 3]>) {
  // expected-error @+1 {{filter must be split on (K, C) = [0, 3]}}
  %0 = tq.conv2d %x, %w : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [1, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f46(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3], offset>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{asymmetric (offset) operands are not supported}}
  %0 = tq.conv2d %x, %w : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3], offset>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f47(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x32xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{channel dimensions differ: input 64 vs filter 32}}
  %0 = tq.conv2d %x, %w : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x32xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f48(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 16x16, dims = [0, 3]>) {
  // expected-error @+1 {{C-tile extents differ: input 32 vs filter 16}}
  %0 = tq.conv2d %x, %w : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f49(%x: !tq.tiled<8x14x14x640xi16:16, f32, tile = 640x640, dims = [0, 3]>, %w: !tq.tiled<32x3x3x640xi8:8, f32, tile = 640x640, dims = [0, 3]>) {
  // expected-error @+1 {{int32 partial sum may overflow: a K-tile of 640 with 16-bit and 8-bit operands exceeds 2^31 - 1 (at most 516)}}
  %0 = tq.conv2d %x, %w : !tq.tiled<8x14x14x640xi16:16, f32, tile = 640x640, dims = [0, 3]>, !tq.tiled<32x3x3x640xi8:8, f32, tile = 640x640, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f50(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{expected 2 strides, 2 dilations and 4 paddings}}
  %0 = tq.conv2d %x, %w {strides = array<i64: 1>} : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f51(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{strides and dilations must be positive}}
  %0 = tq.conv2d %x, %w {dilations = array<i64: 0, 1>} : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f52(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{padding must be non-negative}}
  %0 = tq.conv2d %x, %w {padding = array<i64: -1, 0, 0, 0>} : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f53(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{the filter window is larger than the padded input}}
  %0 = tq.conv2d %x, %w {dilations = array<i64: 8, 1>} : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x12x12x32xf32>
  return
}

// -----

func.func @f54(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  // expected-error @+1 {{result shape 8x14x14x32 does not match the expected 8x12x12x32}}
  %0 = tq.conv2d %x, %w : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x14x14x32xf32>
  return
}

// -----

func.func @f55(%a: tensor<64x64xf32>) {
  // expected-error @+1 {{input shape 64x64 does not match the tiled shape 64x128}}
  %0, %s = tq.postprocess %a : tensor<64x64xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f56(%a: tensor<64x128xf32>) {
  // expected-error @+1 {{result must have an f32 expressed type}}
  %0, %s = tq.postprocess %a : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, bf16, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f57(%a: tensor<64x128xf32>, %l: f32) {
  // expected-error @+1 {{the layer scale is either given or computed, not both}}
  %0, %s = tq.postprocess %a layer_scale(%l) {compute_layer_scale} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f58(%a: tensor<64x128xf32>, %n: i32) {
  // expected-error @+1 {{computing the layer scale needs a fixed bit width in the result type}}
  %0, %s = tq.postprocess %a bits(%n : i32) {compute_layer_scale} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f59(%a: tensor<64x128xf32>) {
  // expected-error @+1 {{a dynamic bit width requires a 'bits' operand of type i32}}
  %0, %s = tq.postprocess %a : tensor<64x128xf32> -> !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f60(%a: tensor<64x128xf32>) {
  // expected-error @+1 {{stochastic rounding requires a 'seed' attribute}}
  %0, %s = tq.postprocess %a rounding stochastic : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

func.func @f61(%w: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %g: tensor<128x64xf32>, %lr: f32) {
  // expected-error @+1 {{gradient shape 128x64 does not match the weight shape 64x128}}
  %0 = tq.weight_update %w, %g, %lr : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, tensor<128x64xf32>
  return
}

// -----

func.func @f62(%w: !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]>, %g: tensor<64x128xf32>, %lr: f32) {
  // expected-error @+1 {{the weight's bit width must be fixed or per-tile, not dynamic}}
  %0 = tq.weight_update %w, %g, %lr : !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]>, tensor<64x128xf32>
  return
}

// -----

func.func @f63(%w: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, %g: tensor<64x128xf32>, %lr: f32) {
  // expected-error @+1 {{'seed' is only meaningful with stochastic rounding}}
  %0 = tq.weight_update %w, %g, %lr {seed = 2 : i64} : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, tensor<64x128xf32>
  return
}

// -----

func.func @f64(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{target type must have a dynamic ('?') or 'per_tile' bit width}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32} : tensor<64x128xf32> -> i32
  return
}

// -----

func.func @f65(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{input shape 64x64 does not match the tiled shape 64x128}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32} : tensor<64x64xf32> -> i32
  return
}

// -----

func.func @f66(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{thresholds must satisfy 0 <= low < high, got low = 5.000000e-02, high = 1.000000e-02}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.05 : f32, high = 0.01 : f32} : tensor<64x128xf32> -> i32
  return
}

// -----

func.func @f67(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{bit widths must satisfy 2 <= min <= init <= max <= 8 (the target type's largest width), got min = 2, init = 12, max = 16}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32, init = 12} : tensor<64x128xf32> -> i32
  return
}

// -----

func.func @f68(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{step must be at least 1}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32, step = 0} : tensor<64x128xf32> -> i32
  return
}

// -----

func.func @f69(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{'far_step' and 'far_margin' must be given together}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32, far_step = 4} : tensor<64x128xf32> -> i32
  return
}

// -----

func.func @f70(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{far_step must be at least step}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32, step = 2, far_step = 1, far_margin = 0.1 : f32} : tensor<64x128xf32> -> i32
  return
}

// -----

func.func @f71(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{result must be i32 for a dynamic bit width}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32} : tensor<64x128xf32> -> tensor<2x4xi32>
  return
}

// -----

func.func @f72(%x: tensor<64x128xf32>) {
  // expected-error @+1 {{result must be tensor<2x4xi32> for a per-tile bit width}}
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:per_tile, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32} : tensor<64x128xf32> -> i32
  return
}

// -----

// A constant width above the type's bound (?(9)) would defeat the int32
// partial-sum checks that trust the bound.
func.func @bound_exceeded(%x: tensor<64x64xf32>) {
  %n = arith.constant 12 : i32
  // expected-error @+1 {{bit width 12 is out of range [2, 9] of '!tq.tiled<64x64xi16:?(9), f32, tile = 32x32, dims = [0, 1], scale = f32>'}}
  %0 = tq.quantize %x bits(%n : i32) : tensor<64x64xf32> -> !tq.tiled<64x64xi16:?(9), f32, tile = 32x32, dims = [0, 1]>
  return
}

// -----

// Large constants keep their data in a dense resource blob, which must be
// there and hold one value per element.
func.func @resource_without_data() {
  // expected-error @+1 {{values: dense resource 'nodata' has no data}}
  %0 = tq.constant {values = dense_resource<nodata> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return
}

// -----

func.func @resource_too_short() {
  // expected-error @+1 {{values: dense resource 'short' holds 2 bytes, 'tensor<2x2xi8>' needs 4}}
  %0 = tq.constant {values = dense_resource<short> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return
}

func.func @resource_out_of_range() {
  // expected-error @+1 {{value 8 at [0, 1] is outside the 4-bit range [-7, 7]}}
  %0 = tq.constant {values = dense_resource<wide> : tensor<2x2xi8>, scales = dense<0.0> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:4, f32, tile = 2x2, dims = [0, 1]>
  return
}

{-#
  dialect_resources: {
    builtin: {
      short: "0x010000000102",
      wide: "0x0100000001080102"
    }
  }
#-}
