# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# T6 on the PPU: post-processing divides by a given per-layer scale, applies
# ReLU and requantizes; the next layer reads the result. Bit for bit against
# numpy (y = relu(L / s_layer), then tiles).
import sys

import numpy as np

from tq import reference as ref
from tq.ppu import Flow, args_of

flow = Flow(*sys.argv[1:4])
rng = np.random.default_rng(8)
M, K, H, N, V, S = 12, 16, 9, 7, 8, 3.0
T = lambda r, c: f"!tq.tiled<{r}x{c}xi8:8, f32, tile = {V}x{V}, dims = [0, 1]>"
src = flow.write("ls.mlir", f"""
func.func @f(%x: tensor<{M}x{K}xf32>, %w1: tensor<{K}x{H}xf32>, %w2: tensor<{H}x{N}xf32>) -> tensor<{M}x{N}xf32> {{
  %s = arith.constant {S} : f32
  %qx = tq.quantize %x : tensor<{M}x{K}xf32> -> {T(M, K)}
  %q1 = tq.quantize %w1 : tensor<{K}x{H}xf32> -> {T(K, H)}
  %q2 = tq.quantize %w2 : tensor<{H}x{N}xf32> -> {T(H, N)}
  %h = tq.matmul %qx, %q1 : {T(M, K)}, {T(K, H)} -> tensor<{M}x{H}xf32>
  %p, %applied = tq.postprocess %h layer_scale(%s) {{activation = #tq.activation<relu>}} : tensor<{M}x{H}xf32> -> {T(M, H)}
  %y = tq.matmul %p, %q2 : {T(M, H)}, {T(H, N)} -> tensor<{M}x{N}xf32>
  return %y : tensor<{M}x{N}xf32>
}}
""")
x = rng.standard_normal((M, K)).astype(np.float32)
w1 = rng.standard_normal((K, H)).astype(np.float32)
w2 = rng.standard_normal((H, N)).astype(np.float32)
(got,), _ = flow.simulate(flow.to_ppu(src, f"v={V}"), args_of(x, w1, w2))
t = (V, V)
qx, sx, _, _ = ref.quantize(x, t, (0, 1), 8, "scaled")
q1, s1, _, _ = ref.quantize(w1, t, (0, 1), 8, "scaled")
q2, s2, _, _ = ref.quantize(w2, t, (0, 1), 8, "scaled")
h = ref.matmul(qx, sx, t, q1, s1, t)
hy = np.maximum((h / np.float32(S)).astype(np.float32), np.float32(0))
qh, sh, _, _ = ref.quantize(hy, t, (0, 1), 8, "scaled")
want = ref.matmul(qh, sh, t, q2, s2, t)
print(f"layer scale {S}: {'bit-exact' if got.tobytes() == want.tobytes() else 'MISMATCH'}")
# CHECK: layer scale 3.0: bit-exact
