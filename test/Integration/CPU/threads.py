# RUN: %python %s %tq_build | FileCheck %s
# The bundled models at batch 64, f32 and 8-bit V=32, compiled for 1 and for
# 2 threads: the outputs are the same bits. With 2 threads each thread runs
# the whole network on 32 of the 64 images (tq-cpu-split-batch); with
# --split-batch=false the quantizations, tile transposes, im2col rows, the
# kernels' blocks and the float loop nests are shared among the threads
# instead. Either way each element is computed by one thread in the same
# order.
import os
import sys
import tempfile

import numpy as np

from tq.models import digits, fashion
from tq.ppu import Flow

build = sys.argv[1]
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
bindir = os.path.join(build, "bin")
flow = Flow(opt=os.path.join(bindir, "tq-opt"),
            workdir=tempfile.mkdtemp(prefix="tq-threads-"))
x_fashion = np.ascontiguousarray(fashion.load("t10k", 64)[0])
x_digits = np.ascontiguousarray(
    digits.load_test(os.path.join(root, "models", "digits_test.npz"))[0][:64])

for name, x in (("digits_cnn", x_digits), ("fashion_cnn", x_fashion),
                ("digits_transformer", x_digits), ("fashion_mobilenet", x_fashion)):
    imported = flow.path(f"{name}.mlir")
    flow.run(os.path.join(bindir, "tq-import-onnx"),
             os.path.join(root, "models", f"{name}.onnx"),
             "--input-shape=image:" + "x".join(map(str, x.shape)), "-o", imported)
    quantized = flow.opt(imported, "-tq-quantize=tile=32", out=f"q-{name}.mlir")
    xin = flow.path(f"x-{name}.npy")
    np.save(xin, x)
    for variant, src in (("f32", imported), ("8-bit", quantized)):
        ys = []
        for threads, split in ((1, "false"), (1, "true"), (2, "true"), (2, "false")):
            y = flow.path(f"y-{name}-{variant}-{threads}-{split}.npy")
            flow.run(os.path.join(bindir, "tq-run"), src, f"--input={xin}",
                     f"--output={y}", f"--num-threads={threads}",
                     f"--split-batch={split}")
            ys.append(np.load(y))
        same = [ys[0].tobytes() == y.tobytes() for y in ys[1:]]
        split = "scf.forall" in flow.run(
            "opt", src, "--pass-pipeline=builtin.module(func.func("
            "tq-cpu-split-batch{chunks=2}))")
        print(f"{name} {variant}: batch split {split}; the same bits as 1 thread "
              f"unsplit: 1 thread split {same[0]}, 2 threads images shared "
              f"{same[1]}, loops shared {same[2]}")

# CHECK: digits_cnn f32: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
# CHECK: digits_cnn 8-bit: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
# CHECK: fashion_cnn f32: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
# CHECK: fashion_cnn 8-bit: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
# CHECK: digits_transformer f32: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
# CHECK: digits_transformer 8-bit: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
# CHECK: fashion_mobilenet f32: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
# CHECK: fashion_mobilenet 8-bit: batch split True; the same bits as 1 thread unsplit: 1 thread split True, 2 threads images shared True, loops shared True
