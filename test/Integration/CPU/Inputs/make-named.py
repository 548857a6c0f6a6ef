"""A model with named inputs and outputs for tq-run-io.test: x (2x4) and
w (4x3) give y = tanh(x w) and s = sigmoid(y); plus the inputs as .npy and
.npz files and the expected outputs (numpy, f64 then rounded)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["m"]),
     helper.make_node("Tanh", ["m"], ["y"]),
     helper.make_node("Sigmoid", ["y"], ["s"])],
    "named",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
     helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(graph), os.path.join(out, "named.onnx"))
rng = np.random.default_rng(5)
x = rng.standard_normal((2, 4)).astype(np.float32)
w = rng.standard_normal((4, 3)).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "w.npy"), w)
np.savez(os.path.join(out, "inputs.npz"), x=x, w=w)
np.savez(os.path.join(out, "partial.npz"), w=w)
np.savez(os.path.join(out, "extra.npz"), x=x, w=w, z=w)
y = np.tanh(x.astype(np.float64) @ w)
s = 1 / (1 + np.exp(-y))
np.savez(os.path.join(out, "expected.npz"), y=y.astype(np.float32), s=s.astype(np.float32))
np.savez(os.path.join(out, "off.npz"), y=(y + 1e-3).astype(np.float32), s=s.astype(np.float32))
np.savez(os.path.join(out, "noy.npz"), s=s.astype(np.float32))
np.save(os.path.join(out, "y.npy"), y.astype(np.float32))

# Non-finite inputs (SPEC T3): NaN reads as 0; +Inf as +qmax, which stands
# for its tile's largest finite magnitude (with tile=4, x is one tile).
nan = x.copy(); nan[0, 1] = np.nan
zero = x.copy(); zero[0, 1] = 0
inf = x.copy(); inf[1, 2] = np.inf
big = x.copy(); big[1, 2] = 0
big[1, 2] = np.abs(big).max()
for name, a in (("nan", nan), ("zero", zero), ("inf", inf), ("big", big)):
    np.save(os.path.join(out, f"x-{name}.npy"), a)
