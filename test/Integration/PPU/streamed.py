# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# Tiling to the unified buffer's capacity: the same matmul compiled for a
# buffer that holds everything and for one that holds 4 tiles (the lhs is
# then quantized a row panel at a time); both are bit-exact against numpy
# and execute the same number of QUANTs.
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from tq import reference as ref

OPT, TRANSLATE, SIM = sys.argv[1:4]
tmp = tempfile.mkdtemp()
rng = np.random.default_rng(4)
M, K, N, V = 61, 16, 8, 8
src = os.path.join(tmp, "mm.mlir")
open(src, "w").write(f"""
func.func @mm(%x: tensor<{M}x{K}xf32>, %w: tensor<{K}x{N}xf32> {{tq.parameter}}) -> tensor<{M}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{M}x{N}xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %y = linalg.matmul ins(%x, %w : tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>) outs(%a : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  return %y : tensor<{M}x{N}xf32>
}}
""")
x = rng.standard_normal((M, K)).astype(np.float32)
w = rng.standard_normal((K, N)).astype(np.float32)
np.save(os.path.join(tmp, "x.npy"), x)
np.save(os.path.join(tmp, "w.npy"), w)
qx, sx, _, _ = ref.quantize(x, (V, V), (0, 1), 8, "scaled")
qw, sw, _, _ = ref.quantize(w, (V, V), (0, 1), 8, "scaled")
want = ref.matmul(qx, sx, (V, V), qw, sw, (V, V))
q = os.path.join(tmp, "q.mlir")
subprocess.run([OPT, src, f"-tq-quantize=tile={V}", "-o", q], check=True)
for ub in (0, 4):
    p, s, y, st = (os.path.join(tmp, n) for n in ("p.mlir", "s.bin", "y.npy", "st.json"))
    subprocess.run([OPT, q, f"-tq-to-ppu=v={V} ub={ub}", "-o", p], check=True)
    subprocess.run([TRANSLATE, "--ppu-to-binary", p, "-o", s], check=True)
    subprocess.run([SIM, s, f"--input=arg0={tmp}/x.npy", f"--input=arg1={tmp}/w.npy",
                    f"--output=result0={y}", "--report=json", f"--report-file={st}"], check=True)
    got = np.load(y)
    stats = json.load(open(st))
    same = got.tobytes() == want.tobytes()
    program = open(p).read()
    size = program.split(" ub = ")[1].split(" ")[0]
    print(f"ub option {ub}: buffer of {size} tiles, {'bit-exact' if same else 'MISMATCH'}, "
          f"fmem reads {stats['fmem_reads']}")
# CHECK: ub option 0: buffer of 18 tiles, bit-exact, fmem reads [[R:[0-9]+]]
# CHECK: ub option 4: buffer of 4 tiles, bit-exact, fmem reads [[R]]
