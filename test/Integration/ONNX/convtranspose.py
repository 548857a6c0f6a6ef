# RUN: %python %s %tq_build | FileCheck %s
# ConvTranspose with groups, output_shape and auto_pad, run in f32 on the
# CPU backend against a numpy reference written here from the ONNX
# definition (each input pixel scatters its filter into the output; the
# pads are then cropped), within 1e-4 of max|ref|. Cases: group 2 with a
# constant filter, strides, dilations, pads and output_padding; group 3
# (depthwise-style, one channel per group) on a filter that is a graph
# input; output_shape, also one beyond what the input reaches; SAME_UPPER and SAME_LOWER; VALID; a grouped 1-D
# ConvTranspose. The grouped forms must stay one convolution.
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
tmp = tempfile.mkdtemp(prefix="tq-convtranspose-")
rng = np.random.default_rng(11)
cpu = Runner(os.path.join(bindir, "tq-run"))


def reference(x, w, bias, group, strides, dilations, pads, out_pad, out_shape, auto_pad):
    """x [N, C, H, W], w [C, K/group, R, S]; pads [top, left, bottom, right]."""
    n, c, h, wd = x.shape
    kg, r, s = w.shape[1:]
    cg = c // group
    # The uncropped output, then the pads taken off each side.
    full = [strides[d] * ((h, wd)[d] - 1) + out_pad[d] + (w.shape[2 + d] - 1) * dilations[d] + 1
            for d in range(2)]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and out_shape is None:
        out_shape = [(h, wd)[d] * strides[d] for d in range(2)]
    if auto_pad == "VALID":
        pads = [0, 0, 0, 0]
    if out_shape is not None:
        pads = [0] * 4
        for d in range(2):
            total = full[d] - out_shape[d]
            pads[d] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads[d + 2] = total - pads[d]
    y = np.zeros((n, kg * group, full[0], full[1]))
    for g in range(group):
        for ci in range(cg):
            ch = g * cg + ci
            for i in range(h):
                for j in range(wd):
                    for a in range(r):
                        for b in range(s):
                            y[:, g * kg:(g + 1) * kg, i * strides[0] + a * dilations[0],
                              j * strides[1] + b * dilations[1]] += (
                                x[:, ch, i, j][:, None] * w[ch, :, a, b][None, :])
    # Negative pads (an output_shape beyond the scatter) add zeros.
    y = np.pad(y, [(0, 0), (0, 0)] + [(max(0, -pads[d]), max(0, -pads[d + 2])) for d in range(2)])
    out = [full[d] - pads[d] - pads[d + 2] for d in range(2)]
    y = y[:, :, max(0, pads[0]):max(0, pads[0]) + out[0], max(0, pads[1]):max(0, pads[1]) + out[1]]
    if bias is not None:
        y += bias[None, :, None, None]
    return y


def case(label, x_shape, w_shape, group, constant_w=True, bias=True, strides=(1, 1),
         dilations=(1, 1), pads=(0, 0, 0, 0), out_pad=(0, 0), out_shape=None, auto_pad=None):
    one_d = len(x_shape) == 3
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bv = rng.standard_normal(w_shape[1] * group).astype(np.float32)
    attrs = dict(group=group, strides=list(strides), dilations=list(dilations))
    if auto_pad:
        attrs["auto_pad"] = auto_pad
    elif out_shape is None:
        attrs["pads"] = list(pads)
    if any(out_pad):
        attrs["output_padding"] = list(out_pad)
    if out_shape is not None:
        attrs["output_shape"] = list(out_shape)
    inputs = ["x", "w"] + (["b"] if bias else [])
    inits = ([numpy_helper.from_array(w, "w")] if constant_w else []) + (
        [numpy_helper.from_array(bv, "b")] if bias else [])
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    args = [x]
    if not constant_w:
        graph_inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, w.shape))
        args.append(w)
    node = helper.make_node("ConvTranspose", inputs, ["y"], name="deconv", **attrs)
    graph = helper.make_graph([node], "g", graph_inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    path = os.path.join(tmp, label + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), path, "--locations=false"],
                          capture_output=True, text=True, check=True).stdout
    if one_d:
        x4, w4 = x[:, :, None, :], w[:, :, None, :]
        two = lambda v: [1, v[0]]  # noqa: E731
        want = reference(x4, w4, bv if bias else None, group, two(strides), two(dilations),
                         [0, pads[0], 0, pads[1]], [0, out_pad[0]],
                         None if out_shape is None else two(out_shape), auto_pad)[:, :, 0]
    else:
        want = reference(x, w, bv if bias else None, group, strides, dilations, pads, out_pad,
                         out_shape, auto_pad)
    got = cpu.run(mlir, args)[0]
    ok = got.shape == want.shape and np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
    convs = mlir.count("linalg.conv_2d")
    print(f"{label}: shape {got.shape}, convolutions {convs}, within 1e-4: {ok}")


case("group2", (2, 4, 5, 4), (4, 3, 3, 2), 2, strides=(2, 1), dilations=(1, 2),
     pads=(1, 0, 0, 1), out_pad=(1, 0))
case("group3-input-filter", (1, 3, 4, 4), (3, 1, 3, 3), 3, constant_w=False, bias=False,
     strides=(2, 2), pads=(1, 1, 1, 1))
case("output-shape", (1, 2, 3, 3), (2, 2, 3, 3), 1, strides=(3, 2), out_shape=(8, 6))
case("output-shape-beyond", (1, 2, 3, 3), (2, 2, 3, 3), 1, strides=(3, 2), out_shape=(10, 8))
case("same-upper", (1, 2, 3, 4), (2, 3, 3, 3), 1, strides=(2, 2), auto_pad="SAME_UPPER")
case("same-lower", (1, 4, 3, 3), (4, 1, 4, 4), 2, strides=(2, 3), auto_pad="SAME_LOWER")
case("valid", (1, 2, 3, 3), (2, 2, 2, 2), 1, strides=(2, 2), auto_pad="VALID")
case("group2-1d", (2, 4, 9), (4, 2, 3), 2, strides=(2,), dilations=(1,), pads=(1, 2),
     out_pad=(1,))
# CHECK: group2: shape (2, 6, 11, 5), convolutions 1, within 1e-4: True
# CHECK: group3-input-filter: shape (1, 3, 7, 7), convolutions 1, within 1e-4: True
# CHECK: output-shape: shape (1, 2, 8, 6), convolutions 1, within 1e-4: True
# CHECK: output-shape-beyond: shape (1, 2, 10, 8), convolutions 1, within 1e-4: True
# CHECK: same-upper: shape (1, 3, 6, 8), convolutions 1, within 1e-4: True
# CHECK: same-lower: shape (1, 2, 6, 9), convolutions 1, within 1e-4: True
# CHECK: valid: shape (1, 2, 6, 6), convolutions 1, within 1e-4: True
# CHECK: group2-1d: shape (2, 4, 17), convolutions 1, within 1e-4: True
