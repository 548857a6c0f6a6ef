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
// CHECK: func.func @layer_ppu0(%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16x4xf32>) -> tensor<8x4xf32> attributes {tq.device = "ppu", tq.outlined}
// CHECK-COUNT-2: tq.quantize
// CHECK: tq.matmul
// CHECK-NOT: linalg
// CHECK: return
// CHECK: func.func @layer_cpu1(%{{.*}}: tensor<8x4xf32>) -> tensor<8x4xf32> attributes {tq.device = "cpu", tq.outlined}
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

// One quantization read in two layouts (a training step's forward NHWC and
// its backward CNHW): each layout quantizes its own transpose on the host.

!y4 = !tq.tiled<2x8x3x3xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!yn = !tq.tiled<2x3x3x8xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>
!yc = !tq.tiled<8x3x3x2xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>

// CHECK-LABEL: func.func @two_layouts(
// CHECK: func.func @two_layouts_cpu
// CHECK-DAG: linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CHECK-DAG: linalg.transpose {{.*}} permutation = [1, 2, 3, 0]
// CHECK: func.func @two_layouts_ppu
// CHECK-DAG: tq.quantize %{{.*}} : tensor<2x3x3x8xf32> -> !tq.tiled<2x3x3x8xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>
// CHECK-DAG: tq.quantize %{{.*}} : tensor<8x3x3x2xf32> -> !tq.tiled<8x3x3x2xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>
// CHECK-NOT: tq.transpose
// CHECK: return
func.func @two_layouts(%x: tensor<2x8x3x3xf32>) -> (tensor<2x3x3x8xf32>, tensor<8x3x3x2xf32>) {
  %q = tq.quantize %x : tensor<2x8x3x3xf32> -> !y4
  %n = tq.transpose %q [0, 2, 3, 1] : !y4 -> !yn
  %c = tq.transpose %q [1, 2, 3, 0] : !y4 -> !yc
  %rn = tq.dequantize %n : !yn -> tensor<2x3x3x8xf32>
  %rc = tq.dequantize %c : !yc -> tensor<8x3x3x2xf32>
  return %rn, %rc : tensor<2x3x3x8xf32>, tensor<8x3x3x2xf32>
}

// -----

// A function with nothing for the PPU stays whole, on the host.

// CHECK-LABEL: func.func @host_only(
// CHECK-SAME: attributes {tq.device = "cpu"}
// CHECK-NEXT: arith.addf
func.func @host_only(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}

// -----

// So does one of constants only (tq-training-step's initial parameters):
// tq-to-ppu must not take it for a kernel.

// CHECK-LABEL: func.func @constants_only(
// CHECK-SAME: attributes {tq.device = "cpu"}
func.func @constants_only() -> tensor<16xf32> {
  %c = arith.constant dense<1.0> : tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

!q = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>

func.func @tiled_result(%x: tensor<8x8xf32>) -> !q {
  %q = tq.quantize %x : tensor<8x8xf32> -> !q
  // expected-error @+1 {{'func.return' op returns '!tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>'; only tensors cross between the PPU and the host (tq-partition-ppu)}}
  return %q : !q
}

// -----

// A tiled value read in two kernels is quantized again in the second
// (tiled values never cross); the first keeps only what it needs.

!t = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @shared(
// CHECK-NEXT: %[[A:.*]] = call @shared_ppu0(%[[X:.*]], %{{.*}})
// CHECK-NEXT: %[[R:.*]] = call @shared_cpu1(%[[A]])
// CHECK-NEXT: %[[B:.*]] = call @shared_ppu2(%[[R]], %[[X]])
// CHECK: func.func @shared_ppu2(%[[R2:.*]]: tensor<8x8xf32>, %[[X2:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[QX:.*]] = tq.quantize %[[X2]]
// CHECK-NEXT: %[[QR:.*]] = tq.quantize %[[R2]]
// CHECK-NEXT: tq.matmul %[[QX]], %[[QR]]
func.func @shared(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %qx = tq.quantize %x : tensor<8x8xf32> -> !t
  %qw = tq.quantize %w : tensor<8x8xf32> -> !t
  %a = tq.matmul %qx, %qw : !t, !t -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8x8xf32>
  %qr = tq.quantize %r : tensor<8x8xf32> -> !t
  %b = tq.matmul %qx, %qr : !t, !t -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}

// -----

// A batched product is not for the PPU: it stays on the host with the
// quantizations it reads; the 2-D product goes to the PPU.

!b3 = !tq.tiled<2x8x8xi8:8, f32, tile = 8x8, dims = [1, 2], scale = f32>
!t2 = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>

// CHECK-LABEL: func.func @batched(
// CHECK-NEXT: call @batched_cpu0
// CHECK-NEXT: call @batched_ppu1
// CHECK: func.func @batched_cpu0
// CHECK-NEXT: tq.quantize {{.*}} : tensor<2x8x8xf32>
// CHECK-NEXT: tq.matmul {{.*}} -> tensor<2x8x8xf32>
// CHECK: func.func @batched_ppu1
// CHECK-NOT: 2x8x8
// CHECK: return
func.func @batched(%x: tensor<2x8x8xf32>, %y: tensor<8x8xf32>) -> (tensor<2x8x8xf32>, tensor<8x8xf32>) {
  %qx = tq.quantize %x : tensor<2x8x8xf32> -> !b3
  %c = tq.matmul %qx, %qx : !b3, !b3 -> tensor<2x8x8xf32>
  %qy = tq.quantize %y : tensor<8x8xf32> -> !t2
  %d = tq.matmul %qy, %qy : !t2, !t2 -> tensor<8x8xf32>
  return %c, %d : tensor<2x8x8xf32>, tensor<8x8xf32>
}

// -----

// Host work on constants is cloned into host functions only: a fill that a
// kernel reads is computed on the host and passed in.

!s = !tq.tiled<4x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>

// CHECK-LABEL: func.func @sliced(
// CHECK-NEXT: %[[S:.*]] = call @sliced_cpu0()
// CHECK-NEXT: call @sliced_ppu1(%{{.*}}, %[[S]])
// CHECK: func.func @sliced_cpu0() -> tensor<4x8xf32>
// CHECK: linalg.fill
// CHECK: func.func @sliced_ppu1
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @sliced(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %w = linalg.fill ins(%one : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %qx = tq.quantize %x : tensor<4x8xf32> -> !s
  %qw = tq.quantize %w : tensor<4x8xf32> -> !s
  %y = tq.matmul %qx, %qw {transpose_b} : !s, !s -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// The adaptive policy: the width search runs on the host; its i32 result
// crosses to the kernel as a tensor<i32> (a width input there), and the
// layout transpose of the run-time-width tensor still moves to the host.

!d = !tq.tiled<2x8x3x3xi8:?, f32, tile = 8x8, dims = [0, 1], scale = f32>
!dt = !tq.tiled<2x3x3x8xi8:?, f32, tile = 8x8, dims = [0, 3], scale = f32>
!f = !tq.tiled<8x3x3x8xi8:8, f32, tile = 8x8, dims = [0, 3], scale = f32>

// CHECK-LABEL: func.func @adaptive(
// CHECK-NEXT: %[[H:.*]]:2 = call @adaptive_cpu0(%{{.*}}) : (tensor<2x8x3x3xf32>) -> (tensor<2x3x3x8xf32>, tensor<i32>)
// CHECK-NEXT: call @adaptive_ppu1(%[[H]]#0, %[[H]]#1, %{{.*}}) : (tensor<2x3x3x8xf32>, tensor<i32>, tensor<8x3x3x8xf32>) -> tensor<2x3x3x8xf32>
// CHECK: func.func @adaptive_cpu0(
// CHECK: %[[N:.*]] = tq.adaptive_bit_width
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: %[[NT:.*]] = tensor.from_elements %[[N]] : tensor<i32>
// CHECK: return %[[T]], %[[NT]]
// CHECK: func.func @adaptive_ppu1(%{{.*}}: tensor<2x3x3x8xf32>, %[[ARG:.*]]: tensor<i32>, %{{.*}}: tensor<8x3x3x8xf32>)
// CHECK: %[[B:.*]] = tensor.extract %[[ARG]][] : tensor<i32>
// CHECK: tq.quantize %{{.*}} bits(%[[B]] : i32) : tensor<2x3x3x8xf32> -> !tq.tiled<2x3x3x8xi8:?
// CHECK: tq.conv2d
func.func @adaptive(%x: tensor<2x8x3x3xf32>, %w: tensor<8x3x3x8xf32>) -> tensor<2x3x3x8xf32> {
  %n = tq.adaptive_bit_width %x for !d {high = 0.02 : f32, low = 0.005 : f32, max = 8 : i64} : tensor<2x8x3x3xf32> -> i32
  %q = tq.quantize %x bits(%n : i32) : tensor<2x8x3x3xf32> -> !d
  %t = tq.transpose %q [0, 2, 3, 1] : !d -> !dt
  %qw = tq.quantize %w : tensor<8x3x3x8xf32> -> !f
  %y = tq.conv2d %t, %qw {padding = array<i64: 1, 1, 1, 1>} : !dt, !f -> tensor<2x3x3x8xf32>
  return %y : tensor<2x3x3x8xf32>
}

// -----

// A stochastic quantization (the host's) offset by an i32 argument (a
// training step's iteration): the argument crosses as a 0-d tensor, read
// back as an i32 in the host function.
!g = !tq.tiled<8x16xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!v = !tq.tiled<16x4xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
// CHECK-LABEL: func.func @iteration(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>, %[[W:[^:]*]]: tensor<16x4xf32>, %[[IT:[^:]*]]: i32)
// CHECK: tensor.from_elements %[[IT]] : tensor<i32>
// CHECK: %[[T:.*]] = tensor.from_elements %[[IT]] : tensor<i32>
// CHECK-NEXT: %[[Y:.*]] = call @iteration_cpu2(%[[X]], %[[T]], %[[W]]) : (tensor<8x16xf32>, tensor<i32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// CHECK: return %[[Y]]
// CHECK-LABEL: func.func @iteration_cpu2(
// CHECK-SAME: %{{[^:]*}}: tensor<8x16xf32>, %[[A:[^:]*]]: tensor<i32>, %{{[^:]*}}: tensor<16x4xf32>)
// CHECK-NEXT: %[[I:.*]] = tensor.extract %[[A]][] : tensor<i32>
// CHECK-NEXT: tq.quantize %{{.*}} rounding stochastic seed_offset(%[[I]])
func.func @iteration(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %it: i32) -> tensor<8x4xf32> {
  %qx = tq.quantize %x rounding stochastic seed_offset(%it) {seed = 1 : i64} : tensor<8x16xf32> -> !g
  %qw = tq.quantize %w : tensor<16x4xf32> -> !v
  %y = tq.matmul %qx, %qw : !g, !v -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
