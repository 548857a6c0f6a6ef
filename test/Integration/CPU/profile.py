# RUN: %python %s %tq_build | FileCheck %s
# tq-run --profile on an imported and quantized CNN (Conv, Relu, MaxPool,
# Flatten, Gemm): every kernel call site is named by its ONNX node (a
# Flatten is a reshape: no kernel; the f32 conv1 with the relu1 it stores
# through is conv1+relu1, its padding conv1; the quantized conv2 with the
# relu2 it stores through is conv2+relu2, its input's quantization conv2)
# and by
# the op it was (tq.conv2d, tq.matmul, linalg.*); the per-site times add up
# to the kernel time, which is within the wall time of the calls; the
# shares add up to 1; the table prints both views; and profiling does not
# change the results (the same bits as without it). Bad --profile values
# and combinations are errors.
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

build = sys.argv[1]
bindir = os.path.join(build, "bin")
tmp = tempfile.mkdtemp(prefix="tq-profile-")
rng = np.random.default_rng(2)


def run(*args, check=True):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit(p.stderr)
    return p


w1 = (rng.standard_normal((32, 3, 3, 3)) * 0.3).astype(np.float32)
w2 = (rng.standard_normal((32, 32, 3, 3)) * 0.1).astype(np.float32)
fc = (rng.standard_normal((32 * 8 * 8, 10)) * 0.05).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("MaxPool", ["r2"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc"),
]
graph = helper.make_graph(nodes, "cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 10])],
                          [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (fc, "fc"))])
model = os.path.join(tmp, "cnn.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
f32, q = os.path.join(tmp, "f.mlir"), os.path.join(tmp, "q.mlir")
run(os.path.join(bindir, "tq-import-onnx"), model, "-o", f32)
run(os.path.join(bindir, "tq-opt"), f32, "-tq-quantize=tile=32", "-mlir-print-debuginfo", "-o", q)
x = os.path.join(tmp, "x.npy")
np.save(x, rng.standard_normal((8, 3, 16, 16)).astype(np.float32))
tq_run = os.path.join(bindir, "tq-run")

out = run(tq_run, q, f"--input={x}", "--repeat=3", "--profile=json").stdout
report = json.loads(out.splitlines()[-1])
layers = report["layers"]
names = sorted({r["layer"] for r in layers})
kinds = {r["kind"] for r in layers}
print("nodes:", names)
print("quantized kinds:", sorted(k for k in kinds if k.startswith("tq.")))
site_ms = sum(r["ms"] for r in layers)
print("sites add up:", abs(site_ms - report["kernel_ms"]) <= 1e-6 * max(1, site_ms))
print("kernels within the calls:", 0 < report["kernel_ms"] <= report["ms"])
print("layer shares add up:", abs(sum(r["share"] for r in layers) - 1) < 1e-9)
print("kind shares add up:", abs(sum(r["share"] for r in report["kinds"]) - 1) < 1e-9)
print("calls:", report["calls"])

table = run(tq_run, q, f"--input={x}", "--profile").stdout
print("table heads:", "| layer | kind |" in table, "| op kind |" in table)

plain, prof = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
run(tq_run, q, f"--input={x}", f"--output={plain}")
run(tq_run, q, f"--input={x}", f"--output={prof}", "--profile")
print("same bits:", np.array_equal(np.load(plain), np.load(prof)))

for bad in (["--profile=xml"], ["--profile", f"--emit-shared={tmp}/x.so"],
            ["--profile", "--target=ppu"]):
    p = run(tq_run, q, f"--input={x}", *bad, check=False)
    print("error:", p.returncode != 0, p.stderr.strip().splitlines()[-1])
# CHECK: nodes: ['conv1', 'conv1+relu1', 'conv2', 'conv2+relu2', 'fc', 'pool']
# CHECK: quantized kinds: ['tq.conv2d', 'tq.matmul'
# CHECK: sites add up: True
# CHECK: kernels within the calls: True
# CHECK: layer shares add up: True
# CHECK: kind shares add up: True
# CHECK: calls: 3
# CHECK: table heads: True True
# CHECK: same bits: True
# CHECK: error: True tq-run: error: --profile must be table or json, got 'xml'
# CHECK: error: True tq-run: error: --profile is for running here; it cannot be combined with --emit-object or --emit-shared
# CHECK: error: True tq-run: error: --profile times the CPU backend; it does not apply to --target=ppu
