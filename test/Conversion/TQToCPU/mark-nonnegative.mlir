// RUN: tq-opt %s -tq-cpu-mark-nonnegative -split-input-file | FileCheck %s

// The max poolings of a ReLU's output (maximumf with +0, either operand
// order) and of a clipped ReLU (minimumf with a positive constant) are
// marked: their inputs hold no -0.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
!t = tensor<1x2x4x4xf32>
!p = tensor<1x2x2x2xf32>

// CHECK-LABEL: func.func @relu
// CHECK: linalg.pooling_nchw_max {{.*}}tq.nonnegative_input
func.func @relu(%x: !t, %init: !p, %k: tensor<2x2xf32>) -> !p {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : !t) outs(%e : !t) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %zero, %a : f32
    linalg.yield %m : f32
  } -> !t
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  return %y : !p
}

// CHECK-LABEL: func.func @clipped
// CHECK: linalg.pooling_nchw_max {{.*}}tq.nonnegative_input
func.func @clipped(%x: !t, %init: !p, %k: tensor<2x2xf32>) -> !p {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : !t
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : !t) outs(%e : !t) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    %m = arith.maximumf %s, %zero : f32
    %c = arith.minimumf %m, %six : f32
    linalg.yield %c : f32
  } -> !t
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  return %y : !p
}

// -----

// Not marked: a maximumf with -0 (whose result may be -0), with a negative
// constant, a clip by a value of unknown sign, an input that is an
// argument.
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
!t = tensor<1x2x4x4xf32>
!p = tensor<1x2x2x2xf32>

// CHECK-LABEL: func.func @not_marked
// CHECK-NOT: tq.nonnegative_input
func.func @not_marked(%x: !t, %init: !p, %k: tensor<2x2xf32>, %v: f32) -> (!p, !p, !p, !p) {
  %nzero = arith.constant -0.0 : f32
  %neg = arith.constant -1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %r:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : !t) outs(%e, %e, %e : !t, !t, !t) {
  ^bb0(%a: f32, %o0: f32, %o1: f32, %o2: f32):
    %m0 = arith.maximumf %a, %nzero : f32
    %m1 = arith.maximumf %a, %neg : f32
    %m2 = arith.maximumf %a, %zero : f32
    %c2 = arith.minimumf %m2, %v : f32
    linalg.yield %m0, %m1, %c2 : f32, f32, f32
  } -> (!t, !t, !t)
  %y0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r#0, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  %y1 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r#1, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  %y2 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r#2, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  %y3 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  return %y0, %y1, %y2, %y3 : !p, !p, !p, !p
}

// -----

// The NHWC max pooling of a ReLU's output (tq-cpu-channels-last's) is
// marked too.

#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
!t = tensor<1x4x4x2xf32>
!p = tensor<1x2x2x2xf32>

// CHECK-LABEL: func.func @relu_nhwc
// CHECK: linalg.pooling_nhwc_max {{.*}}tq.nonnegative_input
func.func @relu_nhwc(%x: !t, %init: !p, %k: tensor<2x2xf32>) -> !p {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : !t) outs(%e : !t) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> !t
  %y = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  return %y : !p
}

// -----

// A product whose input is quantized from such a tensor is marked (its
// quantized values are not negative): a convolution after a max pooling of
// a ReLU, a matmul after a transpose and a reshape of one. Not marked: a
// quantized argument, and a leaky ReLU's (maximumf with a negative
// constant times x).

#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#tr = affine_map<(n, h, w, c) -> (n, c, h, w)>
!t = tensor<2x4x4x16xf32>
!p = tensor<2x2x2x16xf32>
!xq = !tq.tiled<2x2x2x16xi8:8, f32, tile = 16x16, dims = [0, 3]>
!wq = !tq.tiled<8x1x1x16xi8:8, f32, tile = 16x16, dims = [0, 3]>
!aq = !tq.tiled<2x64xi8:8, f32, tile = 16x16, dims = [0, 1]>
!bq = !tq.tiled<8x64xi8:8, f32, tile = 16x16, dims = [0, 1]>

// CHECK-LABEL: func.func @products
// CHECK: tq.conv2d {{.*}}tq.nonnegative_input
// CHECK: tq.matmul {{.*}}tq.nonnegative_input
// CHECK-LABEL: func.func @products_not_marked
// CHECK-NOT: tq.nonnegative_input
func.func @products(%x: !t, %init: !p, %k: tensor<2x2xf32>, %w: !wq, %b: !bq)
    -> (tensor<2x2x2x8xf32>, tensor<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : !t) outs(%e : !t) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> !t
  %y = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r, %k : !t, tensor<2x2xf32>) outs(%init : !p) -> !p
  %q = tq.quantize %y : !p -> !xq
  %c = tq.conv2d %q, %w : !xq, !wq -> tensor<2x2x2x8xf32>
  %e2 = tensor.empty() : tensor<2x16x2x2xf32>
  %t = linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : !p) outs(%e2 : tensor<2x16x2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x16x2x2xf32>
  %f = tensor.collapse_shape %t [[0], [1, 2, 3]] : tensor<2x16x2x2xf32> into tensor<2x64xf32>
  %qa = tq.quantize %f : tensor<2x64xf32> -> !aq
  %mm = tq.matmul %qa, %b {transpose_b} : !aq, !bq -> tensor<2x8xf32>
  return %c, %mm : tensor<2x2x2x8xf32>, tensor<2x8xf32>
}

func.func @products_not_marked(%x: !t, %qx: !xq, %w: !wq) -> (tensor<2x2x2x8xf32>, tensor<2x4x4x8xf32>) {
  %slope = arith.constant -0.4 : f32
  %c0 = tq.conv2d %qx, %w : !xq, !wq -> tensor<2x2x2x8xf32>
  %e = tensor.empty() : !t
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : !t) outs(%e : !t) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %slope : f32
    %m = arith.maximumf %a, %s : f32
    linalg.yield %m : f32
  } -> !t
  %q = tq.quantize %r : !t -> !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>
  %c1 = tq.conv2d %q, %w : !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !wq -> tensor<2x4x4x8xf32>
  return %c0, %c1 : tensor<2x2x2x8xf32>, tensor<2x4x4x8xf32>
}

// -----

// Not marked either: a generic's result that is its init as it is (the
// outs block argument), and the other result of a generic one of whose
// results is a ReLU's.

#id = affine_map<(i, j) -> (i, j)>
!f = tensor<2x64xf32>
!aq = !tq.tiled<2x64xi8:8, f32, tile = 16x16, dims = [0, 1]>
!bq = !tq.tiled<8x64xi8:8, f32, tile = 16x16, dims = [0, 1]>

// CHECK-LABEL: func.func @pass_through_not_marked
// CHECK-NOT: tq.nonnegative_input
func.func @pass_through_not_marked(%x: !f, %init: !f, %b: !bq) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !f
  %kept = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !f) outs(%init : !f) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %o : f32
  } -> !f
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !f) outs(%e, %e : !f, !f) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m, %a : f32, f32
  } -> (!f, !f)
  %q0 = tq.quantize %kept : !f -> !aq
  %q1 = tq.quantize %r#1 : !f -> !aq
  %m0 = tq.matmul %q0, %b {transpose_b} : !aq, !bq -> tensor<2x8xf32>
  %m1 = tq.matmul %q1, %b {transpose_b} : !aq, !bq -> tensor<2x8xf32>
  return %m0, %m1 : tensor<2x8xf32>, tensor<2x8xf32>
}
