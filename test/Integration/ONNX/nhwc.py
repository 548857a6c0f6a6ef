# RUN: %python %s %tq_build | FileCheck %s
# The NHWC form TensorFlow converters produce: every Conv and MaxPool
# wrapped in Transpose(0,3,1,2) ... Transpose(0,2,3,1). Between layers the
# Transpose pairs enclose only layout-agnostic ops (LeakyRelu, Max with a
# scalar), so the importer cancels them: one transpose at each end of the
# graph remains. A pair that encloses a per-channel Add (a [C] bias in the
# NHWC layout) must stay. Values in f32 against a numpy reference written
# here (within 1e-4 of max|ref|).
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tq.cpu import Runner

build = sys.argv[1]
bindir = os.path.join(build, "bin")
tmp = tempfile.mkdtemp(prefix="tq-nhwc-")
rng = np.random.default_rng(9)
cpu = Runner(os.path.join(bindir, "tq-run"))
NCHW, NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def conv(x, w):
    """NCHW x, [K, C, 3, 3] w, pads 1."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for r in range(3):
        for s in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, r:r + h, s:s + wd], w[:, :, r, s])
    return y


def leaky(x):
    return np.where(x >= 0, x, 0.2 * x)


def build_model(bias):
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.4).astype(np.float32)
    w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    lo = np.array(-0.5, np.float32)
    mid = ["m1"]
    nodes = [
        helper.make_node("Transpose", ["x"], ["t0"], perm=NCHW),
        helper.make_node("Conv", ["t0", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Transpose", ["c1"], ["h1"], perm=NHWC),
        helper.make_node("LeakyRelu", ["h1"], ["a1"], alpha=0.2),
        helper.make_node("Max", ["a1", "lo"], ["m1"]),
    ]
    if bias:
        nodes.append(helper.make_node("Add", ["m1", "b"], ["m1b"]))
        mid = ["m1b"]
    nodes += [
        helper.make_node("Transpose", mid, ["t1"], perm=NCHW),
        helper.make_node("Conv", ["t1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Transpose", ["p2"], ["y"], perm=NHWC),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (b, "b"),
                                                        (lo, "lo"))]
    graph = helper.make_graph(nodes, "nhwc",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 8, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    x = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
    h = np.maximum(leaky(conv(x.transpose(NCHW), w1)), lo)
    if bias:
        h = h + b[None, :, None, None]
    c2 = conv(h, w2)
    want = c2.reshape(2, 8, 4, 2, 4, 2).max(axis=(3, 5)).transpose(NHWC)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), x, want


for bias in (False, True):
    model, x, want = build_model(bias)
    path = os.path.join(tmp, f"nhwc{int(bias)}.onnx")
    onnx.save(model, path)
    mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), path, "--locations=false"],
                          capture_output=True, text=True, check=True).stdout
    got = cpu.run(mlir, [x])[0]
    ok = got.shape == want.shape and np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
    print(f"per-channel bias {bias}: transposes {mlir.count('linalg.transpose')}, "
          f"shape {got.shape}, within 1e-4: {ok}")
# CHECK: per-channel bias False: transposes 2, shape (2, 4, 4, 8), within 1e-4: True
# CHECK: per-channel bias True: transposes 4, shape (2, 4, 4, 8), within 1e-4: True
