// RUN: tq-opt %s | tq-opt | FileCheck %s
// Round trip of every tq op in its custom assembly form.

!a8 = !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
!w8 = !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1]>

// CHECK-LABEL: func.func @quantize
// CHECK: tq.quantize %{{.*}} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: tq.quantize %{{.*}} scales(%{{.*}} : tensor<2x4xf32>) rounding toward_zero : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8
// CHECK: tq.quantize %{{.*}} bits(%{{.*}} : i32) rounding stochastic {seed = 7 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1], scale = pow2, offset>
// CHECK: tq.quantize %{{.*}} bits(%{{.*}} : tensor<2x4xi32>) : tensor<64x128xf32> -> !tq.tiled<64x128xi16:per_tile
// CHECK: tq.quantize %{{.*}} scales(%{{.*}} : tensor<2x4xf32>) refresh(%{{.*}}) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8
// CHECK: tq.quantize %{{.*}} rounding stochastic seed_offset(%{{.*}}) {seed = 3 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8
func.func @quantize(%x: tensor<64x128xf32>, %s: tensor<2x4xf32>, %n: i32, %nt: tensor<2x4xi32>, %r: i1) {
  %0 = tq.quantize %x : tensor<64x128xf32> -> !a8
  %1 = tq.quantize %x scales(%s : tensor<2x4xf32>) rounding toward_zero : tensor<64x128xf32> -> !a8
  %2 = tq.quantize %x bits(%n : i32) rounding stochastic {seed = 7 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1], scale = pow2, offset>
  %3 = tq.quantize %x bits(%nt : tensor<2x4xi32>) : tensor<64x128xf32> -> !tq.tiled<64x128xi16:per_tile, f32, tile = 32x32, dims = [0, 1]>
  %4 = tq.quantize %x scales(%s : tensor<2x4xf32>) refresh(%r) : tensor<64x128xf32> -> !a8
  %5 = tq.quantize %x rounding stochastic seed_offset(%n) {seed = 3 : i64} : tensor<64x128xf32> -> !a8
  return
}

// CHECK-LABEL: func.func @dequantize_requantize
// CHECK: tq.dequantize %{{.*}} : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32> -> tensor<64x128xf32>
// CHECK: tq.requantize %{{.*}} : !tq.tiled<64x128xi8:8, {{.*}}> -> !tq.tiled<64x128xi4:4, f32, tile = 16x16, dims = [0, 1], scale = pow2>
// CHECK: tq.requantize %{{.*}} permutation([1, 0]) : !tq.tiled<64x128xi8:8, f32, tile = 1x32, {{.*}}> -> !tq.tiled<128x64xi8:8, f32, tile = 1x32
// CHECK: tq.requantize %{{.*}} bits(%{{.*}} : i32) rounding up : {{.*}} -> !tq.tiled<64x128xi16:?
// CHECK: tq.steps %{{.*}} : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32> -> tensor<2x4xf32>
func.func @dequantize_requantize(%q: !a8, %v: !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]>, %n: i32) {
  %0 = tq.dequantize %q : !a8 -> tensor<64x128xf32>
  %1 = tq.requantize %q : !a8 -> !tq.tiled<64x128xi4:4, f32, tile = 16x16, dims = [0, 1], scale = pow2>
  %2 = tq.requantize %v permutation([1, 0]) : !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]> -> !tq.tiled<128x64xi8:8, f32, tile = 1x32, dims = [0, 1]>
  %3 = tq.requantize %q bits(%n : i32) rounding up : !a8 -> !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]>
  %4 = tq.steps %q : !a8 -> tensor<2x4xf32>
  return
}

// CHECK-LABEL: func.func @constant
// CHECK: tq.constant {scales = dense<5.000000e-01> : tensor<1x1xf32>, values = dense<{{\[\[}}1, -2], [3, 127]]> : tensor<2x2xi8>} : !tq.tiled<2x2xi8:8
// CHECK: tq.constant {offsets = dense<1.000000e+00> : tensor<1x1xf32>, scales = {{.*}}, tile_bits = dense<4> : tensor<1x1xi8>, values = {{.*}}} : !tq.tiled<2x2xi8:per_tile, f32, tile = 2x2, dims = [0, 1], scale = f32, offset>
func.func @constant() {
  %0 = tq.constant {values = dense<[[1, -2], [3, 127]]> : tensor<2x2xi8>, scales = dense<0.5> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %1 = tq.constant {values = dense<[[1, -2], [3, 7]]> : tensor<2x2xi8>, scales = dense<0.5> : tensor<1x1xf32>, offsets = dense<1.0> : tensor<1x1xf32>, tile_bits = dense<4> : tensor<1x1xi8>} : !tq.tiled<2x2xi8:per_tile, f32, tile = 2x2, dims = [0, 1], offset>
  return
}

// CHECK-LABEL: func.func @transpose
// CHECK: tq.transpose %{{.*}} [1, 0] : !tq.tiled<64x128xi8:8, {{.*}}> -> !tq.tiled<128x64xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: tq.transpose %{{.*}} [0, 2, 1, 3] : !tq.tiled<8x14x12x64xi8:8, f32, tile = 1x32, dims = [0, 3], scale = f32> -> !tq.tiled<8x12x14x64xi8:8, f32, tile = 1x32, dims = [0, 3], scale = f32>
func.func @transpose(%q: !a8, %x: !tq.tiled<8x14x12x64xi8:8, f32, tile = 1x32, dims = [0, 3]>) {
  %0 = tq.transpose %q [1, 0] : !a8 -> !tq.tiled<128x64xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %1 = tq.transpose %x [0, 2, 1, 3] : !tq.tiled<8x14x12x64xi8:8, f32, tile = 1x32, dims = [0, 3]> -> !tq.tiled<8x12x14x64xi8:8, f32, tile = 1x32, dims = [0, 3]>
  return
}

// T5, T7: forward, the two backward forms, the mixed case and batches.
// CHECK-LABEL: func.func @matmul
// CHECK: tq.matmul %{{.*}}, %{{.*}} : !tq.tiled<64x128xi8:8, {{.*}}>, !tq.tiled<128x256xi8:8, {{.*}}> -> tensor<64x256xf32>
// CHECK: tq.matmul %{{.*}}, %{{.*}} {transpose_b} : {{.*}} -> tensor<64x256xf32>
// CHECK: tq.matmul %{{.*}}, %{{.*}} {scale_product = #tq.scale_product<bf16>, transpose_a} : {{.*}} -> tensor<128x256xf32>
// CHECK: tq.matmul %{{.*}}, %{{.*}} : !tq.tiled<64x128xi8:8, {{.*}}>, tensor<128x16xf32> -> tensor<64x16xf32>
// CHECK: tq.matmul %{{.*}}, %{{.*}} : tensor<4x64x128xf32>, !tq.tiled<4x128x32xi4:4, {{.*}}> -> tensor<4x64x32xf32>
func.func @matmul(%x: !a8, %w: !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1]>,
                  %wt: !w8, %dy: !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1]>,
                  %f: tensor<128x16xf32>, %bx: tensor<4x64x128xf32>,
                  %bw: !tq.tiled<4x128x32xi4:4, f32, tile = 16x16, dims = [1, 2]>) {
  %0 = tq.matmul %x, %w : !a8, !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x256xf32>
  %1 = tq.matmul %x, %wt {transpose_b} : !a8, !w8 -> tensor<64x256xf32>
  %2 = tq.matmul %x, %dy {transpose_a, scale_product = #tq.scale_product<bf16>} : !a8, !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<128x256xf32>
  %3 = tq.matmul %x, %f : !a8, tensor<128x16xf32> -> tensor<64x16xf32>
  %4 = tq.matmul %bx, %bw : tensor<4x64x128xf32>, !tq.tiled<4x128x32xi4:4, f32, tile = 16x16, dims = [1, 2]> -> tensor<4x64x32xf32>
  return
}

// CHECK-LABEL: func.func @conv2d
// CHECK: tq.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : !tq.tiled<8x14x14x64xi8:8, {{.*}}>, !tq.tiled<32x3x3x64xi8:8, {{.*}}> -> tensor<8x7x7x32xf32>
func.func @conv2d(%x: !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>,
                  %w: !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  %0 = tq.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3]>, !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<8x7x7x32xf32>
  return
}

// Per-tensor scales: each operand is one tile, wider than C (16) on both;
// the C-tile extents that take effect are equal.
// CHECK-LABEL: func.func @conv2d_per_tensor
// CHECK: tq.conv2d
func.func @conv2d_per_tensor(%x: !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                             %w: !tq.tiled<32x3x3x16xi8:8, f32, tile = 32x32, dims = [0, 3]>) {
  %0 = tq.conv2d %x, %w : !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<32x3x3x16xi8:8, f32, tile = 32x32, dims = [0, 3]> -> tensor<2x2x2x32xf32>
  return
}

// T6, T8.
// CHECK-LABEL: func.func @postprocess
// CHECK: tq.postprocess %{{.*}} {activation = #tq.activation<relu>, compute_layer_scale} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8
// CHECK: tq.postprocess %{{.*}} layer_scale(%{{.*}}) bits(%{{.*}} : i32) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:?
func.func @postprocess(%acc: tensor<64x128xf32>, %s: f32, %n: i32) {
  %0, %s0 = tq.postprocess %acc {activation = #tq.activation<relu>, compute_layer_scale} : tensor<64x128xf32> -> !a8
  %1, %s1 = tq.postprocess %acc layer_scale(%s) bits(%n : i32) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:?, f32, tile = 32x32, dims = [0, 1]>
  return
}

// CHECK-LABEL: func.func @weight_update
// CHECK: tq.weight_update %{{.*}}, %{{.*}}, %{{.*}} : !tq.tiled<256x128xi8:8, {{.*}}>, tensor<256x128xf32>
// CHECK: tq.weight_update %{{.*}}, %{{.*}}, %{{.*}} rounding stochastic {seed = 3 : i64} : !tq.tiled<256x128xi8:8, {{.*}}>, !tq.tiled<256x128xi8:8
func.func @weight_update(%w: !w8, %dw: tensor<256x128xf32>, %qdw: !w8, %lr: f32) {
  %0 = tq.weight_update %w, %dw, %lr : !w8, tensor<256x128xf32>
  %1 = tq.weight_update %w, %qdw, %lr rounding stochastic {seed = 3 : i64} : !w8, !w8
  return
}

// A4.
// CHECK-LABEL: func.func @adaptive_bit_width
// CHECK: tq.adaptive_bit_width %{{.*}} for !tq.tiled<64x128xi16:?, {{.*}}> {high = 5.000000e-02 : f32, init = 12 : i64, low = 0.00999999977 : f32} : tensor<64x128xf32> -> i32
// CHECK: tq.adaptive_bit_width %{{.*}} for !tq.tiled<64x128xi8:per_tile, {{.*}}> {far_margin = 1.000000e-01 : f32, far_step = 4 : i64, high = {{.*}}, low = {{.*}}, max = 8 : i64} : tensor<64x128xf32> -> tensor<2x4xi32>
func.func @adaptive_bit_width(%x: tensor<64x128xf32>) {
  %0 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32, init = 12} : tensor<64x128xf32> -> i32
  %1 = tq.adaptive_bit_width %x for !tq.tiled<64x128xi8:per_tile, f32, tile = 32x32, dims = [0, 1]> {low = 0.01 : f32, high = 0.05 : f32, max = 8, far_step = 4, far_margin = 0.1 : f32} : tensor<64x128xf32> -> tensor<2x4xi32>
  return
}

// The CPU kernels' dot products (tq-to-cpu emits them).
// CHECK-LABEL: func.func @dots
// CHECK: tq.dot_u8s8 %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi32>, vector<64xi8>
// CHECK: tq.dot_u8s8_pairs %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<32xi8>
// CHECK: tq.dot_i16 %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<16xi16>
func.func @dots(%acc16: vector<16xi32>, %b64: vector<64xi8>, %acc8: vector<8xi32>,
                %b32: vector<32xi8>, %h16: vector<16xi16>) {
  %0 = tq.dot_u8s8 %acc16, %b64, %b64 : vector<16xi32>, vector<64xi8>
  %1 = tq.dot_u8s8_pairs %acc8, %b32, %b32 : vector<8xi32>, vector<32xi8>
  %2 = tq.dot_i16 %acc8, %h16, %h16 : vector<8xi32>, vector<16xi16>
  return
}
