# RUN: %python %s %tq_build %S/../../Importer/ONNX/Inputs/double-return.onnxtxt | FileCheck %s
# A graph that returns the same tensor twice (an output that is an Identity
# of another output) imports as `return %y, %y`; tq-run prints its
# signature and runs it, both outputs equal to the float reference.
import os
import subprocess
import sys

import numpy as np

from tq.cpu import Runner

build, model = sys.argv[1], sys.argv[2]
bindir = os.path.join(build, "bin")
mlir = subprocess.run([os.path.join(bindir, "tq-import-onnx"), model, "--locations=false"],
                      capture_output=True, text=True, check=True).stdout
ret = [line.strip() for line in mlir.splitlines() if line.strip().startswith("return")]
print(ret[0].split(":")[0])
cpu = Runner(os.path.join(bindir, "tq-run"))
path = cpu.flow.write("m.mlir", mlir)
print(cpu.flow.run(os.path.join(bindir, "tq-run"), path, "--print-signature"), end="")
x = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
y, s = cpu.run(mlir, [x], outputs=2)
want = np.tanh(2 * x.astype(np.float64))  # w is the identity: a + a·w = 2x
print("outputs equal:", np.array_equal(y, s), "| within 1e-6 of tanh(2x):",
      bool(np.abs(y - want).max() < 1e-6))
# CHECK: return %[[Y:[0-9]+]], %[[Y]]
# CHECK: output 0: y (result0) <f4 (2, 3)
# CHECK: output 1: s (result1) <f4 (2, 3)
# CHECK: outputs equal: True | within 1e-6 of tanh(2x): True
