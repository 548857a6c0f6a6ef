// RUN: tq-opt %s -split-input-file -tq-fold-transposes -mlir-print-debuginfo=false | FileCheck %s
// tq-fold-transposes quantizes before a linalg.transpose when tq.transpose
// can move the tiles back (SPEC T4): the backward convolutions of a
// training step then read the forward's tiles of X (shared below) instead
// of quantizing Xᵀ again.

!x = !tq.tiled<8x16x4x4xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!xt = !tq.tiled<16x8x4x4xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @square(%x: tensor<8x16x4x4xf32>) -> (!x, !xt) {
  %q = tq.quantize %x : tensor<8x16x4x4xf32> -> !x
  %e = tensor.empty() : tensor<16x8x4x4xf32>
  %t = linalg.transpose ins(%x : tensor<8x16x4x4xf32>) outs(%e : tensor<16x8x4x4xf32>) permutation = [1, 0, 2, 3]
  %qt = tq.quantize %t : tensor<16x8x4x4xf32> -> !xt
  return %q, %qt : !x, !xt
}

// CHECK-LABEL: func.func @square
// CHECK-NEXT: %[[Q:.*]] = tq.quantize %arg0 : tensor<8x16x4x4xf32> -> !tq.tiled<8x16x4x4xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
// CHECK-NEXT: %[[T:.*]] = tq.transpose %[[Q]] [1, 0, 2, 3]
// CHECK-NEXT: return %[[Q]], %[[T]]

// -----

// The split dims keep their order, so 1×V tiles move too: tiles on
// (N, C) of the NHWC value are tiles on (N, C) of the NCHW one.
!q = !tq.tiled<8x4x4x16xi8:8, f32, tile = 1x8, dims = [0, 3], scale = f32>
func.func @in_order(%x: tensor<8x16x4x4xf32>) -> !q {
  %e = tensor.empty() : tensor<8x4x4x16xf32>
  %t = linalg.transpose ins(%x : tensor<8x16x4x4xf32>) outs(%e : tensor<8x4x4x16xf32>) permutation = [0, 2, 3, 1]
  %qt = tq.quantize %t : tensor<8x4x4x16xf32> -> !q
  return %qt : !q
}

// CHECK-LABEL: func.func @in_order
// CHECK-NEXT: %[[Q:.*]] = tq.quantize %arg0 : tensor<8x16x4x4xf32> -> !tq.tiled<8x16x4x4xi8:8, f32, tile = 1x8, dims = [0, 1], scale = f32>
// CHECK-NEXT: tq.transpose %[[Q]] [0, 2, 3, 1]

// -----

// 1×V tiles whose split dims would swap cannot be moved: row vectors would
// become column vectors. The transposed f32 value is quantized as it is.
!v = !tq.tiled<16x8x4x4xi8:8, f32, tile = 1x8, dims = [0, 1], scale = f32>
func.func @vectors(%x: tensor<8x16x4x4xf32>) -> !v {
  %e = tensor.empty() : tensor<16x8x4x4xf32>
  %t = linalg.transpose ins(%x : tensor<8x16x4x4xf32>) outs(%e : tensor<16x8x4x4xf32>) permutation = [1, 0, 2, 3]
  %qt = tq.quantize %t : tensor<16x8x4x4xf32> -> !v
  return %qt : !v
}

// CHECK-LABEL: func.func @vectors
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK-NEXT: tq.quantize %[[T]]
// CHECK-NOT: tq.transpose

// -----

// Given scales are the transposed value's: left alone.
!s = !tq.tiled<16x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @given_scales(%x: tensor<8x16xf32>, %s: tensor<2x1xf32>) -> !s {
  %e = tensor.empty() : tensor<16x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  %qt = tq.quantize %t scales(%s : tensor<2x1xf32>) : tensor<16x8xf32> -> !s
  return %qt : !s
}

// CHECK-LABEL: func.func @given_scales
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK-NEXT: tq.quantize %[[T]] scales
