// RUN: tq-opt %s -tq-cpu-channels-last -split-input-file | FileCheck %s

// The NHWC-to-NCHW transpose after a quantized convolution moves down
// past the bias add and the ReLU (the bias read as (C) at c, its unit dims
// dropped) and the quantization, whose tiles move with their dims; the
// tq.transpose back to NHWC folds away.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias = affine_map<(n, c, h, w) -> (c, 0, 0)>
!nhwc = tensor<2x3x3x4xf32>
!nchw = tensor<2x4x3x3xf32>

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @bias_relu_quantize
// CHECK-SAME: (%[[Y:.*]]: tensor<2x3x3x4xf32>, %[[B:.*]]: tensor<4x1x1xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[BC:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1, 2]] : tensor<4x1x1xf32> into tensor<4xf32>
// CHECK: %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[C]], #[[ID]]]
// CHECK-SAME: ins(%[[Y]], %[[BC]] : tensor<2x3x3x4xf32>, tensor<4xf32>)
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[ADD]] : tensor<2x3x3x4xf32>)
// CHECK: %[[Q:.*]] = tq.quantize %[[RELU]] : tensor<2x3x3x4xf32> -> !tq.tiled<2x3x3x4xi8:8, f32, tile = 16x16, dims = [0, 3], scale = f32>
// CHECK-NOT: tq.transpose
// CHECK: return %[[Q]]
func.func @bias_relu_quantize(%y: !nhwc, %b: tensor<4x1x1xf32>)
    -> !tq.tiled<2x3x3x4xi8:8, f32, tile = 16x16, dims = [0, 3], scale = f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %a = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t, %b : !nchw, tensor<4x1x1xf32>) outs(%e : !nchw) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    linalg.yield %s : f32
  } -> !nchw
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : !nchw) outs(%e : !nchw) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> !nchw
  %q = tq.quantize %r : !nchw -> !tq.tiled<2x4x3x3xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
  %n = tq.transpose %q [0, 2, 3, 1] : !tq.tiled<2x4x3x3xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32> -> !tq.tiled<2x3x3x4xi8:8, f32, tile = 16x16, dims = [0, 3], scale = f32>
  return %n : !tq.tiled<2x3x3x4xi8:8, f32, tile = 16x16, dims = [0, 3], scale = f32>
}

// Non-square tiles whose split dims would swap ((C, H) is (H, C) in NHWC)
// stay: a tq.transpose cannot swap them.

// CHECK-LABEL: func.func @tile_order
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: %[[Q:.*]] = tq.quantize %[[T]] : tensor<2x4x3x3xf32>
// CHECK: return %[[Q]]
func.func @tile_order(%y: !nhwc) -> !tq.tiled<2x4x3x3xi8:8, f32, tile = 1x16, dims = [1, 2], scale = f32> {
  %e = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %q = tq.quantize %t : !nchw -> !tq.tiled<2x4x3x3xi8:8, f32, tile = 1x16, dims = [1, 2], scale = f32>
  return %q : !tq.tiled<2x4x3x3xi8:8, f32, tile = 1x16, dims = [1, 2], scale = f32>
}

// -----

// A residual add of two transposed values (the second moved through its
// other operand's loops) and a global average pooling (a sum over H and W,
// its output kept as (N, C), the sum in the same order h then w) read the
// NHWC values; the add's NHWC result is transposed back for the return.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#nc = affine_map<(n, c, h, w) -> (n, c)>
!nhwc = tensor<2x3x3x4xf32>
!nchw = tensor<2x4x3x3xf32>

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[NC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @residual_pool
// CHECK-SAME: (%[[Y:.*]]: tensor<2x3x3x4xf32>, %[[Z:.*]]: tensor<2x3x3x4xf32>
// CHECK: %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]]
// CHECK-SAME: ins(%[[Y]], %[[Z]] : tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>)
// CHECK: %[[BACK:.*]] = linalg.transpose ins(%[[ADD]] : tensor<2x3x3x4xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[NC]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[ADD]] : tensor<2x3x3x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: return %[[BACK]], %[[SUM]]
func.func @residual_pool(%y: !nhwc, %z: !nhwc, %init: tensor<2x4xf32>) -> (!nchw, tensor<2x4xf32>) {
  %e = tensor.empty() : !nchw
  %e2 = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %u = linalg.transpose ins(%z : !nhwc) outs(%e2 : !nchw) permutation = [0, 3, 1, 2]
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t, %u : !nchw, !nchw) outs(%e : !nchw) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %s = arith.addf %x, %w : f32
    linalg.yield %s : f32
  } -> !nchw
  %p = linalg.generic {indexing_maps = [#id, #nc], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a : !nchw) outs(%init : tensor<2x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  return %a, %p : !nchw, tensor<2x4xf32>
}

// -----

// Left in NCHW: a sum over C and H (over NHWC loops it would add h before
// c), a generic that reads its NCHW init, and a stochastic quantization
// (its noise follows each element's place).

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#nw = affine_map<(n, c, h, w) -> (n, w)>
!nhwc = tensor<2x3x3x4xf32>
!nchw = tensor<2x4x3x3xf32>

// CHECK-LABEL: func.func @kept
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%[[T]] : tensor<2x4x3x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<2x4x3x3xf32>) outs(%{{.*}} : tensor<2x4x3x3xf32>)
// CHECK: tq.quantize %[[T]] rounding stochastic
func.func @kept(%y: !nhwc, %init: tensor<2x3xf32>, %acc: !nchw, %it: i32)
    -> (tensor<2x3xf32>, !nchw, !tq.tiled<2x4x3x3xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>) {
  %e = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %s = linalg.generic {indexing_maps = [#id, #nw], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%t : !nchw) outs(%init : tensor<2x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %o, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : !nchw) outs(%acc : !nchw) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %o, %x : f32
    linalg.yield %r : f32
  } -> !nchw
  %q = tq.quantize %t rounding stochastic seed_offset(%it) {seed = 7 : i64} : !nchw -> !tq.tiled<2x4x3x3xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
  return %s, %a, %q : tensor<2x3xf32>, !nchw, !tq.tiled<2x4x3x3xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
}

// -----

// A pad and a depthwise convolution (C groups of one channel) on the NHWC
// value: the pad in NHWC order, a linalg.depthwise_conv_2d_nhwc_hwc from
// the same fill, its constant filter's values moved to (R, S, C).

!nhwc = tensor<1x4x4x2xf32>
!nchw = tensor<1x2x4x4xf32>

// CHECK-LABEL: func.func @depthwise
// CHECK-SAME: (%[[Y:.*]]: tensor<1x4x4x2xf32>)
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 1.000000e+01], [2.000000e+00, 2.000000e+01]], {{\[\[}}3.000000e+00, 3.000000e+01], [4.000000e+00, 4.000000e+01]]]> : tensor<2x2x2xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[Y]] low[0, 1, 1, 0] high[0, 0, 1, 0]
// CHECK: } : tensor<1x4x4x2xf32> to tensor<1x5x6x2xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x3x2xf32>)
// CHECK: %[[D:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x5x6x2xf32>, tensor<2x2x2xf32>) outs(%[[F]] : tensor<1x2x3x2xf32>)
// CHECK: linalg.transpose ins(%[[D]] : tensor<1x2x3x2xf32>) {{.*}} permutation = [0, 3, 1, 2]
func.func @depthwise(%y: !nhwc) -> tensor<1x2x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[[1.0, 2.0], [3.0, 4.0]]]], [[[[10.0, 20.0], [30.0, 40.0]]]]]> : tensor<2x1x1x2x2xf32>
  %e = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %p = tensor.pad %t low[0, 0, 1, 1] high[0, 0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : !nchw to tensor<1x2x5x6xf32>
  %x = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 5, 6] : tensor<1x2x5x6xf32> into tensor<1x2x1x5x6xf32>
  %o = tensor.empty() : tensor<1x2x1x2x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x2x1x2x3xf32>) -> tensor<1x2x1x2x3xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x1x5x6xf32>, tensor<2x1x1x2x2xf32>) outs(%f : tensor<1x2x1x2x3xf32>) -> tensor<1x2x1x2x3xf32>
  %r = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x2x1x2x3xf32> into tensor<1x2x2x3xf32>
  return %r : tensor<1x2x2x3xf32>
}

// -----

// Left in NCHW: a depthwise convolution whose padded NHWC image (9 x 9 x
// 960 channels, 311 KiB) exceeds the NHWC kernel's scratch buffer, and its
// pad; a quantization with a width per tile (laid out as the NCHW grid).

!nhwc = tensor<1x7x7x960xf32>
!nchw = tensor<1x960x7x7xf32>

// CHECK-LABEL: func.func @kept_large
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: tensor.pad %[[T]] low[0, 0, 1, 1]
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: tq.quantize %[[T]] bits(
func.func @kept_large(%y: !nhwc, %w: tensor<960x1x1x3x3xf32>, %bits: tensor<1x30x7x7xi32>)
    -> (tensor<1x960x7x7xf32>, !tq.tiled<1x960x7x7xi16:per_tile, f32, tile = 32x32, dims = [0, 1], scale = f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %p = tensor.pad %t low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : !nchw to tensor<1x960x9x9xf32>
  %x = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [1, 960, 1, 9, 9] : tensor<1x960x9x9xf32> into tensor<1x960x1x9x9xf32>
  %o = tensor.empty() : tensor<1x960x1x7x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x960x1x7x7xf32>) -> tensor<1x960x1x7x7xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x960x1x9x9xf32>, tensor<960x1x1x3x3xf32>) outs(%f : tensor<1x960x1x7x7xf32>) -> tensor<1x960x1x7x7xf32>
  %r = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x960x1x7x7xf32> into tensor<1x960x7x7xf32>
  %q = tq.quantize %t bits(%bits : tensor<1x30x7x7xi32>) : !nchw -> !tq.tiled<1x960x7x7xi16:per_tile, f32, tile = 32x32, dims = [0, 1], scale = f32>
  return %r, %q : tensor<1x960x7x7xf32>, !tq.tiled<1x960x7x7xi16:per_tile, f32, tile = 32x32, dims = [0, 1], scale = f32>
}

// -----

// A max pooling of the NHWC value from a fill: linalg.pooling_nhwc_max from
// the same fill, its output transposed to NCHW.

!nhwc = tensor<2x4x4x8xf32>
!nchw = tensor<2x8x4x4xf32>

// CHECK-LABEL: func.func @pool
// CHECK-SAME: (%[[Y:.*]]: tensor<2x4x4x8xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x2x2x8xf32>)
// CHECK: %[[P:.*]] = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[Y]], %{{.*}} : tensor<2x4x4x8xf32>, tensor<2x2xf32>) outs(%[[F]] : tensor<2x2x2x8xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[P]] : tensor<2x2x2x8xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK: return %[[T]]
func.func @pool(%y: !nhwc, %k: tensor<2x2xf32>) -> tensor<2x8x2x2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %o = tensor.empty() : tensor<2x8x2x2xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%o : tensor<2x8x2x2xf32>) -> tensor<2x8x2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%t, %k : !nchw, tensor<2x2xf32>) outs(%f : tensor<2x8x2x2xf32>) -> tensor<2x8x2x2xf32>
  return %p : tensor<2x8x2x2xf32>
}

// -----

// A training step (its samples marked tq.batch) is left as it is.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
!nhwc = tensor<2x3x3x4xf32>
!nchw = tensor<2x4x3x3xf32>

// CHECK-LABEL: func.func @step
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<2x4x3x3xf32>)
func.func @step(%y: !nhwc {tq.batch}) -> !nchw {
  %e = tensor.empty() : !nchw
  %t = linalg.transpose ins(%y : !nhwc) outs(%e : !nchw) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : !nchw) outs(%e : !nchw) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.negf %x : f32
    linalg.yield %m : f32
  } -> !nchw
  return %r : !nchw
}

// -----

// A first convolution on one channel with a constant filter runs in NHWC:
// the image reshaped (the same bytes), the filter reordered to (R, S, 1, F)
// at compile time, from the same fill; its ReLU and max pooling follow in
// NHWC and the quantization takes NHWC tiles: the only transpose left is
// the result's, at the function's boundary.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>

// CHECK-LABEL: func.func @first_conv
// CHECK-SAME: %[[X:.*]]: tensor<2x1x6x6xf32>
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00, 1.000000e+01]], {{\[\[}}2.000000e+00, 2.000000e+01]]], {{\[\[\[}}3.000000e+00, 3.000000e+01]], {{\[\[}}4.000000e+00, 4.000000e+01]]]]> : tensor<2x2x1x2xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2], [3]]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 6, 6, 1]
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x5x5x2xf32>)
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[E]], %[[W]] : tensor<2x6x6x1xf32>, tensor<2x2x1x2xf32>) outs(%[[F]]
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK: linalg.pooling_nhwc_max
// CHECK-NOT: linalg.transpose
// CHECK: tq.quantize %{{.*}} : tensor<2x2x2x2xf32> -> !tq.tiled<2x2x2x2xi8:8, f32, tile = 32x32, dims = [0, 3], scale = f32>
// CHECK-NEXT: tq.transpose %{{.*}} [0, 3, 1, 2]
func.func @first_conv(%x: tensor<2x1x6x6xf32>) -> !tq.tiled<2x2x2x2xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32> {
  %w = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[10.0, 20.0], [30.0, 40.0]]]]> : tensor<2x1x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x2x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x5x5xf32>) -> tensor<2x2x5x5xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<2x1x6x6xf32>, tensor<2x1x2x2xf32>) outs(%f : tensor<2x2x5x5xf32>) -> tensor<2x2x5x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x2x5x5xf32>) outs(%e : tensor<2x2x5x5xf32>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.maximumf %v, %zero : f32
      linalg.yield %m : f32
  } -> tensor<2x2x5x5xf32>
  %pe = tensor.empty() : tensor<2x2x2x2xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x2x2x2xf32>) -> tensor<2x2x2x2xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%r, %k : tensor<2x2x5x5xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x2x2x2xf32>) -> tensor<2x2x2x2xf32>
  %q = tq.quantize %p : tensor<2x2x2x2xf32> -> !tq.tiled<2x2x2x2xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
  return %q : !tq.tiled<2x2x2x2xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
}

// -----

// Its zero pad (of H and W) stays in front of it, in NHWC: the image is
// reshaped, then padded.
// CHECK-LABEL: func.func @first_conv_padded
// CHECK-SAME: %[[X:.*]]: tensor<1x1x4x4xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{.*}} output_shape [1, 4, 4, 1]
// CHECK: %[[P:.*]] = tensor.pad %[[E]] low[0, 1, 2, 0] high[0, 1, 0, 0]
// CHECK: } : tensor<1x4x4x1xf32> to tensor<1x6x6x1xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[P]], %{{.*}} : tensor<1x6x6x1xf32>, tensor<3x3x1x2xf32>)
// CHECK-NOT: tensor.pad
func.func @first_conv_padded(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = arith.constant dense<1.0> : tensor<2x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x4x4xf32> to tensor<1x1x6x6xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%p, %w : tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Left alone: three channels (not the same bytes in NHWC), a filter that is
// not a constant.
// CHECK-LABEL: func.func @first_conv_kept
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} tensor<1x3x6x6xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} tensor<1x1x6x6xf32>
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
func.func @first_conv_kept(%x3: tensor<1x3x6x6xf32>, %x1: tensor<1x1x6x6xf32>, %w1: tensor<2x1x3x3xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w3 = arith.constant dense<1.0> : tensor<2x3x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x3, %w3 : tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x1, %w1 : tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %a, %b : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
