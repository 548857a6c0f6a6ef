# RUN: %python %s %tq_build | FileCheck %s
# The adaptive policy on the PPU: tq.adaptive_bit_width (the A3/A4 search
# over a whole activation) runs on the host, and its width reaches the PPU
# kernel as a width input, a register its QUANT instructions read. The
# logits must be the same bits as the CPU backend's (which the CPU tests
# hold bit-exact against the numpy reference), and the first layer's width,
# and its A3 error, reported by `tq-run --ppu-report`, must be the C++
# reference's search on the input (tq-ref search). Random and adversarial inputs: a zero tile,
# NaN and Inf, an outlier, a constant input; shapes not multiples of V.
import os
import re
import subprocess
import sys

import numpy as np

from tq.cpu import Runner
from tq.examples import mlp_bias_mlir
from tq.ppu import Flow

build = sys.argv[1]
bindir = os.path.join(build, "bin")
flow = Flow(opt=os.path.join(bindir, "tq-opt"))
run = Runner(os.path.join(bindir, "tq-run"), workdir=flow.dir)
rng = np.random.default_rng(11)
M, K, H, N = 21, 30, 19, 10
w1 = (rng.standard_normal((K, H)) / np.sqrt(K)).astype(np.float32)
w2 = (rng.standard_normal((H, N)) / np.sqrt(H)).astype(np.float32)
b1 = rng.standard_normal(H).astype(np.float32)
b2 = rng.standard_normal(N).astype(np.float32)
src = flow.write("mlp-bias.mlir", mlp_bias_mlir((M, K), w1, b1, w2, b2))


def inputs():
    x = rng.standard_normal((M, K)).astype(np.float32)
    yield "random", x
    z = x.copy()
    z[:8, :8] = 0  # an all-zero tile (V=8)
    yield "zero tile", z
    z = x.copy()
    z[3, 4], z[5, 6], z[7, 1] = np.nan, np.inf, -np.inf
    yield "NaN and Inf", z
    z = x.copy()
    z[2, 2] = 1e6
    yield "outlier", z
    yield "constant", np.full((M, K), 0.75, np.float32)


def reference_bits(x, v, low, high, init, max_bits):
    path = flow.path("x.npy")
    np.save(path, x)
    out = subprocess.run([os.path.join(bindir, "tq-ref"), "search", path, f"--tile={v}x{v}",
                          f"--low={low}", f"--high={high}", f"--init={init}",
                          f"--max={max_bits}"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"bits (\d+) error ([0-9.e+-]+)", out)
    return int(m.group(1)), float(m.group(2))


for v, low, high, max_bits in ((8, 0.02, 0.05, 12), (16, 0.002, 0.01, 12)):
    options = (f"tile={v} policy=adaptive low={low} high={high} min-bits=2 "
               f"max-bits={max_bits}")
    with open(flow.opt(src, f"-tq-quantize={options}")) as f:
        q = f.read()
    for name, x in inputs():
        cpu, = run.run(q, [x])
        (ppu,), stats = run.run_ppu(q, [x])
        widths = [w["bits"] for w in stats["widths"]]
        error = stats["widths"][0]["errors"][0]
        want, want_error = reference_bits(x, v, low, high, 8, max_bits)
        print(f"V={v} {low}..{high} {name}: "
              f"{'bit-identical' if ppu.tobytes() == cpu.tobytes() else 'DIFFERENT'}, "
              f"{stats['launches']} launches, widths {widths}, first width and error as tq-ref: "
              f"{widths[0] == [want] and abs(error - want_error) <= 1e-5 * want_error}")
# CHECK: V=8 0.02..0.05 random: bit-identical, 2 launches, widths {{\[\[[2-7]\], \[[2-9]\]\]}}, first width and error as tq-ref: True
# CHECK: V=8 0.02..0.05 zero tile: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
# CHECK: V=8 0.02..0.05 NaN and Inf: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
# CHECK: V=8 0.02..0.05 outlier: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
# CHECK: V=8 0.02..0.05 constant: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
# CHECK: V=16 0.002..0.01 random: bit-identical, 2 launches, widths {{\[\[(9|1[0-2])\], \[([2-9]|1[0-2])\]\]}}, first width and error as tq-ref: True
# CHECK: V=16 0.002..0.01 zero tile: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
# CHECK: V=16 0.002..0.01 NaN and Inf: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
# CHECK: V=16 0.002..0.01 outlier: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
# CHECK: V=16 0.002..0.01 constant: bit-identical, 2 launches, {{.*}} first width and error as tq-ref: True
