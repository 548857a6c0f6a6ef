# RUN: %python %s %tq_build | FileCheck %s
# Booleans (i1 tensors; a bool graph output is a bool .npy) and If, run
# on the CPU backend against numpy: the five comparisons, Not/And/Or/Xor, Where, Cast between bool and float, and an
# If whose condition is computed at run time (an scf.if; each input takes
# one branch, both are checked), with branches that read outer-scope
# values and initializers of their own. An If on a constant condition
# imports only the branch it takes.
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
tmp = tempfile.mkdtemp(prefix="tq-logical-")
F = TensorProto.FLOAT


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


# then: y = x * 2 + a (a: outer value); else: y = x - k (k: its own initializer)
then_g = helper.make_graph(
    [helper.make_node("Mul", ["x", "two"], ["t1"]), helper.make_node("Add", ["t1", "a"], ["ty"])],
    "then", [], [vi("ty", [2, 3])], [numpy_helper.from_array(np.float32(2), "two")])
else_g = helper.make_graph(
    [helper.make_node("Sub", ["x", "k"], ["ey"])],
    "else", [], [vi("ey", [2, 3])], [numpy_helper.from_array(np.full((3,), 0.5, np.float32), "k")])
nodes = [
    helper.make_node("Greater", ["x", "a"], ["gt"]),
    helper.make_node("GreaterOrEqual", ["x", "a"], ["ge"]),
    helper.make_node("Less", ["x", "a"], ["lt"]),
    helper.make_node("LessOrEqual", ["x", "a"], ["le"]),
    helper.make_node("Equal", ["x", "a"], ["eq"]),
    helper.make_node("Not", ["eq"], ["ne"]),
    helper.make_node("And", ["ge", "le"], ["both"]),
    helper.make_node("Or", ["gt", "lt"], ["either"]),
    helper.make_node("Xor", ["both", "either"], ["one"]),
    helper.make_node("Where", ["gt", "x", "a"], ["mx"]),
    helper.make_node("Cast", ["one"], ["onef"], to=TensorProto.FLOAT),
    helper.make_node("Cast", ["x"], ["nz"], to=TensorProto.BOOL),
    helper.make_node("Cast", ["nz"], ["nzf"], to=TensorProto.FLOAT),
    helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
    helper.make_node("Greater", ["s", "zero"], ["pos"]),
    helper.make_node("If", ["pos"], ["y"], then_branch=then_g, else_branch=else_g),
    helper.make_node("Add", ["onef", "nzf"], ["flags"]),
    helper.make_node("Identity", ["mx"], ["m"]),
]
graph = helper.make_graph(nodes, "g", [vi("x", [2, 3]), vi("a", [3])],
                          [vi("y", [2, 3]), vi("flags", [2, 3]), vi("m", [2, 3]),
                           vi("gt", [2, 3], TensorProto.BOOL)],
                          [numpy_helper.from_array(np.float32(0), "zero")])
path = os.path.join(tmp, "m.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), path, "--locations=false"],
                      capture_output=True, text=True, check=True).stdout
print("scf.if:", mlir.count("scf.if"), "| comparisons:", mlir.count("arith.cmpf"),
      "| not ne:", mlir.count("arith.cmpf une"))
cpu = Runner(os.path.join(bindir, "tq-run"))
a = np.array([0.5, -1.0, 0.0], np.float32)
ok = True
for x in (np.array([[1, -1, 0], [0.5, 2, 3]], np.float32),
          np.array([[-1, -1, 0], [0.5, -2, -3]], np.float32)):
    y, flags, m, gt = cpu.run(mlir, [x, a], outputs=4)
    want_y = x * 2 + a if x.sum() > 0 else x - 0.5
    one = ((x >= a) & (x <= a)) ^ ((x > a) | (x < a))
    want_flags = one.astype(np.float32) + (x != 0).astype(np.float32)
    want_m = np.where(x > a, x, np.broadcast_to(a, x.shape))
    good = (np.array_equal(y, want_y.astype(np.float32)) and np.array_equal(flags, want_flags)
            and np.array_equal(m, want_m) and gt.dtype == np.bool_
            and np.array_equal(gt, x > a))
    print(f"sum {x.sum():+.1f}: {'then' if x.sum() > 0 else 'else'} branch, equal to numpy: {good}")

# The same If on a constant condition: only the else branch is imported.
const = helper.make_graph(
    [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(False))),
     helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
    "g", [vi("x", [2, 3]), vi("a", [3])], [vi("y", [2, 3])])
path = os.path.join(tmp, "c.onnx")
onnx.save(helper.make_model(const, opset_imports=[helper.make_opsetid("", 13)]), path)
mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), path, "--locations=false"],
                      capture_output=True, text=True, check=True).stdout
print("constant condition: scf.if", mlir.count("scf.if"), "| mulf", mlir.count("arith.mulf"),
      "| subf", mlir.count("arith.subf"))
x = np.array([[1, -1, 0], [0.5, 2, -3]], np.float32)
y, = cpu.run(mlir, [x, a])
print("else branch equal to numpy:", np.array_equal(y, x - 0.5))
# CHECK: scf.if: 1 | comparisons: 7 | not ne: 1
# CHECK: sum +5.5: then branch, equal to numpy: True
# CHECK: sum -6.5: else branch, equal to numpy: True
# CHECK: constant condition: scf.if 0 | mulf 0 | subf 1
# CHECK: else branch equal to numpy: True
