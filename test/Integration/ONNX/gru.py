# RUN: %python %s %tq_build | FileCheck %s
# GRU imported as a loop over time (scf.for), run in f32 on the CPU
# backend against a GRU written here in numpy from the ONNX equations
# (gate order z, r, h; Y [T, D, B, H], Y_h): linear_before_reset 0 and 1,
# forward, reverse and bidirectional, with and without biases and initial
# state, layout 0 and 1 ([B, T, I]); then tile-quantized (V=8): the gate
# matmuls become tq.matmul, W and R quantized at compile time.
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
tmp = tempfile.mkdtemp(prefix="tq-gru-")
rng = np.random.default_rng(7)
T, B, I, H = 6, 3, 5, 8
cpu = Runner(os.path.join(bindir, "tq-run"))


def sig(x):
    return 1 / (1 + np.exp(-x))


def reference(x, w, r, bias, h0, reverse, lbr):
    """One direction: x [T, B, I], w [3H, I], r [3H, H], bias [6H]."""
    wb, rb = bias[:3 * H], bias[3 * H:]
    h = h0.astype(np.float64)
    ys = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        xw = x[t] @ w.T + wb
        z = sig(xw[:, :H] + h @ r[:H].T + rb[:H])
        rr = sig(xw[:, H:2 * H] + h @ r[H:2 * H].T + rb[H:2 * H])
        if lbr:
            hh = np.tanh(xw[:, 2 * H:] + rr * (h @ r[2 * H:].T + rb[2 * H:]))
        else:
            hh = np.tanh(xw[:, 2 * H:] + (rr * h) @ r[2 * H:].T + rb[2 * H:])
        h = (1 - z) * hh + z * h
        ys[t] = h
    return np.stack(ys), h


def case(direction, with_bias, with_state, lbr, layout=0):
    D = 2 if direction == "bidirectional" else 1
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    w = (rng.standard_normal((D, 3 * H, I)) * 0.4).astype(np.float32)
    r = (rng.standard_normal((D, 3 * H, H)) * 0.4).astype(np.float32)
    bias = (rng.standard_normal((D, 6 * H)) * 0.3).astype(np.float32)
    h0 = rng.standard_normal((D, B, H)).astype(np.float32)
    xin = x.transpose(1, 0, 2).copy() if layout else x
    h0in = h0.transpose(1, 0, 2).copy() if layout else h0
    inputs = ["x", "w", "r", "b" if with_bias else "", "", "h0" if with_state else ""]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r")]
    if with_bias:
        inits.append(numpy_helper.from_array(bias, "b"))
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, xin.shape)]
    args = [xin]
    if with_state:
        graph_inputs.append(helper.make_tensor_value_info("h0", TensorProto.FLOAT, h0in.shape))
        args.append(h0in)
    node = helper.make_node("GRU", inputs, ["y", "yh"], name="gru", hidden_size=H,
                            direction=direction, linear_before_reset=lbr, layout=layout)
    graph = helper.make_graph(
        [node], "g", graph_inputs,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "yh")],
        inits)
    path = os.path.join(tmp, f"{direction}-{lbr}-{layout}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), path, "--locations=false"],
                          capture_output=True, text=True, check=True).stdout
    want_y, want_h = [], []
    for d in range(D):
        y, h = reference(x, w[d], r[d], bias[d] if with_bias else np.zeros(6 * H),
                         h0[d] if with_state else np.zeros((B, H)),
                         direction == "reverse" or d == 1, lbr)
        want_y.append(y)
        want_h.append(h)
    want = [np.stack(want_y, 1), np.stack(want_h)]
    if layout:
        want = [want[0].transpose(2, 0, 1, 3), want[1].transpose(1, 0, 2)]
    got = cpu.run(mlir, args, outputs=2)
    err = max(float(np.abs(g - w_).max()) for g, w_ in zip(got, want))
    print(f"{direction} lbr={lbr} layout={layout} bias={with_bias} state={with_state}: "
          f"loops {mlir.count('scf.for')}, shapes {[g.shape for g in got]}, "
          f"within 1e-5: {err < 1e-5}")
    return mlir, args, want


case("forward", True, True, 0)
case("reverse", False, False, 1)
case("forward", True, False, 1)
case("bidirectional", True, True, 0, layout=1)
mlir, args, want = case("bidirectional", True, True, 1)
src = os.path.join(tmp, "bi.mlir")
with open(src, "w") as f:
    f.write(mlir)
q = subprocess.run([os.path.join(bindir, "tq-opt"), src, "-tq-quantize=tile=8"],
                   capture_output=True, text=True, check=True).stdout
got = cpu.run(q, args, outputs=2)
rel = np.linalg.norm(got[0] - want[0]) / np.linalg.norm(want[0])
print(f"8-bit: tq.matmul {q.count('tq.matmul ')}, Y within 3%: {rel < 0.03}")
# CHECK: forward lbr=0 layout=0 bias=True state=True: loops 1, shapes [(6, 1, 3, 8), (1, 3, 8)], within 1e-5: True
# CHECK: reverse lbr=1 layout=0 bias=False state=False: loops 1, shapes [(6, 1, 3, 8), (1, 3, 8)], within 1e-5: True
# CHECK: forward lbr=1 layout=0 bias=True state=False: loops 1, shapes [(6, 1, 3, 8), (1, 3, 8)], within 1e-5: True
# CHECK: bidirectional lbr=0 layout=1 bias=True state=True: loops 2, shapes [(3, 6, 2, 8), (3, 2, 8)], within 1e-5: True
# CHECK: 8-bit: tq.matmul 4, Y within 3%: True
