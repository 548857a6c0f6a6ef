// RUN: tq-opt %s -tq-partition-ppu -split-input-file -verify-diagnostics | FileCheck %s

// A layer: quantize, matmul on the PPU; bias add and ReLU on the host. The
// constant weight is cloned into the kernel, the host's constants into the
// host function; the function becomes the schedule.

!a = !tq.tiled<8x16xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!w = !tq.tiled<16x4xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>) -> tensor<8x4xf32> attributes {tq.schedule}
// CHECK-NEXT: %[[Y:.*]] = call @layer_ppu0(%[[X]], %[[W]]) : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[Z:.*]] = call @layer_cpu1(%[[Y]]) : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: return %[[Z]]
// CHECK: func.func @layer_ppu0(%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16x4xf32>) -> tensor<8x4xf32> attributes {tq.device = "ppu"}
// CHECK-COUNT-2: tq.quantize
// CHECK: tq.matmul
// CHECK-NOT: linalg
// CHECK: return
// CHECK: func.func @layer_cpu1(%{{.*}}: tensor<8x4xf32>) -> tensor<8x4xf32> attributes {tq.device = "cpu"}
// CHECK-DAG: arith.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK-DAG: tensor.empty() : tensor<8x4xf32>
// CHECK: linalg.generic
// CHECK-NOT: tq.
// CHECK: return
func.func @layer(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %bias = arith.constant dense<0.5> : tensor<4xf32>
  %qx = tq.quantize %x : tensor<8x16xf32> -> !a
  %qw = tq.quantize %w : tensor<16x4xf32> -> !w
  %y = tq.matmul %qx, %qw : !a, !w -> tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.generic {indexing_maps = [#id, #row, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %z : tensor<8x4xf32>
}

// -----

// A layout transpose of a quantized NCHW tensor moves to the host, before
// the quantization (the same tiles, so the same bits).

!x4 = !tq.tiled<2x8x3x3xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!xt = !tq.tiled<2x3x3x8xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>

// CHECK-LABEL: func.func @nchw(
// CHECK-NEXT: %[[T:.*]] = call @nchw_cpu0(%{{.*}}) : (tensor<2x8x3x3xf32>) -> tensor<2x3x3x8xf32>
// CHECK-NEXT: %[[R:.*]] = call @nchw_ppu1(%[[T]]) : (tensor<2x3x3x8xf32>) -> tensor<2x3x3x8xf32>
// CHECK-NEXT: return %[[R]]
// CHECK: func.func @nchw_cpu0
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x8x3x3xf32>) outs(%{{.*}} : tensor<2x3x3x8xf32>) permutation = [0, 2, 3, 1]
// CHECK: func.func @nchw_ppu1
// CHECK-NEXT: tq.quantize %{{.*}} : tensor<2x3x3x8xf32> -> !tq.tiled<2x3x3x8xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>
// CHECK-NOT: tq.transpose
func.func @nchw(%x: tensor<2x8x3x3xf32>) -> tensor<2x3x3x8xf32> {
  %q = tq.quantize %x : tensor<2x8x3x3xf32> -> !x4
  %t = tq.transpose %q [0, 2, 3, 1] : !x4 -> !xt
  %r = tq.dequantize %t : !xt -> tensor<2x3x3x8xf32>
  return %r : tensor<2x3x3x8xf32>
}

// -----

// A function without tq ops is left alone.

// CHECK-LABEL: func.func @host_only(
// CHECK-NOT: tq.schedule
// CHECK: arith.addf
func.func @host_only(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}

// -----

!q = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>

func.func @tiled_result(%x: tensor<8x8xf32>) -> !q {
  %q = tq.quantize %x : tensor<8x8xf32> -> !q
  // expected-error @+1 {{'func.return' op uses '!tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>' from another device; only tensors cross between the PPU and the host (tq-partition-ppu)}}
  return %q : !q
}
