# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# Constant weights end to end on the PPU: tq-quantize quantizes them at
# compile time (tq.constant), tq-to-ppu places them in the stream's
# constant section, the simulator loads them before running. The result of
# the two-layer MLP equals the numpy reference bit for bit, for fixed and
# per-tile adaptive widths; one layer's too with 1xV vectors (a step per
# column of each constant tile).
import re
import sys

import numpy as np

from tq import reference as ref
from tq.examples import dense_literal, mlp_mlir
from tq.ppu import Flow

flow = Flow(*sys.argv[1:4])
rng = np.random.default_rng(31)
M, K, H, N, V = 9, 20, 12, 5, 8
w1 = (rng.standard_normal((K, H)) * np.linspace(0.05, 2, H)).astype(np.float32)
w2 = rng.standard_normal((H, N)).astype(np.float32)
x = rng.standard_normal((M, K)).astype(np.float32)

src = flow.write("mlp.mlir", mlp_mlir(M, K, H, N, weights=(w1, w2)))
failures = 0
# Static 8-bit; then widths per weight tile chosen at compile time (the
# activations stay at a fixed 8 bits, which the PPU needs).
static = [f"-tq-quantize=tile={V}"]
per_tile = [f"-tq-insert-quantization=tile={V}", "-cse", "-tq-fuse-postprocess",
            "-tq-adaptive-bit-width=per-tile max-bits=8 low=0.01 high=0.04",
            "-tq-quantize-constants", "-canonicalize"]
for label, passes in (("8-bit", static), ("adaptive per tile", per_tile)):
    q = flow.opt(src, *passes, "-mlir-print-elementsattrs-with-hex-if-larger=-1")
    (got,), _ = flow.simulate(flow.to_ppu(q, f"v={V}"), {"arg0": x})
    # The widths the compiler chose for each weight tile, from the IR.
    text = open(q).read()
    widths = [list(map(int, re.findall(r"-?\d+", m))) for m in
              re.findall(r"tile_bits = dense<(\[\[[^>]*\]\])> : tensor<\d+x\d+xi8>", text)]

    def qweights(w, i):
        if not widths:
            return ref.quantize(w, (V, V), (0, 1), 8, "scaled")
        # per-tile widths: quantize each tile at its own width
        qs, ss = np.zeros(w.shape, np.int32), None
        grid = (-(-w.shape[0] // V), -(-w.shape[1] // V))
        ss = np.zeros(grid, np.float32)
        for g, sl in ref.tile_slices(w.shape, (V, V), (0, 1)):
            b = widths[i][g[0] * grid[1] + g[1]]
            qt, st, _, _ = ref.quantize(w[sl], (V, V), (0, 1), b, "scaled")
            qs[sl], ss[g] = qt, st[0, 0]
        return qs, ss, None, None

    t = (V, V)
    qx, sx, _, _ = ref.quantize(x, t, (0, 1), 8, "scaled")
    qw1, sw1, _, _ = qweights(w1, 0)
    h = ref.matmul(qx, sx, t, qw1, sw1, t)
    qh, sh, _, _ = ref.quantize(np.maximum(h, np.float32(0)), t, (0, 1), 8, "scaled")
    qw2, sw2, _, _ = qweights(w2, 1)
    want = ref.matmul(qh, sh, t, qw2, sw2, t)
    same = got.tobytes() == want.tobytes()
    failures += not same
    print(f"{label}: {'bit-exact' if same else 'MISMATCH'}, per-tile widths {widths}")

# 1xV vectors along the contraction (granularity=vector) on the first
# layer (the PPU post-processes into VxV tiles only): x gets a step per
# row of each tile, the constant weight a step per column, which its
# constant tiles carry to the simulator.
one = flow.write("layer.mlir", f"""
func.func @layer(%x: tensor<{M}x{K}xf32>) -> tensor<{M}x{H}xf32> {{
  %w = arith.constant dense<{dense_literal(w1)}> : tensor<{K}x{H}xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{M}x{H}xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{H}xf32>) -> tensor<{M}x{H}xf32>
  %y = linalg.matmul ins(%x, %w : tensor<{M}x{K}xf32>, tensor<{K}x{H}xf32>) outs(%a : tensor<{M}x{H}xf32>) -> tensor<{M}x{H}xf32>
  return %y : tensor<{M}x{H}xf32>
}}
""")
q = flow.opt(one, f"-tq-quantize=tile={V} granularity=vector",
             "-mlir-print-elementsattrs-with-hex-if-larger=-1")
ppu = flow.to_ppu(q, f"v={V}")
(got,), _ = flow.simulate(ppu, {"arg0": x})
a, w = (1, V), (V, 1)
qx, sx, _, _ = ref.quantize(x, a, (0, 1), 8, "scaled")
qw1, sw1, _, _ = ref.quantize(w1, w, (0, 1), 8, "scaled")
want = ref.matmul(qx, sx, a, qw1, sw1, w)
same = got.tobytes() == want.tobytes()
failures += not same
cols = len(re.findall(r"ppu\.const ub\[\d+\] bits 8 cols steps", open(flow.listing).read()))
print(f"1xV: {'bit-exact' if same else 'MISMATCH'}, {cols} constant tiles with a step per column")
print(f"failures {failures}")
# CHECK: 8-bit: bit-exact, per-tile widths []
# CHECK: adaptive per tile: bit-exact, per-tile widths {{\[\[[0-9, ]+\], \[[0-9, ]+\]\]}}
# CHECK: 1xV: bit-exact, 6 constant tiles with a step per column
# CHECK: failures 0
