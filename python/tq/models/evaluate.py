"""Accuracy of an ONNX classifier compiled by tile-quant on the CPU
backend: f32 and tile-quantized variants, on a held-out set.

    /usr/bin/python3 -m tq.models.evaluate BUILD_DIR digits

Each variant is imported (tq-import-onnx, batch fixed to the held-out
set), optionally quantized (tq-opt -tq-quantize=...), compiled and run
(tq-run), and scored. For the adaptive policy the chosen widths and errors
per layer are read back from the quantized IR.
"""
import os
import re
import sys
import tempfile

import numpy as np

from tq.cpu import Runner
from tq.ppu import Flow

VARIANTS = [
    ("f32", None),
    ("8-bit V=32", "tile=32"),
    ("4-bit V=16", "tile=16 act-bits=4 weight-bits=4"),
    ("adaptive V=16", "tile=16 policy=adaptive low=0.002 high=0.01 min-bits=2 max-bits=8"),
]


def evaluate(build, model_path, input_name, x, y, variants=VARIANTS, threads=1):
    bindir = os.path.join(build, "bin")
    flow = Flow(opt=os.path.join(bindir, "tq-opt"),
                workdir=tempfile.mkdtemp(prefix="tq-eval-"))
    cpu = Runner(os.path.join(bindir, "tq-run"), workdir=flow.dir)
    imported = flow.path("model.mlir")
    flow.run(os.path.join(bindir, "tq-import-onnx"), model_path,
             f"--input-shape={input_name}:" + "x".join(map(str, x.shape)),
             "-o", imported)
    rows = []
    for name, options in variants:
        src = imported if options is None else flow.opt(
            imported, f"-tq-quantize={options}", out=f"q{len(rows)}.mlir")
        with open(src) as f:
            text = f.read()
        logits, = cpu.run(text, [x], threads=threads)
        acc = float((logits.argmax(axis=1) == y).mean() * 100)
        widths = re.findall(r"tq\.bit_width = \{bits = (\d+) : i64, error = ([0-9.e+-]+)", text)
        rows.append((name, acc, widths))
    return rows


def main():
    build, which = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    models = os.path.join(here, "..", "..", "..", "models")
    if which == "digits":
        from tq.models import digits
        x, y = digits.load_test(os.path.join(models, "digits_test.npz"))
    elif which == "fashion":
        from tq.models import fashion
        x, y = fashion.load("t10k", 1000)
    else:
        raise SystemExit(f"unknown model '{which}' (digits, fashion)")
    model = os.path.join(models, f"{which}_cnn.onnx")
    rows = evaluate(build, model, "image", x, y)
    print(f"{which} CNN, {len(y)} held-out images, CPU backend:")
    for name, acc, widths in rows:
        extra = ""
        if widths:
            extra = "; widths per layer: " + ", ".join(f"{b} bits (error {float(e):.4f})"
                                                    for b, e in widths)
        print(f"  {name:14s} accuracy {acc:6.2f}%{extra}")


if __name__ == "__main__":
    main()
