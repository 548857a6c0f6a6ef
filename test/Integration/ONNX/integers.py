# RUN: %python %s %tq_build | FileCheck %s
# Integer and boolean graph inputs and outputs: tq-run takes int64, int32
# and bool .npy files and writes the ONNX output types. Inside, integers
# are carried as f32 (exact up to 2^24). Checked against Python's integer
# arithmetic and numpy, bit for bit: integer Div truncating toward zero,
# Mod with the divisor's sign (fmod = 0) and the dividend's (fmod = 1),
# Cast of floats to int32 (toward zero), ArgMax / ArgMin (first and last
# index of ties, a NaN wins), Sum and Mean, IsInf / IsNaN, Size, Not of a
# bool input. The inputs have negatives, ties, NaN and ±Inf.
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tq.cpu import Runner

build = sys.argv[1]
bindir = os.path.join(build, "bin")
tmp = tempfile.mkdtemp(prefix="tq-integers-")
cpu = Runner(os.path.join(bindir, "tq-run"))

a = np.array([[7, -7, 9, -9, 0, 16777215], [5, -5, 1, -1, 12, -16777215]], dtype=np.int64)
d = np.array([[2, 2, -4, -4, 3, 7], [3, -3, 5, -5, 5, 2]], dtype=np.int32)
x = np.array([[1.5, -2.7, 3.0, 3.0, np.inf, -0.2],
              [-np.inf, 0.9, np.nan, -4.5, 2.5, -7.99]], dtype=np.float32)
y = np.array([[2.0, 2.0, -1.25, 1.25, 3.0, 0.5],
              [-3.0, 0.4, 1.0, 2.0, -1.0, 1.5]], dtype=np.float32)
m = np.array([[True, False, True, False, True, False]] * 2)
ties = np.array([[1, 3, 3, 0, 3, -1], [-2, -2, 0, 5, -2, 5]], dtype=np.float32)

i64, i32, f32, bl = TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT, TensorProto.BOOL
nodes = [
    helper.make_node("Cast", ["d"], ["d64"], to=i64),
    helper.make_node("Div", ["a", "d64"], ["quot"]),
    helper.make_node("Mod", ["a", "d64"], ["mod"]),
    helper.make_node("Mod", ["x", "y"], ["fmod"], fmod=1),
    helper.make_node("Cast", ["y"], ["trunc"], to=i32),
    helper.make_node("ArgMax", ["ties"], ["argmax"], axis=1, keepdims=0),
    helper.make_node("ArgMin", ["ties"], ["argmin_last"], axis=1, select_last_index=1),
    helper.make_node("ArgMax", ["x"], ["argmax_nan"], axis=1, keepdims=0),
    helper.make_node("Sum", ["x", "y", "ties"], ["sum"]),
    helper.make_node("Mean", ["y", "ties"], ["mean"]),
    helper.make_node("IsInf", ["x"], ["posinf"], detect_negative=0),
    helper.make_node("IsNaN", ["x"], ["nan"]),
    helper.make_node("Size", ["x"], ["size"]),
    helper.make_node("Not", ["m"], ["notm"]),
]
outs = [("quot", i64), ("mod", i64), ("fmod", f32), ("trunc", i32), ("argmax", i64),
        ("argmin_last", i64), ("argmax_nan", i64), ("sum", f32), ("mean", f32),
        ("posinf", bl), ("nan", bl), ("size", i64), ("notm", bl)]
graph = helper.make_graph(
    nodes, "g",
    [helper.make_tensor_value_info("a", i64, a.shape), helper.make_tensor_value_info("d", i32, d.shape),
     helper.make_tensor_value_info("x", f32, x.shape), helper.make_tensor_value_info("y", f32, y.shape),
     helper.make_tensor_value_info("m", bl, m.shape),
     helper.make_tensor_value_info("ties", f32, ties.shape)],
    [helper.make_tensor_value_info(n, t, None) for n, t in outs])
path = os.path.join(tmp, "integers.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), path, "--locations=false"],
                      capture_output=True, text=True, check=True).stdout
# The ONNX names (tq.name attributes) aside.
header = re.sub(r' \{tq\.name = "[^"]*"\}', "", mlir.split("func.func @main(")[1])
print("signature:", header.split("{")[0].strip())

# The references, from Python's integers and numpy.
def trunc_div(p, q):
    r = abs(p) // abs(q)
    return r if (p >= 0) == (q > 0) else -r

np.seterr(invalid="ignore")
want = {
    "quot": np.array([[trunc_div(p, q) for p, q in zip(ra, rd)] for ra, rd in zip(a.tolist(), d.tolist())]),
    "mod": np.array([[p % q for p, q in zip(ra, rd)] for ra, rd in zip(a.tolist(), d.tolist())]),
    "fmod": np.fmod(x, y),  # NaN for inf and NaN dividends
    "trunc": np.trunc(y).astype(np.int32),
    "argmax": np.argmax(ties, axis=1),
    "argmin_last": (ties.shape[1] - 1 - np.argmin(ties[:, ::-1], axis=1))[:, None],
    "argmax_nan": np.argmax(x, axis=1),
    "sum": x + y + ties,
    "mean": (y + ties) / 2,
    "posinf": np.isposinf(x),
    "nan": np.isnan(x),
    "size": np.array(x.size),
    "notm": ~m,
}
got = cpu.run(mlir, [a, d, x, y, m, ties], outputs=len(outs))
for (name, _), g in zip(outs, got):
    w = want[name]
    same = g.dtype == w.dtype
    if g.dtype.kind == "f":
        equal = g.shape == w.shape and np.array_equal(g, w.astype(np.float32), equal_nan=True) \
            if name != "mean" else np.allclose(g, w, rtol=1e-6)
    else:
        equal = g.shape == w.shape and np.array_equal(g, w)
    print(f"{name}: {g.dtype} {g.shape}, dtype ok: {same}, exact: {equal}")
# CHECK: signature: %arg0: tensor<2x6xi64>, %arg1: tensor<2x6xi32>, %arg2: tensor<2x6xf32>, %arg3: tensor<2x6xf32>, %arg4: tensor<2x6xi1>, %arg5: tensor<2x6xf32>) -> (tensor<2x6xi64>, tensor<2x6xi64>, tensor<2x6xf32>, tensor<2x6xi32>, tensor<2xi64>, tensor<2x1xi64>, tensor<2xi64>, tensor<2x6xf32>, tensor<2x6xf32>, tensor<2x6xi1>, tensor<2x6xi1>, tensor<i64>, tensor<2x6xi1>)
# CHECK: quot: int64 (2, 6), dtype ok: True, exact: True
# CHECK: mod: int64 (2, 6), dtype ok: True, exact: True
# CHECK: fmod: float32 (2, 6), dtype ok: True, exact: True
# CHECK: trunc: int32 (2, 6), dtype ok: True, exact: True
# CHECK: argmax: int64 (2,), dtype ok: True, exact: True
# CHECK: argmin_last: int64 (2, 1), dtype ok: True, exact: True
# CHECK: argmax_nan: int64 (2,), dtype ok: True, exact: True
# CHECK: sum: float32 (2, 6), dtype ok: True, exact: True
# CHECK: mean: float32 (2, 6), dtype ok: True, exact: True
# CHECK: posinf: bool (2, 6), dtype ok: True, exact: True
# CHECK: nan: bool (2, 6), dtype ok: True, exact: True
# CHECK: size: int64 (), dtype ok: True, exact: True
# CHECK: notm: bool (2, 6), dtype ok: True, exact: True
