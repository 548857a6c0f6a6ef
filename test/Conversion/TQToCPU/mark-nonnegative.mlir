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
