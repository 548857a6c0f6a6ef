// RUN: not tq-translate --ppu-to-binary %s -split-input-file 2>&1 | FileCheck %s
// RUN: printf 'ppu v1 V=8 mac=8 ub=2 rows=2 acc=1 fmem=2\nload a[5] <- ub[0]\n' > %t.txt
// RUN: not tq-translate --listing-to-ppu %t.txt 2>&1 | FileCheck %s --check-prefix=LISTING

// CHECK: error: no ppu.program to translate: lower the program first (tq-opt -tq-to-ppu)
// LISTING: error: malformed PPU listing: instruction 0: data buffer row 5 is out of range (size 2)
module {
}

// -----

// A tq program before -tq-to-ppu is read (it used to stop at "Dialect
// `func' not found") and gets told what to run.
// CHECK: error: no ppu.program to translate: lower the program first (tq-opt -tq-to-ppu)
!A = !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %q = tq.quantize %x : tensor<16x16xf32> -> !A
  %y = tq.matmul %q, %q : !A, !A -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
