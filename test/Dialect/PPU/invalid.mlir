// RUN: tq-opt %s -split-input-file -verify-diagnostics
// The verifiers apply the simulator's rules, one case per message kind.

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.quant' op ub slot 4 is out of range (size 4)}}
  ppu.quant ub[4], fmem[0] bits 8
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.load' op data buffer row 2 is out of range (size 2)}}
  ppu.load a[2], ub[0]
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.mac' op acc tile 1 is out of range (size 1)}}
  ppu.mac acc[1], a[0], b[0]
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.post' op bit width 1 not in [2, 16]}}
  ppu.post ub[0], acc[0] bits 1
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.req' op a tile's scales are per row or per column, not both}}
  ppu.req ub[0], ub[1] bits 8 {row_vectors, col_vectors}
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.store' op fmem tile 9 is out of range (size 4)}}
  ppu.store fmem[9], acc[0]
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.wupd' op learning rate is not finite}}
  ppu.wupd ub[0], acc[0] lr 0x7FC00000
}

// -----

// expected-error @+1 {{'ppu.program' op invalid machine (V=0 mac=8 ub=4 rows=2 acc=1 fmem=4)}}
ppu.program @p V = 0 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
}

// -----

// expected-error @+1 {{'ppu.program' op binding 'x' overflows fmem (16 > 4 tiles)}}
ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  ppu.binding "x" [32, 32] at 0
}

// -----

func.func @f() {
  // expected-error @+1 {{'ppu.halt' op expects parent op 'ppu.program'}}
  ppu.halt
  return
}

// -----

ppu.program @p V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  // expected-error @+1 {{'ppu.const' op constant tile #0: value 8 outside the 4-bit range}}
  ppu.const ub[0] bits 4 step 0.25 values [1, -2, 0, 8]
}

// -----

ppu.program @p V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  // expected-error @+1 {{'ppu.const' op constant tile #0: expected 4 values}}
  ppu.const ub[0] bits 4 step 0.25 values [1, -2]
}

// -----

ppu.program @p V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  // expected-error @+1 {{'ppu.const' op constant tile #0: expected 2 steps, one per row}}
  ppu.const ub[0] bits 4 rows steps dense<[0.25, 0.5, 1.0]> : tensor<3xf32> values [1, -2, 0, 7]
}

// -----

ppu.program @p V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  // expected-error @+1 {{'ppu.const' op constant tile #0: the steps must be finite and non-negative}}
  ppu.const ub[0] bits 4 cols steps dense<[0.25, -0.5]> : tensor<2xf32> values [1, -2, 0, 7]
}

// -----

ppu.program @p V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  // expected-error @+1 {{'ppu.const' op has a step per row or per column, not both}}
  ppu.const ub[0] bits 4 rows cols steps dense<[0.25, 0.5]> : tensor<2xf32> values [1, -2, 0, 7]
}

// -----

ppu.program @p V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  // expected-error @+1 {{'ppu.const' op with rows or cols needs `steps` (one per vector) and no `step`}}
  ppu.const ub[0] bits 4 step 0.25 rows values [1, -2, 0, 7]
}

// -----

ppu.program @p V = 2 mac = 2 ub = 1 rows = 1 acc = 1 fmem = 1 {
  // expected-error @+1 {{'ppu.const' op without rows or cols needs one `step` and no `steps`}}
  ppu.const ub[0] bits 4 steps dense<[0.25, 0.5]> : tensor<2xf32> values [1, -2, 0, 7]
}

// -----

func.func @f(%x: tensor<8x16xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'ppu.launch' op 'missing' is not a ppu.program}}
  %y = ppu.launch @missing(%x) : (tensor<8x16xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

ppu.program @k V = 8 mac = 8 ub = 4 rows = 2 acc = 4 fmem = 4 {
  ppu.binding "arg0" [8, 16] at 0
  ppu.binding "result0" [8, 8] at 2 {output}
  ppu.halt
}
func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'ppu.launch' op binding 'arg0' of 'k' is [8, 16] f32, not 'tensor<8x8xf32>'}}
  %y = ppu.launch @k(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

ppu.program @k V = 8 mac = 8 ub = 4 rows = 2 acc = 4 fmem = 4 {
  ppu.binding "arg0" [8, 16] at 0
  ppu.binding "result0" [8, 8] at 2 {output}
  ppu.halt
}
func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'ppu.launch' op 'k' has 2 bindings, the launch passes 1}}
  ppu.launch @k(%x) : (tensor<8x16xf32>) -> ()
  return
}

// -----

ppu.program @k V = 8 mac = 8 ub = 4 rows = 2 acc = 4 fmem = 4 {
  ppu.binding "arg0" [8, 16] at 0
  ppu.halt
}
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'ppu.launch' op 'k' has no output binding 'result0'}}
  %y = ppu.launch @k(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{expected a bit width or a width register 'w<N>', got 'x3'}}
  ppu.quant ub[0], fmem[0] bits x3
}

// -----

ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  // expected-error @+1 {{'ppu.quant' op width register 16 out of range (16 registers)}}
  ppu.quant ub[0], fmem[0] bits w16
}

// -----

// expected-error @+1 {{'ppu.program' op width inputs share register w0}}
ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  ppu.width_input "n" register 0
  ppu.width_input "m" register 0
}

// -----

// expected-error @+1 {{'ppu.program' op invalid width input #0 'n' (a unique name, an input, a register below 16)}}
ppu.program @p V = 8 mac = 8 ub = 4 rows = 2 acc = 1 fmem = 4 {
  ppu.width_input "n" register 16
}

// -----

ppu.program @k V = 8 mac = 8 ub = 4 rows = 2 acc = 4 fmem = 4 {
  ppu.width_input "arg0" register 0
  ppu.halt
}
func.func @f(%n: tensor<2xi32>) {
  // expected-error @+1 {{'ppu.launch' op 'arg0' of 'k' is a width input (tensor<i32>), not 'tensor<2xi32>'}}
  ppu.launch @k(%n) : (tensor<2xi32>) -> ()
  return
}
