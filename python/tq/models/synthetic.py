"""Synthetic ONNX models of a chosen size, for compile-time benchmarks
(random weights, fixed seed; they are generated, never committed).

    /usr/bin/python3 -m tq.models.synthetic mobilenet OUT.onnx --blocks 116 --channels 28
    /usr/bin/python3 -m tq.models.synthetic chain OUT.onnx --layers 16

- `mobilenet`: a MobileNetV2-style network. A 3x3 stem, then `blocks`
  inverted residual blocks (1x1 expansion by 6, Clip 0..6, depthwise 3x3,
  Clip, 1x1 projection, residual Add: six nodes each), with stride 2 at a
  third and two thirds of the way, global average pooling and a Gemm. With
  116 blocks of 28 channels it has 700 nodes and 5 MB of weights.
- `chain`: N 3x3 Conv+ReLU layers of 32 channels on 16x16 (batch 1), the
  chain whose compile time the real-model issue measured.
"""
import argparse

import numpy as np


def _model(nodes, inits, x_shape, y_name, y_shape, name):
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


class _Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], {}, 0

    def fresh(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def weight(self, shape):
        fan_in = int(np.prod(shape[1:]))
        name = self.fresh("w")
        self.inits[name] = (self.rng.standard_normal(shape) *
                            np.sqrt(2.0 / fan_in)).astype(np.float32)
        return name

    def node(self, op, inputs, **attrs):
        from onnx import helper
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1):
        w = self.weight([cout, cin // group, k, k])
        b = self.fresh("b")
        self.inits[b] = np.zeros(cout, np.float32) + 0.01
        return self.node("Conv", [x, w, b], kernel_shape=[k, k],
                         strides=[stride, stride], pads=[k // 2] * 4, group=group)

    def relu6(self, x):
        if "zero" not in self.inits:
            self.inits["zero"] = np.array(0, np.float32)
            self.inits["six"] = np.array(6, np.float32)
        return self.node("Clip", [x, "zero", "six"])


def mobilenet(blocks, channels, side=32, seed=0):
    b = _Builder(seed)
    x = b.relu6(b.conv("x", 3, channels, 3, stride=2))
    for i in range(blocks):
        stride = 2 if i in (blocks // 3, 2 * blocks // 3) else 1
        e = channels * 6
        y = b.relu6(b.conv(x, channels, e, 1))
        y = b.relu6(b.conv(y, e, e, 3, stride=stride, group=e))
        y = b.conv(y, e, channels, 1)
        x = y if stride != 1 else b.node("Add", [x, y])
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x])
    w = b.fresh("fc")
    b.inits[w] = (b.rng.standard_normal([10, channels]) * 0.1).astype(np.float32)
    bias = b.fresh("b")
    b.inits[bias] = np.zeros(10, np.float32)
    y = b.node("Gemm", [x, w, bias], transB=1)
    return _model(b.nodes, b.inits, [1, 3, side, side], y, [1, 10], "mobilenet")


def chain(layers, channels=32, side=16, seed=0):
    b = _Builder(seed)
    x = "x"
    for _ in range(layers):
        x = b.node("Relu", [b.conv(x, channels, channels, 3)])
    return _model(b.nodes, b.inits, [1, channels, side, side], x,
                  [1, channels, side, side], "chain")


def main():
    import onnx
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["mobilenet", "chain"])
    p.add_argument("out")
    p.add_argument("--blocks", type=int, default=116)
    p.add_argument("--channels", type=int, default=28)
    p.add_argument("--layers", type=int, default=16)
    a = p.parse_args()
    m = (mobilenet(a.blocks, a.channels) if a.kind == "mobilenet" else chain(a.layers))
    onnx.save(m, a.out)
    weights = sum(np.prod(t.dims) * 4 for t in m.graph.initializer)
    print(f"{a.out}: {len(m.graph.node)} nodes, {weights / 1e6:.1f} MB of weights")


if __name__ == "__main__":
    main()
