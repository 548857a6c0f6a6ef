"""Where a model's time goes: `tq-run --profile` on a bundled model,
imported, quantized (8-bit, V=32) and run on real images, as the markdown
tables docs/CPU.md shows.

    scripts/bench-profile.sh [MODEL] [--batch N] [--threads N]

Prints the wall time per call, then the time per layer (its ONNX node and
the op it was before lowering) and per op kind, each with its share of
the kernel time, the median of --repeat calls after a warm-up call.
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


def images(model, batch):
    from tq.models import digits, fashion
    if model.startswith("fashion"):
        x, _ = fashion.load("t10k", batch)
    else:
        x, _ = digits.load_test(os.path.join(ROOT, "models", "digits_test.npz"))
    return np.ascontiguousarray(x[:batch], dtype=np.float32)


def profile(bindir, model, batch, threads, repeat, quantize="tile=32"):
    """The JSON report of `tq-run --profile` for `model` at `batch`."""
    work = tempfile.mkdtemp(prefix="tq-profile-")
    x = images(model, batch)
    xpath, f32, q = (os.path.join(work, n) for n in ("x.npy", "f.mlir", "q.mlir"))
    np.save(xpath, x)

    def run(*args):
        p = subprocess.run(list(args), capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(p.stderr)
        return p.stdout

    run(os.path.join(bindir, "tq-import-onnx"), os.path.join(ROOT, "models", model + ".onnx"),
        "--input-shape=image:" + "x".join(map(str, x.shape)), "-o", f32)
    src = f32
    if quantize:
        run(os.path.join(bindir, "tq-opt"), f32, f"-tq-quantize={quantize}",
            "-mlir-print-debuginfo", "-o", q)
        src = q
    out = run(os.path.join(bindir, "tq-run"), src, f"--input={xpath}", f"--repeat={repeat}",
              f"--num-threads={threads}", "--profile=json")
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("model", nargs="?", default="fashion_cnn")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--f32", action="store_true", help="profile the float program")
    a = ap.parse_args()
    r = profile(os.path.join(a.build, "bin"), a.model, a.batch, a.threads, a.repeat,
                quantize=None if a.f32 else "tile=32")
    print(f"{a.model}, batch {a.batch}, {a.threads} thread(s), "
          f"{'f32' if a.f32 else '8-bit V=32'}: {r['ms']:.3f} ms per call, "
          f"{r['kernel_ms']:.3f} ms in kernels ({r['kernel_ms'] / r['ms']:.0%})\n")
    print("| layer | kind | ms | share |\n|---|---|---|---|")
    for row in r["layers"]:
        print(f"| {row['layer']} | {row['kind']} | {row['ms']:.3f} | {row['share']:.1%} |")
    print("\n| op kind | ms | share |\n|---|---|---|")
    for row in r["kinds"]:
        print(f"| {row['kind']} | {row['ms']:.3f} | {row['share']:.1%} |")


if __name__ == "__main__":
    main()
