# RUN: %python %s %tq_build | FileCheck %s
# Pad (reflect, edge, constant with axes), Slice with negative steps (as
# Silero VAD mirrors its features), Conv with auto_pad SAME_LOWER, and a
# float16 initializer (widened exactly), run in f32 on the CPU backend and
# compared with numpy. (The ONNX conformance suite checks the same ops
# against its own expected outputs.)
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tq.cpu import Runner

build = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="tq-pad-")
rng = np.random.default_rng(9)
x = rng.standard_normal((2, 3, 5)).astype(np.float32)
w16 = rng.standard_normal((4, 3, 3, 3)).astype(np.float16)
img = rng.standard_normal((1, 3, 6, 7)).astype(np.float32)
i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
inits = [i64("p_reflect", [0, 0, 3, 0, 0, 2]), i64("p_edge", [0, 1, 2, 0, 2, 1]),
         i64("p_axes", [1, 2, 1, 2]), i64("axes", [1, 2]), numpy_helper.from_array(np.float32(-7), "cv"),
         i64("s", [-1, 4]), i64("e", [-9223372036854775807, 0]), i64("st", [-1, -2]),
         numpy_helper.from_array(w16, "w")]
nodes = [
    helper.make_node("Pad", ["x", "p_reflect"], ["reflect"], mode="reflect"),
    helper.make_node("Pad", ["x", "p_edge"], ["edge"], mode="edge"),
    helper.make_node("Pad", ["x", "p_axes", "cv", "axes"], ["const"]),
    helper.make_node("Slice", ["x", "s", "e", "axes", "st"], ["back"]),
    helper.make_node("Conv", ["img", "w"], ["conv"], auto_pad="SAME_LOWER", strides=[2, 2]),
]
outs = ["reflect", "edge", "const", "back", "conv"]
graph = helper.make_graph(
    nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                 helper.make_tensor_value_info("img", TensorProto.FLOAT, img.shape)],
    [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
path = os.path.join(tmp, "m.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)


def conv_same_lower(x, w, stride):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    out = [-(-h // stride), -(-wd // stride)]
    pads = [max(0, (o - 1) * stride + q - i) for o, q, i in zip(out, (r, s), (h, wd))]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0] - pads[0] // 2, pads[0] // 2),
                                       (pads[1] - pads[1] // 2, pads[1] // 2)))
    y = np.zeros((n, k, out[0], out[1]))
    for i in range(out[0]):
        for j in range(out[1]):
            patch = xp[:, :, i * stride:i * stride + r, j * stride:j * stride + s]
            y[:, :, i, j] = np.einsum("ncrs,kcrs->nk", patch, w.astype(np.float64))
    return y


want = {
    "reflect": np.pad(x, ((0, 0), (0, 0), (3, 2)), mode="reflect"),
    "edge": np.pad(x, ((0, 0), (1, 2), (2, 1)), mode="edge"),
    "const": np.pad(x, ((0, 0), (1, 1), (2, 2)), constant_values=-7),
    "back": x[:, ::-1, 4:0:-2],
    "conv": conv_same_lower(img, w16.astype(np.float32), 2),
}
mlir = subprocess.run([os.path.join(build, "bin", "tq-import-onnx"), path, "--locations=false"],
                      capture_output=True, text=True, check=True).stdout
got = Runner(os.path.join(build, "bin", "tq-run")).run(mlir, [x, img], outputs=len(outs))
for name, g in zip(outs, got):
    w = want[name]
    ok = g.shape == w.shape and np.abs(g - w).max() <= 1e-4 * max(1.0, np.abs(w).max())
    print(f"{name} {g.shape}: {'matches' if ok else 'DIFFERS'}")
# CHECK: reflect (2, 3, 10): matches
# CHECK: edge (2, 6, 8): matches
# CHECK: const (2, 5, 9): matches
# CHECK: back (2, 3, 2): matches
# CHECK: conv (1, 4, 3, 4): matches
