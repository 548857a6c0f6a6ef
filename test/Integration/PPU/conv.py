# RUN: %python %s tq-opt tq-translate tq-ppu-sim | FileCheck %s
# A padded, strided NHWC convolution (linalg.conv_2d_nhwc_fhwc after a zero
# tensor.pad) -> tq-quantize -> tq-to-ppu -> tq-ppu-sim, bit for bit against
# the numpy reference (tiles split on (N, C) and (K, C), T2/T5). Channels
# and batch are not multiples of V.
import sys

import numpy as np

from tq import reference as ref
from tq.ppu import Flow, args_of

flow = Flow(*sys.argv[1:4])
rng = np.random.default_rng(12)
N, H, W, C, K, R, S = 3, 7, 6, 12, 10, 3, 3
ST, PAD = (2, 1), (1, 1, 1, 1)
P = (H + PAD[0] + PAD[2] - (R - 1) - 1) // ST[0] + 1
Q = (W + PAD[1] + PAD[3] - (S - 1) - 1) // ST[1] + 1
HP, WP = H + 2, W + 2
SRC = f"""
func.func @conv(%x: tensor<{N}x{H}x{W}x{C}xf32>, %f: tensor<{K}x{R}x{S}x{C}xf32> {{tq.parameter}})
    -> tensor<{N}x{P}x{Q}x{K}xf32> {{
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {{
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  }} : tensor<{N}x{H}x{W}x{C}xf32> to tensor<{N}x{HP}x{WP}x{C}xf32>
  %e = tensor.empty() : tensor<{N}x{P}x{Q}x{K}xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<{N}x{P}x{Q}x{K}xf32>) -> tensor<{N}x{P}x{Q}x{K}xf32>
  %y = linalg.conv_2d_nhwc_fhwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}}
      ins(%p, %f : tensor<{N}x{HP}x{WP}x{C}xf32>, tensor<{K}x{R}x{S}x{C}xf32>)
      outs(%acc : tensor<{N}x{P}x{Q}x{K}xf32>) -> tensor<{N}x{P}x{Q}x{K}xf32>
  return %y : tensor<{N}x{P}x{Q}x{K}xf32>
}}
"""
src = flow.write("conv.mlir", SRC)
x = rng.standard_normal((N, H, W, C)).astype(np.float32)
f = rng.standard_normal((K, R, S, C)).astype(np.float32)
failures = 0
for v in (4, 8):
    q = flow.opt(src, f"-tq-quantize=tile={v}")
    (got,), _ = flow.simulate(flow.to_ppu(q, f"v={v}"), args_of(x, f))
    qx, sx, _, _ = ref.quantize(x, (v, v), (0, 3), 8, "scaled")
    qf, sf, _, _ = ref.quantize(f, (v, v), (0, 3), 8, "scaled")
    want = ref.conv2d(qx, sx, qf, sf, v, stride=ST, pad=PAD)
    same = got.shape == want.shape and got.tobytes() == want.tobytes()
    failures += not same
    print(f"V={v} conv {got.shape}: {'bit-exact' if same else 'MISMATCH'}")
# 1xV vectors along C (granularity=vector): a scale per (n, h, w, C-tile)
# and per (k, r, s, C-tile), constant along the reduction.
for v in (4, 8):
    q = flow.opt(src, f"-tq-quantize=tile={v} granularity=vector")
    (got,), _ = flow.simulate(flow.to_ppu(q, f"v={v}"), args_of(x, f))
    qx, sx, _, _ = ref.quantize(x, (1, v), (0, 3), 8, "scaled")
    qf, sf, _, _ = ref.quantize(f, (1, v), (0, 3), 8, "scaled")
    want = ref.conv2d(qx, sx, qf, sf, v, stride=ST, pad=PAD, rows=(1, 1))
    same = got.shape == want.shape and got.tobytes() == want.tobytes()
    failures += not same
    print(f"V={v} 1xV conv {got.shape}: {'bit-exact' if same else 'MISMATCH'}")
print(f"failures {failures}")
# CHECK: V=4 conv (3, 4, 6, 10): bit-exact
# CHECK: V=8 conv (3, 4, 6, 10): bit-exact
# CHECK: V=4 1xV conv (3, 4, 6, 10): bit-exact
# CHECK: V=8 1xV conv (3, 4, 6, 10): bit-exact
# CHECK: failures 0
