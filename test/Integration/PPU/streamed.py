# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# Tiling to the unified buffer's capacity: the same matmul compiled for a
# buffer that holds everything and for one that holds 4 tiles (the lhs is
# then quantized a row panel at a time); both are bit-exact against numpy
# and execute the same number of QUANTs.
import sys

import numpy as np

from tq import reference as ref
from tq.ppu import Flow, args_of

flow = Flow(*sys.argv[1:4])
rng = np.random.default_rng(4)
M, K, N, V = 61, 16, 8, 8
src = flow.write("mm.mlir", f"""
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
qx, sx, _, _ = ref.quantize(x, (V, V), (0, 1), 8, "scaled")
qw, sw, _, _ = ref.quantize(w, (V, V), (0, 1), 8, "scaled")
want = ref.matmul(qx, sx, (V, V), qw, sw, (V, V))
q = flow.opt(src, f"-tq-quantize=tile={V}")
for ub in (0, 4):
    program = flow.to_ppu(q, f"v={V} ub={ub}")
    (got,), stats = flow.simulate(program, args_of(x, w), report="json")
    same = got.tobytes() == want.tobytes()
    program = open(flow.listing).read()
    size = program.split(" ub = ")[1].split(" ")[0]
    print(f"ub option {ub}: buffer of {size} tiles, {'bit-exact' if same else 'MISMATCH'}, "
          f"fmem reads {stats['fmem_reads']}")
# CHECK: ub option 0: buffer of 18 tiles, bit-exact, fmem reads [[R:[0-9]+]]
# CHECK: ub option 4: buffer of 4 tiles, bit-exact, fmem reads [[R]]
