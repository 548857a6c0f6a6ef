// RUN: tq-opt %s -tq-cpu-fuse-elementwise | FileCheck %s
// A layout transpose, a bias add and a ReLU on the same tensor become one
// loop nest; a producer with a second use is kept.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias = affine_map<(n, c, h, w) -> (c)>

// CHECK-LABEL: func.func @chain
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<2x5x5x4xf32>, %b: tensor<4xf32>) -> tensor<2x4x5x5xf32> {
  %e = tensor.empty() : tensor<2x4x5x5xf32>
  %t = linalg.transpose ins(%x : tensor<2x5x5x4xf32>) outs(%e : tensor<2x4x5x5xf32>) permutation = [0, 3, 1, 2]
  %a = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t, %b : tensor<2x4x5x5xf32>, tensor<4xf32>) outs(%e : tensor<2x4x5x5xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.addf %v, %w : f32
      linalg.yield %s : f32
  } -> tensor<2x4x5x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : tensor<2x4x5x5xf32>) outs(%e : tensor<2x4x5x5xf32>) {
    ^bb0(%v: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %v, %z : f32
      linalg.yield %m : f32
  } -> tensor<2x4x5x5xf32>
  return %r : tensor<2x4x5x5xf32>
}

// CHECK-LABEL: func.func @shared
// CHECK: %[[A:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]]
// CHECK: return %[[A]]
func.func @shared(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.addf %v, %v : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.mulf %v, %v : f32
      linalg.yield %m : f32
  } -> tensor<8xf32>
  return %a, %r : tensor<8xf32>, tensor<8xf32>
}

// A fill with two users (CSE merged the fills of two outputs of one shape)
// becomes one fill per user, each on a tensor.empty of its own, just
// before it.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT: %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<2x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x8xf32>) outs(%[[F0]] : tensor<2x8xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<2x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x8xf32>) outs(%[[F1]] : tensor<2x8xf32>)
// CHECK-NOT: linalg.fill
func.func @shared_fill(%a: tensor<2x4xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<2x4xf32>, tensor<4x8xf32>) outs(%f : tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = linalg.matmul ins(%a, %c : tensor<2x4xf32>, tensor<4x8xf32>) outs(%f : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// The transpose of a constant (a Gemm's transB weight in an f32 program)
// becomes the constant of the permuted values, computed once at compile
// time; a large one stays a dense resource.
// CHECK-LABEL: func.func @constant_transpose
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK: arith.constant dense_resource<transposed> : tensor<3x2xf32>
func.func @constant_transpose() -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%c : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %r = arith.constant dense_resource<w> : tensor<2x3xf32>
  %u = linalg.transpose ins(%r : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t, %u : tensor<3x2xf32>, tensor<3x2xf32>
}
// The resource's values, transposed: 1, 4, 2, 5, 3, 6.
// CHECK: transposed: "0x040000000000803F00008040000000400000A040000040400000C040"

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}
