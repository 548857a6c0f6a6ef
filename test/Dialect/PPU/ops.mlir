// RUN: tq-opt %s | tq-opt | FileCheck %s
// Round trip of every ppu op.

// CHECK-LABEL: ppu.program @constant V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
// CHECK-NEXT: ppu.const ub[0] bits 4 step 2.500000e-01 values [1, -2, 0, 7]
ppu.program @constant V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  ppu.const ub[0] bits 4 step 0.25 values [1, -2, 0, 7]
}

// A step per row or per column (1 x V or V x 1 vectors).
// CHECK-LABEL: ppu.program @vectors
// CHECK-NEXT: ppu.const ub[0] bits 8 rows steps dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32> values [1, -2, 0, 7]
// CHECK-NEXT: ppu.const ub[1] bits 4 cols steps dense<[2.500000e-01, 0.000000e+00]> : tensor<2xf32> values [1, 0, -7, 0]
ppu.program @vectors V = 2 mac = 2 ub = 2 rows = 1 acc = 1 fmem = 1 {
  ppu.const ub[0] bits 8 rows steps dense<[1.0, 0.5]> : tensor<2xf32> values [1, -2, 0, 7]
  ppu.const ub[1] bits 4 cols steps dense<[0.25, 0.0]> : tensor<2xf32> values [1, 0, -7, 0]
}

// CHECK-LABEL: ppu.program @all V = 8 mac = 8 ub = 16 rows = 2 acc = 4 fmem = 32 {
// CHECK-NEXT: ppu.binding "x" [16, 16] at 0
// CHECK-NEXT: ppu.binding "y" [16, 8] at 4 {output}
// CHECK-NEXT: ppu.quant ub[0], fmem[0] bits 8
// CHECK-NEXT: ppu.quant ub[1], fmem[1] bits 4 {col_vectors, pow2}
// CHECK-NEXT: ppu.load a[0], ub[0]
// CHECK-NEXT: ppu.load b[1], ub[1] {transpose}
// CHECK-NEXT: ppu.mac acc[0], a[0], b[1]
// CHECK-NEXT: ppu.mac acc[0], a[0], b[1] {accumulate, bf16}
// CHECK-NEXT: ppu.post ub[2], acc[0] bits 8 {relu}
// CHECK-NEXT: ppu.store fmem[4], acc[0]
// CHECK-NEXT: ppu.wupd ub[1], acc[0] lr 1.250000e-01
// CHECK-NEXT: ppu.req ub[1], ub[1] bits 8 {row_vectors}
// CHECK-NEXT: ppu.deq fmem[5], ub[1]
// CHECK-NEXT: ppu.halt
ppu.program @all V = 8 mac = 8 ub = 16 rows = 2 acc = 4 fmem = 32 {
  ppu.binding "x" [16, 16] at 0
  ppu.binding "y" [16, 8] at 4 {output}
  ppu.quant ub[0], fmem[0] bits 8
  ppu.quant ub[1], fmem[1] bits 4 {col_vectors, pow2}
  ppu.load a[0], ub[0]
  ppu.load b[1], ub[1] {transpose}
  ppu.mac acc[0], a[0], b[1]
  ppu.mac acc[0], a[0], b[1] {accumulate, bf16}
  ppu.post ub[2], acc[0] bits 8 {relu}
  ppu.store fmem[4], acc[0]
  ppu.wupd ub[1], acc[0] lr 0.125
  ppu.req ub[1], ub[1] bits 8 {row_vectors}
  ppu.deq fmem[5], ub[1]
  ppu.halt
}

// Host code launching a program.
// CHECK-LABEL: ppu.program @kernel
// CHECK-LABEL: func.func @host(
// CHECK: %{{.*}} = ppu.launch @kernel(%{{.*}}) : (tensor<8x16xf32>) -> tensor<8x8xf32>
ppu.program @kernel V = 8 mac = 8 ub = 4 rows = 2 acc = 4 fmem = 4 {
  ppu.binding "arg0" [8, 16] at 0
  ppu.binding "result0" [8, 8] at 2 {output}
  ppu.halt
}
func.func @host(%x: tensor<8x16xf32>) -> tensor<8x8xf32> {
  %y = ppu.launch @kernel(%x) : (tensor<8x16xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// A run-time width: the host writes it into a width register; QUANT, REQ
// and POST read it.
// CHECK-LABEL: ppu.program @widths
// CHECK-NEXT: ppu.binding "arg0" [8, 8] at 0
// CHECK-NEXT: ppu.width_input "arg1" register 0
// CHECK-NEXT: ppu.quant ub[0], fmem[0] bits w0
// CHECK-NEXT: ppu.req ub[1], ub[0] bits w0 {row_vectors}
// CHECK-NEXT: ppu.post ub[2], acc[0] bits w0
// CHECK-LABEL: func.func @adaptive_host(
// CHECK: ppu.launch @widths(%{{.*}}, %{{.*}}) : (tensor<8x8xf32>, tensor<i32>) -> ()
ppu.program @widths V = 8 mac = 8 ub = 4 rows = 2 acc = 4 fmem = 4 {
  ppu.binding "arg0" [8, 8] at 0
  ppu.width_input "arg1" register 0
  ppu.quant ub[0], fmem[0] bits w0
  ppu.req ub[1], ub[0] bits w0 {row_vectors}
  ppu.post ub[2], acc[0] bits w0
  ppu.halt
}
func.func @adaptive_host(%x: tensor<8x8xf32>, %n: tensor<i32>) {
  ppu.launch @widths(%x, %n) : (tensor<8x8xf32>, tensor<i32>) -> ()
  return
}
