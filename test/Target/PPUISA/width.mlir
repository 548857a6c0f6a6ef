// Run-time bit widths: a width input fills a width register before the
// program runs; QUANT reads its width from it (`bits w3`).
// RUN: tq-translate --ppu-to-listing %s | FileCheck %s
// RUN: tq-translate --ppu-to-listing %s > %t.once.txt
// RUN: tq-translate --listing-to-ppu %t.once.txt | tq-translate --ppu-to-listing | diff %t.once.txt -
// RUN: tq-translate --ppu-to-binary %s -o %t.bin
// x . x^T run at 3 and at 8 bits, against the numpy reference.
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32))"
// RUN: tq-ppu-sim %t.bin --input=x=%t.x.npy --width=n=3 --output=y=%t.y3.npy --report=none
// RUN: tq-ppu-sim %t.bin --input=x=%t.x.npy --width=n=8 --output=y=%t.y8.npy --report=none
// RUN: %python %S/Inputs/check_gram.py %t.x.npy %t.y3.npy 3 %t.y8.npy 8 | FileCheck %s --check-prefix=REF

// CHECK: ppu v3 V=8 mac=8 ub=2 rows=2 acc=1 fmem=2
// CHECK-NEXT: input x 8x8 @0
// CHECK-NEXT: width n @w3
// CHECK-NEXT: output y 8x8 @1
// CHECK-NEXT: quant ub[0] <- fmem[0] bits=w3
// REF: 3 bits: bit-exact
// REF-NEXT: 8 bits: bit-exact
// REF-NEXT: the widths give different results: True
ppu.program @gram V = 8 mac = 8 ub = 2 rows = 2 acc = 1 fmem = 2 {
  ppu.binding "x" [8, 8] at 0
  ppu.width_input "n" register 3
  ppu.binding "y" [8, 8] at 1 {output}
  ppu.quant ub[0], fmem[0] bits w3
  ppu.load a[0], ub[0]
  ppu.load b[0], ub[0] {transpose}
  ppu.mac acc[0], a[0], b[0]
  ppu.store fmem[1], acc[0]
  ppu.halt
}
