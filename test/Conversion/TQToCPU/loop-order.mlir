// RUN: tq-opt %s -tq-cpu-loop-order -split-input-file | FileCheck %s
// The contiguous output loop moves innermost, behind the reductions, so
// that LLVM vectorizes it; ops already in that order, and reductions whose
// inputs do not walk the output's last dim, are left alone.

// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d5 + d6)>
// CHECK: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
// CHECK-LABEL: func.func @conv
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
// CHECK-NOT: linalg.conv_2d
func.func @conv(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x6x6xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x6x6xf32>)
  return
}

// -----

// (m, n, k) becomes (m, k, n).
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A row sum reads its input's last dim with the reduction loop: kept.
// CHECK-LABEL: func.func @row_sum
// CHECK: iterator_types = ["parallel", "reduction"]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Strided max pooling: (n, c, oh, ow, kh, kw) becomes (n, c, oh, kh, ow,
// kw): kw stays innermost, so that once LLVM unrolls it one output's
// loads are neighbours (an interleaved group).
// CHECK: #[[PIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d3, d4 * 2 + d5)>
// CHECK-LABEL: func.func @pool
// CHECK: linalg.generic {indexing_maps = [#[[PIN]], {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]
func.func @pool(%x: memref<1x2x8x8xf32>, %k: memref<2x2xf32>, %y: memref<1x2x4x4xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : memref<1x2x8x8xf32>, memref<2x2xf32>) outs(%y : memref<1x2x4x4xf32>)
  return
}

// -----

// Unit-stride pooling: ow goes innermost.
// CHECK-LABEL: func.func @pool_unit
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
func.func @pool_unit(%x: memref<1x2x8x8xf32>, %k: memref<3x3xf32>, %y: memref<1x2x6x6xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : memref<1x2x8x8xf32>, memref<3x3xf32>) outs(%y : memref<1x2x6x6xf32>)
  return
}
