# RUN: %python %s %tq_build | FileCheck %s
# A trained model end to end (issue 6): the digits CNN kept in models/
# (trained with python3-torch by python/tq/models/digits.py, exported to
# ONNX: two Conv+Relu+MaxPool, Gemm+Relu, Gemm), imported, compiled in f32
# and tile-quantized, run on the CPU backend over the 360 held-out images.
# 8-bit V=32 must stay within 0.3 points of f32, 4-bit V=16 within 2.
import os
import sys

from tq.models import digits
from tq.models.evaluate import evaluate

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
x, y = digits.load_test(os.path.join(root, "models", "digits_test.npz"))
rows = {name: acc for name, acc, _ in
        evaluate(sys.argv[1], os.path.join(root, "models", "digits_cnn.onnx"),
                 "image", x, y)}
f32 = rows["f32"]
print(f"f32 above 95%: {f32 > 95}")
print(f"8-bit within 0.3 points: {abs(rows['8-bit V=32'] - f32) <= 0.3}")
print(f"4-bit within 2 points: {abs(rows['4-bit V=16'] - f32) <= 2}")
print(f"adaptive within 0.3 points: {abs(rows['adaptive V=16'] - f32) <= 0.3}")
# CHECK: f32 above 95%: True
# CHECK: 8-bit within 0.3 points: True
# CHECK: 4-bit within 2 points: True
# CHECK: adaptive within 0.3 points: True
