# RUN: %python %s %tq_build | FileCheck %s
# The Fashion-MNIST CNN kept in models/ (trained with python3-torch by
# python/tq/models/fashion.py) on the first 1000 test images of Debian's
# dataset-fashion-mnist, CPU backend: f32 and tile-quantized. 8-bit V=32
# must stay within 0.3 points of f32, 4-bit V=16 within 2 (tq-quantize
# leaves the 1-channel first convolution in float: min-channels). With
# every layer at 4 bits it loses about 2.2 points (the test holds it within
# 3 so that it cannot get worse unnoticed); with the classifier in float
# (keep-float) it stays within 2.
import os
import sys

from tq.models import fashion
from tq.models.evaluate import check, evaluate

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
x, y = fashion.load("t10k", 1000)
check(evaluate(sys.argv[1], os.path.join(root, "models", "fashion_cnn.onnx"),
               "image", x, y), 85, 2, 3)
# CHECK: f32 above 85%: True
# CHECK: 8-bit within 0.3 points: True
# CHECK: 4-bit within 2 points: True
# CHECK: 4-bit on every layer within 3 points: True
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
