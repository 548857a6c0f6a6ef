# RUN: %python %s %tq_build | FileCheck %s
# 1-D convolutions and pooling (NCL, as in audio models) imported as their
# 2-D form on [N, C, 1, L], and Clip with a bound computed at run time,
# run in f32 on the CPU backend against a numpy reference written here
# (within 1e-4 of max|ref|): a grouped, strided, dilated, padded Conv with
# bias, a depthwise Conv without bias on a non-constant filter, MaxPool
# and AveragePool (count_include_pad), and Clip(x, min = max(x) - 3).
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tq.cpu import Runner

build = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="tq-conv1d-")
rng = np.random.default_rng(5)
N, C, L, K, G = 2, 4, 37, 6, 2
x = rng.standard_normal((N, C, L)).astype(np.float32)
w1 = rng.standard_normal((K, C // G, 5)).astype(np.float32)
b1 = rng.standard_normal(K).astype(np.float32)
wd = rng.standard_normal((K, 1, 3)).astype(np.float32)  # a graph input
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", group=G,
                     pads=[2, 1], strides=[2], dilations=[2]),
    helper.make_node("Conv", ["c1", "wd"], ["c2"], name="depthwise", group=K, pads=[1, 1]),
    helper.make_node("MaxPool", ["c2"], ["p1"], name="max", kernel_shape=[3], strides=[2],
                     pads=[1, 1]),
    helper.make_node("AveragePool", ["p1"], ["p2"], name="avg", kernel_shape=[2],
                     count_include_pad=1, pads=[0, 1]),
    helper.make_node("ReduceMax", ["p2"], ["m"], name="peak", keepdims=0),
    helper.make_node("Constant", [], ["three"], value=numpy_helper.from_array(np.float32(3))),
    helper.make_node("Sub", ["m", "three"], ["lo"], name="floor"),
    helper.make_node("Clip", ["p2", "lo"], ["y"], name="clip"),
]
graph = helper.make_graph(
    nodes, "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, L]),
     helper.make_tensor_value_info("wd", TensorProto.FLOAT, [K, 1, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1")])
path = os.path.join(tmp, "m.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def conv1d(x, w, b, groups, pads, stride=1, dilation=1):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), tuple(pads)))
    k, cg, r = w.shape
    kg = k // groups
    span = dilation * (r - 1) + 1
    out_len = (xp.shape[2] - span) // stride + 1
    out = np.zeros((x.shape[0], k, out_len))
    for o in range(k):
        g = o // kg
        for i in range(out_len):
            taps = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + span:dilation]
            out[:, o, i] = np.einsum("ncr,cr->n", taps, w[o])
    return out + (0 if b is None else b[None, :, None])


def pool1d(x, k, stride, pads, fn, fill):
    xp = np.pad(x, ((0, 0), (0, 0), tuple(pads)), constant_values=fill)
    out_len = (xp.shape[2] - k) // stride + 1
    return np.stack([fn(xp[:, :, i * stride:i * stride + k], axis=2)
                     for i in range(out_len)], axis=2)


c1 = conv1d(x, w1, b1, G, (2, 1), 2, 2)
c2 = conv1d(c1, wd, None, K, (1, 1))
p1 = pool1d(c2, 3, 2, (1, 1), np.max, -np.inf)
p2 = pool1d(p1, 2, 1, (0, 1), np.mean, 0.0)
want = np.maximum(p2, p2.max() - 3)
mlir = subprocess.run([os.path.join(build, "bin", "tq-import-onnx"), path, "--locations=false"],
                      capture_output=True, text=True, check=True).stdout
print("grouped convolutions, one op each:", mlir.count("linalg.conv_2d_ngchw_gfchw"),
      "| plain:", mlir.count("linalg.conv_2d_nchw_fchw"))
y, = Runner(os.path.join(build, "bin", "tq-run")).run(mlir, [x, wd])
err = np.abs(y - want).max() / np.abs(want).max()
print(f"shape {y.shape}, want {want.shape}, matches numpy within 1e-4: {err < 1e-4}")
print("clipped below:", int((y == y.max() - 3).sum()) > 0)
# CHECK: grouped convolutions, one op each: 2 | plain: 0
# CHECK: shape (2, 6, 8), want (2, 6, 8), matches numpy within 1e-4: True
# CHECK: clipped below: True
