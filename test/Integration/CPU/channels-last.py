# RUN: %python %s %tq_build | FileCheck %s
# The bundled CNNs in 8 bits (V=32) at batch 64 run with their float layers
# in NHWC (tq-cpu-channels-last, the default) and in the model's NCHW
# (--channels-last=false): the outputs are the same bits, on 1 and 2
# threads, on test images and on adversarial ones (all-zero images, NaN,
# ±Inf and ±1e30 pixels). The first layer (an f32 convolution on one
# channel) runs in NHWC too, so the first quantized convolution's input
# needs no tq.transpose. In the MobileNet-style model every activation
# transpose between two quantized convolutions goes: what is left is the
# squeeze-excitation's 1x1 planes'. In the two small CNNs the one
# linalg.transpose left is the last pooling's, before the flatten.
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
            workdir=tempfile.mkdtemp(prefix="tq-channels-last-"))
rng = np.random.default_rng(3)


def adversarial(x):
    x = x.copy()
    x[:8] = 0
    flat = x[8:].reshape(-1)
    picks = rng.choice(flat.size, size=flat.size // 50, replace=False)
    flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, 1e30, -1e30],
                                      dtype=np.float32), size=picks.size)
    return x


x_fashion = np.ascontiguousarray(fashion.load("t10k", 64)[0])
x_digits = np.ascontiguousarray(
    digits.load_test(os.path.join(root, "models", "digits_test.npz"))[0][:64])

for name, x in (("digits_cnn", x_digits), ("fashion_cnn", x_fashion),
                ("fashion_mobilenet", x_fashion)):
    imported = flow.path(f"{name}.mlir")
    flow.run(os.path.join(bindir, "tq-import-onnx"),
             os.path.join(root, "models", f"{name}.onnx"),
             "--input-shape=image:" + "x".join(map(str, x.shape)), "-o", imported)
    quantized = flow.opt(imported, "-tq-quantize=tile=32", out=f"q-{name}.mlir")
    nhwc = flow.opt(quantized, "-tq-cpu-channels-last", out=f"c-{name}.mlir")
    with open(quantized) as f:
        before = f.read()
    with open(nhwc) as f:
        after = f.read()
    count = lambda text, op: text.count(f"= {op} ")
    print(f"{name}: linalg.transpose {count(before, 'linalg.transpose')} -> "
          f"{count(after, 'linalg.transpose')}, tq.transpose "
          f"{count(before, 'tq.transpose')} -> {count(after, 'tq.transpose')}, "
          f"depthwise NHWC {count(after, 'linalg.depthwise_conv_2d_nhwc_hwc')}, "
          f"conv NHWC {count(after, 'linalg.conv_2d_nhwc_hwcf')}")
    for data_name, data in (("test", x), ("adversarial", adversarial(x))):
        xin = flow.path(f"x-{name}-{data_name}.npy")
        np.save(xin, data)
        same = []
        for threads in (1, 2):
            ys = []
            for layout in ("true", "false"):
                y = flow.path(f"y-{name}-{data_name}-{threads}-{layout}.npy")
                flow.run(os.path.join(bindir, "tq-run"), quantized, f"--input={xin}",
                         f"--output={y}", f"--num-threads={threads}",
                         f"--channels-last={layout}")
                ys.append(np.load(y))
            same.append(ys[0].tobytes() == ys[1].tobytes())
        print(f"{name} {data_name}: NHWC gives the same bits as NCHW: "
              f"1 thread {same[0]}, 2 threads {same[1]}")

# CHECK: digits_cnn: linalg.transpose 1 -> 1, tq.transpose 1 -> 0, depthwise NHWC 0, conv NHWC 1
# CHECK: digits_cnn test: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: digits_cnn adversarial: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_cnn: linalg.transpose 1 -> 1, tq.transpose 1 -> 0, depthwise NHWC 0, conv NHWC 1
# CHECK: fashion_cnn test: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_cnn adversarial: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_mobilenet: linalg.transpose 21 -> 0, tq.transpose 21 -> 4, depthwise NHWC 6, conv NHWC 1
# CHECK: fashion_mobilenet test: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_mobilenet adversarial: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
