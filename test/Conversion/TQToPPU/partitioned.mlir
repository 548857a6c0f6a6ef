// RUN: tq-opt %s -tq-partition-ppu -tq-to-ppu=v=8 | FileCheck %s
// A partitioned module: the kernel becomes a ppu.program that the schedule
// launches; the host function and the schedule stay as they are.

!a = !tq.tiled<8x16xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!w = !tq.tiled<16x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>

// CHECK-LABEL: func.func @layer(
// CHECK-SAME: attributes {tq.schedule}
// CHECK-NEXT: %[[Y:.*]] = ppu.launch @layer_ppu0(%{{.*}}, %{{.*}}) : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[Z:.*]] = call @layer_cpu1(%[[Y]])
// CHECK-NEXT: return %[[Z]]
// CHECK: ppu.program @layer_ppu0 V = 8
// CHECK-NEXT: ppu.binding "arg0" [8, 16] at 0
// CHECK-NEXT: ppu.binding "arg1" [16, 8] at 2
// CHECK-NEXT: ppu.binding "result0" [8, 8] at 4 {output}
// CHECK: ppu.halt
// CHECK: func.func @layer_cpu1(%{{.*}}: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {tq.device = "cpu", tq.outlined}
// CHECK: arith.maximumf
func.func @layer(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %qx = tq.quantize %x : tensor<8x16xf32> -> !a
  %qw = tq.quantize %w : tensor<16x8xf32> -> !w
  %y = tq.matmul %qx, %qw : !a, !w -> tensor<8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}
