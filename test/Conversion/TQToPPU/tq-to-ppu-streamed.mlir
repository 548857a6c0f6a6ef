// RUN: tq-opt %s -convert-tq-to-ppu="v=8 ub=3" | FileCheck %s
// RUN: not tq-opt %s -convert-tq-to-ppu="v=8 ub=1" 2>&1 | FileCheck %s --check-prefix=TOOSMALL

// Tiling to the unified buffer's capacity: X (4 tiles) does not fit next
// to W with ub = 3, so it is quantized inside the matmul one row panel at a
// time (each tile still quantized once).
// CHECK-LABEL: ppu.program @streamed V = 8 mac = 8 ub = 3
// CHECK: ppu.quant ub[0], fmem[4] bits 8
// CHECK-NEXT: ppu.quant ub[1], fmem[0] bits 8
// CHECK-NEXT: ppu.load a[{{[01]}}], ub[1]
// CHECK: ppu.store fmem[5], acc[0]
// CHECK-NEXT: ppu.quant ub[1], fmem[1] bits 8
// CHECK-NEXT: ppu.load a[{{[01]}}], ub[1]
// CHECK: ppu.quant ub[1], fmem[3] bits 8
func.func @streamed(%x: tensor<32x8xf32>, %w: tensor<8x8xf32>) -> tensor<32x8xf32> {
  %qx = tq.quantize %x : tensor<32x8xf32> -> !tq.tiled<32x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %qw = tq.quantize %w : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %y = tq.matmul %qx, %qw : !tq.tiled<32x8xi8:8, f32, tile = 8x8, dims = [0, 1]>, !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]> -> tensor<32x8xf32>
  return %y : tensor<32x8xf32>
}

// With one slot, W fills the buffer and even a row panel of X does not fit.
// TOOSMALL: error: 'tq.matmul' op the lhs row panel (1 tiles) does not fit the unified buffer (option ub)
