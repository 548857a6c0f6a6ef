// RUN: tq-opt %s -convert-tq-to-cpu=target=avx512 -split-input-file | FileCheck %s
// RUN: tq-opt %s -convert-tq-to-cpu=target=avx2 -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: tq-opt %s -convert-tq-to-cpu=target=avx512 -canonicalize -cse -split-input-file | FileCheck %s --check-prefix=ROWS
// RUN: tq-opt %s -convert-tq-to-cpu=target=avx2 -canonicalize -cse -split-input-file | FileCheck %s --check-prefix=ROWS-AVX2

// tq.conv2d with whole C-tiles (or a short last one whose channels are whole
// steps of the kernel, see @partial_tile) reads A where it is, with no
// im2col copy:
// the input with its zero border, the steps over the same padded pixels,
// and one row sum per pixel and C-tile (vpdpbusd's offset), all read
// through 1-D views by the kernel.

// The bordered copy is a whole number of 64-byte vectors (72 pixels of 16
// channels): its row sums by the dot product, after the copy (see
// @unpadded).
// CHECK-LABEL: func.func @padded
// CHECK-NOT: memref.alloc() {{.*}} : memref<32x144xi8>
// CHECK: %[[XP:.*]] = memref.alloc() {{.*}} : memref<2x6x6x16xi8>
// CHECK: %[[SUMS:.*]] = memref.alloc() {{.*}} : memref<2x6x6x1xi32>
// CHECK: vector.store %{{.*}}, %[[XP]]
// CHECK-NOT: vector.reduction
// CHECK: %[[FLATXP:.*]] = memref.collapse_shape %[[XP]] {{.*}} into memref<1152xi8>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c18 step %c1{{.*}} {
// CHECK: vector.load %[[FLATXP]][%{{.*}}] : memref<1152xi8>, vector<64xi8>
// CHECK: tq.dot_u8s8
// CHECK: %[[SP:.*]] = memref.alloc() {{.*}} : memref<1x6x6x1xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[A:.*]] = memref.collapse_shape %[[XP]] {{.*}} into memref<1152xi8>
// CHECK: %[[SA:.*]] = memref.collapse_shape %[[SP]] {{.*}} into memref<36xf32>
// CHECK: %[[CMP:.*]] = memref.collapse_shape %[[SUMS]] {{.*}} into memref<72xi32>
// CHECK: memref.load %[[CMP]][%{{.*}}] : memref<72xi32>
// CHECK: vector.load %[[A]][%{{.*}}] : memref<1152xi8>, vector<4xi8>
// CHECK: tq.dot_u8s8
// CHECK: memref.load %[[SA]][%{{.*}}] : memref<36xf32>

// AVX2-LABEL: func.func @padded
// AVX2: %[[XP:.*]] = memref.alloc() {{.*}} : memref<2x6x6x16xi16>
// AVX2-NOT: xi32>
// AVX2: %[[A:.*]] = memref.collapse_shape %[[XP]] {{.*}} into memref<1152xi16>
// AVX2: vector.load %[[A]][%{{.*}}] : memref<1152xi16>, vector<2xi16>
// AVX2: tq.dot_i16
func.func @padded(%x: !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                  %w: !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x4x4x32xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x32xf32>
  return %0 : tensor<2x4x4x32xf32>
}

// -----

// An input known not to be negative (tq.nonnegative_input, a ReLU's) on
// AVX2 takes vpmaddubsw on its bytes as they are: four values per lane, no
// int16 copy and no row sums (the weights are not offset); unpadded, the
// input is read where it is. AVX-512 keeps vpdpbusd.
// CHECK-LABEL: func.func @nonnegative
// CHECK: tq.dot_u8s8 %
// CHECK-NOT: tq.dot_u8s8_pairs
// AVX2-LABEL: func.func @nonnegative
// AVX2-NOT: memref.alloc() {{.*}}xi16>
// AVX2-NOT: memref.alloc() {{.*}}xi32>
// AVX2: vector.load %{{.*}} : memref<512xi8>, vector<4xi8>
// AVX2: tq.dot_u8s8_pairs %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<32xi8>
// AVX2-NOT: tq.dot_i16
func.func @nonnegative(%x: !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                       %w: !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x2x2x32xf32> {
  %0 = tq.conv2d %x, %w {tq.nonnegative_input} : !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x2x2x32xf32>
  return %0 : tensor<2x2x2x32xf32>
}

// -----

// Without padding, the input and its steps are read as they are; only the
// row sums are computed, four C-tiles of 16 bytes per 64-byte vector: one
// dot with ones (four bytes per lane), two shuffles within each C-tile's
// lanes, the first lane of each, times -128, stored together.
// CHECK-LABEL: func.func @unpadded
// CHECK-NOT: memref.alloc() {{.*}} : memref<2x4x4x32xi8>
// CHECK: %[[SUMS:.*]] = memref.alloc() {{.*}} : memref<2x4x4x2xi32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<1x4x4x2xf32>
// CHECK: %[[FLATSUMS:.*]] = memref.collapse_shape %[[SUMS]] {{.*}} into memref<64xi32>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16 step %c1{{.*}} {
// CHECK: vector.load %{{.*}} : memref<1024xi8>, vector<64xi8>
// CHECK: %[[DOT:.*]] = tq.dot_u8s8
// CHECK: %[[S1:.*]] = vector.shuffle %[[DOT]], %[[DOT]] [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14]
// CHECK: %[[A1:.*]] = arith.addi %[[DOT]], %[[S1]]
// CHECK: %[[S2:.*]] = vector.shuffle %[[A1]], %[[A1]] [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]
// CHECK: %[[A2:.*]] = arith.addi %[[A1]], %[[S2]]
// CHECK: %[[FIRST:.*]] = vector.shuffle %[[A2]], %[[A2]] [0, 4, 8, 12]
// CHECK: %[[NEG:.*]] = arith.muli %[[FIRST]], %cst{{.*}} : vector<4xi32>
// CHECK: vector.store %[[NEG]], %[[FLATSUMS]][%{{.*}}] : memref<64xi32>, vector<4xi32>
// CHECK-NOT: vector.reduction
// CHECK: memref.collapse_shape %{{.*}} : memref<2x4x4x32xi8> into memref<1024xi8>
// CHECK: memref.collapse_shape %{{.*}} : memref<1x4x4x2xf32> into memref<32xf32>

// vpmaddwd reads int16: the input is widened, with no border and no sums.
// AVX2-LABEL: func.func @unpadded
// AVX2: %[[XP:.*]] = memref.alloc() {{.*}} : memref<2x4x4x32xi16>
// AVX2-NOT: xi32>
// AVX2: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// AVX2: memref.collapse_shape %[[XP]] {{.*}} into memref<1024xi16>
func.func @unpadded(%x: !tq.tiled<2x4x4x32xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                    %w: !tq.tiled<8x1x1x32xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x4x4x8xf32> {
  %0 = tq.conv2d %x, %w : !tq.tiled<2x4x4x32xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<8x1x1x32xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// A partial C-tile (20 channels in tiles of 16) is read in place too: the
// steps of its short K-tile end at its 4 channels (one vpdpbusd step, two
// vpmaddwd ones), before the next pixel's. The copy with the zero border
// and the row sums go by C-tile, 4 channels at a time, the last tile short.
// CHECK-LABEL: func.func @partial_tile
// CHECK-NOT: memref<32x288xi8>
// CHECK: memref.alloc() {{.*}} : memref<2x6x6x20xi8>
// CHECK: memref.alloc() {{.*}} : memref<2x6x6x2xi32>
// CHECK-COUNT-5: vector.load %{{.*}} : memref<2x4x4x20xi8>, vector<4xi8>
// CHECK-NOT: vector.load %{{.*}} : memref<2x4x4x20xi8>
// CHECK: return
// AVX2-LABEL: func.func @partial_tile
// AVX2-NOT: memref<32x288xi16>
// AVX2: memref.alloc() {{.*}} : memref<2x6x6x20xi16>
func.func @partial_tile(%x: !tq.tiled<2x4x4x20xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                        %w: !tq.tiled<8x3x3x20xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x4x4x8xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<2x4x4x20xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<8x3x3x20xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// 18 channels in tiles of 16: the short K-tile's 2 channels are half a
// vpdpbusd step, which would read 2 bytes of the next pixel, so they are
// gathered by im2col; with vpmaddwd (2 per step) they end exactly: in
// place.
// CHECK-LABEL: func.func @partial_tile_im2col
// CHECK: memref.alloc() {{.*}} : memref<32x288xi8>
// CHECK: memref.alloc() {{.*}} : memref<32x18xf32>
// AVX2-LABEL: func.func @partial_tile_im2col
// AVX2-NOT: memref<32x288xi16>
// AVX2: memref.alloc() {{.*}} : memref<2x6x6x18xi16>
func.func @partial_tile_im2col(%x: !tq.tiled<2x4x4x18xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                               %w: !tq.tiled<8x3x3x18xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x4x4x8xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<2x4x4x18xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<8x3x3x18xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// Rows of 14 outputs: micro-tiles of 7 rows (2 vectors each: 14 f32
// accumulators) within one output row. Only the first row's offsets are
// computed (three divisions); the others are constants from them (16
// bytes, one pixel of 16 channels, per row).
// ROWS-LABEL: func.func @aligned_rows
// ROWS: scf.for %{{.*}} = %c0 to %c28 step %c7 {
// ROWS-COUNT-3: arith.divui
// ROWS-NOT: arith.divui
// ROWS: arith.addi %[[DATA:.*]], %c32 : index
// ROWS-NOT: arith.divui
// ROWS: arith.addi %[[DATA]], %c48 : index
// ROWS-NOT: arith.divui
// ROWS: arith.addi %[[DATA]], %c96 : index
// ROWS-NOT: arith.divui
// ROWS: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
func.func @aligned_rows(%x: !tq.tiled<1x2x14x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                        %w: !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<1x2x14x32xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<1x2x14x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<1x2x14x32xf32>
  return %0 : tensor<1x2x14x32xf32>
}

// -----

// At most a vector of filters: one vector per row, and micro-tiles of two
// whole output rows of 4 (AVX-512: 8 rows; the fifth row is one padded
// input row of 6 pixels after the first, 96 bytes) or of one (AVX2: 4
// rows, in its 16 registers).
// ROWS-LABEL: func.func @whole_rows
// ROWS: scf.for %{{.*}} = %c0 to %c16 step %c8 {
// ROWS: arith.addi %{{.*}}, %c96 : index
// ROWS: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// ROWS-AVX2-LABEL: func.func @whole_rows
// ROWS-AVX2: scf.for %{{.*}} = %c0 to %c16 step %c4 {
// ROWS-AVX2: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
func.func @whole_rows(%x: !tq.tiled<1x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                      %w: !tq.tiled<8x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<1x4x4x8xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<1x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<8x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// 24 filters: on AVX2 (8 lanes) panels of two vectors would compute 32
// columns, panels of one 24, so one vector per row and micro-tiles of a
// whole output row of 6 (6 f32 accumulators), each of the 3 panels in
// turn; on AVX-512 one panel of 16 lanes or two both compute 32: two
// vectors per row, 6 rows.
// ROWS-LABEL: func.func @filters_24
// ROWS: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// ROWS-AVX2-LABEL: func.func @filters_24
// ROWS-AVX2: scf.for %{{.*}} = %c0 to %c12 step %c6 {
// ROWS-AVX2: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// ROWS-AVX2-NOT: vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
func.func @filters_24(%x: !tq.tiled<1x2x6x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                      %w: !tq.tiled<24x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<1x2x6x24xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<1x2x6x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<24x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<1x2x6x24xf32>
  return %0 : tensor<1x2x6x24xf32>
}

// -----

// Rows of 3, 9 in all, 2 vectors of filters: no such micro-tile of 4 to 7
// rows of two vectors on AVX-512, so one of the whole image's 9 rows of
// one vector, for each panel of 16 filters in turn (rows past the first
// at constant distances); AVX2 takes one output row of 3.
// Its bordered copy, 25 pixels of 16 bytes, is not a whole number of
// vectors: the row sums are added pixel by pixel as it is copied.
// CHECK-LABEL: func.func @unaligned
// CHECK: memref.alloc() {{.*}} : memref<1x5x5x16xi8>
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// ROWS-LABEL: func.func @unaligned
// ROWS: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// ROWS-NOT: step %c6
// ROWS: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// ROWS-AVX2-LABEL: func.func @unaligned
// ROWS-AVX2: scf.for %{{.*}} = %c0 to %c9 step %c3 {
func.func @unaligned(%x: !tq.tiled<1x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                     %w: !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<1x3x3x32xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<1x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<1x3x3x32xf32>
  return %0 : tensor<1x3x3x32xf32>
}

// -----

// The elementwise generic after a convolution on its NHWC result (the bias
// per output channel, the ReLU; the form tq-cpu-channels-last leaves) is
// applied as the kernel stores each vector: the generic is gone and the
// result is the kernel's buffer.
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: linalg.generic
// CHECK: %[[BIAS:.*]] = bufferization.to_buffer %{{.*}} : tensor<8xf32>
// CHECK: vector.maskedload %[[BIAS]]
// CHECK: arith.addf %{{.*}} : vector<{{8|16}}xf32>
// CHECK: arith.maximumf
// CHECK: vector.maskedstore
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = memref.expand_shape %{{.*}} : memref<32x8xf32> into memref<2x4x4x8xf32>
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[Y]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[T]]
func.func @epilogue(%x: !tq.tiled<2x4x4x32xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                    %w: !tq.tiled<8x1x1x32xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                    %bias: tensor<8xf32>) -> tensor<2x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tq.conv2d %x, %w : !tq.tiled<2x4x4x32xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<8x1x1x32xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x8xf32>
  %e = tensor.empty() : tensor<2x4x4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %bias : tensor<2x4x4x8xf32>, tensor<8xf32>) outs(%e : tensor<2x4x4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<2x4x4x8xf32>
  return %r : tensor<2x4x4x8xf32>
}
