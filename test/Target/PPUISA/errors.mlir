// RUN: not tq-translate --ppu-to-binary %s 2>&1 | FileCheck %s
// RUN: printf 'ppu v1 V=8 mac=8 ub=2 rows=2 acc=1 fmem=2\nload a[5] <- ub[0]\n' > %t.txt
// RUN: not tq-translate --listing-to-ppu %t.txt 2>&1 | FileCheck %s --check-prefix=LISTING

// CHECK: error: expected exactly one ppu.program, found 0
// LISTING: error: malformed PPU listing: instruction 0: data buffer row 5 is out of range (size 2)
module {
}
