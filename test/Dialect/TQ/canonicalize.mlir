// RUN: tq-opt %s -canonicalize -split-input-file | FileCheck %s

!sq = !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
!sqT = !tq.tiled<128x64xi8:8, f32, tile = 32x32, dims = [0, 1]>

// transpose . transpose -> identity.
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[Q:.*]]: !tq.tiled
// CHECK-NOT: tq.transpose
// CHECK: return %[[Q]]
func.func @transpose_transpose(%q: !sq) -> !sq {
  %0 = tq.transpose %q [1, 0] : !sq -> !sqT
  %1 = tq.transpose %0 [1, 0] : !sqT -> !sq
  return %1 : !sq
}

// -----

// Two transposes that do not cancel merge into one.
// CHECK-LABEL: func.func @transpose_merge
// CHECK: %[[T:.*]] = tq.transpose %{{.*}} [2, 0, 1] : !tq.tiled<2x4x6xi8:8, f32, tile = 32x32, dims = [1, 2], scale = f32> -> !tq.tiled<6x2x4xi8:8, f32, tile = 32x32, dims = [0, 2], scale = f32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_merge(%q: !tq.tiled<2x4x6xi8:8, f32, tile = 32x32, dims = [1, 2]>) -> !tq.tiled<6x2x4xi8:8, f32, tile = 32x32, dims = [0, 2]> {
  %0 = tq.transpose %q [1, 0, 2] : !tq.tiled<2x4x6xi8:8, f32, tile = 32x32, dims = [1, 2]> -> !tq.tiled<4x2x6xi8:8, f32, tile = 32x32, dims = [0, 2]>
  %1 = tq.transpose %0 [2, 1, 0] : !tq.tiled<4x2x6xi8:8, f32, tile = 32x32, dims = [0, 2]> -> !tq.tiled<6x2x4xi8:8, f32, tile = 32x32, dims = [0, 2]>
  return %1 : !tq.tiled<6x2x4xi8:8, f32, tile = 32x32, dims = [0, 2]>
}

// -----

// An identity permutation folds away.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-NOT: tq.transpose
func.func @transpose_identity(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> {
  %0 = tq.transpose %q [0, 1] : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  return %0 : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
}

// -----

// dequantize(quantize(c)) folds when the round trip is exact: integers up
// to 127 with max|x| = 127 in an 8-bit tile have step 1.
// CHECK-LABEL: func.func @dequant_quant_exact
// CHECK: %[[C:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, -2.000000e+00], [1.270000e+02, 0.000000e+00]]>
// CHECK-NOT: tq.
// CHECK: return %[[C]]
func.func @dequant_quant_exact() -> tensor<2x2xf32> {
  %c = arith.constant dense<[[1.0, -2.0], [127.0, 0.0]]> : tensor<2x2xf32>
  %q = tq.quantize %c : tensor<2x2xf32> -> !tq.tiled<2x2xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %q : !tq.tiled<2x2xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

// An all-zero constant is exact too (step 0, no division by zero).
// CHECK-LABEL: func.func @dequant_quant_zero
// CHECK-NOT: tq.
// CHECK: return
func.func @dequant_quant_zero() -> tensor<3x5xf32> {
  %c = arith.constant dense<0.0> : tensor<3x5xf32>
  %q = tq.quantize %c : tensor<3x5xf32> -> !tq.tiled<3x5xi4:4, f32, tile = 2x2, dims = [0, 1], scale = pow2>
  %d = tq.dequantize %q : !tq.tiled<3x5xi4:4, f32, tile = 2x2, dims = [0, 1], scale = pow2> -> tensor<3x5xf32>
  return %d : tensor<3x5xf32>
}

// -----

// Not exact: 0.3 is not a multiple of the step 1/127: no fold.
// CHECK-LABEL: func.func @dequant_quant_inexact
// CHECK: tq.quantize
// CHECK: tq.dequantize
func.func @dequant_quant_inexact() -> tensor<1x2xf32> {
  %c = arith.constant dense<[[0.3, 1.0]]> : tensor<1x2xf32>
  %q = tq.quantize %c : tensor<1x2xf32> -> !tq.tiled<1x2xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %q : !tq.tiled<1x2xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<1x2xf32>
  return %d : tensor<1x2xf32>
}

// -----

// Not a constant: quantization is lossy in general, so no fold.
// CHECK-LABEL: func.func @dequant_quant_value
// CHECK: tq.quantize
// CHECK: tq.dequantize
func.func @dequant_quant_value(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %q = tq.quantize %x : tensor<4x4xf32> -> !tq.tiled<4x4xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %q : !tq.tiled<4x4xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// -----

// requantize to the same type folds; to another type it stays.
// CHECK-LABEL: func.func @requantize_same
// CHECK-SAME: (%[[Q:.*]]: !tq.tiled
// CHECK-NEXT: %[[R:.*]] = tq.requantize %[[Q]] : {{.*}} -> !tq.tiled<64x128xi4:4
// CHECK-NEXT: return %[[Q]], %[[R]]
func.func @requantize_same(%q: !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>)
    -> (!tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<64x128xi4:4, f32, tile = 32x32, dims = [0, 1]>) {
  %0 = tq.requantize %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %1 = tq.requantize %q : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<64x128xi4:4, f32, tile = 32x32, dims = [0, 1]>
  return %0, %1 : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<64x128xi4:4, f32, tile = 32x32, dims = [0, 1]>
}

// -----

// requantize of a constant is evaluated at compile time. 8 -> 4 bits with a
// power-of-two step: the values are [[1, 3], [-8, 63.5]], s =
// ceil(log2(63.5 / 7)) = 4, step 16, q = round(x / 16) (-0.5 -> 0, even).
// The per-vector transpose: rows [1, 3] and [63.5, -4] become rows
// [1, 63.5] (step 0.5) and [3, -4] (step 4/127, 3 -> 95.25 -> 95).
// CHECK-LABEL: func.func @requantize_constant
// CHECK-NOT: tq.requantize
// CHECK: tq.constant {scales = dense<1.600000e+01> : tensor<1x1xf32>, values = dense<{{\[\[}}0, 0], [0, 4]]> : tensor<2x2xi4>} : !tq.tiled<2x2xi4:4, f32, tile = 2x2, dims = [0, 1], scale = pow2>
// CHECK: tq.constant {scales = dense<{{\[\[}}5.000000e-01], [0.0314960629]]> : tensor<2x1xf32>, values = dense<{{\[\[}}2, 127], [95, -127]]> : tensor<2x2xi8>} : !tq.tiled<2x2xi8:8, f32, tile = 1x2
func.func @requantize_constant() -> (!tq.tiled<2x2xi4:4, f32, tile = 2x2, dims = [0, 1], scale = pow2>, !tq.tiled<2x2xi8:8, f32, tile = 1x2, dims = [0, 1]>) {
  %c = tq.constant {values = dense<[[2, 6], [-16, 127]]> : tensor<2x2xi8>, scales = dense<0.5> : tensor<1x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  %r = tq.requantize %c : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]> -> !tq.tiled<2x2xi4:4, f32, tile = 2x2, dims = [0, 1], scale = pow2>
  %v = tq.constant {values = dense<[[2, 6], [127, -8]]> : tensor<2x2xi8>, scales = dense<[[0.5], [0.5]]> : tensor<2x1xf32>} : !tq.tiled<2x2xi8:8, f32, tile = 1x2, dims = [0, 1]>
  %t = tq.requantize %v permutation([1, 0]) : !tq.tiled<2x2xi8:8, f32, tile = 1x2, dims = [0, 1]> -> !tq.tiled<2x2xi8:8, f32, tile = 1x2, dims = [0, 1]>
  return %r, %t : !tq.tiled<2x2xi4:4, f32, tile = 2x2, dims = [0, 1], scale = pow2>, !tq.tiled<2x2xi8:8, f32, tile = 1x2, dims = [0, 1]>
}
