# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# A training step on the PPU (SPEC T7): dW = X^T . dY (the transposed
# activations read through the datapath unit), then W <- W - lr * dW in the
# datapath unit, in place, requantized; the updated weights come back to the
# host (DEQ). Bit for bit against the numpy reference.
import sys

import numpy as np

from tq import reference as ref
from tq.ppu import Flow, args_of

flow = Flow(*sys.argv[1:4])
rng = np.random.default_rng(21)
B, CIN, COUT, V, LR = 13, 20, 11, 8, 0.125
T = lambda r, c: f"!tq.tiled<{r}x{c}xi8:8, f32, tile = {V}x{V}, dims = [0, 1]>"
src = flow.write("step.mlir", f"""
func.func @step(%x: tensor<{B}x{CIN}xf32>, %dy: tensor<{B}x{COUT}xf32>, %w: tensor<{CIN}x{COUT}xf32>) -> {T(CIN, COUT)} {{
  %lr = arith.constant {LR} : f32
  %qx = tq.quantize %x : tensor<{B}x{CIN}xf32> -> {T(B, CIN)}
  %qdy = tq.quantize %dy : tensor<{B}x{COUT}xf32> -> {T(B, COUT)}
  %qw = tq.quantize %w : tensor<{CIN}x{COUT}xf32> -> {T(CIN, COUT)}
  %dw = tq.matmul %qx, %qdy {{transpose_a}} : {T(B, CIN)}, {T(B, COUT)} -> tensor<{CIN}x{COUT}xf32>
  %w2 = tq.weight_update %qw, %dw, %lr : {T(CIN, COUT)}, tensor<{CIN}x{COUT}xf32>
  return %w2 : {T(CIN, COUT)}
}}
""")
x = rng.standard_normal((B, CIN)).astype(np.float32)
dy = rng.standard_normal((B, COUT)).astype(np.float32)
w = rng.standard_normal((CIN, COUT)).astype(np.float32)
(got,), out = flow.simulate(flow.to_ppu(src, f"v={V}"), args_of(x, dy, w), report="text")

t = (V, V)
qx, sx, _, _ = ref.quantize(x, t, (0, 1), 8, "scaled")
qdy, sdy, _, _ = ref.quantize(dy, t, (0, 1), 8, "scaled")
qw, sw, ow, _ = ref.quantize(w, t, (0, 1), 8, "scaled")
dw = ref.matmul(qx.T, sx.T, t, qdy, sdy, t)
wf = (ref.dequantize(qw, sw, ow, t, (0, 1)) - (np.float32(LR) * dw).astype(np.float32)).astype(np.float32)
q2, s2, o2, _ = ref.quantize(wf, t, (0, 1), 8, "scaled")
want = ref.dequantize(q2, s2, o2, t, (0, 1))
print(f"updated weights {got.shape}: {'bit-exact' if got.tobytes() == want.tobytes() else 'MISMATCH'}")
print(f"moved by {np.abs(got - ref.dequantize(qw, sw, ow, t, (0, 1))).max():.3f}")
print(out.strip().splitlines()[0])
# CHECK: updated weights (20, 11): bit-exact
# CHECK: moved by {{[0-9.]+}}
# CHECK: instructions
