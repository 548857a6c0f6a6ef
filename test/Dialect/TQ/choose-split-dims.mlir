// RUN: tq-opt %s -tq-choose-split-dims -split-input-file -verify-diagnostics | FileCheck %s
// RUN: tq-opt %s -tq-choose-split-dims="act-dims=0,2 weight-dims=0,1" -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=OPT
// RUN: not tq-opt %s -tq-choose-split-dims="act-dims=2,1" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADOPT
// SPEC T2: roles from producers, split dims from roles and layout.

// CHECK-LABEL: func.func @forward
// CHECK: linalg.matmul {tq.roles = [#tq.role<activation>, #tq.role<weight>], tq.split_dims = [array<i64: 0, 1>, array<i64: 0, 1>]}
// A reshaped constant is still a weight; an activation times an activation
// (attention scores) has two activations.
// CHECK: linalg.matmul {tq.roles = [#tq.role<activation>, #tq.role<weight>]
// CHECK: linalg.matmul indexing_maps = {{.*}} {tq.roles = [#tq.role<activation>, #tq.role<activation>]
func.func @forward(%x: tensor<64x256xf32>, %init: tensor<64x128xf32>, %init2: tensor<64x64xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x64xf32>) {
  %w = arith.constant dense<0.5> : tensor<256x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  %wf = arith.constant dense<0.25> : tensor<256x2x64xf32>
  %w2 = tensor.collapse_shape %wf [[0], [1, 2]] : tensor<256x2x64xf32> into tensor<256x128xf32>
  %y2 = linalg.matmul ins(%x, %w2 : tensor<64x256xf32>, tensor<256x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%y, %y2 : tensor<64x128xf32>, tensor<64x128xf32>) outs(%init2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y, %y2, %s : tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x64xf32>
}

// -----

// T7: dX = dY·Wᵀ is an activation gradient, dW = Xᵀ·dY a weight gradient;
// a gradient flowing into the next layer's backward stays a gradient.
// CHECK-LABEL: func.func @backward
// CHECK: tq.roles = [#tq.role<output_grad>, #tq.role<weight>]
// CHECK: tq.roles = [#tq.role<activation>, #tq.role<output_grad>]
// CHECK: tq.roles = [#tq.role<activation_grad>, #tq.role<weight>]
func.func @backward(%dy: tensor<64x128xf32> {tq.role = #tq.role<output_grad>},
                    %w: tensor<256x128xf32> {tq.parameter}, %x: tensor<64x256xf32>,
                    %w0: tensor<32x256xf32> {tq.parameter},
                    %i1: tensor<64x256xf32>, %i2: tensor<256x128xf32>, %i3: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<256x128xf32>) {
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %w : tensor<64x128xf32>, tensor<256x128xf32>) outs(%i1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<64x256xf32>, tensor<64x128xf32>) outs(%i2 : tensor<256x128xf32>) -> tensor<256x128xf32>
  %dx0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dx, %w0 : tensor<64x256xf32>, tensor<32x256xf32>) outs(%i3 : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %dx0, %dw : tensor<64x32xf32>, tensor<256x128xf32>
}

// -----

// Batched matmul: the two innermost dims; conv NHWC x FHWC: (N, C) and (K, C).
// The options override per role where the rank allows: the 3-D activation
// gets [0, 2], the weight [0, 1]; the 4-D conv operands too.
// OPT-LABEL: func.func @batch_and_conv
// OPT: linalg.batch_matmul {{.*}}tq.split_dims = [array<i64: 0, 2>, array<i64: 0, 1>]
// OPT: linalg.conv_2d_nhwc_fhwc {{.*}}tq.split_dims = [array<i64: 0, 2>, array<i64: 0, 1>]
// BADOPT: error: split dims overrides must be two dims d0,d1 with 0 <= d0 < d1
// CHECK-LABEL: func.func @batch_and_conv
// CHECK: linalg.batch_matmul {tq.roles = [#tq.role<activation>, #tq.role<weight>], tq.split_dims = [array<i64: 1, 2>, array<i64: 1, 2>]}
// CHECK: linalg.conv_2d_nhwc_fhwc {{{.*}}tq.roles = [#tq.role<activation>, #tq.role<weight>], tq.split_dims = [array<i64: 0, 3>, array<i64: 0, 3>]}
func.func @batch_and_conv(%a: tensor<4x64x32xf32>, %i: tensor<4x64x16xf32>,
                          %x: tensor<2x8x8x16xf32>, %ci: tensor<2x6x6x32xf32>) -> (tensor<4x64x16xf32>, tensor<2x6x6x32xf32>) {
  %b = arith.constant dense<1.0> : tensor<4x32x16xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf32>, tensor<4x32x16xf32>) outs(%i : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %f = arith.constant dense<1.0> : tensor<32x3x3x16xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<2x8x8x16xf32>, tensor<32x3x3x16xf32>) outs(%ci : tensor<2x6x6x32xf32>) -> tensor<2x6x6x32xf32>
  return %y, %c : tensor<4x64x16xf32>, tensor<2x6x6x32xf32>
}

// -----

// Attributes already present override the inference.
// CHECK-LABEL: func.func @override
// CHECK: tq.roles = [#tq.role<weight>, #tq.role<activation>]
func.func @override(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %i: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %y = linalg.matmul {tq.roles = [#tq.role<weight>, #tq.role<activation>]} ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

func.func @bad_roles(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %i: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'tq.roles' must be an array of two #tq.role attributes}}
  %y = linalg.matmul {tq.roles = [#tq.role<weight>]} ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

func.func @bad_dims_format(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %i: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'tq.split_dims' must be an array of two array<i64: d0, d1> attributes}}
  %y = linalg.matmul {tq.split_dims = [[0, 1], [0, 1]]} ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

func.func @bad_dims_range(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %i: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{split dims [0, 2] of operand #1 must satisfy 0 <= d0 < d1 < 2}}
  %y = linalg.matmul {tq.split_dims = [array<i64: 0, 1>, array<i64: 0, 2>]} ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// NCHW x FCHW: (N, C) and (K, C) are dims [0, 1].
// CHECK-LABEL: func.func @conv_nchw
// CHECK: linalg.conv_2d_nchw_fchw {{{.*}}tq.roles = [#tq.role<activation>, #tq.role<weight>], tq.split_dims = [array<i64: 0, 1>, array<i64: 0, 1>]}
func.func @conv_nchw(%x: tensor<2x16x8x8xf32>, %i: tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32> {
  %f = arith.constant dense<1.0> : tensor<32x16x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) outs(%i : tensor<2x32x6x6xf32>) -> tensor<2x32x6x6xf32>
  return %y : tensor<2x32x6x6xf32>
}
