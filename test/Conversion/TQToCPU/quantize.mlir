// RUN: tq-opt %s -convert-tq-to-cpu=target=generic -split-input-file | FileCheck %s
// tq.quantize of a tensor split on its last dim walks each tile's rows 16
// elements at a time: a masked vector load, the finite |x| max reduced
// once per tile, then the values quantized and stored as vectors.
// test/Integration/CPU/quantize.py checks the bits.

// CHECK-LABEL: func.func @rows
// CHECK: scf.for
// CHECK: vector.create_mask
// CHECK: vector.maskedload %{{.*}} : memref<37x45xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[ABS:.*]] = math.absf %{{.*}} : vector<16xf32>
// CHECK: arith.cmpf olt, %[[ABS]]
// CHECK: %[[FINITE:.*]] = arith.select %{{.*}}, %[[ABS]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: arith.maxnumf %{{.*}}, %[[FINITE]] fastmath<nnan> : vector<16xf32>
// CHECK: vector.reduction <maxnumf>, %{{.*}} : vector<16xf32> into f32
// CHECK: vector.maskedload
// CHECK: arith.divf %{{.*}} : vector<16xf32>
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: arith.trunci %{{.*}} : vector<16xi32> to vector<16xi8>
// CHECK: vector.maskedstore %{{.*}} : memref<37x45xi8>, vector<16xi1>, vector<16xi8>
func.func @rows(%x: tensor<37x45xf32>) -> !tq.tiled<37x45xi8:8, f32, tile = 16x16, dims = [0, 1]> {
  %q = tq.quantize %x : tensor<37x45xf32> -> !tq.tiled<37x45xi8:8, f32, tile = 16x16, dims = [0, 1]>
  return %q : !tq.tiled<37x45xi8:8, f32, tile = 16x16, dims = [0, 1]>
}

// -----

// Split on (N, C) of an NCHW tensor: the tiles' elements are far apart, and
// both passes walk memory in order, H·W collapsed into one dim, 16 elements
// at a time: the maxima of the 25 tiles of each (N, C) tile at once, then
// each element with its tile's step.
// CHECK-LABEL: func.func @nchw
// CHECK: %[[X:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<2x8x5x5xf32> into memref<2x8x25xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: vector.maskedload %[[X]]
// CHECK: %[[ABS:.*]] = math.absf %{{.*}} : vector<16xf32>
// CHECK: arith.cmpf olt, %[[ABS]]
// CHECK: %[[FINITE:.*]] = arith.select %{{.*}}, %[[ABS]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: arith.maxnumf %{{.*}}, %[[FINITE]] fastmath<nnan> : vector<16xf32>
// CHECK: vector.maskedstore %{{.*}} : memref<1x1x25xf32>
// CHECK: arith.divf %{{.*}} : vector<16xf32>
// CHECK: vector.maskedstore %{{.*}} : memref<2x8x25xi8>
// CHECK: return
func.func @nchw(%x: tensor<2x8x5x5xf32>) -> !tq.tiled<2x8x5x5xi8:8, f32, tile = 8x8, dims = [0, 1]> {
  %q = tq.quantize %x : tensor<2x8x5x5xf32> -> !tq.tiled<2x8x5x5xi8:8, f32, tile = 8x8, dims = [0, 1]>
  return %q : !tq.tiled<2x8x5x5xi8:8, f32, tile = 8x8, dims = [0, 1]>
}

// -----

// The same quantization transposed to NHWC by its only user (a tq.conv2d's
// input) is written in NHWC directly: the steps as above, then blocks of 16
// channels × 16 pixels quantized per channel, transposed in registers
// (vector.shuffle) and stored as the channels of each pixel, the last
// channel block masked; the steps are permuted. No int8 NCHW buffer.
// CHECK-LABEL: func.func @nchw_to_nhwc
// CHECK-NOT: memref<2x20x3x5xi8>
// CHECK: %[[Q:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : memref<2x3x5x20xi8> into memref<2x15x20xi8>
// CHECK: %[[ABS:.*]] = math.absf %{{.*}} : vector<16xf32>
// CHECK: arith.cmpf olt, %[[ABS]]
// CHECK: %[[FINITE:.*]] = arith.select %{{.*}}, %[[ABS]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: arith.maxnumf %{{.*}}, %[[FINITE]] fastmath<nnan> : vector<16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: vector.shuffle
// CHECK: vector.store %{{.*}}, %[[Q]]{{.*}} : memref<2x15x20xi8>, vector<16xi8>
// CHECK: vector.maskedstore %[[Q]]{{.*}} : memref<2x15x20xi8>, vector<16xi1>, vector<16xi8>
// CHECK: memref.store %{{.*}} : memref<1x3x5x2xf32>
// CHECK-NOT: memref<2x20x3x5xi8>
// CHECK: return
func.func @nchw_to_nhwc(%x: tensor<2x20x3x5xf32>) -> !tq.tiled<2x3x5x20xi8:8, f32, tile = 16x16, dims = [0, 3]> {
  %q = tq.quantize %x : tensor<2x20x3x5xf32> -> !tq.tiled<2x20x3x5xi8:8, f32, tile = 16x16, dims = [0, 1]>
  %t = tq.transpose %q [0, 2, 3, 1] : !tq.tiled<2x20x3x5xi8:8, f32, tile = 16x16, dims = [0, 1]> -> !tq.tiled<2x3x5x20xi8:8, f32, tile = 16x16, dims = [0, 3]>
  return %t : !tq.tiled<2x3x5x20xi8:8, f32, tile = 16x16, dims = [0, 3]>
}

// -----

// One pixel (an SE block's N x C x 1 x 1): the unit dims after the split
// dims are dropped, so the tiles' rows are the channels, in vectors; the
// transpose to NHWC moves unit dims only and is a reshape of the data and
// of the steps, no copy.
// CHECK-LABEL: func.func @one_pixel
// CHECK: %[[X:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : memref<37x40x1x1xf32> into memref<37x40xf32>
// CHECK: vector.maskedload %[[X]]{{.*}} : memref<37x40xf32>, vector<16xi1>, vector<16xf32>
// CHECK: vector.maskedstore %{{.*}} : memref<37x40xi8>, vector<16xi1>, vector<16xi8>
// CHECK-NOT: memref.alloc
// CHECK: %[[Q:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<37x40x1x1xi8> into tensor<37x40xi8>
// CHECK: %[[QT:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2, 3]] output_shape [37, 1, 1, 40]
// CHECK: %[[S:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x2x1x1xf32> into tensor<2x2xf32>
// CHECK: %[[ST:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2, 3]] output_shape [2, 1, 1, 2]
// CHECK: return %[[QT]], %[[ST]]
func.func @one_pixel(%x: tensor<37x40x1x1xf32>) -> !tq.tiled<37x1x1x40xi8:8, f32, tile = 32x32, dims = [0, 3]> {
  %q = tq.quantize %x : tensor<37x40x1x1xf32> -> !tq.tiled<37x40x1x1xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %t = tq.transpose %q [0, 2, 3, 1] : !tq.tiled<37x40x1x1xi8:8, f32, tile = 32x32, dims = [0, 1]> -> !tq.tiled<37x1x1x40xi8:8, f32, tile = 32x32, dims = [0, 3]>
  return %t : !tq.tiled<37x1x1x40xi8:8, f32, tile = 32x32, dims = [0, 3]>
}

// -----

// A quantization that is also used as it is stays NCHW, and the transpose
// permutes it as a batch of [20][15] matrices, in 16 x 16 blocks
// transposed in registers (partial along both sides here).
// CHECK-LABEL: func.func @nchw_used_twice
// CHECK: vector.maskedstore %{{.*}} : memref<2x20x15xi8>
// CHECK: %[[IN:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : memref<2x20x3x5xi8> into memref<2x20x15xi8>
// CHECK: %[[OUT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] : memref<2x3x5x20xi8> into memref<2x15x20xi8>
// CHECK-COUNT-16: vector.maskedload %[[IN]]
// CHECK: vector.shuffle {{.*}} : vector<16xi8>, vector<16xi8>
// CHECK: vector.maskedstore %[[OUT]]
func.func @nchw_used_twice(%x: tensor<2x20x3x5xf32>) -> (!tq.tiled<2x20x3x5xi8:8, f32, tile = 16x16, dims = [0, 1]>, !tq.tiled<2x3x5x20xi8:8, f32, tile = 16x16, dims = [0, 3]>) {
  %q = tq.quantize %x : tensor<2x20x3x5xf32> -> !tq.tiled<2x20x3x5xi8:8, f32, tile = 16x16, dims = [0, 1]>
  %t = tq.transpose %q [0, 2, 3, 1] : !tq.tiled<2x20x3x5xi8:8, f32, tile = 16x16, dims = [0, 1]> -> !tq.tiled<2x3x5x20xi8:8, f32, tile = 16x16, dims = [0, 3]>
  return %q, %t : !tq.tiled<2x20x3x5xi8:8, f32, tile = 16x16, dims = [0, 1]>, !tq.tiled<2x3x5x20xi8:8, f32, tile = 16x16, dims = [0, 3]>
}

// -----

// Stochastic rounding with a run-time seed offset (a training step's
// iteration): the noise hashes the index plus (seed + offset) · 0x9E3779B9,
// modulo 2^32.
// CHECK-LABEL: func.func @seed_offset
// CHECK-SAME: %[[IT:[^:]*]]: i32
// CHECK: %[[SEED:.*]] = arith.addi %c7_i32, %[[IT]] : i32
// CHECK: %[[TERM:.*]] = arith.muli %[[SEED]], %c-1640531527_i32 : i32
// CHECK: vector.broadcast %[[TERM]] : i32 to vector<16xi32>
func.func @seed_offset(%x: tensor<16x16xf32>, %it: i32) -> !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]> {
  %q = tq.quantize %x rounding stochastic seed_offset(%it) {seed = 7 : i64} : tensor<16x16xf32> -> !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]>
  return %q : !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]>
}

// -----

// The casts between a tiled value and the tensors it lowers to (values and
// tile steps), which tq-cpu-split-batch puts where a tiled value leaves
// its shares, disappear: each side reads the other's tensors.
// CHECK-LABEL: func.func @tiled_parts
// CHECK-NOT: unrealized_conversion_cast
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xi8>, tensor<2x1xf32>, tensor<64x32xf32>
func.func @tiled_parts(%x: tensor<64x32xf32>) -> (tensor<64x32xi8>, tensor<2x1xf32>, tensor<64x32xf32>) {
  %q = tq.quantize %x : tensor<64x32xf32> -> !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %v, %s = builtin.unrealized_conversion_cast %q : !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]> to tensor<64x32xi8>, tensor<2x1xf32>
  %t = builtin.unrealized_conversion_cast %v, %s : tensor<64x32xi8>, tensor<2x1xf32> to !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %t : !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x32xf32>
  return %v, %s, %d : tensor<64x32xi8>, tensor<2x1xf32>, tensor<64x32xf32>
}

// -----

// An NHWC activation split on (N, C) with one row per tile at each pixel
// (batch 1) is quantized pixel by pixel, in groups of 16 pixels: each
// tile's lane-wise maxima in registers (no buffer of them), reduced
// without NaN checks, its step stored; then the group's values.
// CHECK-LABEL: func.func @nhwc_pixels
// CHECK-NOT: memref.alloc() {{.*}} : memref<1x12x32xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>)
// CHECK: vector.load %{{.*}} : memref<1x12x24xf32>, vector<16xf32>
// CHECK: vector.reduction <maxnumf>, %{{.*}} fastmath<nnan> : vector<16xf32> into f32
// CHECK: memref.store %{{.*}} : memref<1x12x1xf32>
// CHECK: arith.divf %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<1x12x24xi8>, vector<16xi8>
func.func @nhwc_pixels(%x: tensor<1x3x4x24xf32>) -> !tq.tiled<1x3x4x24xi8:8, f32, tile = 32x32, dims = [0, 3]> {
  %q = tq.quantize %x : tensor<1x3x4x24xf32> -> !tq.tiled<1x3x4x24xi8:8, f32, tile = 32x32, dims = [0, 3]>
  return %q : !tq.tiled<1x3x4x24xi8:8, f32, tile = 32x32, dims = [0, 3]>
}

// -----

// With more rows per tile (37 images in tiles of 32), both passes walk x
// in memory order: the lane-wise maxima of each (row tile, pixel) in a
// buffer, then each tile's step, then the values.
// CHECK-LABEL: func.func @nhwc_memory_order
// CHECK: %[[Z:.*]] = memref.alloc() {{.*}} : memref<2x4x32xf32>
// CHECK: vector.load %{{.*}} : memref<37x4x24xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[Z]]
// CHECK: vector.reduction <maxnumf>, %{{.*}} fastmath<nnan> : vector<16xf32> into f32
// CHECK: vector.store %{{.*}} : memref<37x4x24xi8>, vector<16xi8>
func.func @nhwc_memory_order(%x: tensor<37x2x2x24xf32>) -> !tq.tiled<37x2x2x24xi8:8, f32, tile = 32x32, dims = [0, 3]> {
  %q = tq.quantize %x : tensor<37x2x2x24xf32> -> !tq.tiled<37x2x2x24xi8:8, f32, tile = 32x32, dims = [0, 3]>
  return %q : !tq.tiled<37x2x2x24xi8:8, f32, tile = 32x32, dims = [0, 3]>
}
