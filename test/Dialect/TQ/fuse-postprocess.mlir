// RUN: tq-opt %s -tq-fuse-postprocess | FileCheck %s

!a = !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1]>
!w = !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1]>
!o = !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1]>

// CHECK-LABEL: func.func @relu
// CHECK: %[[ACC:.*]] = tq.matmul
// CHECK-NEXT: %[[Q:.*]], %{{.*}} = tq.postprocess %[[ACC]] rounding stochastic {activation = #tq.activation<relu>, seed = 5 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8
// CHECK-NOT: linalg.generic
// CHECK: return %[[Q]]
func.func @relu(%x: !a, %w: !w) -> !o {
  %acc = tq.matmul %x, %w : !a, !w -> tensor<64x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%acc : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %zero, %in : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  %q = tq.quantize %r rounding stochastic {seed = 5 : i64} : tensor<64x128xf32> -> !o
  return %q : !o
}


// Without an activation: the requantization of the output alone.
// CHECK-LABEL: func.func @plain
// CHECK: tq.postprocess %{{.*}} : tensor<64x128xf32> -> !tq.tiled
func.func @plain(%x: !a, %w: !w) -> !o {
  %acc = tq.matmul %x, %w : !a, !w -> tensor<64x128xf32>
  %q = tq.quantize %acc : tensor<64x128xf32> -> !o
  return %q : !o
}


// Not fused: max with a non-zero constant is not a ReLU; a float input that
// is not a tiled product is quantized as usual.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: tq.postprocess
// CHECK: tq.quantize
// CHECK: tq.quantize
func.func @not_fused(%x: !a, %w: !w, %f: tensor<64x128xf32>) -> (!o, !o) {
  %acc = tq.matmul %x, %w : !a, !w -> tensor<64x128xf32>
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%acc : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %one : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  %q = tq.quantize %r : tensor<64x128xf32> -> !o
  %q2 = tq.quantize %f : tensor<64x128xf32> -> !o
  return %q, %q2 : !o, !o
}

// A run-time seed offset (tq.postprocess takes none): left as it is.
// CHECK-LABEL: func.func @seed_offset
// CHECK-NOT: tq.postprocess
// CHECK: tq.quantize %{{.*}} rounding stochastic seed_offset(%{{.*}}) {seed = 5 : i64}
func.func @seed_offset(%x: !a, %w: !w, %it: i32) -> !o {
  %acc = tq.matmul %x, %w : !a, !w -> tensor<64x128xf32>
  %q = tq.quantize %acc rounding stochastic seed_offset(%it) {seed = 5 : i64} : tensor<64x128xf32> -> !o
  return %q : !o
}
