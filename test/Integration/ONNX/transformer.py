# RUN: %python %s %tq_build | FileCheck %s
# The third trained model of issue 6: a small transformer classifier on the
# digits (python/tq/models/transformer.py: row tokens, one pre-norm block
# with single-head attention, LayerNorm in its expanded ONNX form, MLP,
# mean pooling), kept in models/. Imported, compiled in f32 and
# tile-quantized, run over the 360 held-out images on the CPU backend and
# (quantized) on the PPU simulator, where the batched attention products
# stay on the host. 8-bit V=32 within 0.3 points of f32, 4-bit V=16
# within 2.
import os
import sys

from tq.models import digits
from tq.models.evaluate import check, evaluate

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
x, y = digits.load_test(os.path.join(root, "models", "digits_test.npz"))
check(evaluate(sys.argv[1], os.path.join(root, "models", "digits_transformer.onnx"),
               "image", x, y), 93, 2, 2)
# CHECK: f32 above 93%: True
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
