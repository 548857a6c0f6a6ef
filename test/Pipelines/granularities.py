# RUN: %python %s %tq_build %tq_src | FileCheck %s
# tq-quantize produces valid IR for every granularity x tile x width on
# every bundled model (tq-opt verifies after each pass), and each
# granularity's program runs: on the digits CNN's 360 held-out images its
# 8-bit V=16 top-1 agrees with f32 on at least 97% of them.
# Per-tensor scales once made a tq.conv2d that failed its own verifier (a
# tile wider than C on one operand only).
import os
import subprocess
import sys
import tempfile

import numpy as np

build, src = sys.argv[1], sys.argv[2]
bindir = os.path.join(build, "bin")
sys.path.insert(0, os.path.join(src, "python"))
from tq.models import digits  # noqa: E402

work = tempfile.mkdtemp()
MODELS = {"digits_cnn": "1x1x8x8", "fashion_cnn": "1x1x28x28",
          "fashion_mobilenet": "1x1x28x28", "digits_transformer": "1x1x8x8"}
GRANULARITIES = ("tile", "vector", "channel", "tensor")


def run(*args):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    return p.returncode, p.stderr


invalid = []
combinations = 0
for name, shape in MODELS.items():
    mlir = os.path.join(work, name + ".mlir")
    rc, err = run(os.path.join(bindir, "tq-import-onnx"),
                  os.path.join(src, "models", name + ".onnx"),
                  f"--input-shape=image:{shape}", "-o", mlir)
    assert rc == 0, err
    for g in GRANULARITIES:
        for tile in (8, 16, 32):
            for bits in (4, 8):
                combinations += 1
                rc, err = run(os.path.join(bindir, "tq-opt"), mlir,
                              f"-tq-quantize=granularity={g} tile={tile} "
                              f"weight-bits={bits} act-bits={bits}", "-o", os.devnull)
                if rc != 0:
                    invalid.append(f"{name} {g} tile={tile} bits={bits}: "
                                   + err.strip().splitlines()[0][:200])
print(f"combinations: {combinations}, invalid: {len(invalid)}")
for line in invalid:
    print("  " + line)
# CHECK: combinations: 96, invalid: 0

x, y = digits.load_test(os.path.join(src, "models", "digits_test.npz"))
xs = os.path.join(work, "x.npy")
np.save(xs, x)
mlir = os.path.join(work, "digits.mlir")
rc, err = run(os.path.join(bindir, "tq-import-onnx"),
              os.path.join(src, "models", "digits_cnn.onnx"),
              f"--input-shape=image:{len(x)}x1x8x8", "-o", mlir)
assert rc == 0, err


def logits(program):
    out = os.path.join(work, "out.npy")
    rc, err = run(os.path.join(bindir, "tq-run"), program, "--input", xs,
                  "--output", out)
    assert rc == 0, err
    return np.load(out)


reference = logits(mlir).argmax(1)
for g in GRANULARITIES:
    q = os.path.join(work, f"digits-{g}.mlir")
    rc, err = run(os.path.join(bindir, "tq-opt"), mlir,
                  f"-tq-quantize=granularity={g} tile=16", "-o", q)
    assert rc == 0, err
    agree = float((logits(q).argmax(1) == reference).mean())
    print(f"{g}: agrees with f32 on >= 97%: {agree >= 0.97} ({agree:.1%})")
# CHECK: tile: agrees with f32 on >= 97%: True (
# CHECK: vector: agrees with f32 on >= 97%: True (
# CHECK: channel: agrees with f32 on >= 97%: True (
# CHECK: tensor: agrees with f32 on >= 97%: True (
