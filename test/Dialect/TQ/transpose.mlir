// RUN: tq-opt %s -split-input-file -verify-diagnostics -canonicalize | FileCheck %s
// SPEC T4: the transpose of square-tiled data reuses every scale and needs
// no re-quantization; non-square (per-vector) tiles must be requantized.

!x = !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1]>
!xt = !tq.tiled<256x64xi8:8, f32, tile = 32x32, dims = [0, 1]>
!w = !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
!wt = !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1]>
!dy = !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>

// One training step of a layer (T7): each tensor is quantized once; the
// backward GEMMs read Wᵀ and Xᵀ through tq.transpose, not requantization.
// CHECK-LABEL: func.func @train_step
// CHECK-COUNT-3: tq.quantize
// CHECK-NOT: tq.quantize
// CHECK-NOT: tq.requantize
// CHECK: %[[WT:.*]] = tq.transpose %{{.*}} [1, 0] : !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32> -> !tq.tiled<128x256xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: tq.matmul %{{.*}}, %[[WT]] : {{.*}} -> tensor<64x256xf32>
// CHECK: %[[XT:.*]] = tq.transpose %{{.*}} [1, 0] : !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32> -> !tq.tiled<256x64xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: tq.matmul %[[XT]], %{{.*}} : {{.*}} -> tensor<256x128xf32>
// CHECK-NOT: tq.requantize
func.func @train_step(%xf: tensor<64x256xf32>, %wf: tensor<256x128xf32>, %dyf: tensor<64x128xf32>)
    -> (tensor<64x128xf32>, tensor<64x256xf32>, tensor<256x128xf32>) {
  %x = tq.quantize %xf : tensor<64x256xf32> -> !x
  %w = tq.quantize %wf : tensor<256x128xf32> -> !w
  %dy = tq.quantize %dyf : tensor<64x128xf32> -> !dy
  %y = tq.matmul %x, %w : !x, !w -> tensor<64x128xf32>
  %wT = tq.transpose %w [1, 0] : !w -> !wt
  %dx = tq.matmul %dy, %wT : !dy, !wt -> tensor<64x256xf32>
  %xT = tq.transpose %x [1, 0] : !x -> !xt
  %dw = tq.matmul %xT, %dy : !xt, !dy -> tensor<256x128xf32>
  return %y, %dx, %dw : tensor<64x128xf32>, tensor<64x256xf32>, tensor<256x128xf32>
}

// -----

// The scales of a transposed constant are the same numbers, on the
// transposed tile grid; the data is the transposed data.
// CHECK-LABEL: func.func @transpose_keeps_scales
// CHECK: tq.constant {scales = dense<{{\[\[}}5.000000e-01, 2.000000e+00], [2.500000e-01, 4.000000e+00]]> : tensor<2x2xf32>, values = dense<{{\[\[}}1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15], [4, 8, 12, 16]]> : tensor<4x4xi8>}
// CHECK-NOT: tq.transpose
func.func @transpose_keeps_scales() -> !tq.tiled<4x4xi8:8, f32, tile = 2x2, dims = [0, 1]> {
  %c = tq.constant {values = dense<[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]> : tensor<4x4xi8>,
                    scales = dense<[[0.5, 0.25], [2.0, 4.0]]> : tensor<2x2xf32>}
      : !tq.tiled<4x4xi8:8, f32, tile = 2x2, dims = [0, 1]>
  %t = tq.transpose %c [1, 0] : !tq.tiled<4x4xi8:8, f32, tile = 2x2, dims = [0, 1]> -> !tq.tiled<4x4xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return %t : !tq.tiled<4x4xi8:8, f32, tile = 2x2, dims = [0, 1]>
}

// -----

// Per-vector (1xV) scales: a plain transpose is rejected ...
func.func @per_vector_transpose(%v: !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]>) {
  // expected-error @+1 {{transposing non-square tiles (1x32) swaps the split dims and cannot reuse the scales; use 'tq.requantize' with a permutation}}
  %t = tq.transpose %v [1, 0] : !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]> -> !tq.tiled<128x64xi8:8, f32, tile = 32x1, dims = [0, 1]>
  return
}

// -----

// ... and legal as a requantization, which canonicalization keeps.
// CHECK-LABEL: func.func @per_vector_requantize
// CHECK: tq.requantize %{{.*}} permutation([1, 0]) : !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32> -> !tq.tiled<128x64xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32>
func.func @per_vector_requantize(%v: !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]>) -> !tq.tiled<128x64xi8:8, f32, tile = 1x32, dims = [0, 1]> {
  %t = tq.requantize %v permutation([1, 0]) : !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1]> -> !tq.tiled<128x64xi8:8, f32, tile = 1x32, dims = [0, 1]>
  return %t : !tq.tiled<128x64xi8:8, f32, tile = 1x32, dims = [0, 1]>
}
