# RUN: %python %s %tq_build | FileCheck %s
# LSTM imported as a loop over time (scf.for), run in f32 on the CPU
# backend against an LSTM written here in numpy from the ONNX equations
# (gate order i, o, f, c; Y [T, D, B, H], Y_h, Y_c): forward with both
# biases and initial states, reverse without them, and bidirectional;
# with peepholes and in layout 1 ([B, T, I]);
# then tile-quantized (V=8): the gate matmuls become tq.matmul, W and R
# quantized at compile time, h at each step.
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
tmp = tempfile.mkdtemp(prefix="tq-lstm-")
rng = np.random.default_rng(4)
T, B, I, H = 5, 3, 6, 8
cpu = Runner(os.path.join(bindir, "tq-run"))


def sig(x):
    return 1 / (1 + np.exp(-x))


def reference(x, w, r, bias, h0, c0, reverse, p):
    """One direction: x [T, B, I], w [4H, I], r [4H, H], bias [8H],
    peepholes p [3H] (i, o, f)."""
    h, c = h0.astype(np.float64), c0.astype(np.float64)
    ys = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        g = x[t] @ w.T + h @ r.T + bias[:4 * H] + bias[4 * H:]
        i, o, f, cc = (g[:, k * H:(k + 1) * H] for k in range(4))
        c = sig(f + p[2 * H:] * c) * c + sig(i + p[:H] * c) * np.tanh(cc)
        h = sig(o + p[H:2 * H] * c) * np.tanh(c)
        ys[t] = h
    return np.stack(ys), h, c


def case(direction, with_bias, with_state, peepholes=False, layout=0):
    D = 2 if direction == "bidirectional" else 1
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    w = (rng.standard_normal((D, 4 * H, I)) * 0.4).astype(np.float32)
    r = (rng.standard_normal((D, 4 * H, H)) * 0.4).astype(np.float32)
    bias = (rng.standard_normal((D, 8 * H)) * 0.2).astype(np.float32)
    h0 = rng.standard_normal((D, B, H)).astype(np.float32)
    c0 = rng.standard_normal((D, B, H)).astype(np.float32)
    p = (rng.standard_normal((D, 3 * H)) * 0.5).astype(np.float32)
    # Layout 1: X [B, T, I], states [B, D, H], Y [B, T, D, H].
    major = (lambda a: a.transpose(1, 0, 2).copy()) if layout else (lambda a: a)
    inputs = ["x", "w", "r", "b" if with_bias else "", "", "h0" if with_state else "",
              "c0" if with_state else "", "p" if peepholes else ""]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r")]
    if with_bias:
        inits.append(numpy_helper.from_array(bias, "b"))
    if peepholes:
        inits.append(numpy_helper.from_array(p, "p"))
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, major(x).shape)]
    args = [major(x)]
    if with_state:
        graph_inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, major(h0).shape)
                         for n in ("h0", "c0")]
        args += [major(h0), major(c0)]
    node = helper.make_node("LSTM", inputs, ["y", "yh", "yc"], name="lstm",
                            hidden_size=H, direction=direction, layout=layout)
    graph = helper.make_graph(
        [node], "g", graph_inputs,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "yh", "yc")],
        inits)
    path = os.path.join(tmp, f"{direction}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), path, "--locations=false"],
                          capture_output=True, text=True, check=True).stdout
    want_y, want_h, want_c = [], [], []
    for d in range(D):
        zb = bias[d] if with_bias else np.zeros(8 * H)
        s0 = (h0[d], c0[d]) if with_state else (np.zeros((B, H)), np.zeros((B, H)))
        y, h, c = reference(x, w[d], r[d], zb, *s0,
                            reverse=direction == "reverse" or d == 1,
                            p=p[d] if peepholes else np.zeros(3 * H))
        want_y.append(y)
        want_h.append(h)
        want_c.append(c)
    want = [np.stack(want_y, 1), np.stack(want_h), np.stack(want_c)]
    if layout:
        want = [want[0].transpose(2, 0, 1, 3)] + [major(s) for s in want[1:]]
    got = cpu.run(mlir, args, outputs=3)
    err = max(float(np.abs(g - w_).max()) for g, w_ in zip(got, want))
    print(f"{direction} bias={with_bias} state={with_state} peepholes={peepholes} "
          f"layout={layout}: loops {mlir.count('scf.for')}, "
          f"shapes {[g.shape for g in got]}, within 1e-5: {err < 1e-5}")
    return mlir, args, want


case("forward", True, True)
case("reverse", False, False)
case("forward", True, False, peepholes=True)
case("bidirectional", False, True, peepholes=True, layout=1)
mlir, args, want = case("bidirectional", True, True)
src = os.path.join(tmp, "bi.mlir")
with open(src, "w") as f:
    f.write(mlir)
q = subprocess.run([os.path.join(bindir, "tq-opt"), src, "-tq-quantize=tile=8"],
                   capture_output=True, text=True, check=True).stdout
got = cpu.run(q, args, outputs=3)
rel = np.linalg.norm(got[0] - want[0]) / np.linalg.norm(want[0])
print(f"8-bit: tq.matmul {q.count('tq.matmul ')}, tq.constant {q.count('tq.constant')}, "
      f"Y within 3%: {rel < 0.03}")
# CHECK: forward bias=True state=True peepholes=False layout=0: loops 1, shapes [(5, 1, 3, 8), (1, 3, 8), (1, 3, 8)], within 1e-5: True
# CHECK: reverse bias=False state=False peepholes=False layout=0: loops 1, shapes [(5, 1, 3, 8), (1, 3, 8), (1, 3, 8)], within 1e-5: True
# CHECK: forward bias=True state=False peepholes=True layout=0: loops 1, shapes [(5, 1, 3, 8), (1, 3, 8), (1, 3, 8)], within 1e-5: True
# CHECK: bidirectional bias=False state=True peepholes=True layout=1: loops 2, shapes [(3, 5, 2, 8), (3, 2, 8), (3, 2, 8)], within 1e-5: True
# CHECK: bidirectional bias=True state=True peepholes=False layout=0: loops 2, shapes [(5, 2, 3, 8), (2, 3, 8), (2, 3, 8)], within 1e-5: True
# CHECK: 8-bit: tq.matmul 4, tq.constant 4, Y within 3%: True
