"""The main job at this stage: what tile-quant can do today, on sample data.

1. `tq-opt` compiles a training step written in the `tq` dialect: constant
   weights are quantized at compile time, transposes reuse tile scales.
2. `tq-quantize` turns a float MLP training step (linalg) into tq: static
   and adaptive widths, square vs per-vector requantization counts.
3. A float MLP is compiled to a PPU program (`tq-to-ppu`, `tq-translate`)
   and run on the simulator (`tq-ppu-sim`): error and statistics.
4. The same quantized MLP compiled for the CPU (`tq-to-cpu`, `tq-run`) on
   each SIMD path: bit-identical to the PPU's result, and its latency.
5. A trained ONNX model (the digits CNN in models/) imported with
   `tq-import-onnx`, compiled in f32 and tile-quantized, and scored on its
   held-out images on the CPU backend and on the PPU simulator (tq ops on
   the PPU, float code on the host): accuracy, latency, PPU statistics.
6. The reference numerics (`tq-ref`, the C++ golden model) quantize sample
   tensors in V×V tiles for each scale form and bit width, run the adaptive
   bit-width search, and compute tiled matmuls (forward and the transposed
   backward forms), compared with float results.

Usage: /usr/bin/python3 -m tq.demo BUILD_DIR   (PYTHONPATH=python)
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from tq.examples import mlp_mlir
from tq.cpu import ALL_TARGETS, Runner, host_targets
from tq.ppu import Flow, ToolError, args_of


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    bindir = os.path.join(build, "bin")
    tq_opt, tq_ref = os.path.join(bindir, "tq-opt"), os.path.join(bindir, "tq-ref")
    flow = Flow(tq_opt, os.path.join(bindir, "tq-translate"),
                os.path.join(bindir, "tq-ppu-sim"), tempfile.mkdtemp(prefix="tq-demo-"))
    run, tmp = flow.run, flow.dir
    src = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples",
                       "train-step.mlir")

    print("== 1. tq-opt: a training step in the tq dialect ==")
    t0 = time.perf_counter()
    ir = run(tq_opt, src, "-tq-quantize-constants", "-canonicalize")
    dt = time.perf_counter() - t0
    ops = {}
    for op in re.findall(r"= (tq\.\w+|arith\.\w+)", ir):
        ops[op] = ops.get(op, 0) + 1
    print(f"compiled {os.path.relpath(src)} in {dt * 1000:.0f} ms; ops after "
          "-tq-quantize-constants -canonicalize:")
    for op, n in sorted(ops.items()):
        print(f"  {op:22s} {n}")
    const = re.search(r"tq\.constant \{scales = (dense<[^>]*>)", ir)
    print(f"  weights quantized at compile time, per-tile steps: {const.group(1)}")
    print("  requantizations for the two transposed operands: "
          f"{ops.get('tq.requantize', 0)} (square tiles reuse their scales)")

    print("\n== 2. tq-quantize: a float MLP training step (linalg) into tq ==")
    mlp = os.path.join(os.path.dirname(src), "mlp-train.mlir")
    for opts in ("tile=16 weight-bits=4",
                 "tile=16 policy=adaptive max-bits=8 low=0.02 high=0.06"):
        t0 = time.perf_counter()
        ir = run(tq_opt, mlp, f"-tq-quantize={opts}",
                 "-mlir-elide-elementsattrs-if-larger=16")
        dt = time.perf_counter() - t0
        ops = {}
        for op in re.findall(r"= (tq\.\w+)", ir):
            ops[op] = ops.get(op, 0) + 1
        summary = ", ".join(f"{n} {op}" for op, n in sorted(ops.items()))
        print(f"tq-quantize=\"{opts}\" ({dt * 1000:.0f} ms): {summary}")
        for bits, err in re.findall(r"tq\.bit_width = \{bits = (\d+) : i64, "
                                    r"error = ([0-9.e-]+)", ir):
            print(f"  weight: adaptive width {bits} bits, error {float(err):.4f}")
    for gran in ("tile", "vector"):
        proc = subprocess.run([tq_opt, mlp, f"-tq-insert-quantization=granularity={gran} tile=16",
                               "-cse", "-tq-fold-transposes=report", "-o", os.devnull],
                              capture_output=True, text=True)
        counts = re.search(r"(\d+) transposes folded.*?(\d+) requantizations", proc.stderr)
        print(f"  granularity={gran:6s}: {counts.group(1)} transposes read through "
              f"matmul flags, {counts.group(2)} requantizations")

    print("\n== 3. the PPU: a float MLP compiled to a PPU program and simulated ==")
    m_, k_, h_, n_ = 64, 96, 48, 10
    mlp_src = flow.write("mlp.mlir", mlp_mlir(m_, k_, h_, n_))
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((m_, k_)).astype(np.float32)
    w1 = (rng.standard_normal((k_, h_)) / np.sqrt(k_)).astype(np.float32)
    w2 = (rng.standard_normal((h_, n_)) / np.sqrt(h_)).astype(np.float32)
    stream = flow.to_ppu(flow.opt(mlp_src, "-tq-quantize=tile=16"), "v=16 rows=2",
                         out="mlp.ppu")
    (y,), report = flow.simulate(stream, args_of(xs, w1, w2), report="text")
    yref = np.maximum(xs.astype(np.float64) @ w1, 0) @ w2
    print(f"MLP {m_}x{k_} -> {h_} (ReLU) -> {n_}, 8-bit, 16x16 tiles, "
          f"{os.path.getsize(stream)} byte stream; relative error vs float "
          f"{np.linalg.norm(y - yref) / np.linalg.norm(yref):.4f}")
    print("PPU statistics:")
    for line in report.strip().splitlines():
        print("  " + line)

    print("\n== 4. the CPU backend: the same quantized MLP, compiled and run ==")
    quantized = flow.opt(mlp_src, "-tq-quantize=tile=16", out="mlp-cpu.mlir")
    with open(quantized) as f:
        text = f.read()
    cpu = Runner(os.path.join(bindir, "tq-run"), workdir=tmp)
    targets = host_targets(os.path.join(bindir, "tq-run"))
    skipped = [t for t in ALL_TARGETS if t not in targets]
    if skipped:
        print(f"  (this CPU cannot run {', '.join(skipped)}: not shown)")
    for target in targets:
        (yc,) = cpu.run(text, [xs, w1, w2], target=target, entry="mlp")
        same = yc.tobytes() == y.tobytes()
        out = flow.run(os.path.join(bindir, "tq-run"), quantized, "--entry=mlp",
                       f"--target={target}", "--repeat=50",
                       *[f"--input={flow.path(f'in{cpu.count}-{i}.npy')}" for i in range(3)])
        print(f"  {target:8s} {'bit-identical to the PPU' if same else 'DIFFERS from the PPU'}; "
              f"{out.strip()}")

    print("\n== 5. a trained ONNX model end to end, on the CPU and the PPU ==")
    from tq.models import digits
    from tq.models.evaluate import evaluate, table
    models = os.path.join(os.path.dirname(__file__), "..", "..", "models")
    x_test, y_test = digits.load_test(os.path.join(models, "digits_test.npz"))
    t0 = time.perf_counter()
    rows = evaluate(build, os.path.join(models, "digits_cnn.onnx"), "image",
                    x_test, y_test, latency=True)
    print(f"digits CNN (models/digits_cnn.onnx: Conv/Relu/MaxPool/Gemm) imported "
          f"by tq-import-onnx, quantized by tq-quantize, run on {len(y_test)} held-out "
          f"images: on the CPU backend (tq-run) and with its tq ops on the PPU "
          f"simulator, the float code between layers on the host (tq-run "
          f"--target=ppu); {time.perf_counter() - t0:.1f} s for all variants.")
    for line in table(rows):
        print("  " + line)
    f32_ms = rows[0].cpu_ms
    for r in rows[1:]:
        print(f"  CPU latency of {r.name}: {r.cpu_ms / f32_ms:.2f}x the f32 model's "
              f"({r.cpu_ms:.2f} vs {f32_ms:.2f} ms for the batch of {len(y_test)})")
    stats = rows[1].ppu_stats
    print(f"  PPU statistics of {rows[1].name} ({stats['launches']} kernel launches, one "
          f"batch): "
          f"{stats['cycles']} cycles, {stats['mac_ops']} MACs, "
          f"{stats['ub_reads']} unified-buffer row reads, {stats['fmem_reads']} fmem "
          f"row reads and {stats['fmem_writes']} writes, {stats['transposes']} tiles "
          "transposed on the fly")

    print("\n== 6. reference numerics on sample data ==")
    rng = np.random.default_rng(0)
    # Activations and weights whose output channels differ in range by up to
    # 100x, as in trained layers.
    x = rng.standard_normal((256, 512)).astype(np.float32)
    w = (rng.standard_normal((512, 256)) *
         np.logspace(-1, 1, 256)[None, :]).astype(np.float32)
    xp, wp = os.path.join(tmp, "x.npy"), os.path.join(tmp, "w.npy")
    np.save(xp, x)
    np.save(wp, w)

    print("quantization error (A3 diff_bit) of the weights, by form, N and V:")
    print(f"  {'form':20s} {'N':>3s} " + " ".join(f"{'V=' + str(v):>9s}" for v in (8, 32, 128)))
    for form in ("scaled", "pow2", "offset_scaled"):
        for bits in (4, 8):
            errs = []
            for v in (8, 32, 128):
                out = run(tq_ref, "quantize", wp, f"--tile={v}x{v}", f"--bits={bits}",
                          f"--form={form}")
                errs.append(float(re.search(r"diff_bit\): (\S+)", out).group(1)))
            print(f"  {form:20s} {bits:3d} " + " ".join(f"{e:9.5f}" for e in errs))

    out = run(tq_ref, "search", wp, "--tile=32x32", "--low=0.002", "--high=0.01",
              "--init=8", "--form=scaled")
    print(f"adaptive bit width (A4, thresholds 0.002..0.01, V=32): {out.strip()}")
    per_tile = run(tq_ref, "search", wp, "--tile=32x32", "--low=0.002", "--high=0.01",
                   "--per-tile", "--form=scaled")
    widths = [int(line.split()[1]) for line in per_tile.splitlines()]
    hist = {b: widths.count(b) for b in sorted(set(widths))}
    print(f"  per tile ({len(widths)} tiles): bits histogram {hist}, "
          f"average {np.mean(widths):.2f} bits")

    print("tiled matmul (T5), V=32, error relative to the float product:")
    ref = x.astype(np.float64) @ w.astype(np.float64)
    for bits in (8, 4):
        cp = os.path.join(tmp, f"c{bits}.npy")
        t0 = time.perf_counter()
        run(tq_ref, "matmul", xp, wp, "--tile=32x32", f"--bits={bits}", "-o", cp)
        dt = time.perf_counter() - t0
        c = np.load(cp)
        rel = np.linalg.norm(c - ref) / np.linalg.norm(ref)
        print(f"  Y = X·W   {bits}-bit: relative error {rel:.4f} "
              f"(scalar reference, {dt:.2f} s for 256x512x256)")
    # Backward form dX = dY·Wᵀ read through the transpose flag.
    dy = rng.standard_normal((256, 256)).astype(np.float32)
    dyp, dxp = os.path.join(tmp, "dy.npy"), os.path.join(tmp, "dx.npy")
    np.save(dyp, dy)
    run(tq_ref, "matmul", dyp, wp, "--tile=32x32", "--bits=8", "--transpose-b", "-o", dxp)
    dx = np.load(dxp)
    ref = dy.astype(np.float64) @ w.T.astype(np.float64)
    print(f"  dX = dY·Wᵀ 8-bit (Wᵀ from the same tiles, no requantization): "
          f"relative error {np.linalg.norm(dx - ref) / np.linalg.norm(ref):.4f}")
    print("\ndemo: done")


if __name__ == "__main__":
    try:
        main()
    except ToolError as e:
        sys.exit(f"demo: error: {e}")
