# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %tq_build/bin %tq_src %t | FileCheck %s
# The new-user flow of docs/examples/classify.c: one tq-compile command
# makes the Fashion CNN a shared library and a header, and the 20-line C
# program, compiled against them, classifies Fashion-MNIST test images.
#  - The header names the entry's parameters after the ONNX input and
#    output, and sizes them.
#  - The library exports no main (the C program has its own).
#  - The C program's classes are those of the same quantized program run by
#    tq-run (the JIT) on the same images.
#  - Its accuracy is the 8-bit model's (>= 85% on 500 images; the float
#    model scores 89%), and it agrees with onnxruntime's fp32 classes on
#    >= 95% of them when onnxruntime is installed.
import os
import shutil
import subprocess
import sys

import numpy as np

from tq.models import fashion

BIN, SRC, WORK = sys.argv[1:4]
MODEL = os.path.join(SRC, "models", "fashion_cnn.onnx")
N = 500


def run(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True,
                          cwd=WORK, **kw)


# One command: library, header, the time of each phase.
r = run(os.path.join(BIN, "tq-compile"), MODEL, "--dim=batch=1",
        "-o", "fashion_cnn.so")
print(r.stderr.strip())
# CHECK: tq-compile: fashion_cnn.so, fashion_cnn.h (import {{.*}} s, quantize {{.*}} s, compile {{.*}} s, link {{.*}} s; total {{.*}} s)
header = open(os.path.join(WORK, "fashion_cnn.h")).read()
for line in header.splitlines():
    if line.startswith(("#define", "static inline")):
        print(line)
# CHECK: #define FASHION_CNN_IMAGE_SIZE 784
# CHECK: #define FASHION_CNN_LOGITS_SIZE 10
# CHECK: static inline void fashion_cnn_run(const float *image, float *logits) {

nm = run("/usr/lib/llvm-22/bin/llvm-nm", "-D", "--defined-only",
         "fashion_cnn.so").stdout.split()
print("exports main:", "main" in nm, "| exports _mlir_ciface_fashion_cnn:",
      "_mlir_ciface_fashion_cnn" in nm)
# CHECK: exports main: False | exports _mlir_ciface_fashion_cnn: True

cc = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
shutil.copy(os.path.join(SRC, "docs", "examples", "classify.c"), WORK)
run(cc, "-Wall", "-Wextra", "-Werror", "classify.c", "-I.", "./fashion_cnn.so",
    "-Wl,-rpath,.", "-o", "classify")
lines = len(open(os.path.join(WORK, "classify.c")).read().splitlines())
print(f"classify.c: {lines} lines")
# CHECK: classify.c: {{1[0-9]|2[0-5]}} lines

x, y = fashion.load("t10k", N)
with open(os.path.join(WORK, "images.f32"), "wb") as f:
    f.write(x.tobytes())
with open(os.path.join(WORK, "images.f32"), "rb") as f:
    out = subprocess.run(["./classify"], stdin=f, capture_output=True,
                         text=True, cwd=WORK, check=True).stdout
got = np.array(out.split(), dtype=np.int64)
print(f"classified {len(got)} images")
# CHECK: classified 500 images

# The same program through the JIT, on the first images one at a time
# (activation tiles span the batch, so a batch of one is what the library
# computes).
run(os.path.join(BIN, "tq-compile"), MODEL, "--dim=batch=1",
    "-o", "fashion_cnn.mlir", "--name=fashion_cnn")
jit = []
for i in range(8):
    np.save(os.path.join(WORK, "x.npy"), x[i:i + 1])
    run(os.path.join(BIN, "tq-run"), "fashion_cnn.mlir", "--entry=fashion_cnn",
        "--input", "x.npy", "--output", "logits.npy")
    jit.append(int(np.load(os.path.join(WORK, "logits.npy")).argmax()))
print(f"same classes as tq-run: {jit == got[:8].tolist()}")
# CHECK: same classes as tq-run: True
acc = float((got == y).mean())
print(f"accuracy >= 85%: {acc >= 0.85} ({100 * acc:.1f}%)")
# CHECK: accuracy >= 85%: True

ort = os.path.join(SRC, "build", "ort", "node_modules")
if os.path.isdir(os.path.join(ort, "onnxruntime-node")) and shutil.which("node"):
    from tq.ort import ORT
    outs, _ = ORT(ort, WORK).run(MODEL, {"image": x})
    agree = float((outs["logits"].argmax(1) == got).mean())
    print(f"agrees with onnxruntime on >= 95%: {agree >= 0.95} "
          f"({100 * agree:.1f}%)")
else:
    print("onnxruntime not installed, not compared")
# CHECK: {{agrees with onnxruntime on >= 95%: True|onnxruntime not installed, not compared}}
