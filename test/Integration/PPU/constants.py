# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# Constant weights end to end on the PPU: tq-quantize quantizes them at
# compile time (tq.constant), tq-to-ppu places them in the stream's
# constant section, the simulator loads them before running. The result of
# the two-layer MLP equals the numpy reference bit for bit, for fixed and
# per-tile adaptive widths.
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from tq import reference as ref

OPT, TRANSLATE, SIM = sys.argv[1:4]
tmp = tempfile.mkdtemp()
rng = np.random.default_rng(31)
M, K, H, N, V = 9, 20, 12, 5, 8
w1 = (rng.standard_normal((K, H)) * np.linspace(0.05, 2, H)).astype(np.float32)
w2 = rng.standard_normal((H, N)).astype(np.float32)
x = rng.standard_normal((M, K)).astype(np.float32)


def lit(a):
    return "[" + ", ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in a) + "]"


src = os.path.join(tmp, "mlp.mlir")
open(src, "w").write(f"""
func.func @mlp(%x: tensor<{M}x{K}xf32>) -> tensor<{M}x{N}xf32> {{
  %w1 = arith.constant dense<{lit(w1)}> : tensor<{K}x{H}xf32>
  %w2 = arith.constant dense<{lit(w2)}> : tensor<{H}x{N}xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<{M}x{H}xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{M}x{H}xf32>) -> tensor<{M}x{H}xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<{M}x{K}xf32>, tensor<{K}x{H}xf32>) outs(%a1 : tensor<{M}x{H}xf32>) -> tensor<{M}x{H}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%h : tensor<{M}x{H}xf32>) outs(%e1 : tensor<{M}x{H}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }} -> tensor<{M}x{H}xf32>
  %e2 = tensor.empty() : tensor<{M}x{N}xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<{M}x{H}xf32>, tensor<{H}x{N}xf32>) outs(%a2 : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  return %y : tensor<{M}x{N}xf32>
}}
""")
np.save(os.path.join(tmp, "x.npy"), x)
failures = 0
# Static 8-bit; then widths per weight tile chosen at compile time (the
# activations stay at a fixed 8 bits, which the PPU needs).
static = [f"-tq-quantize=tile={V}"]
per_tile = [f"-tq-insert-quantization=tile={V}", "-cse", "-tq-fuse-postprocess",
            "-tq-adaptive-bit-width=per-tile max-bits=8 low=0.01 high=0.04",
            "-tq-quantize-constants", "-canonicalize"]
for label, passes in (("8-bit", static), ("adaptive per tile", per_tile)):
    q, p, s, y = (os.path.join(tmp, n) for n in ("q.mlir", "p.mlir", "s.bin", "y.npy"))
    subprocess.run([OPT, src, *passes, "-mlir-print-elementsattrs-with-hex-if-larger=-1",
                    "-o", q], check=True)
    subprocess.run([OPT, q, f"-tq-to-ppu=v={V}", "-o", p], check=True)
    subprocess.run([TRANSLATE, "--ppu-to-binary", p, "-o", s], check=True)
    subprocess.run([SIM, s, f"--input=arg0={tmp}/x.npy", f"--output=result0={y}", "--report=none"],
                   check=True)
    got = np.load(y)
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
print(f"failures {failures}")
# CHECK: 8-bit: bit-exact, per-tile widths []
# CHECK: adaptive per tile: bit-exact, per-tile widths {{\[\[[0-9, ]+\], \[[0-9, ]+\]\]}}
# CHECK: failures 0
