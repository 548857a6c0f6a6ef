# RUN: %python %s %tq_build | FileCheck %s
# A trained model end to end (issue 6): the digits CNN kept in models/
# (trained with python3-torch by python/tq/models/digits.py, exported to
# ONNX: two Conv+Relu+MaxPool, Gemm+Relu, Gemm), imported, compiled in f32
# and tile-quantized, run over the 360 held-out images on the CPU backend
# and (quantized) on the PPU simulator.
# 8-bit V=32 must stay within 0.3 points of f32, 4-bit V=16 within 2.
import os
import sys

from tq.models import digits
from tq.models.evaluate import check, evaluate

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
x, y = digits.load_test(os.path.join(root, "models", "digits_test.npz"))
check(evaluate(sys.argv[1], os.path.join(root, "models", "digits_cnn.onnx"),
               "image", x, y), 95, 2, 2)
# CHECK: f32 above 95%: True
# CHECK: 8-bit within 0.3 points: True
# CHECK: 4-bit within 2 points: True
# CHECK: 4-bit on every layer within 2 points: True
# CHECK: adaptive within 0.3 points: True
# CHECK: adaptive with a wide band within 1 point: True
# CHECK: 4-bit with a float head within 2 points: True
# CHECK: 8-bit V=32 on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: 4-bit V=16 on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: 4-bit, every layer on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: 4-bit, f32 head on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: adaptive V=16 on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: adaptive, wide band on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: adaptive V=16: every weight width named: True
# CHECK: adaptive V=16: weight widths: {{[1-9][0-9]*}}, {{[0-9]+}} with the error in [0.015, 0.04], 0 at 8 bits above it, 0 at 2 bits below it, 0 elsewhere
# CHECK: adaptive V=16: weight widths: all in the band: True
# CHECK: adaptive V=16: run-time widths: {{[1-9][0-9]*}}, {{[0-9]+}} with the error in [0.015, 0.04], 0 at 8 bits above it, 0 at 2 bits below it, 0 elsewhere
# CHECK: adaptive V=16: run-time widths: all in the band: True
# CHECK: adaptive V=16: some width below 8: True
# CHECK: adaptive, wide band: every weight width named: True
# CHECK: adaptive, wide band: weight widths: {{[1-9][0-9]*}}, {{[0-9]+}} with the error in [0.02, 0.06], 0 at 8 bits above it, 0 at 2 bits below it, 0 elsewhere
# CHECK: adaptive, wide band: weight widths: all in the band: True
# CHECK: adaptive, wide band: run-time widths: {{[1-9][0-9]*}}, {{[0-9]+}} with the error in [0.02, 0.06], 0 at 8 bits above it, 0 at 2 bits below it, 0 elsewhere
# CHECK: adaptive, wide band: run-time widths: all in the band: True
# CHECK: adaptive, wide band: some width below 8: True
