// RUN: tq-opt %s -convert-tq-to-ppu="v=8 rows=2" -split-input-file -verify-diagnostics | FileCheck %s

// Y = X . W^T with a transposed operand: QUANT per tile, then per output
// tile a K-loop of LOADs (the transposed one through the datapath unit),
// MACs alternating data-buffer rows, and a STORE. Memories sized to fit.
// CHECK-LABEL: ppu.program @gemm V = 8 mac = 8 ub = 4 rows = 2 acc = 64 fmem = 5 {
// CHECK-NEXT: ppu.binding "arg0" [8, 16] at 0
// CHECK-NEXT: ppu.binding "arg1" [8, 16] at 2
// CHECK-NEXT: ppu.binding "result0" [8, 8] at 4 {output}
// CHECK-NEXT: ppu.quant ub[0], fmem[0] bits 8
// CHECK-NEXT: ppu.quant ub[1], fmem[1] bits 8
// CHECK-NEXT: ppu.quant ub[2], fmem[2] bits 4 {pow2}
// CHECK-NEXT: ppu.quant ub[3], fmem[3] bits 4 {pow2}
// CHECK-NEXT: ppu.load a[0], ub[0]
// CHECK-NEXT: ppu.load b[0], ub[2] {transpose}
// CHECK-NEXT: ppu.mac acc[0], a[0], b[0]
// CHECK-NEXT: ppu.load a[1], ub[1]
// CHECK-NEXT: ppu.load b[1], ub[3] {transpose}
// CHECK-NEXT: ppu.mac acc[0], a[1], b[1] {accumulate}
// CHECK-NEXT: ppu.store fmem[4], acc[0]
// CHECK-NEXT: ppu.halt
// CHECK-NOT: func.func
func.func @gemm(%x: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> tensor<8x8xf32> {
  %qx = tq.quantize %x : tensor<8x16xf32> -> !tq.tiled<8x16xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %qw = tq.quantize %w : tensor<8x16xf32> -> !tq.tiled<8x16xi4:4, f32, tile = 8x8, dims = [0, 1], scale = pow2>
  %y = tq.matmul %qx, %qw {transpose_b} : !tq.tiled<8x16xi8:8, f32, tile = 8x8, dims = [0, 1]>, !tq.tiled<8x16xi4:4, f32, tile = 8x8, dims = [0, 1], scale = pow2> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Post-processing (ReLU, requantization) goes from the accumulator into
// the unified buffer; per-vector operands are requantized with REQ. Slots
// are reused once their value is dead: 3 slots for 5 tiled values.
// CHECK-LABEL: ppu.program @layers V = 8 mac = 8 ub = 3
// CHECK: ppu.quant ub[0], fmem[0] bits 8 {row_vectors}
// CHECK: ppu.quant ub[1], fmem[1] bits 8 {row_vectors}
// CHECK: ppu.req ub[2], ub[1] bits 8 {col_vectors}
// CHECK: ppu.mac acc[0], a[0], b[0]
// CHECK-NEXT: ppu.post ub[1], acc[0] bits 8 {relu}
// CHECK: ppu.quant ub[0], fmem[2] bits 8
// CHECK: ppu.store fmem[3], acc[0]
func.func @layers(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %qx = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 1x8, dims = [0, 1]>
  %qw = tq.quantize %w : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 1x8, dims = [0, 1]>
  %rw = tq.requantize %qw : !tq.tiled<8x8xi8:8, f32, tile = 1x8, dims = [0, 1]> -> !tq.tiled<8x8xi8:8, f32, tile = 8x1, dims = [0, 1]>
  %h = tq.matmul %qx, %rw : !tq.tiled<8x8xi8:8, f32, tile = 1x8, dims = [0, 1]>, !tq.tiled<8x8xi8:8, f32, tile = 8x1, dims = [0, 1]> -> tensor<8x8xf32>
  %p, %s = tq.postprocess %h {activation = #tq.activation<relu>} : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %qw2 = tq.quantize %w2 : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %y = tq.matmul %p, %qw2 : !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>, !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @wrong_tile(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'tq.quantize' op tiles 16x16 do not match the machine's V = 8 (VxV, 1xV or Vx1)}}
  %qx = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 16x16, dims = [0, 1]>
  %y = tq.matmul %qx, %qx : !tq.tiled<8x8xi8:8, f32, tile = 16x16, dims = [0, 1]>, !tq.tiled<8x8xi8:8, f32, tile = 16x16, dims = [0, 1]> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Column vectors in a (and row vectors in b): legal tq (a K-tile of 1),
// but MAC needs scales constant along the reduction.
func.func @along_reduction(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %qa = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x1, dims = [0, 1]>
  %qb = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 1x8, dims = [0, 1]>
  // expected-error @+1 {{'tq.matmul' op operand #0 has per-vector scales along the reduction; requantize it (tq.requantize) first}}
  %y = tq.matmul %qa, %qb : !tq.tiled<8x8xi8:8, f32, tile = 8x1, dims = [0, 1]>, !tq.tiled<8x8xi8:8, f32, tile = 1x8, dims = [0, 1]> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @mixed(%x: tensor<8x8xf32>, %f: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %qx = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  // expected-error @+1 {{'tq.matmul' op tq-to-ppu needs both operands tiled (no mixed case)}}
  %y = tq.matmul %qx, %f : !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @dequant(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %qx = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %d = tq.dequantize %qx : !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]> -> tensor<8x8xf32>
  // expected-error @+1 {{'func.return' op tq-to-ppu returns tq.matmul and tq.conv2d results only}}
  return %d : tensor<8x8xf32>
}

// -----

func.func @unsupported(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %qx = tq.quantize %x : tensor<8x8xf32> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  // expected-error @+1 {{'tq.transpose' op is not supported by tq-to-ppu}}
  %t = tq.transpose %qx [1, 0] : !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]> -> !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %y = tq.matmul %qx, %t : !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>, !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}


// -----

!w = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
func.func @lr_not_constant(%x: tensor<8x8xf32>) -> !w {
  %q = tq.quantize %x : tensor<8x8xf32> -> !w
  %dw = tq.matmul %q, %q {transpose_a} : !w, !w -> tensor<8x8xf32>
  %c = arith.constant 0.25 : f32
  %lr = arith.addf %c, %c : f32
  // expected-error @+1 {{'tq.weight_update' op tq-to-ppu needs a constant learning rate}}
  %w2 = tq.weight_update %q, %dw, %lr : !w, tensor<8x8xf32>
  return %w2 : !w
}

// -----

!w = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
func.func @used_after(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (!w, tensor<8x8xf32>) {
  %lr = arith.constant 0.5 : f32
  %qx = tq.quantize %x : tensor<8x8xf32> -> !w
  %qw = tq.quantize %w : tensor<8x8xf32> -> !w
  %dw = tq.matmul %qx, %qx {transpose_a} : !w, !w -> tensor<8x8xf32>
  // expected-error @+1 {{'tq.weight_update' op the weight is used after its gradient is computed; the PPU updates it in place}}
  %w2 = tq.weight_update %qw, %dw, %lr : !w, tensor<8x8xf32>
  %y = tq.matmul %qx, %qw : !w, !w -> tensor<8x8xf32>
  return %w2, %y : !w, tensor<8x8xf32>
}

// -----

// A constant per-layer scale goes to POST (T6).
// CHECK-LABEL: ppu.program @layer_scale
// CHECK: ppu.post ub[{{[0-9]+}}], acc[0] bits 8 {layer_scale = 4.000000e+00 : f32, relu}
!t = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
func.func @layer_scale(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s = arith.constant 4.0 : f32
  %q = tq.quantize %x : tensor<8x8xf32> -> !t
  %h = tq.matmul %q, %q : !t, !t -> tensor<8x8xf32>
  %p, %applied = tq.postprocess %h layer_scale(%s) {activation = #tq.activation<relu>} : tensor<8x8xf32> -> !t
  %y = tq.matmul %p, %q : !t, !t -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

!t = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>
func.func @computed_scale(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %q = tq.quantize %x : tensor<8x8xf32> -> !t
  %h = tq.matmul %q, %q : !t, !t -> tensor<8x8xf32>
  // expected-error @+1 {{'tq.postprocess' op tq-to-ppu supports post-processing with a constant layer scale (not a computed one), a fixed width and nearest-even rounding}}
  %p, %applied = tq.postprocess %h {compute_layer_scale} : tensor<8x8xf32> -> !t
  %y = tq.matmul %p, %q : !t, !t -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @adaptive(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'tq.adaptive_bit_width' op is a bit-width search, which runs on the host: partition the module first (tq-partition-ppu, as tq-run --target=ppu does) to pass its result to the kernel as a width input}}
  %n = tq.adaptive_bit_width %x for !tq.tiled<8x8xi8:?, f32, tile = 8x8, dims = [0, 1]> {high = 0.02 : f32, low = 0.005 : f32, max = 8 : i64} : tensor<8x8xf32> -> i32
  %q = tq.quantize %x bits(%n : i32) : tensor<8x8xf32> -> !tq.tiled<8x8xi8:?, f32, tile = 8x8, dims = [0, 1]>
  %y = tq.matmul %q, %q {transpose_b} : !tq.tiled<8x8xi8:?, f32, tile = 8x8, dims = [0, 1]>, !tq.tiled<8x8xi8:?, f32, tile = 8x8, dims = [0, 1]> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Run-time widths: a tensor<i32> argument is a width input in a width
// register, which QUANT reads; a constant width is an immediate.
!d = !tq.tiled<8x8xi8:?, f32, tile = 8x8, dims = [0, 1]>
// CHECK-LABEL: ppu.program @width_input
// CHECK: ppu.binding "arg0" [8, 8] at 0
// CHECK-NEXT: ppu.width_input "arg1" register 0
// CHECK-NEXT: ppu.width_input "arg2" register 1
// CHECK: ppu.quant ub[0], fmem[0] bits w0
// CHECK-NEXT: ppu.quant ub[1], fmem[0] bits w1
// CHECK-NEXT: ppu.quant ub[2], fmem[0] bits 5
func.func @width_input(%x: tensor<8x8xf32>, %n: tensor<i32>, %m: tensor<i32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %bn = tensor.extract %n[] : tensor<i32>
  %bm = tensor.extract %m[] : tensor<i32>
  %five = arith.constant 5 : i32
  %a = tq.quantize %x bits(%bn : i32) : tensor<8x8xf32> -> !d
  %b = tq.quantize %x bits(%bm : i32) : tensor<8x8xf32> -> !d
  %c = tq.quantize %x bits(%five : i32) : tensor<8x8xf32> -> !d
  %y = tq.matmul %a, %b {transpose_b} : !d, !d -> tensor<8x8xf32>
  %z = tq.matmul %a, %c {transpose_b} : !d, !d -> tensor<8x8xf32>
  return %y, %z : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

!p = !tq.tiled<8x8xi8:per_tile, f32, tile = 8x8, dims = [0, 1]>
// expected-error @+1 {{'func.func' op tq-to-ppu needs static 2-D or 4-D f32 arguments (or tensor<i32> run-time widths), got 'tensor<1x1xi32>'}}
func.func @per_tile_widths(%x: tensor<8x8xf32>, %n: tensor<1x1xi32>) -> tensor<8x8xf32> {
  %q = tq.quantize %x bits(%n : tensor<1x1xi32>) : tensor<8x8xf32> -> !p
  %y = tq.matmul %q, %q {transpose_b} : !p, !p -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// expected-error @+1 {{'func.func' op needs more than 16 run-time widths (width registers)}}
func.func @too_many_widths(%n0: tensor<i32>, %n1: tensor<i32>, %n2: tensor<i32>, %n3: tensor<i32>, %n4: tensor<i32>, %n5: tensor<i32>, %n6: tensor<i32>, %n7: tensor<i32>, %n8: tensor<i32>, %n9: tensor<i32>, %n10: tensor<i32>, %n11: tensor<i32>, %n12: tensor<i32>, %n13: tensor<i32>, %n14: tensor<i32>, %n15: tensor<i32>, %n16: tensor<i32>) {
  return
}
