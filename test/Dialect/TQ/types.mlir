// RUN: tq-opt %s | tq-opt | FileCheck %s
// Round trip of every form of !tq.tiled (SPEC T1-T4, A1, A2).

// CHECK-LABEL: func.func @square_f32
// CHECK-SAME: !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
func.func @square_f32(%a: !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1]>) {
  return
}

// CHECK-LABEL: func.func @nhwc_pow2
// CHECK-SAME: !tq.tiled<8x14x14x64xi4:4, f32, tile = 16x16, dims = [0, 3], scale = pow2>
func.func @nhwc_pow2(%a: !tq.tiled<8x14x14x64xi4:4, f32, tile = 16x16, dims = [0, 3], scale = pow2>) {
  return
}

// CHECK-LABEL: func.func @per_vector_offset
// CHECK-SAME: !tq.tiled<128x512xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32, offset>
// CHECK-SAME: !tq.tiled<128x512xi8:8, f32, tile = 32x1, dims = [0, 1], scale = pow2_f32, offset>
func.func @per_vector_offset(
    %a: !tq.tiled<128x512xi8:8, f32, tile = 1x32, dims = [0, 1], offset, scale = f32>,
    %b: !tq.tiled<128x512xi8:8, f32, tile = 32x1, dims = [0, 1], scale = pow2_f32, offset>) {
  return
}

// CHECK-LABEL: func.func @bit_widths
// CHECK-SAME: !tq.tiled<64x64xi16:?, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK-SAME: !tq.tiled<64x64xi16:per_tile, bf16, tile = 32x32, dims = [0, 1], scale = pow2>
// CHECK-SAME: !tq.tiled<64x64xi16:12, f16, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK-SAME: !tq.tiled<64x64xi4:2, f32, tile = 8x8, dims = [0, 1], scale = f32>
// CHECK-SAME: !tq.tiled<64x64xi16:?(9), f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK-SAME: !tq.tiled<64x64xi8:per_tile(6), f32, tile = 32x32, dims = [0, 1], scale = f32>
func.func @bit_widths(
    %a: !tq.tiled<64x64xi16:?, f32, tile = 32x32, dims = [0, 1]>,
    %b: !tq.tiled<64x64xi16:per_tile, bf16, tile = 32x32, dims = [0, 1], scale = pow2>,
    %c: !tq.tiled<64x64xi16:12, f16, tile = 32x32, dims = [0, 1]>,
    %d: !tq.tiled<64x64xi4:2, f32, tile = 8x8, dims = [0, 1]>,
    %e: !tq.tiled<64x64xi16:?(9), f32, tile = 32x32, dims = [0, 1]>,
    %f: !tq.tiled<64x64xi8:per_tile(6), f32, tile = 32x32, dims = [0, 1]>) {
  return
}

// Partial edge tiles and dynamic dims are legal (T1).
// CHECK-LABEL: func.func @partial_and_dynamic
// CHECK-SAME: !tq.tiled<33x7xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK-SAME: !tq.tiled<?x3x100xi8:8, f32, tile = 128x128, dims = [0, 2], scale = f32>
func.func @partial_and_dynamic(
    %a: !tq.tiled<33x7xi8:8, f32, tile = 32x32, dims = [0, 1]>,
    %b: !tq.tiled<?x3x100xi8:8, f32, tile = 128x128, dims = [0, 2]>) {
  return
}
