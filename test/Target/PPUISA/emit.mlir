// RUN: tq-translate --ppu-to-listing %s | FileCheck %s
// The listing assembles back into the same program:
// RUN: tq-translate --ppu-to-listing %s | tq-translate --listing-to-ppu | tq-translate --ppu-to-listing > %t.again.txt
// RUN: tq-translate --ppu-to-listing %s | diff - %t.again.txt
// The binary form runs on the simulator (x . x^T of the identity):
// RUN: tq-translate --ppu-to-binary %s -o %t.bin
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', 2 * np.eye(8, dtype=np.float32))"
// RUN: tq-ppu-sim %t.bin --input=x=%t.x.npy --output=y=%t.y.npy --report=json | FileCheck %s --check-prefix=STATS
// RUN: %python -c "import numpy as np; y = np.load('%t.y.npy'); print(y.shape, float(y[0, 0]), float(y[0, 1]))" | FileCheck %s --check-prefix=Y

// CHECK: ppu v3 V=8 mac=8 ub=2 rows=2 acc=1 fmem=2
// CHECK-NEXT: input x 8x8 @0
// CHECK-NEXT: output y 8x8 @1
// CHECK-NEXT: quant ub[0] <- fmem[0] bits=8
// CHECK-NEXT: load a[0] <- ub[0]
// CHECK-NEXT: load b[0] <- ub[0] transpose
// CHECK-NEXT: mac acc[0] = a[0] * b[0]
// CHECK-NEXT: store fmem[1] <- acc[0]
// CHECK-NEXT: halt
// STATS: "instructions": 6, "cycles": {{[0-9]+}}, "mac_ops": 512, "ub_reads": 16, {{.*}}"transposes": 1, "requantizations": 0
// Y: (8, 8) 4.0 0.0
ppu.program @gram V = 8 mac = 8 ub = 2 rows = 2 acc = 1 fmem = 2 {
  ppu.binding "x" [8, 8] at 0
  ppu.binding "y" [8, 8] at 1 {output}
  ppu.quant ub[0], fmem[0] bits 8
  ppu.load a[0], ub[0]
  ppu.load b[0], ub[0] {transpose}
  ppu.mac acc[0], a[0], b[0]
  ppu.store fmem[1], acc[0]
  ppu.halt
}
