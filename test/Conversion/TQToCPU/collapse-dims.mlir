// RUN: tq-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tq-cpu-collapse-dims))' | FileCheck %s

// A sum over the batch of an NCHW tensor: (C, H, W) are read in order by
// both operands and are all parallel, so they become one loop; N stays a
// reduction of its own.
#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
func.func @batch_sum(%x: tensor<8x4x5x6xf32>, %z: tensor<4x5x6xf32>) -> tensor<20x6xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%x : tensor<8x4x5x6xf32>) outs(%z : tensor<4x5x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x5x6xf32>
  // (A generic whose result is returned is left alone: see @returned.)
  %n = tensor.collapse_shape %r [[0, 1], [2]] : tensor<4x5x6xf32> into tensor<20x6xf32>
  return %n : tensor<20x6xf32>
}

// CHECK-LABEL: func.func @batch_sum
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<8x4x5x6xf32> into tensor<8x120xf32>
// CHECK-DAG: %[[Z:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<4x5x6xf32> into tensor<120xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[X]] : tensor<8x120xf32>) outs(%[[Z]] : tensor<120xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1, 2]] output_shape [4, 5, 6] : tensor<120xf32> into tensor<4x5x6xf32>
// CHECK: tensor.collapse_shape %[[E]]

// -----

// A per-channel bias: H and W merge; N and C cannot (the bias reads C
// alone), nor can C and H.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @bias(%x: tensor<2x3x4x5xf32>, %b: tensor<3xf32>, %e: tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32> {
  %r = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : tensor<2x3x4x5xf32>, tensor<3xf32>) outs(%e : tensor<2x3x4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x5xf32>
  %n = tensor.collapse_shape %r [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  return %n : tensor<6x4x5xf32>
}

// CHECK-LABEL: func.func @bias
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x20xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x3x20xf32>)

// -----

// Reductions keep their order: (H, W) merge as one reduction, C stays
// parallel between them and N.
#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @channel_sum(%x: tensor<2x3x4x5xf32>, %z: tensor<3xf32>) -> tensor<3x1xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<2x3x4x5xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %n = tensor.expand_shape %r [[0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
  return %n : tensor<3x1xf32>
}

// CHECK-LABEL: func.func @channel_sum
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x3x20xf32>)

// -----

// Left alone: a transposing map, a constant index, linalg.index, a slice
// operand (also through a reshape), a result the function returns, and the
// output of a convolution (whose epilogue tq-cpu-float-kernels fuses).
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#c0 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
func.func @untouched(%x: tensor<2x3x4xf32>, %y: tensor<2x4x3xf32>, %w: tensor<2x1x4xf32>, %big: tensor<4x6x8xf32>, %e: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<2x4x3xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3x4xf32>
  %c = linalg.generic {indexing_maps = [#c0, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<2x1x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3x4xf32>
  %i = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %k = linalg.index 2 : index
    %kf = arith.index_cast %k : index to i32
    %f = arith.sitofp %kf : i32 to f32
    %s = arith.addf %a, %f : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %sl = tensor.extract_slice %big[0, 0, 0] [2, 3, 4] [2, 2, 2] : tensor<4x6x8xf32> to tensor<2x3x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sl : tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x3x4xf32>
  return %t, %c, %i, %s : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @untouched
// CHECK-NOT: tensor.collapse_shape
// CHECK: return

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @after_conv(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>, %z: tensor<1x3x4x4xf32>, %e: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) outs(%z : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x3x4x4xf32>) outs(%e : tensor<1x3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}

// CHECK-LABEL: func.func @after_conv
// CHECK-NOT: tensor.collapse_shape
// CHECK: return

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @reshaped_slice(%big: tensor<4x8xf32>, %e: tensor<4x2x3xf32>) -> tensor<24xf32> {
  %sl = tensor.extract_slice %big[0, 0] [4, 6] [1, 1] : tensor<4x8xf32> to tensor<4x6xf32>
  %x = tensor.expand_shape %sl [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x2x3xf32>) outs(%e : tensor<4x2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x2x3xf32>
  %c = tensor.collapse_shape %r [[0, 1, 2]] : tensor<4x2x3xf32> into tensor<24xf32>
  return %c : tensor<24xf32>
}

// CHECK-LABEL: func.func @reshaped_slice
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x2x3xf32>)

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @returned(%x: tensor<4x2x3xf32>, %e: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x2x3xf32>) outs(%e : tensor<4x2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x2x3xf32>
  return %r : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @returned
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
