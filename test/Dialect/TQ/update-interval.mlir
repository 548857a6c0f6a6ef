// RUN: tq-opt %s -split-input-file -tq-update-interval -verify-diagnostics | FileCheck %s
// RUN: tq-opt %s -split-input-file -tq-update-interval="weights-only" -verify-diagnostics | FileCheck %s --check-prefix=WEIGHTS

!a = !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
!w = !tq.tiled<32x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
!d = !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1], scale = f32>

// Each fixed-width quantization takes its steps from the caller unless its
// refresh flag is set, and returns the steps it used; a run-time width is
// left alone.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<32x4x32xf32> {tq.name = "w", tq.parameter}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<64x128xf32>
// CHECK-SAME: %[[R:[a-z0-9]+]]: tensor<2xi32> {tq.name = "refresh"}
// CHECK-SAME: %[[S0:[a-z0-9]+]]: tensor<2x4xf32> {tq.name = "fc data #0.steps"}
// CHECK-SAME: %[[S1:[a-z0-9]+]]: tensor<1x4xf32> {tq.name = "fc weight #1.steps"}
// CHECK-SAME: -> (tensor<64x32xf32>, tensor<2x4xf32> {tq.name = "fc data #0.steps"}, tensor<1x4xf32> {tq.name = "fc weight #1.steps"})
// CHECK: %[[F0:.*]] = tensor.extract %[[R]][%c0{{.*}}] : tensor<2xi32>
// CHECK: %[[D0:.*]] = arith.cmpi ne, %[[F0]]
// CHECK: %[[QA:.*]] = tq.quantize %[[X]] scales(%[[S0]] : tensor<2x4xf32>) refresh(%[[D0]]) : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[W]]
// CHECK: %[[F1:.*]] = tensor.extract %[[R]][%c1{{.*}}] : tensor<2xi32>
// CHECK: %[[D1:.*]] = arith.cmpi ne, %[[F1]]
// CHECK: %[[QW:.*]] = tq.quantize %[[COL]] scales(%[[S1]] : tensor<1x4xf32>) refresh(%[[D1]])
// CHECK: tq.quantize %[[X]] bits(
// CHECK: %[[U0:.*]] = tq.steps %[[QA]]
// CHECK: %[[U1:.*]] = tq.steps %[[QW]]
// CHECK: return %{{.*}}, %[[U0]], %[[U1]]

// With weights-only, only the parameter's.
// WEIGHTS-LABEL: func.func @train_step
// WEIGHTS-SAME: tensor<1xi32> {tq.name = "refresh"}
// WEIGHTS-SAME: %{{.*}}: tensor<1x4xf32> {tq.name = "fc weight #0.steps"}
// WEIGHTS-NOT: scales(
// WEIGHTS: tq.quantize %collapsed scales(%{{.*}}) refresh(
// WEIGHTS-NOT: scales(
func.func @train_step(%w: tensor<32x4x32xf32> {tq.parameter, tq.name = "w"}, %x: tensor<64x128xf32>, %n: i32) -> tensor<64x32xf32> {
  %qa = tq.quantize %x : tensor<64x128xf32> -> !a loc("fc")
  %c = tensor.collapse_shape %w [[0], [1, 2]] : tensor<32x4x32xf32> into tensor<32x128xf32>
  %qw = tq.quantize %c : tensor<32x128xf32> -> !w loc("fc")
  %qd = tq.quantize %x bits(%n : i32) : tensor<64x128xf32> -> !d loc("fc")
  %y = tq.matmul %qa, %qw {transpose_b} : !a, !w -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// -----

// expected-error @+1 {{tq-update-interval: no function @train_step}}
module {
  func.func @main() {
    return
  }
}

// -----

// Only run-time widths: nothing to keep, the signature stays.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<64x128xf32>{{.*}}: i32{{.*}}) -> !tq.tiled
// CHECK-NOT: refresh
func.func @train_step(%x: tensor<64x128xf32>, %n: i32) -> !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1], scale = f32> {
  %q = tq.quantize %x bits(%n : i32) : tensor<64x128xf32> -> !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1], scale = f32>
  return %q : !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1], scale = f32>
}
