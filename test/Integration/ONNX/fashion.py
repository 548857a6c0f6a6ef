# RUN: %python %s %tq_build | FileCheck %s
# The Fashion-MNIST CNN kept in models/ (trained with python3-torch by
# python/tq/models/fashion.py) on the first 1000 test images of Debian's
# dataset-fashion-mnist, CPU backend: f32 and tile-quantized. 8-bit V=32
# must stay within 0.3 points of f32. 4-bit V=16 loses about 2.2 points
# today, beyond issue 6's 2-point target; the test holds it within 3 so
# that it cannot get worse unnoticed.
import os
import sys

from tq.models import fashion
from tq.models.evaluate import evaluate

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
x, y = fashion.load("t10k", 1000)
rows = {r.name: r for r in
        evaluate(sys.argv[1], os.path.join(root, "models", "fashion_cnn.onnx"),
                 "image", x, y)}
f32 = rows["f32"].cpu
print(f"f32 above 85%: {f32 > 85}")
print(f"8-bit within 0.3 points: {abs(rows['8-bit V=32'].cpu - f32) <= 0.3}")
print(f"4-bit within 3 points: {abs(rows['4-bit V=16'].cpu - f32) <= 3}")
print(f"adaptive within 0.3 points: {abs(rows['adaptive V=16'].cpu - f32) <= 0.3}")
for name in ("8-bit V=32", "4-bit V=16"):
    r = rows[name]
    print(f"{name} on the PPU: same logits as the CPU: {r.ppu_same}, "
          f"{r.ppu_stats['cycles'] > 0} cycles counted")
print(f"adaptive on the PPU: {rows['adaptive V=16'].ppu_note}")
# CHECK: f32 above 85%: True
# CHECK: 8-bit within 0.3 points: True
# CHECK: 4-bit within 3 points: True
# CHECK: adaptive within 0.3 points: True
# CHECK: 8-bit V=32 on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: 4-bit V=16 on the PPU: same logits as the CPU: True, True cycles counted
# CHECK: adaptive on the PPU: 'tq.adaptive_bit_width' op needs a run-time bit-width search, which the PPU does not have
