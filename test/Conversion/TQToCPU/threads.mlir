// RUN: tq-opt %s -convert-tq-to-cpu="target=generic threads=2" -split-input-file | FileCheck %s
// RUN: tq-opt %s -convert-tq-to-cpu="target=generic threads=1" -split-input-file | FileCheck %s --check-prefix=ONE
// With threads, the loops whose iterations are independent are
// scf.parallel (tq-cpu-share-loops then chooses the shared dims): the
// quantization's tile grid, the element loops of tq.transpose and
// tq.dequantize, and the im2col rows of tq.conv2d. A loop that reduces
// into a tile's maximum is shared a whole tile at a time, or not at all.
// With one thread nothing is parallel. test/Integration/CPU/threads.py checks that the bits do not
// depend on the thread count.

// ONE-NOT: scf.parallel

// CHECK-LABEL: func.func @rows
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c3, %c3{{.*}})
// CHECK: vector.maskedload
// CHECK: vector.maskedstore
func.func @rows(%x: tensor<37x45xf32>) -> !tq.tiled<37x45xi8:8, f32, tile = 16x16, dims = [0, 1]> {
  %q = tq.quantize %x : tensor<37x45xf32> -> !tq.tiled<37x45xi8:8, f32, tile = 16x16, dims = [0, 1]>
  return %q : !tq.tiled<37x45xi8:8, f32, tile = 16x16, dims = [0, 1]>
}

// -----

// NCHW split on (N, C): the maxima are zeroed in parallel, reduced with
// the tile rows of N shared among the threads (each walks its tiles'
// elements in memory order), then the steps and the values in parallel
// (16 elements of H·W at a time).
// CHECK-LABEL: func.func @nchw
// CHECK: scf.parallel
// CHECK: vector.maskedstore %{{.*}} : memref<2x1x25xf32>, vector<16xi1>, vector<16xf32>
// CHECK: scf.parallel (%[[T:[a-z0-9_]*]]) = (%c0{{.*}}) to (%c2{{.*}})
// CHECK: %[[LO:.*]] = arith.muli %[[T]], %c8
// CHECK: scf.for %{{.*}} = %[[LO]] to
// CHECK: scf.for
// CHECK: %[[ABS:.*]] = math.absf %{{.*}} : vector<16xf32>
// CHECK: arith.cmpf olt, %[[ABS]]
// CHECK: %[[FINITE:.*]] = arith.select %{{.*}}, %[[ABS]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: arith.maxnumf %{{.*}}, %[[FINITE]] fastmath<nnan> : vector<16xf32>
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}} : memref<2x1x25xf32>
// CHECK: scf.parallel
// CHECK: vector.maskedstore %{{.*}} : memref<16x8x25xi8>, vector<16xi1>, vector<16xi8>
func.func @nchw(%x: tensor<16x8x5x5xf32>) -> !tq.tiled<16x8x5x5xi8:8, f32, tile = 8x8, dims = [0, 1]> {
  %q = tq.quantize %x : tensor<16x8x5x5xf32> -> !tq.tiled<16x8x5x5xi8:8, f32, tile = 8x8, dims = [0, 1]>
  return %q : !tq.tiled<16x8x5x5xi8:8, f32, tile = 8x8, dims = [0, 1]>
}

// -----

// The data in 16 x 16 blocks transposed in registers, each thread taking
// whole blocks of output rows; the steps (less than half a block along a
// side) element by element, in the output's order: each thread writes
// rows of its own.
// CHECK-LABEL: func.func @transpose
// CHECK: scf.parallel (%{{.*}}, %[[JB:.*]]) = (%c0, %c0) to (%c1{{.*}}, %c2)
// CHECK: %[[J0:.*]] = arith.muli %[[JB]], %c16
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %[[J0]]] : memref<1x16x32xi8>, vector<16xi8>
// CHECK: vector.shuffle
// CHECK: vector.store %{{.*}} : memref<1x32x16xi8>, vector<16xi8>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}, %c0{{.*}}) to (%c2{{.*}}, %c1{{.*}})
// CHECK: memref.store %{{.*}} : memref<2x1xf32>
func.func @transpose(%q: !tq.tiled<16x32xi8:8, f32, tile = 16x16, dims = [0, 1]>) -> !tq.tiled<32x16xi8:8, f32, tile = 16x16, dims = [0, 1]> {
  %t = tq.transpose %q [1, 0] : !tq.tiled<16x32xi8:8, f32, tile = 16x16, dims = [0, 1]> -> !tq.tiled<32x16xi8:8, f32, tile = 16x16, dims = [0, 1]>
  return %t : !tq.tiled<32x16xi8:8, f32, tile = 16x16, dims = [0, 1]>
}

// -----

// CHECK-LABEL: func.func @dequantize
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c16, %c32)
// CHECK: arith.mulf
func.func @dequantize(%q: !tq.tiled<16x32xi8:8, f32, tile = 16x16, dims = [0, 1]>) -> tensor<16x32xf32> {
  %d = tq.dequantize %q : !tq.tiled<16x32xi8:8, f32, tile = 16x16, dims = [0, 1]> -> tensor<16x32xf32>
  return %d : tensor<16x32xf32>
}

// -----

// A read in place: the padded input is written one row (n, h) of the
// padded image per iteration, then the kernel's own blocks follow.
// CHECK-LABEL: func.func @conv2d
// CHECK: memref.alloc() {{.*}} : memref<2x6x6x16xi8>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c2, %c6)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: vector.load %{{.*}} : memref<2x4x4x16xi8>, vector<16xi8>
// CHECK: scf.parallel
func.func @conv2d(%x: !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                  %w: !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x4x4x32xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<2x4x4x16xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<32x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x32xf32>
  return %0 : tensor<2x4x4x32xf32>
}

// -----

// im2col (18 channels: a partial C-tile whose 2 channels are not a whole
// group of 4 unrolled steps, so not read in place): one row per output
// pixel (n, p, q), the taps (r, s) inside it.
// CHECK-LABEL: func.func @conv2d_im2col
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c2, %c4, %c4{{.*}})
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c3
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c3{{.*}}
// The kernel's own blocks follow.
// CHECK: scf.parallel
func.func @conv2d_im2col(%x: !tq.tiled<2x4x4x18xi8:8, f32, tile = 16x16, dims = [0, 3]>,
                         %w: !tq.tiled<32x3x3x18xi8:8, f32, tile = 16x16, dims = [0, 3]>) -> tensor<2x4x4x32xf32> {
  %0 = tq.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : !tq.tiled<2x4x4x18xi8:8, f32, tile = 16x16, dims = [0, 3]>, !tq.tiled<32x3x3x18xi8:8, f32, tile = 16x16, dims = [0, 3]> -> tensor<2x4x4x32xf32>
  return %0 : tensor<2x4x4x32xf32>
}
