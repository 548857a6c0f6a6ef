# RUN: %python %s tq-import-onnx tq-opt tq-run %S/../../Importer/ONNX/Inputs/mlp.onnxtxt | FileCheck %s
# An ONNX model end to end on the CPU: imported (Gemm with bias, Relu,
# MatMul), run in f32 (equal to numpy within 1e-5), and tile-quantized by
# tq-quantize and run (close to f32).
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.parser

from tq.cpu import Runner
from tq.ppu import Flow

importer, opt, run, source = sys.argv[1:5]
flow = Flow(opt=opt)
cpu = Runner(run)
with open(source) as f:
    model = onnx.parser.parse_model(f.read())
weights = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
rng = np.random.default_rng(0)
x = rng.standard_normal((8, 4)).astype(np.float32)
want = np.maximum(x @ weights["w1"] + weights["b1"], 0) @ weights["w2"]

imported = flow.path("mlp.mlir")
flow.run(importer, source, "--input-shape=x:8x4", "-o", imported)
with open(imported) as f:
    y, = cpu.run(f.read(), [x])
print(f"f32 matches numpy: {np.allclose(y, want, rtol=1e-5, atol=1e-5)}")
quantized = flow.opt(imported, "-tq-quantize=tile=4")
with open(quantized) as f:
    text = f.read()
yq, = cpu.run(text, [x])
rel = np.linalg.norm(yq - y) / np.linalg.norm(y)
print(f"8-bit tiles: {text.count('tq.matmul')} tq.matmul, relative error "
      f"{'below 0.05' if rel < 0.05 else f'{rel:.3f}'}")
# CHECK: f32 matches numpy: True
# CHECK: 8-bit tiles: 2 tq.matmul, relative error below 0.05
