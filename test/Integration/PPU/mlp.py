# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# End to end on the PPU: a float two-layer MLP (linalg) -> tq-quantize ->
# tq-to-ppu -> binary stream -> tq-ppu-sim, compared bit for bit with the
# independent numpy reference (python/tq/reference.py): quantize, tiled
# matmul, ReLU + requantization of the hidden layer (T6), second matmul.
# Shapes are not multiples of V; V = 8 and 16, square tiles and pow2 scales.
import sys

import numpy as np

from tq import reference as ref
from tq.examples import mlp_mlir
from tq.ppu import Flow, args_of

flow = Flow(*sys.argv[1:4])
rng = np.random.default_rng(9)
M, K, H, N = 20, 24, 16, 10
src = flow.write("mlp.mlir", mlp_mlir(M, K, H, N))
x = rng.standard_normal((M, K)).astype(np.float32)
w1 = rng.standard_normal((K, H)).astype(np.float32)
w2 = rng.standard_normal((H, N)).astype(np.float32)

failures = 0
for v in (8, 16):
    for scale, form in (("f32", "scaled"), ("pow2", "pow2")):
        q = flow.opt(src, f"-tq-quantize=tile={v} scale={scale}")
        (got,), _ = flow.simulate(flow.to_ppu(q, f"v={v}"), args_of(x, w1, w2))
        t = (v, v)
        qx, sx, _, _ = ref.quantize(x, t, (0, 1), 8, form)
        qw1, sw1, _, _ = ref.quantize(w1, t, (0, 1), 8, form)
        h = ref.matmul(qx, sx, t, qw1, sw1, t)
        hr = np.maximum(h, np.float32(0))  # ReLU, then requantize (T6)
        qh, sh, _, _ = ref.quantize(hr, t, (0, 1), 8, form)
        qw2, sw2, _, _ = ref.quantize(w2, t, (0, 1), 8, form)
        want = ref.matmul(qh, sh, t, qw2, sw2, t)
        same = got.shape == want.shape and got.tobytes() == want.tobytes()
        failures += not same
        rel = np.linalg.norm(got - (np.maximum(x @ w1, 0) @ w2)) / np.linalg.norm(np.maximum(x @ w1, 0) @ w2)
        print(f"V={v} scale={scale}: {'bit-exact' if same else 'MISMATCH'}, "
              f"error vs float {rel:.3f}")
print(f"failures {failures}")
# CHECK: V=8 scale=f32: bit-exact
# CHECK: V=8 scale=pow2: bit-exact
# CHECK: V=16 scale=f32: bit-exact
# CHECK: V=16 scale=pow2: bit-exact
# CHECK: failures 0
