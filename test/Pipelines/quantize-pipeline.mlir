// RUN: tq-opt %s -tq-quantize="tile=16 weight-bits=4" | FileCheck %s
// RUN: tq-opt %s -tq-quantize="granularity=vector" | FileCheck %s --check-prefix=VECTOR
// RUN: tq-opt %s -pass-pipeline="builtin.module(tq-quantize{tile=16 weight-bits=4 scale=pow2})" | FileCheck %s --check-prefix=POW2

// A two-layer MLP forward and the first layer's backward: each tensor is
// quantized once and shared by its consumers (CSE), the hidden layer's ReLU
// and requantization fuse into tq.postprocess (T6), constant weights become
// tq.constant (compiled with the reference numerics), the backward GEMMs
// read transposed operands through flags (T4), no requantization.

// CHECK-LABEL: func.func @mlp
// CHECK: %[[X:.*]] = tq.quantize %arg0 : tensor<8x32xf32> -> !tq.tiled<8x32xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
// CHECK: %[[W1:.*]] = tq.constant {{.*}} : !tq.tiled<32x16xi4:4, f32, tile = 16x16, dims = [0, 1], scale = f32>
// CHECK: %[[H:.*]] = tq.matmul %[[X]], %[[W1]]
// CHECK: %[[QH:.*]], %{{.*}} = tq.postprocess %[[H]] {activation = #tq.activation<relu>} : tensor<8x16xf32> -> !tq.tiled<8x16xi8:8
// CHECK: %[[W2:.*]] = tq.constant {{.*}} : !tq.tiled<16x8xi4:4, f32, tile = 16x16, dims = [0, 1], scale = f32>
// CHECK: tq.matmul %[[QH]], %[[W2]]
// CHECK: %[[DY:.*]] = tq.quantize %arg1
// CHECK: tq.matmul %[[DY]], %[[W1]] {transpose_b}
// CHECK: tq.matmul %[[X]], %[[DY]] {transpose_a}
// CHECK-NOT: tq.requantize
// CHECK-NOT: linalg.matmul
// POW2: tq.constant {{.*}} scale = pow2>
// With per-vector scaling the transposed uses are requantizations.
// VECTOR-LABEL: func.func @mlp
// VECTOR: tq.requantize
func.func @mlp(%x: tensor<8x32xf32>, %dh: tensor<8x16xf32> {tq.role = #tq.role<output_grad>})
    -> (tensor<8x8xf32>, tensor<8x32xf32>, tensor<32x16xf32>) {
  %w1 = arith.constant dense<0.25> : tensor<32x16xf32>
  %w2 = arith.constant dense<-0.5> : tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x16xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%a1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x16xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%a2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e3 = tensor.empty() : tensor<8x32xf32>
  %a3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dh, %w1 : tensor<8x16xf32>, tensor<32x16xf32>) outs(%a3 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e4 = tensor.empty() : tensor<32x16xf32>
  %a4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dh : tensor<8x32xf32>, tensor<8x16xf32>) outs(%a4 : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y, %dx, %dw : tensor<8x8xf32>, tensor<8x32xf32>, tensor<32x16xf32>
}
