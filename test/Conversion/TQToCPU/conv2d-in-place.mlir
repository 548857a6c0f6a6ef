// RUN: tq-opt %s -convert-tq-to-cpu=target=avx512 -split-input-file | FileCheck %s
// RUN: tq-opt %s -convert-tq-to-cpu=target=avx2 -split-input-file | FileCheck %s --check-prefix=AVX2

// tq.conv2d with whole C-tiles reads A where it is, with no im2col copy:
// the input with its zero border, the steps over the same padded pixels,
// and one row sum per pixel and C-tile (vpdpbusd's offset), all read
// through 1-D views by the kernel.

// CHECK-LABEL: func.func @padded
// CHECK-NOT: memref.alloc() {{.*}} : memref<32x144xi8>
// CHECK: %[[XP:.*]] = memref.alloc() {{.*}} : memref<2x6x6x16xi8>
// CHECK: %[[SUMS:.*]] = memref.alloc() {{.*}} : memref<2x6x6x1xi32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
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

// Without padding, the input and its steps are read as they are; only the
// row sums are computed.
// CHECK-LABEL: func.func @unpadded
// CHECK-NOT: memref.alloc() {{.*}} : memref<2x4x4x32xi8>
// CHECK: memref.alloc() {{.*}} : memref<2x4x4x2xi32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<1x4x4x2xf32>
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

// A partial C-tile (20 channels in tiles of 16) is gathered by im2col.
// CHECK-LABEL: func.func @partial_tile
// CHECK: memref.alloc() {{.*}} : memref<32x288xi8>
// CHECK: memref.alloc() {{.*}} : memref<32x18xf32>
func.func @partial_tile(%x: !tq.tiled<2x4x4x20xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                        %w: !tq.tiled<8x3x3x20xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x4x4x8xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<2x4x4x20xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<8x3x3x20xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}
