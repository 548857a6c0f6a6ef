# RUN: %python %s %tq_build | FileCheck %s
# Conv + BatchNormalization folding and grouped convolutions in the
# importer, run in f32 on the CPU backend against a numpy reference
# (within 1e-4): a grouped Conv with bias, a BatchNormalization folded
# into it (no BatchNormalization arithmetic left in the IR), and a plain
# Conv without bias followed by a BatchNormalization.
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tq.cpu import Runner

build = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="tq-convbn-")
rng = np.random.default_rng(7)
N, C, H, W, K, G = 2, 4, 6, 6, 6, 2
x = rng.standard_normal((N, C, H, W)).astype(np.float32)
w1 = rng.standard_normal((K, C // G, 3, 3)).astype(np.float32)
b1 = rng.standard_normal(K).astype(np.float32)
w2 = rng.standard_normal((5, K, 1, 1)).astype(np.float32)
bn = {f"{p}{i}": v for i in (1, 2) for p, v in (
    ("g", rng.uniform(0.5, 2, K if i == 1 else 5)), ("be", rng.standard_normal(K if i == 1 else 5)),
    ("m", rng.standard_normal(K if i == 1 else 5)), ("v", rng.uniform(0.5, 2, K if i == 1 else 5)))}
inits = [numpy_helper.from_array(a.astype(np.float32), n)
         for n, a in [("w1", w1), ("b1", b1), ("w2", w2)] + list(bn.items())]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", group=G, pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c1", "g1", "be1", "m1", "v1"], ["n1"], name="bn1",
                     epsilon=1e-3),
    helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2"),
    helper.make_node("BatchNormalization", ["c2", "g2", "be2", "m2", "v2"], ["y"], name="bn2"),
]
graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
path = os.path.join(tmp, "m.onnx")
onnx.save(model, path)


def conv(x, w, b, groups, pad):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    kg = k // groups
    out = np.zeros((n, k, h + 2 * pad - r + 1, wd + 2 * pad - s + 1))
    for o in range(k):
        g = o // kg
        for i in range(out.shape[2]):
            for j in range(out.shape[3]):
                out[:, o, i, j] = np.einsum(
                    "ncrs,crs->n", xp[:, g * cg:(g + 1) * cg, i:i + r, j:j + s], w[o])
    return out + (0 if b is None else b[None, :, None, None])


def norm(y, i, eps):
    g, be, m, v = (bn[f"{p}{i}"][None, :, None, None] for p in ("g", "be", "m", "v"))
    return (y - m) / np.sqrt(v + eps) * g + be


want = norm(conv(np.maximum(norm(conv(x, w1, b1, G, 1), 1, 1e-3), 0), w2, None, 1, 0), 2, 1e-5)
mlir = subprocess.run([os.path.join(build, "bin", "tq-import-onnx"), path, "--locations=false"],
                      capture_output=True, text=True, check=True).stdout
print("convolutions:", mlir.count("linalg.conv_2d_nchw_fchw"),
      "| grouped, one op:", mlir.count("linalg.conv_2d_ngchw_gfchw"))
print("square roots left:", mlir.count("math.sqrt"))
y, = Runner(os.path.join(build, "bin", "tq-run")).run(mlir, [x])
err = np.abs(y - want).max() / np.abs(want).max()
print(f"shape {y.shape}, matches numpy within 1e-4: {err < 1e-4}")

# Tile-quantized (V=4; min-channels=0, so tq-split-grouped-convs splits
# the grouped Conv into its 2 groups), the convolutions run on the CPU
# and, as PPU kernels, on the simulator: the same bits, near the float.
src = os.path.join(tmp, "m.mlir")
with open(src, "w") as f:
    f.write(mlir)
q = subprocess.run([os.path.join(build, "bin", "tq-opt"), src, "-tq-quantize=tile=4 min-channels=0"],
                   capture_output=True, text=True, check=True).stdout
print("quantized convolutions:", q.count("tq.conv2d"))
run = Runner(os.path.join(build, "bin", "tq-run"))
yc, = run.run(q, [x])
(yp,), stats = run.run_ppu(q, [x])
qerr = np.linalg.norm(yc - want) / np.linalg.norm(want)
print(f"PPU bit-identical: {yc.tobytes() == yp.tobytes()}, {stats['launches']} launches, "
      f"8-bit error below 3%: {qerr < 0.03}")
# CHECK: convolutions: 1 | grouped, one op: 1
# CHECK: square roots left: 0
# CHECK: shape (2, 5, 6, 6), matches numpy within 1e-4: True
# CHECK: quantized convolutions: 3
# CHECK: PPU bit-identical: True, 2 launches, 8-bit error below 3%: True
