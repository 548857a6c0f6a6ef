"""tile-quant against onnxruntime on the same ONNX model: output agreement
and latency, for batch 1 and batch 64 (1 thread each).

    scripts/bench-ort.sh            (installs onnxruntime-node with npm)

Rows: ORT f32, tq f32, tq 8-bit (V=32). Latency is the median of repeated
calls after a warm-up, tq's from `tq-run --repeat`, ORT's from its
session.run; ratios are against ORT f32 measured in the same run.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from tq.models import digits
from tq.ppu import Flow


def main():
    build, node_modules = sys.argv[1], sys.argv[2]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    model = os.path.join(root, "models", "digits_cnn.onnx")
    x_all, _ = digits.load_test(os.path.join(root, "models", "digits_test.npz"))
    bindir = os.path.join(build, "bin")
    flow = Flow(opt=os.path.join(bindir, "tq-opt"),
                workdir=tempfile.mkdtemp(prefix="tq-ort-"))
    env = dict(os.environ, NODE_PATH=node_modules)
    print("| batch | ORT f32 ms | tq f32 ms | tq 8-bit ms | tq f32 / ORT | "
          "tq 8-bit / ORT | max abs diff tq f32 vs ORT |")
    print("|---|---|---|---|---|---|---|")
    for batch in (1, 64):
        x = np.ascontiguousarray(x_all[:batch])
        raw = flow.path(f"x{batch}.bin")
        x.astype("<f4").tofile(raw)
        out = flow.path(f"ort{batch}.bin")
        p = subprocess.run(["node", os.path.join(root, "scripts", "ort-run.js"), model,
                            "image", raw, ",".join(map(str, x.shape)), out, "200"],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise SystemExit(p.stderr)
        ort = json.loads(p.stdout)
        y_ort = np.fromfile(out, "<f4").reshape(ort["dims"])
        imported = flow.path(f"m{batch}.mlir")
        flow.run(os.path.join(bindir, "tq-import-onnx"), model,
                 "--input-shape=image:" + "x".join(map(str, x.shape)), "-o", imported)
        quantized = flow.opt(imported, "-tq-quantize=tile=32", out=f"q{batch}.mlir")
        xin = flow.path(f"x{batch}.npy")
        np.save(xin, x)
        times = {}
        for name, src in (("f32", imported), ("8-bit", quantized)):
            y_path = flow.path(f"y{name}{batch}.npy")
            text = flow.run(os.path.join(bindir, "tq-run"), src, f"--input={xin}",
                            f"--output={y_path}", "--repeat=200")
            times[name] = float(re.search(r"median ([0-9.]+) ms", text).group(1))
            if name == "f32":
                diff = float(np.abs(np.load(y_path) - y_ort).max())
        o = ort["median_ms"]
        print(f"| {batch} | {o:.3f} | {times['f32']:.3f} | {times['8-bit']:.3f} | "
              f"{times['f32'] / o:.2f} | {times['8-bit'] / o:.2f} | {diff:.2e} |")


if __name__ == "__main__":
    main()
