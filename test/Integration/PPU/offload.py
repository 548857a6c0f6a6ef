# RUN: %python %s %tq_build | FileCheck %s
# tq-run --target=ppu: quantized programs whose tq ops run on the PPU
# simulator and whose float code between layers (bias adds, ReLU) runs on
# the host. The result must be the same bits as the CPU backend's, which
# the CPU tests hold bit-exact against the numpy reference; and close to
# the float result. Shapes are not multiples of V; f32 and pow2 scales.
import os
import sys

import numpy as np

from tq.cpu import Runner
from tq.examples import mlp_bias_mlir, mlp_mlir
from tq.ppu import Flow

build = sys.argv[1]
bindir = os.path.join(build, "bin")
flow = Flow(opt=os.path.join(bindir, "tq-opt"))
run = Runner(os.path.join(bindir, "tq-run"), workdir=flow.dir)
rng = np.random.default_rng(5)
M, K, H, N = 37, 50, 29, 10
x = rng.standard_normal((M, K)).astype(np.float32)
w1 = (rng.standard_normal((K, H)) / np.sqrt(K)).astype(np.float32)
w2 = (rng.standard_normal((H, N)) / np.sqrt(H)).astype(np.float32)
b1 = rng.standard_normal(H).astype(np.float32)
b2 = rng.standard_normal(N).astype(np.float32)

src = flow.write("mlp-bias.mlir", mlp_bias_mlir(x.shape, w1, b1, w2, b2))
h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
want = h @ w2 + b2
# Relative error bounds against float: 8-bit about 1%, 4-bit about 12%.
for options, bound in (("tile=8", 0.03), ("tile=16", 0.03), ("tile=16 scale=pow2", 0.03),
                       ("tile=8 act-bits=4 weight-bits=4", 0.2)):
    with open(flow.opt(src, f"-tq-quantize={options}")) as f:
        q = f.read()
    cpu, = run.run(q, [x])
    (ppu,), stats = run.run_ppu(q, [x])
    err = np.linalg.norm(ppu - want) / np.linalg.norm(want)
    print(f"{options}: {'bit-identical' if ppu.tobytes() == cpu.tobytes() else 'DIFFERENT'}, "
          f"error below {bound}: {err < bound}, cycles counted: {stats['cycles'] > 0}")
# CHECK: tile=8: bit-identical, error below 0.03: True, cycles counted: True
# CHECK: tile=16: bit-identical, error below 0.03: True, cycles counted: True
# CHECK: tile=16 scale=pow2: bit-identical, error below 0.03: True, cycles counted: True
# CHECK: tile=8 act-bits=4 weight-bits=4: bit-identical, error below 0.2: True, cycles counted: True

# A program that is all tq ops (the MLP with a fused ReLU) is one kernel.
src = flow.write("mlp.mlir", mlp_mlir(M, K, H, N, weights=(w1, w2)))
with open(flow.opt(src, "-tq-quantize=tile=16")) as f:
    q = f.read()
cpu, = run.run(q, [x], entry="mlp")
(ppu,), stats = run.run_ppu(q, [x], entry="mlp", machine="rows=4 acc=32")
print(f"fused MLP: {'bit-identical' if ppu.tobytes() == cpu.tobytes() else 'DIFFERENT'}")
# CHECK: fused MLP: bit-identical
