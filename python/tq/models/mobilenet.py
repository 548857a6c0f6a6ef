"""A MobileNetV3-style CNN on Fashion-MNIST, trained with python3-torch
(fixed seeds, a few minutes on 2 cores) and exported to ONNX.

    /usr/bin/python3 -m tq.models.mobilenet train models/   # writes fashion_mobilenet.onnx
    /usr/bin/python3 -m tq.models.mobilenet compare BUILD_DIR [--images N]

The network has what makes MobileNetV3 hard for a quantizing compiler:

- a strided 3x3 stem with BatchNorm and HardSwish;
- inverted residual blocks: a 1x1 expansion, a depthwise 3x3 (stride 1 or
  2), squeeze-excitation (global average pool, 1x1 ReLU, 1x1 HardSigmoid,
  a channel-wise Mul), a 1x1 projection, and a residual Add where the
  shapes allow;
- BatchNorm after every convolution (exported unfused, in eval mode);
- a 1x1 head, global average pooling and two Gemms (HardSwish between).

Evaluation reads the test images from the Debian package
(tq.models.fashion.load), so only the model is kept in the repository.

`compare` runs the kept model on N test images with onnxruntime (fp32, the
reference) and with tile-quant in f32, 8-bit (V=32) and adaptive, and
prints per variant the max abs diff of the logits against ORT (and its
ratio to max|ORT|), the top-1 agreement with ORT and the accuracy.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                     "models", "fashion_mobilenet.onnx")
VARIANTS = [
    ("f32", None),
    ("8-bit V=32", "tile=32"),
    # The band of tq.models.evaluate's "adaptive V=16": 8 bits gives these
    # weights an error of about 0.01, so the search moves below 8 bits.
    ("adaptive V=32", "tile=32 policy=adaptive low={low} high={high} min-bits=2 max-bits=8"),
]
ADAPTIVE_BAND = (0.015, 0.04)


def _net():
    from torch import nn

    class SqueezeExcite(nn.Module):
        def __init__(self, channels, squeezed):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.reduce = nn.Conv2d(channels, squeezed, 1)
            self.relu = nn.ReLU()
            self.expand = nn.Conv2d(squeezed, channels, 1)
            self.gate = nn.Hardsigmoid()

        def forward(self, x):
            s = self.gate(self.expand(self.relu(self.reduce(self.pool(x)))))
            return x * s

    class InvertedResidual(nn.Module):
        def __init__(self, cin, expanded, cout, stride, se, act):
            super().__init__()
            layers = [nn.Conv2d(cin, expanded, 1, bias=False),
                      nn.BatchNorm2d(expanded), act(),
                      nn.Conv2d(expanded, expanded, 3, stride, 1, groups=expanded,
                                bias=False),
                      nn.BatchNorm2d(expanded), act()]
            if se:
                layers.append(SqueezeExcite(expanded, max(8, expanded // 4)))
            layers += [nn.Conv2d(expanded, cout, 1, bias=False), nn.BatchNorm2d(cout)]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    hs, relu = nn.Hardswish, nn.ReLU
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), hs(),  # 14x14
        InvertedResidual(16, 16, 16, 1, True, relu),
        InvertedResidual(16, 64, 24, 2, False, relu),  # 7x7
        InvertedResidual(24, 72, 24, 1, False, relu),
        InvertedResidual(24, 96, 40, 2, True, hs),  # 4x4
        InvertedResidual(40, 120, 40, 1, True, hs),
        InvertedResidual(40, 120, 48, 1, True, hs),
        nn.Conv2d(48, 144, 1, bias=False), nn.BatchNorm2d(144), hs(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(144, 128), hs(), nn.Linear(128, 10))


def train(directory, epochs=4):
    import torch

    from tq.models.fashion import load
    from tq.models.training import fit

    torch.manual_seed(0)
    torch.set_num_threads(2)
    x, y = load("train")
    model = _net()
    model.train()
    fit(model, x, y, epochs=epochs, batch=128, lr=3e-3)
    path = os.path.join(directory, "fashion_mobilenet.onnx")
    torch.onnx.export(model, torch.zeros(1, 1, 28, 28), path,
                      input_names=["image"], output_names=["logits"],
                      opset_version=17, do_constant_folding=True,
                      training=torch.onnx.TrainingMode.EVAL,
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    tx, ty = load("t10k", 2000)
    with torch.no_grad():
        acc = (model(torch.from_numpy(tx)).argmax(1).numpy() == ty).mean()
    print(f"mobilenet: torch top-1 on 2000 test images {100 * acc:.1f}% -> {path}")


def compare(build, images, variants=VARIANTS):
    from tq.cpu import Runner
    from tq.models.evaluate import _weight_widths, band_report
    from tq.models.fashion import load
    from tq.ort import ORT, install
    from tq.ppu import Flow

    x, y = load("t10k", images)
    bindir = os.path.join(build, "bin")
    flow = Flow(opt=os.path.join(bindir, "tq-opt"),
                workdir=tempfile.mkdtemp(prefix="tq-mobilenet-"))
    cpu = Runner(os.path.join(bindir, "tq-run"), workdir=flow.dir)
    ref = ORT(install(), workdir=flow.dir).run(MODEL, {"image": x})[0]["logits"]
    imported = flow.path("model.mlir")
    start = time.perf_counter()
    flow.run(os.path.join(bindir, "tq-import-onnx"), MODEL,
             "--input-shape=image:" + "x".join(map(str, x.shape)), "-o", imported)
    import_s = time.perf_counter() - start
    top_ref = ref.argmax(axis=1)
    checks = []
    print(f"fashion_mobilenet.onnx on {images} test images; ORT fp32 accuracy "
          f"{100 * (top_ref == y).mean():.1f}%; import {import_s:.2f} s\n")
    print("| variant | max abs diff vs ORT | / max abs ORT | top-1 agreement with ORT "
          "| accuracy | quantize s | compile + run s |")
    print("|---|---|---|---|---|---|---|")
    low, high = ADAPTIVE_BAND
    for name, options in variants:
        options = options and options.format(low=low, high=high)
        start = time.perf_counter()
        src = imported if options is None else flow.opt(
            imported, f"-tq-quantize={options}", out=f"q{name.split()[0]}.mlir")
        quantize_s = time.perf_counter() - start
        with open(src) as f:
            text = f.read()
        start = time.perf_counter()
        logits, = cpu.run(text, [x])
        run_s = time.perf_counter() - start
        diff = float(np.abs(logits - ref).max())
        agree = 100 * float((logits.argmax(axis=1) == top_ref).mean())
        acc = 100 * float((logits.argmax(axis=1) == y).mean())
        print(f"| {name} | {diff:.3g} | {diff / np.abs(ref).max():.3g} | {agree:.1f}% "
              f"| {acc:.1f}% | {quantize_s if options else 0:.2f} | {run_s:.2f} |")
        if "policy=adaptive" in (options or ""):
            widths = [(b, e) for _, b, e in _weight_widths(text)]
            checks += band_report(f"{name}: weight widths", widths, low, high)
            checks.append(f"{name}: some weight below 8 bits: "
                          f"{any(b < 8 for b, _ in widths)}")
        if options is None:
            checks.append(f"{name} within 1e-4 of max|ORT|: "
                          f"{diff <= 1e-4 * np.abs(ref).max()}")
        else:
            checks.append(f"{name} top-1 agrees with ORT on >= 99%: {agree >= 99}")
    print()
    for line in checks:
        print("- " + line)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train and export fashion_mobilenet.onnx into DIR")
    t.add_argument("dir")
    c = sub.add_parser("compare", help="tile-quant against onnxruntime")
    c.add_argument("build")
    c.add_argument("--images", type=int, default=1000)
    a = p.parse_args()
    if a.command == "train":
        train(a.dir)
    else:
        compare(a.build, a.images)


if __name__ == "__main__":
    main()
