# RUN: %python %s | FileCheck %s
# The bits per element of the granularity table (python/tq/models/
# granularity.py), against counts worked out by hand: values plus one scale
# (and offset) per tile, partial tiles counted whole.
from tq.models.granularity import bits_per_element, tensor_bits

# 10x64 at 4 bits in 16x16 tiles: 1 x 4 tiles of f32 scales.
print(tensor_bits("!tq.tiled<10x64xi4:4, f32, tile = 16x16, dims = [0, 1], scale = f32>"))
# CHECK: (640, 2688)
# 4-D KRSC split on (K, C) in 1x16 vectors: 32 * 3 * 3 rows of 1 vector.
print(tensor_bits("!tq.tiled<32x3x3x16xi8:8, f32, tile = 1x16, dims = [0, 3], scale = pow2>"))
# CHECK: (4608, 39168)
# An offset adds 32 bits per tile; a tile wider than the tensor is one tile.
print(tensor_bits("!tq.tiled<5x7xi4:4, f32, tile = 32x32, dims = [0, 1], scale = f32, offset>"))
# CHECK: (35, 204)
# Per-tile widths are not counted (None).
print(tensor_bits("!tq.tiled<16x16xi8:?, f32, tile = 16x16, dims = [0, 1], scale = f32>"))
# CHECK: None
text = """
  %0 = tq.constant dense_resource<w> : !tq.tiled<16x16xi4:4, f32, tile = 16x16, dims = [0, 1], scale = f32>
  %1 = tq.quantize %arg0 : tensor<8x16xf32> -> !tq.tiled<8x16xi8:8, f32, tile = 1x16, dims = [0, 1], scale = f32>
"""
print(bits_per_element(text))
# CHECK: (4.125, 10.0)
