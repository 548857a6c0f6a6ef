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
# A width chosen at run time is not counted (None), nor per-tile widths
# without the search's record.
print(tensor_bits("!tq.tiled<16x16xi8:?, f32, tile = 16x16, dims = [0, 1], scale = f32>"))
# CHECK: None
print(tensor_bits("!tq.tiled<32x32xi8:per_tile, f32, tile = 16x16, dims = [0, 1], scale = f32>"))
# CHECK: None
# Per-tile widths at 4.5 bits on average: 32*32*4.5 = 4608, plus 4 tiles of
# a 32-bit scale and an 8-bit width.
print(tensor_bits("!tq.tiled<32x32xi8:per_tile, f32, tile = 16x16, dims = [0, 1], scale = f32>",
                  4.5))
# CHECK: (1024, 4768.0)
text = """
  %0 = tq.constant dense_resource<w> : !tq.tiled<16x16xi4:4, f32, tile = 16x16, dims = [0, 1], scale = f32>
  %1 = tq.quantize %arg0 : tensor<8x16xf32> -> !tq.tiled<8x16xi8:8, f32, tile = 1x16, dims = [0, 1], scale = f32>
"""
print(bits_per_element(text))
# CHECK: (4.125, 10.0)
# One tensor whose width is chosen at run time makes its column unknown;
# the per-tile constant: 16*16*3 + 32 + 8 bits, with 16*16*4 + 32 before.
text += """
  %2 = tq.quantize %arg1 : tensor<16x16xf32> -> !tq.tiled<16x16xi8:?, f32, tile = 16x16, dims = [0, 1], scale = f32>
  %3 = tq.constant dense_resource<v> {tq.bit_width = {average_bits = 3.000000e+00 : f64, max_error = 1.0e-01 : f64}} : !tq.tiled<16x16xi8:per_tile, f32, tile = 16x16, dims = [0, 1], scale = f32>
"""
print(bits_per_element(text))
# CHECK: (3.640625, None)
