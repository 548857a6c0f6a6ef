// RUN: tq-opt %s -tq-cpu-float-kernels=target=avx2 -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-cpu-float-kernels="target=avx2 threads=2" -split-input-file | FileCheck %s --check-prefix=PAR
// RUN: tq-opt %s -tq-cpu-float-kernels=target=generic -split-input-file | FileCheck %s --check-prefix=GENERIC
// RUN: tq-opt %s -tq-cpu-float-kernels=target=avx512 -split-input-file | FileCheck %s --check-prefix=AVX512
// RUN: not tq-opt %s -tq-cpu-float-kernels=target=sse 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tq-opt %s -tq-cpu-float-kernels=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: tq-opt %s -tq-cpu-float-kernels="target=avx2 threads=2" -tq-cpu-outline-kernels -split-input-file | FileCheck %s --check-prefix=OUTLINE
// f32 products and convolutions on buffers become register-blocked
// kernels: 6 rows x 2 vectors of 8 lanes of C held across the reduction,
// a fused multiply-add per step (on the generic target, which may lack
// FMA, a multiply then an add); the panel past N is masked.

// TARGET: error: tq-cpu-float-kernels: unknown target 'sse' (expected native, avx512, avxvnni, avx2 or generic)
// THREADS: error: tq-cpu-float-kernels: threads must be at least 1, got 0

// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// Two full panels of 16 columns, then the masked one (N = 40).
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c10 step %c6
// CHECK-COUNT-12: vector.load %{{.*}} : memref<10x40xf32>, vector<8xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1 iter_args
// CHECK: vector.broadcast
// CHECK-NEXT: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// GENERIC-LABEL: func.func @matmul
// GENERIC: vector.broadcast
// GENERIC-NEXT: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// GENERIC-NEXT: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// GENERIC-NOT: math.fma
// CHECK: vector.store
// CHECK: scf.for %{{.*}} = %c2 to %c3 step %c1
// CHECK: vector.maskedload
// CHECK: vector.maskedstore
// PAR-LABEL: func.func @matmul
// PAR: scf.parallel
func.func @matmul(%a: memref<10x7xf32>, %b: memref<7x40xf32>, %c: memref<10x40xf32>) {
  linalg.matmul ins(%a, %b : memref<10x7xf32>, memref<7x40xf32>) outs(%c : memref<10x40xf32>)
  return
}

// -----

// A convolution: im2col of one image at a time into a (C*KH*KW) x (OH*OW)
// buffer, then the product with the filter as F x (C*KH*KW). With a unit
// W stride a row of 6 outputs is one masked vector copy.
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv_2d
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : memref<4x3x3x3xf32> into memref<4x27xf32>
// CHECK: %[[COLS:.*]] = memref.alloc() : memref<27x36xf32>
// CHECK: vector.maskedload %{{.*}} : memref<3x8x8xf32, strided<[64, 8, 1], offset: ?>>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT: vector.maskedstore %[[COLS]]
// CHECK: math.fma
// CHECK: memref.dealloc %[[COLS]]
func.func @conv(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x6x6xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x6x6xf32>)
  return
}

// -----

// Few taps (C·R·S = 9): no im2col. The (image, row) pairs are shared out;
// each vector of a row loads the 9 input vectors under its taps once, then
// each filter sums them weighted by its taps in (c, r, s) order. A row of 10
// is a whole vector and a masked one.
// CHECK-LABEL: func.func @conv_few_taps
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for %{{.*}} = %c0 to %c8 step %c8
// CHECK-COUNT-9:       vector.load %{{.*}} : memref<1x8x12xf32, strided<[96, 12, 1], offset: ?>>, vector<8xf32>
// CHECK:               scf.for %[[F:.*]] = %c0 to %c4 step %c1
// CHECK:                 vector.load %{{.*}}[%[[F]], %{{.*}}] : memref<4x60xf32
// CHECK:                 memref.load %{{.*}}[%[[F]], %c0, %c0, %c0] : memref<4x1x3x3xf32>
// CHECK:                 math.fma
// CHECK:                 memref.load %{{.*}}[%[[F]], %c0, %c2, %c2] : memref<4x1x3x3xf32>
// CHECK:                 %[[S:.*]] = math.fma
// CHECK:                 vector.store %[[S]]
// CHECK:             vector.create_mask %c2 : vector<8xi1>
// CHECK-COUNT-9:     vector.maskedload
// CHECK:             vector.maskedstore
// CHECK-NOT:     memref.dealloc
// PAR-LABEL: func.func @conv_few_taps
// PAR:         scf.parallel ({{.*}}) = (%c0, %c0) to (%c2, %c6)
func.func @conv_few_taps(%x: memref<2x1x8x12xf32>, %w: memref<4x1x3x3xf32>, %y: memref<2x4x6x10xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x1x8x12xf32>, memref<4x1x3x3xf32>) outs(%y : memref<2x4x6x10xf32>)
  return
}

// -----

// The top of the direct range: 16 taps (4 channels of 2 x 2) are read as
// 16 row vectors under each output vector on AVX-512 (32 registers: the 3
// filters' accumulators and the 16 rows fit), through im2col on AVX2 (16
// registers); 18 taps go through im2col on both.
// AVX512-LABEL: func.func @sixteen_taps
// AVX512-NOT:     memref.alloc
// AVX512-COUNT-16: vector.load %{{.*}} : memref<4x6x9xf32, strided<[54, 9, 1], offset: ?>>, vector<8xf32>
// AVX512-NOT:     memref.alloc
// AVX512-LABEL: func.func @eighteen_taps
// AVX512:         memref.alloc() : memref<18x28xf32>
// CHECK-LABEL: func.func @sixteen_taps
// CHECK:         memref.alloc() : memref<16x40xf32>
// CHECK-LABEL: func.func @eighteen_taps
// CHECK:         memref.alloc() : memref<18x28xf32>
func.func @sixteen_taps(%x: memref<1x4x6x9xf32>, %w: memref<3x4x2x2xf32>, %y: memref<1x3x5x8xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<1x4x6x9xf32>, memref<3x4x2x2xf32>) outs(%y : memref<1x3x5x8xf32>)
  return
}
func.func @eighteen_taps(%x: memref<1x2x6x9xf32>, %w: memref<3x2x3x3xf32>, %y: memref<1x3x4x7xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<1x2x6x9xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x4x7xf32>)
  return
}

// -----

// 1x1 with unit strides: the image is the product's rhs as it is.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: memref.alloc
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : memref<8x5x5xf32, strided<[25, 5, 1], offset: ?>> into memref<8x25xf32, strided<[25, 1], offset: ?>>
func.func @pointwise(%x: memref<2x8x5x5xf32>, %w: memref<4x8x1x1xf32>, %y: memref<2x4x5x5xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x8x5x5xf32>, memref<4x8x1x1xf32>) outs(%y : memref<2x4x5x5xf32>)
  return
}

// -----

// Left alone: integers, dynamic shapes, user-defined maps (a transposed
// operand).
// CHECK-LABEL: func.func @kept
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xi32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<?x8xf32>
// CHECK: linalg.matmul indexing_maps
func.func @kept(%a: memref<4x8xi32>, %b: memref<8x16xi32>, %c: memref<4x16xi32>,
                %d: memref<?x8xf32>, %e: memref<8x16xf32>, %f: memref<?x16xf32>,
                %g: memref<8x4xf32>, %h: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x16xi32>) outs(%c : memref<4x16xi32>)
  linalg.matmul ins(%d, %e : memref<?x8xf32>, memref<8x16xf32>) outs(%f : memref<?x16xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%g, %e : memref<8x4xf32>, memref<8x16xf32>) outs(%h : memref<4x16xf32>)
  return
}

// -----

// A fill of the output just before the product is done by the kernel: the
// accumulators start from the value, C is not read.
// CHECK-LABEL: func.func @filled
// CHECK-NOT: linalg.fill
// CHECK-NOT: vector.load %{{.*}} : memref<6x16xf32>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[V:cst[_0-9]*]], %{{.*}} = %[[V]],
func.func @filled(%a: memref<6x4xf32>, %b: memref<4x16xf32>, %c: memref<6x16xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<6x16xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x16xf32>) outs(%c : memref<6x16xf32>)
  return
}

// -----

// Depthwise (one channel and one filter per group): vectors of an output
// row over the window, the row's last vector masked (Q = 10).
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: vector.load %{{.*}} : memref<2x5x1x10x10xf32>, vector<8xf32>
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.maskedstore
func.func @depthwise(%x: memref<2x5x1x12x12xf32>, %w: memref<5x1x1x3x3xf32>, %y: memref<2x5x1x10x10xf32>) {
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x5x1x12x12xf32>, memref<5x1x1x3x3xf32>) outs(%y : memref<2x5x1x10x10xf32>)
  return
}

// -----

// Strided along W: each tap loads 2·8 contiguous inputs, masked past the
// row (W = 33, Q = 16: the second vector could read past it), and picks
// every other lane.
// CHECK-LABEL: func.func @depthwise_strided
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: vector.load %{{.*}} : memref<1x4x1x33x33xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.maskedload %{{.*}} : memref<1x4x1x33x33xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.shuffle
func.func @depthwise_strided(%x: memref<1x4x1x33x33xf32>, %w: memref<4x1x1x3x3xf32>, %y: memref<1x4x1x16x16xf32>) {
  linalg.conv_2d_ngchw_gfchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x4x1x33x33xf32>, memref<4x1x1x3x3xf32>) outs(%y : memref<1x4x1x16x16xf32>)
  return
}

// -----

// A row of 4 outputs: one whole vector of 4 lanes per row, not an 8-lane
// one masked to half.
// CHECK-LABEL: func.func @depthwise_narrow
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: vector<8xf32>
// CHECK: vector.load %{{.*}} : memref<2x3x1x6x6xf32>, vector<4xf32>
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT: vector.maskedstore
// CHECK: vector.store %{{.*}} : memref<2x3x1x4x4xf32>, vector<4xf32>
func.func @depthwise_narrow(%x: memref<2x3x1x6x6xf32>, %w: memref<3x1x1x3x3xf32>, %y: memref<2x3x1x4x4xf32>) {
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x3x1x6x6xf32>, memref<3x1x1x3x3xf32>) outs(%y : memref<2x3x1x4x4xf32>)
  return
}

// -----

// A padded input (the bufferized tensor.pad: a buffer filled with the pad
// value, the source copied into its interior): each image gets a scratch
// plane (allocated once per thread, outside the image loop: an alloca
// there would grow the stack at every image), filled with the pad value,
// and each group's plane is copied into its interior; the padded buffer is
// gone, and the source's dealloc moves after the kernel.
// CHECK-LABEL: func.func @depthwise_padded
// CHECK-NOT: memref<2x3x9x9xf32>
// CHECK-NOT: memref.alloca
// CHECK: %[[PLANE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<9x9xf32>
// CHECK: scf.for
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[PLANE]] : memref<9x9xf32>)
// CHECK: scf.for
// CHECK: vector.maskedload %[[SRC:.*]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], {{.*}} : memref<2x3x7x7xf32>
// CHECK: vector.maskedstore %[[PLANE]][%{{.*}}, %{{.*}}]
// CHECK: vector.maskedload %[[PLANE]]
// CHECK: memref.dealloc %[[PLANE]]
// CHECK: memref.dealloc %[[SRC]]
// CHECK-NOT: memref.copy
func.func @depthwise_padded(%w: memref<3x1x1x3x3xf32>, %y: memref<2x3x1x7x7xf32>) {
  %zero = arith.constant 0.0 : f32
  %src = memref.alloc() : memref<2x3x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%src : memref<2x3x7x7xf32>)
  %pad = memref.alloc() : memref<2x3x9x9xf32>
  linalg.map outs(%pad : memref<2x3x9x9xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %in = memref.subview %pad[0, 0, 1, 1] [2, 3, 7, 7] [1, 1, 1, 1] : memref<2x3x9x9xf32> to memref<2x3x7x7xf32, strided<[243, 81, 9, 1], offset: 10>>
  memref.copy %src, %in : memref<2x3x7x7xf32> to memref<2x3x7x7xf32, strided<[243, 81, 9, 1], offset: 10>>
  memref.dealloc %src : memref<2x3x7x7xf32>
  %x = memref.expand_shape %pad [[0], [1, 2], [3], [4]] output_shape [2, 3, 1, 9, 9] : memref<2x3x9x9xf32> into memref<2x3x1x9x9xf32>
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x3x1x9x9xf32>, memref<3x1x1x3x3xf32>) outs(%y : memref<2x3x1x7x7xf32>)
  memref.dealloc %pad : memref<2x3x9x9xf32>
  return
}

// -----

// An NHWC depthwise convolution (tq-cpu-channels-last) on a padded input:
// the taps are read from the source where they are, with no copy of the
// image. Each output pixel is vectors of channels over the window from the
// fill value (20 channels: 8, 8 and 4 masked on AVX2; 16 and 4 masked on
// AVX-512), the bias and ReLU applied as it is stored. The pixels whose
// window reaches into the border (the first and last rows, the first and
// last columns) check each tap, one pixel at a time, and take the pad
// value outside; the others (rows and columns 1 to 7: 4 pixels, then 3)
// read it unchecked. The padded buffer, the fill and the generic are gone.
// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK-NOT: memref<2x11x11x20xf32>
// CHECK-NOT: memref.alloc() {alignment = 64 : i64}
// CHECK: scf.for %{{.*}} = %c0 to %c9 step %c1
// CHECK: arith.cmpi ult, %{{.*}}, %c9 : index
// CHECK: vector.load %[[SRC:alloc[_0-9]*]][%{{.*}}, %{{.*}}, %{{.*}}, %c0] : memref<2x9x9x20xf32>, vector<8xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: math.fma
// CHECK: vector.maskedload %[[SRC]][%{{.*}}, %{{.*}}, %{{.*}}, %c16], {{.*}} : memref<2x9x9x20xf32>, vector<8xi1>, vector<8xf32>
// CHECK: arith.maximumf
// CHECK: vector.maskedstore %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c16]{{.*}} : memref<2x9x9x20xf32>
// CHECK: scf.for %{{.*}} = %c1 to %c8 step %c1
// CHECK: arith.select
// CHECK: vector.maskedstore %{{.*}}[%{{.*}}, %{{.*}}, %c0, %c16]
// CHECK-NOT: arith.select
// CHECK: vector.load %[[SRC]]
// CHECK-NOT: arith.select
// CHECK: vector.maskedstore %{{.*}}[%{{.*}}, %{{.*}}, %c4, %c16]
// CHECK-NOT: arith.select
// CHECK: vector.maskedstore %{{.*}}[%{{.*}}, %{{.*}}, %c7, %c16]
// CHECK: arith.select
// CHECK: vector.maskedstore %{{.*}}[%{{.*}}, %{{.*}}, %c8, %c16]
// CHECK: scf.for %{{.*}} = %c8 to %c9 step %c1
// CHECK: arith.select
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
// AVX512-LABEL: func.func @depthwise_nhwc
// AVX512-NOT: memref.alloc() {alignment = 64 : i64}
// AVX512: vector.maskedload %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c16], {{.*}} : memref<2x9x9x20xf32>, vector<16xi1>, vector<16xf32>
// GENERIC-LABEL: func.func @depthwise_nhwc
// GENERIC-NOT: math.fma
// GENERIC: arith.mulf {{.*}} : vector<8xf32>
func.func @depthwise_nhwc(%w: memref<3x3x20xf32>, %b: memref<20xf32>, %out: memref<2x9x9x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %src = memref.alloc() : memref<2x9x9x20xf32>
  linalg.fill ins(%zero : f32) outs(%src : memref<2x9x9x20xf32>)
  %pad = memref.alloc() : memref<2x11x11x20xf32>
  linalg.map outs(%pad : memref<2x11x11x20xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %in = memref.subview %pad[0, 1, 1, 0] [2, 9, 9, 20] [1, 1, 1, 1] : memref<2x11x11x20xf32> to memref<2x9x9x20xf32, strided<[2420, 220, 20, 1], offset: 240>>
  memref.copy %src, %in : memref<2x9x9x20xf32> to memref<2x9x9x20xf32, strided<[2420, 220, 20, 1], offset: 240>>
  memref.dealloc %src : memref<2x9x9x20xf32>
  %y = memref.alloc() : memref<2x9x9x20xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x9x9x20xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x11x11x20xf32>, memref<3x3x20xf32>) outs(%y : memref<2x9x9x20xf32>)
  memref.dealloc %pad : memref<2x11x11x20xf32>
  linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %b : memref<2x9x9x20xf32>, memref<20xf32>) outs(%out : memref<2x9x9x20xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  }
  memref.dealloc %y : memref<2x9x9x20xf32>
  return
}

// -----

// A 5 x 5 window over a 4 x 4 image padded by 2: every output pixel reaches
// into the border, so the image is copied into a padded scratch buffer
// (allocated once per thread, its border filled with the pad value once,
// before the loop over the thread's images, which overwrite the interior
// only) and the taps read from it unchecked.
// On 2 threads the loop over the threads' images, with the border's fill
// and the images in it, is one kernel (4 fill loops made it look like
// program control flow, left in the public function).
// OUTLINE-LABEL: func.func private @depthwise_nhwc_border_kernel(
// OUTLINE: scf.parallel
// OUTLINE: scf.if
// OUTLINE: scf.for
// OUTLINE-LABEL: func.func @depthwise_nhwc_border(
// OUTLINE-NOT: scf.parallel
// OUTLINE: call @depthwise_nhwc_border_kernel
// CHECK-LABEL: func.func @depthwise_nhwc_border
// CHECK-NOT: memref<2x8x8x16xf32>
// CHECK: %[[PAD:.*]] = arith.constant dense<0.0{{0*}}e+00> : vector<8xf32>
// CHECK: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x8x16xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if
// CHECK-COUNT-2: vector.store %[[PAD]], %[[S]]
// CHECK-NOT: vector.store %[[PAD]]
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT: vector.store %[[PAD]]
// CHECK: vector.load %{{.*}}[%[[N]], {{.*}} : memref<2x4x4x16xf32>, vector<8xf32>
// CHECK-NOT: vector.store %[[PAD]]
// CHECK: vector.store %{{.*}}, %[[S]]
// CHECK-NOT: arith.select
// CHECK: vector.load %[[S]]
// CHECK-NOT: arith.select
// CHECK: math.fma
// CHECK-NOT: arith.select
// CHECK: memref.dealloc %[[S]]
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise_nhwc_border(%src: memref<2x4x4x16xf32>, %w: memref<5x5x16xf32>, %y: memref<2x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloc() : memref<2x8x8x16xf32>
  linalg.map outs(%pad : memref<2x8x8x16xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %in = memref.subview %pad[0, 2, 2, 0] [2, 4, 4, 16] [1, 1, 1, 1] : memref<2x8x8x16xf32> to memref<2x4x4x16xf32, strided<[1024, 128, 16, 1], offset: 288>>
  memref.copy %src, %in : memref<2x4x4x16xf32> to memref<2x4x4x16xf32, strided<[1024, 128, 16, 1], offset: 288>>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x4x16xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x8x8x16xf32>, memref<5x5x16xf32>) outs(%y : memref<2x4x4x16xf32>)
  memref.dealloc %pad : memref<2x8x8x16xf32>
  return
}

// -----

// The bias and ReLU after the convolution store into the pad's source
// (reused in place for the output): reading the taps there would read
// outputs already stored, so each image is copied into the scratch buffer
// before any of its outputs is stored, though most pixels are inside.
// CHECK-LABEL: func.func @depthwise_nhwc_in_place
// CHECK: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<11x11x24xf32>
// CHECK: vector.load %{{.*}} : memref<2x9x9x20xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[S]]
// CHECK-NOT: arith.select
// CHECK: vector.load %[[S]]
// CHECK-NOT: arith.select
// CHECK: vector.maskedstore %{{.*}} : memref<2x9x9x20xf32>
// CHECK: memref.dealloc %[[S]]
func.func @depthwise_nhwc_in_place(%w: memref<3x3x20xf32>, %b: memref<20xf32>, %src: memref<2x9x9x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloc() : memref<2x11x11x20xf32>
  linalg.map outs(%pad : memref<2x11x11x20xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %in = memref.subview %pad[0, 1, 1, 0] [2, 9, 9, 20] [1, 1, 1, 1] : memref<2x11x11x20xf32> to memref<2x9x9x20xf32, strided<[2420, 220, 20, 1], offset: 240>>
  memref.copy %src, %in : memref<2x9x9x20xf32> to memref<2x9x9x20xf32, strided<[2420, 220, 20, 1], offset: 240>>
  %y = memref.alloc() : memref<2x9x9x20xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x9x9x20xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x11x11x20xf32>, memref<3x3x20xf32>) outs(%y : memref<2x9x9x20xf32>)
  memref.dealloc %pad : memref<2x11x11x20xf32>
  linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %b : memref<2x9x9x20xf32>, memref<20xf32>) outs(%src : memref<2x9x9x20xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  }
  memref.dealloc %y : memref<2x9x9x20xf32>
  return
}

// -----

// An NHWC max pooling of a ReLU's output (marked): per output pixel,
// vectors of channels over the window from the fill, combined as
// `x > acc ? x : acc` (or x where it is NaN), the last vector (of 20
// channels) masked. On x86 the first half is the `max` instruction, which
// is exactly that for every input (NaN included), as an intrinsic: LLVM
// would merge the compare into the NaN select's mask, which puts it on
// the chain through acc.
// CHECK-LABEL: func.func @max_pool_nhwc
// CHECK: %[[M:.*]] = llvm.call_intrinsic "llvm.x86.avx.max.ps.256"(%[[X:.*]], %{{.*}}) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// CHECK: arith.select %[[NAN]], %[[X]], %[[M]]
// AVX512-LABEL: func.func @max_pool_nhwc
// AVX512: %[[M:.*]] = llvm.call_intrinsic "llvm.x86.avx512.max.ps.512"(%[[X:.*]], %{{.*}}, %c4_i32) : (vector<16xf32>, vector<16xf32>, i32) -> vector<16xf32>
// AVX512: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// AVX512: arith.select %[[NAN]], %[[X]], %[[M]]
// GENERIC-LABEL: func.func @max_pool_nhwc
// GENERIC-NOT: llvm.call_intrinsic
// GENERIC: arith.cmpf ogt
// GENERIC: arith.cmpf uno
// CHECK: vector.maskedload %{{.*}} : memref<2x6x6x20xf32>
// CHECK: vector.maskedstore %{{.*}} : memref<2x3x3x20xf32>
// CHECK-NOT: linalg.pooling_nhwc_max
func.func @max_pool_nhwc(%x: memref<2x6x6x20xf32>, %k: memref<2x2xf32>, %y: memref<2x3x3x20xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x3x3x20xf32>)
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, tq.nonnegative_input}
    ins(%x, %k : memref<2x6x6x20xf32>, memref<2x2xf32>) outs(%y : memref<2x3x3x20xf32>)
  return
}

// -----

// The bias and ReLU after a depthwise convolution read its output as NCHW,
// through the collapse_shape that drops the unit group dim: the kernel
// applies them and stores into their buffer at (n, g, p, q); the generic
// and the view are gone.
// CHECK-LABEL: func.func @depthwise_epilogue_nchw
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.collapse_shape
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[OUT:.*]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x3x8x8xf32>, vector<8xf32>
func.func @depthwise_epilogue_nchw(%x: memref<2x3x1x10x10xf32>, %w: memref<3x1x1x3x3xf32>, %bias: memref<3xf32>, %out: memref<2x3x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x3x1x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x3x1x8x8xf32>)
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x3x1x10x10xf32>, memref<3x1x1x3x3xf32>) outs(%y : memref<2x3x1x8x8xf32>)
  %y4 = memref.collapse_shape %y [[0], [1, 2], [3], [4]] : memref<2x3x1x8x8xf32> into memref<2x3x8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y4, %bias : memref<2x3x8x8xf32>, memref<3xf32>) outs(%out : memref<2x3x8x8xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %y : memref<2x3x1x8x8xf32>
  return
}

// -----

// Planes of 2x2 outputs (rows of at most 4) and 12 channels: each image
// is transposed into a 4x4x16 scratch buffer (one per thread; its border filled
// with the pad value, the padded buffer gone), each output pixel computed
// as vectors of 8 channels, and the 4x16 result transposed back, the bias
// and ReLU applied to each channel's 4 pixels as they are stored through
// the group view's buffer, flattened.
// CHECK-LABEL: func.func @depthwise_channels_last
// CHECK-NOT: memref<2x12x4x4xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[WT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<9x16xf32>
// CHECK: %[[DST:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : memref<2x12x2x2xf32> into memref<2x12x4xf32>
// CHECK-NOT: memref.alloca
// CHECK: %[[IN:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x4x16xf32>
// CHECK-NEXT: %[[RES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[IN]]
// CHECK: vector.maskedload %{{.*}} : memref<2x12x4xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: vector.shuffle
// CHECK: vector.store %{{.*}}, %[[IN]]
// CHECK-COUNT-9: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[RES]]
// CHECK: vector.load %[[RES]]
// CHECK: vector.shuffle
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.maskedstore %[[DST]]
// CHECK: memref.dealloc %[[IN]]
// CHECK-NEXT: memref.dealloc %[[RES]]
// CHECK: memref.dealloc %[[WT]]
func.func @depthwise_channels_last(%w: memref<12x1x1x3x3xf32>, %bias: memref<12xf32>, %out: memref<2x12x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %src = memref.alloc() : memref<2x12x2x2xf32>
  linalg.fill ins(%zero : f32) outs(%src : memref<2x12x2x2xf32>)
  %pad = memref.alloc() : memref<2x12x4x4xf32>
  linalg.map outs(%pad : memref<2x12x4x4xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %in = memref.subview %pad[0, 0, 1, 1] [2, 12, 2, 2] [1, 1, 1, 1] : memref<2x12x4x4xf32> to memref<2x12x2x2xf32, strided<[192, 16, 4, 1], offset: 5>>
  memref.copy %src, %in : memref<2x12x2x2xf32> to memref<2x12x2x2xf32, strided<[192, 16, 4, 1], offset: 5>>
  memref.dealloc %src : memref<2x12x2x2xf32>
  %x = memref.expand_shape %pad [[0], [1, 2], [3], [4]] output_shape [2, 12, 1, 4, 4] : memref<2x12x4x4xf32> into memref<2x12x1x4x4xf32>
  %y = memref.alloc() : memref<2x12x1x2x2xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x12x1x2x2xf32>)
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x12x1x4x4xf32>, memref<12x1x1x3x3xf32>) outs(%y : memref<2x12x1x2x2xf32>)
  memref.dealloc %pad : memref<2x12x4x4xf32>
  %y4 = memref.collapse_shape %y [[0], [1, 2], [3], [4]] : memref<2x12x1x2x2xf32> into memref<2x12x2x2xf32>
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y4, %bias : memref<2x12x2x2xf32>, memref<12xf32>) outs(%out : memref<2x12x2x2xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %y : memref<2x12x1x2x2xf32>
  return
}

// -----

// The same planes read through rows of a wider buffer (H and W do not
// flatten): the row kernel, vectors of 4 along each row.
// CHECK-LABEL: func.func @depthwise_channels_last_strided
// CHECK-NOT: memref<4x4x16xf32>
// CHECK-NOT: memref.collapse_shape
// CHECK: vector.maskedload %{{.*}} : memref<2x12x1x4x4xf32, strided<[240, 20, 20, 5, 1]>>, vector<4xi1>, vector<4xf32>
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
func.func @depthwise_channels_last_strided(%x: memref<2x12x1x4x4xf32, strided<[240, 20, 20, 5, 1]>>, %w: memref<12x1x1x3x3xf32>, %y: memref<2x12x1x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x12x1x2x2xf32>)
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x12x1x4x4xf32, strided<[240, 20, 20, 5, 1]>>, memref<12x1x1x3x3xf32>) outs(%y : memref<2x12x1x2x2xf32>)
  return
}

// -----

// The output is read again after the bias and ReLU: the kernel stores it,
// and the generic runs on its own (vector loops that load the output).
// CHECK-LABEL: func.func @depthwise_epilogue_nchw_reread
// CHECK: vector.store %{{.*}} : memref<2x3x1x8x8xf32>, vector<8xf32>
// CHECK: %[[Y4:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]]
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[Y4]] {{\[\[}}0], [1], [2, 3]]
// CHECK: vector.load %[[ROWS]]
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: memref.copy
func.func @depthwise_epilogue_nchw_reread(%x: memref<2x3x1x10x10xf32>, %w: memref<3x1x1x3x3xf32>, %bias: memref<3xf32>, %out: memref<2x3x8x8xf32>, %again: memref<2x3x1x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x3x1x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x3x1x8x8xf32>)
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x3x1x10x10xf32>, memref<3x1x1x3x3xf32>) outs(%y : memref<2x3x1x8x8xf32>)
  %y4 = memref.collapse_shape %y [[0], [1, 2], [3], [4]] : memref<2x3x1x8x8xf32> into memref<2x3x8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y4, %bias : memref<2x3x8x8xf32>, memref<3xf32>) outs(%out : memref<2x3x8x8xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %y, %again : memref<2x3x1x8x8xf32> to memref<2x3x1x8x8xf32>
  memref.dealloc %y : memref<2x3x1x8x8xf32>
  return
}

// -----

// A generic that writes the NCHW view in place is not taken: the view
// comes after the kernel's stores. The kernel stores its output, and the
// generic then runs on its own, on the view.
// CHECK-LABEL: func.func @depthwise_epilogue_nchw_in_place
// CHECK: vector.store %{{.*}} : memref<2x3x1x8x8xf32>, vector<8xf32>
// CHECK: %[[VIEW:.*]] = memref.collapse_shape
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[VIEW]] {{\[\[}}0], [1], [2, 3]]
// CHECK: vector.load %[[ROWS]]
// CHECK: vector.store %{{.*}}, %[[ROWS]]
func.func @depthwise_epilogue_nchw_in_place(%x: memref<2x3x1x10x10xf32>, %w: memref<3x1x1x3x3xf32>, %bias: memref<3xf32>, %y: memref<2x3x1x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x3x1x8x8xf32>)
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x3x1x10x10xf32>, memref<3x1x1x3x3xf32>) outs(%y : memref<2x3x1x8x8xf32>)
  %y4 = memref.collapse_shape %y [[0], [1, 2], [3], [4]] : memref<2x3x1x8x8xf32> into memref<2x3x8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : memref<3xf32>) outs(%y4 : memref<2x3x8x8xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The source is written between the copy and the convolution: the kernel
// reads the padded buffer, which stays.
// CHECK-LABEL: func.func @depthwise_padded_source_changed
// CHECK-NOT: memref.alloca_scope
// CHECK: linalg.copy
// CHECK: vector.maskedload %{{.*}} : memref<2x3x1x9x9xf32>
func.func @depthwise_padded_source_changed(%w: memref<3x1x1x3x3xf32>, %y: memref<2x3x1x7x7xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%src : memref<2x3x7x7xf32>)
  %pad = memref.alloc() : memref<2x3x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<2x3x9x9xf32>)
  %in = memref.subview %pad[0, 0, 1, 1] [2, 3, 7, 7] [1, 1, 1, 1] : memref<2x3x9x9xf32> to memref<2x3x7x7xf32, strided<[243, 81, 9, 1], offset: 10>>
  memref.copy %src, %in : memref<2x3x7x7xf32> to memref<2x3x7x7xf32, strided<[243, 81, 9, 1], offset: 10>>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3x7x7xf32>)
  %x = memref.expand_shape %pad [[0], [1, 2], [3], [4]] output_shape [2, 3, 1, 9, 9] : memref<2x3x9x9xf32> into memref<2x3x1x9x9xf32>
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x3x1x9x9xf32>, memref<3x1x1x3x3xf32>) outs(%y : memref<2x3x1x7x7xf32>)
  memref.dealloc %src : memref<2x3x7x7xf32>
  memref.dealloc %pad : memref<2x3x9x9xf32>
  return
}

// -----

// A copy into a strided view (a padded tensor's interior) becomes a
// linalg.copy, over one merged dim for the trailing dims contiguous in
// both buffers (a batch share into the whole, along dim 1); a copy between
// contiguous buffers stays a memcpy, a dynamic offset included (a batch
// share along dim 0), and a linalg.copy between them becomes one.
// CHECK-LABEL: func.func @copies
// CHECK: linalg.copy ins(%{{.*}} : memref<4x4xf32>) outs(%{{.*}} : memref<4x4xf32, strided<[6, 1], offset: 7>>)
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x4xf32> to memref<4x4xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x3x4xf32> to memref<2x3x4xf32, strided<[12, 4, 1], offset: ?>>
// CHECK: %[[FROM:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : memref<2x2x3x4xf32> into memref<2x24xf32>
// CHECK: %[[TO:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : memref<2x2x3x4xf32, strided<[48, 12, 4, 1], offset: ?>> into memref<2x24xf32, strided<[48, 1], offset: ?>>
// CHECK: linalg.copy ins(%[[FROM]] : memref<2x24xf32>) outs(%[[TO]] : memref<2x24xf32, strided<[48, 1], offset: ?>>)
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x3x4xf32, strided<[12, 4, 1], offset: ?>> to memref<2x3x4xf32>
func.func @copies(%a: memref<4x4xf32>, %b: memref<6x6xf32>, %c: memref<4x4xf32>,
                  %d: memref<2x3x4xf32>, %e: memref<4x3x4xf32>,
                  %f: memref<2x2x3x4xf32>, %g: memref<2x4x3x4xf32>, %t: index) {
  %s = memref.subview %b[1, 1] [4, 4] [1, 1] : memref<6x6xf32> to memref<4x4xf32, strided<[6, 1], offset: 7>>
  memref.copy %a, %s : memref<4x4xf32> to memref<4x4xf32, strided<[6, 1], offset: 7>>
  memref.copy %a, %c : memref<4x4xf32> to memref<4x4xf32>
  %rows = memref.subview %e[%t, 0, 0] [2, 3, 4] [1, 1, 1] : memref<4x3x4xf32> to memref<2x3x4xf32, strided<[12, 4, 1], offset: ?>>
  memref.copy %d, %rows : memref<2x3x4xf32> to memref<2x3x4xf32, strided<[12, 4, 1], offset: ?>>
  %cols = memref.subview %g[0, %t, 0, 0] [2, 2, 3, 4] [1, 1, 1, 1] : memref<2x4x3x4xf32> to memref<2x2x3x4xf32, strided<[48, 12, 4, 1], offset: ?>>
  memref.copy %f, %cols : memref<2x2x3x4xf32> to memref<2x2x3x4xf32, strided<[48, 12, 4, 1], offset: ?>>
  linalg.copy ins(%rows : memref<2x3x4xf32, strided<[12, 4, 1], offset: ?>>) outs(%d : memref<2x3x4xf32>)
  return
}

// -----

// Max pooling 2x2, stride 2, 8 -> 4 columns: vectors of 4 outputs, each
// tap one load of 8 contiguous inputs with every other lane picked. The
// fill before it becomes the accumulators' start (-Inf, folded away by
// max(-Inf, x) = x). A vector that could read past its row is masked.
// CHECK-LABEL: func.func @max_pool
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK-COUNT-4: vector.maskedload {{.*}} : memref<2x3x8x8xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6] : vector<8xf32>, vector<8xf32>
// CHECK: arith.maximumf {{.*}} : vector<4xf32>
// CHECK: vector.maskedstore
// PAR-LABEL: func.func @max_pool
// PAR: scf.parallel
func.func @max_pool(%x: memref<2x3x8x8xf32>, %y: memref<2x3x4x4xf32>) {
  %k = memref.alloc() : memref<2x2xf32>
  %c = arith.constant 0xFF800000 : f32
  linalg.fill ins(%c : f32) outs(%y : memref<2x3x4x4xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : memref<2x3x8x8xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x4xf32>)
  return
}

// -----

// Marked tq.nonnegative_input (a ReLU's output: no -0) and filled with
// -Inf, each tap is `x > acc ? x : acc`, or x where x is NaN, instead of
// maximumf. Without the fill (the accumulators start from the output,
// which may hold -0), or filled with -0, maximumf stays.
// CHECK-LABEL: func.func @max_pool_nonnegative
// CHECK-NOT: arith.maximumf
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[X:.*]], %[[ACC:.*]] : vector<4xf32>
// CHECK: %[[M:.*]] = arith.select %[[GT]], %[[X]], %[[ACC]] : vector<4xi1>, vector<4xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<4xf32>
// CHECK: arith.select %[[NAN]], %[[X]], %[[M]] : vector<4xi1>, vector<4xf32>
// CHECK-NOT: arith.maximumf
// CHECK-LABEL: func.func @max_pool_nonnegative_unfilled
// CHECK: arith.maximumf {{.*}} : vector<4xf32>
// CHECK-LABEL: func.func @max_pool_nonnegative_negative_zero_fill
// CHECK: arith.maximumf {{.*}} : vector<4xf32>
func.func @max_pool_nonnegative(%x: memref<2x3x8x8xf32>, %y: memref<2x3x4x4xf32>) {
  %k = memref.alloc() : memref<2x2xf32>
  %c = arith.constant 0xFF800000 : f32
  linalg.fill ins(%c : f32) outs(%y : memref<2x3x4x4xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, tq.nonnegative_input} ins(%x, %k : memref<2x3x8x8xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x4xf32>)
  return
}
func.func @max_pool_nonnegative_unfilled(%x: memref<2x3x8x8xf32>, %y: memref<2x3x4x4xf32>) {
  %k = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, tq.nonnegative_input} ins(%x, %k : memref<2x3x8x8xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x4xf32>)
  return
}
func.func @max_pool_nonnegative_negative_zero_fill(%x: memref<2x3x8x8xf32>, %y: memref<2x3x4x4xf32>) {
  %k = memref.alloc() : memref<2x2xf32>
  %c = arith.constant -0.0 : f32
  linalg.fill ins(%c : f32) outs(%y : memref<2x3x4x4xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, tq.nonnegative_input} ins(%x, %k : memref<2x3x8x8xf32>, memref<2x2xf32>) outs(%y : memref<2x3x4x4xf32>)
  return
}

// -----

// Sum pooling 3x3, unit strides, 20 -> 18 columns: two full vectors of 8
// read inside the row, then a masked one; the accumulators start from the
// output.
// CHECK-LABEL: func.func @sum_pool
// CHECK-NOT: linalg.pooling_nchw_sum
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8
// CHECK: vector.load %{{.*}} : memref<1x2x20x20xf32>, vector<8xf32>
// CHECK-COUNT-9: arith.addf {{.*}} : vector<8xf32>
// CHECK: vector.maskedload
// CHECK: vector.maskedstore
func.func @sum_pool(%x: memref<1x2x20x20xf32>, %y: memref<1x2x18x18xf32>) {
  %k = memref.alloc() : memref<3x3xf32>
  linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : memref<1x2x20x20xf32>, memref<3x3xf32>) outs(%y : memref<1x2x18x18xf32>)
  return
}

// -----

// Epilogues: the elementwise generic right after a kernel is applied to
// each vector before it is stored. In place: bias per output channel (a
// scalar per row), then ReLU.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-NOT: linalg.generic
// CHECK: scf.if
// CHECK-NEXT: memref.load %{{.*}} : memref<16x1x1xf32>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: arith.addf %{{.*}} : vector<8xf32>
// CHECK-NEXT: arith.maximumf %{{.*}} : vector<8xf32>
// CHECK-NEXT: vector.store
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @conv_bias_relu(%x: memref<2x3x10x10xf32>, %w: memref<16x3x3x3xf32>, %b: memref<16x1x1xf32>, %y: memref<2x16x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<2x3x10x10xf32>, memref<16x3x3x3xf32>) outs(%y : memref<2x16x8x8xf32>)
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %b : memref<2x16x8x8xf32>, memref<16x1x1xf32>) outs(%y : memref<2x16x8x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %cst : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Into another buffer: the product's own buffer is then not written at
// all. The bias is per column: a vector load, masked in the last panel.
// The deallocation of a buffer last used by the product (as
// tq-cpu-free-buffers places it) may sit between the two.
// CHECK-LABEL: func.func @matmul_bias_to
// CHECK-NOT: linalg.generic
// CHECK: vector.load %{{.*}} : memref<20xf32>, vector<8xf32>
// CHECK: arith.addf
// CHECK: vector.store %{{.*}}, %[[OUT:.*]][{{.*}}] : memref<6x20xf32>
// CHECK: vector.maskedload %{{.*}} : memref<20xf32>
// CHECK: vector.maskedstore %[[OUT]]
#mn = affine_map<(d0, d1) -> (d0, d1)>
#n = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias_to(%a: memref<6x5xf32>, %b: memref<5x20xf32>, %bias: memref<20xf32>, %out: memref<6x20xf32>) {
  %c = memref.alloc() : memref<6x20xf32>
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<6x5xf32>
  memref.copy %a, %p : memref<6x5xf32> to memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%p, %b : memref<6x5xf32>, memref<5x20xf32>) outs(%c : memref<6x20xf32>)
  memref.dealloc %p : memref<6x5xf32>
  linalg.generic {indexing_maps = [#mn, #n, #mn], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%out : memref<6x20xf32>) {
  ^bb0(%in: f32, %v: f32, %o: f32):
    %s = arith.addf %in, %v : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<6x20xf32>
  return
}

// -----

// The generic's output allocated after the product (bufferization puts an
// allocation right before its first use): it is allocated before the
// kernel, which stores into it.
// CHECK-LABEL: func.func @matmul_bias_to_new_buffer
// CHECK: memref.alloc() : memref<6x20xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc() : memref<6x20xf32>
// CHECK-NEXT: scf.for
// CHECK-NOT: linalg.generic
// CHECK: vector.store %{{.*}}, %[[OUT]][{{.*}}] : memref<6x20xf32>
// CHECK: vector.maskedstore %[[OUT]]
// CHECK: memref.copy %[[OUT]], %{{.*}}
func.func @matmul_bias_to_new_buffer(%a: memref<6x5xf32>, %b: memref<5x20xf32>, %bias: memref<20xf32>, %res: memref<6x20xf32>) {
  %c = memref.alloc() : memref<6x20xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x20xf32>)
  linalg.matmul ins(%a, %b : memref<6x5xf32>, memref<5x20xf32>) outs(%c : memref<6x20xf32>)
  %out = memref.alloc() : memref<6x20xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : memref<6x20xf32>, memref<20xf32>) outs(%out : memref<6x20xf32>) {
  ^bb0(%in: f32, %v: f32, %o: f32):
    %s = arith.addf %in, %v : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<6x20xf32>
  memref.copy %out, %res : memref<6x20xf32> to memref<6x20xf32>
  memref.dealloc %out : memref<6x20xf32>
  return
}

// -----

// The few-taps convolution of a first layer, then a view of the bias (as
// the importer reshapes it) and the bias add and ReLU in place: the view
// moves before the kernel, which applies the generic as it stores.
// CHECK-LABEL: func.func @conv_bias_view
// CHECK: %[[B:.*]] = memref.expand_shape %arg2
// CHECK: scf.for
// CHECK: math.fma
// CHECK: memref.load %[[B]]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.store
// CHECK-NOT: linalg.generic
func.func @conv_bias_view(%x: memref<2x1x8x12xf32>, %w: memref<4x1x3x3xf32>, %bias: memref<4xf32>, %y: memref<2x4x6x10xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x6x10xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x1x8x12xf32>, memref<4x1x3x3xf32>) outs(%y : memref<2x4x6x10xf32>)
  %b = memref.expand_shape %bias [[0, 1, 2]] output_shape [4, 1, 1] : memref<4xf32> into memref<4x1x1xf32>
  linalg.generic {indexing_maps = [affine_map<(n, f, p, q) -> (n, f, p, q)>, affine_map<(n, f, p, q) -> (f, 0, 0)>, affine_map<(n, f, p, q) -> (n, f, p, q)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %b : memref<2x4x6x10xf32>, memref<4x1x1xf32>) outs(%y : memref<2x4x6x10xf32>) {
  ^bb0(%in: f32, %v: f32, %o: f32):
    %s = arith.addf %in, %v : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Not fused: the product is read again after the generic (which then
// runs on its own), and a body that reads its position (left as it is).
// CHECK-LABEL: func.func @kept_epilogues
// CHECK: vector.store %{{.*}}, %[[C:.*]][
// CHECK: %[[CV:.*]] = memref.collapse_shape %[[C]]
// CHECK: vector.load %[[CV]]
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: memref.copy
// CHECK: linalg.generic
// CHECK: linalg.index
#mk2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @kept_epilogues(%a: memref<6x5xf32>, %b: memref<5x20xf32>, %out: memref<6x20xf32>, %keep: memref<6x20xf32>) {
  %c = memref.alloc() : memref<6x20xf32>
  linalg.matmul ins(%a, %b : memref<6x5xf32>, memref<5x20xf32>) outs(%c : memref<6x20xf32>)
  linalg.generic {indexing_maps = [#mk2, #mk2], iterator_types = ["parallel", "parallel"]} ins(%c : memref<6x20xf32>) outs(%out : memref<6x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %keep : memref<6x20xf32> to memref<6x20xf32>
  linalg.matmul ins(%a, %b : memref<6x5xf32>, memref<5x20xf32>) outs(%out : memref<6x20xf32>)
  linalg.generic {indexing_maps = [#mk2], iterator_types = ["parallel", "parallel"]} outs(%out : memref<6x20xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    %s = arith.addf %o, %g : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The layout transpose after tq.conv2d (NHWC read as NCHW) with its bias
// and ReLU: per image, blocks of 8 channels x 8 pixels, 8 row loads
// transposed by 3 rounds of 8 shuffles, the body on each channel's
// pixels. 20 channels: two whole blocks and a tail of 4 (masked loads,
// 4 stores); 15 pixels: one whole block and a tail of 7 (masked stores).
// CHECK-LABEL: func.func @nhwc_to_nchw
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[N:.*]] = %c0 to %c2
// CHECK: scf.for %[[C0:.*]] = %c0 to %c16 step %c8
// CHECK: scf.for %[[P:.*]] = %c0 to %c8 step %c8
// CHECK-COUNT-8: vector.load %{{.*}}[%[[N]], %{{.*}}, %[[C0]]] : memref<2x15x20xf32>, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK: memref.load %{{.*}}[%[[C0]]] : memref<20xf32>
// CHECK: arith.addf %{{.*}} : vector<8xf32>
// CHECK: arith.maximumf %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}[%[[N]], %[[C0]], %[[P]]] : memref<2x20x15xf32>, vector<8xf32>
// CHECK: vector.maskedstore
// CHECK: vector.maskedload
// PAR-LABEL: func.func @nhwc_to_nchw
// PAR: scf.parallel (%{{.*}}) = (%c0) to (%c2)
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @nhwc_to_nchw(%x: memref<2x3x5x20xf32>, %b: memref<20xf32>, %y: memref<2x20x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#nhwc, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : memref<2x3x5x20xf32>, memref<20xf32>) outs(%y : memref<2x20x3x5xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same with a residual add fused after the bias: the NHWC input is the
// generic's last, the NCHW residual its first (read 8 pixels at a time).
// CHECK-LABEL: func.func @nhwc_to_nchw_residual
// CHECK-NOT: linalg.generic
// CHECK: %[[RES:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<2x20x3x5xf32> into memref<2x20x15xf32>
// CHECK-COUNT-8: vector.load %{{.*}} : memref<2x15x20xf32>, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK: vector.load %[[RES]]
// CHECK: arith.addf %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}} : memref<2x20x15xf32>, vector<8xf32>
#nhwc_r = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#chan_r = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4_r = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @nhwc_to_nchw_residual(%r: memref<2x20x3x5xf32>, %b: memref<20xf32>, %x: memref<2x3x5x20xf32>, %y: memref<2x20x3x5xf32>) {
  linalg.generic {indexing_maps = [#id4_r, #chan_r, #nhwc_r, #id4_r], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %b, %x : memref<2x20x3x5xf32>, memref<20xf32>, memref<2x3x5x20xf32>) outs(%y : memref<2x20x3x5xf32>) {
  ^bb0(%res: f32, %bias: f32, %in: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %t = arith.addf %res, %s : f32
    linalg.yield %t : f32
  }
  return
}

// In place: the residual is also the target (bufferization reuses it), read
// element for element, each vector loaded just before it is stored.
// CHECK-LABEL: func.func @nhwc_to_nchw_in_place
// CHECK-NOT: linalg.generic
// CHECK: %[[RES:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<2x20x3x5xf32> into memref<2x20x15xf32>
// CHECK: %[[DST:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<2x20x3x5xf32> into memref<2x20x15xf32>
// CHECK: vector.load %[[RES]][%[[N:.*]], %[[C:.*]], %[[P:.*]]]
// CHECK: vector.store %{{.*}}, %[[DST]][%[[N]], %[[C]], %[[P]]]
func.func @nhwc_to_nchw_in_place(%r: memref<2x20x3x5xf32>, %b: memref<20xf32>, %x: memref<2x3x5x20xf32>) {
  linalg.generic {indexing_maps = [#id4_r, #chan_r, #nhwc_r, #id4_r], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %b, %x : memref<2x20x3x5xf32>, memref<20xf32>, memref<2x3x5x20xf32>) outs(%r : memref<2x20x3x5xf32>) {
  ^bb0(%res: f32, %bias: f32, %in: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %t = arith.addf %res, %s : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A max pooling right after a convolution: each image's output goes to a
// buffer of one image, pooled (vectors of 8 pooled outputs, the row of 3
// masked) before the next image; the whole output is never allocated.
// CHECK-LABEL: func.func @conv_then_pool
// CHECK-NOT: memref<2x4x6x6xf32>
// CHECK: %[[ONE:.*]] = memref.alloc() : memref<1x4x6x6xf32>
// CHECK: scf.for %[[N:.*]] = %c0 to %c2
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<4x36xf32{{.*}}>, vector<8xf32>
// CHECK: memref.subview %{{.*}}[%[[N]], 0, 0, 0] [1, 4, 3, 3]
// CHECK: vector.maskedload %[[ONE]]
// CHECK: vector.maskedstore
// CHECK: memref.dealloc %[[ONE]]
// CHECK-NOT: linalg.
func.func @conv_then_pool(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %k: memref<2x2xf32>, %p: memref<2x4x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %y = memref.alloc() : memref<2x4x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<2x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x6x6xf32>)
  linalg.fill ins(%ninf : f32) outs(%p : memref<2x4x3x3xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%y, %k : memref<2x4x6x6xf32>, memref<2x2xf32>) outs(%p : memref<2x4x3x3xf32>)
  memref.dealloc %y : memref<2x4x6x6xf32>
  return
}

// -----

// A single-channel NHWC convolution (tq-cpu-channels-last's form of a first
// layer), its bias and ReLU, then a max pooling: each image's pixels in
// blocks (of 4 on AVX2 and generic: 8 accumulators of 16 registers; of 8
// on AVX-512, one vector each), per tap one broadcast input per pixel
// times the filter vectors (12 filters: a whole vector and a masked one),
// stored through the epilogue into a scratch buffer that is pooled at
// once; the whole output is never written. The 2x2 windows of stride 2 do not overlap down the
// rows: the scratch holds one window's 2 rows (output rows 2·pw + i, the
// input read from there, stored at scratch row i), pooled into one output
// row (4 per image).
// CHECK-LABEL: func.func @conv_nhwc_pool
// CHECK-NOT: memref<2x8x8x12xf32>
// CHECK: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x8x12xf32>
// CHECK: scf.for %[[PW:.*]] = %c0 to %c4 step %c1
// CHECK: %[[P0:.*]] = arith.muli %[[PW]], %c2
// CHECK: scf.for %[[I:.*]] = %c0 to %c2 step %c1
// CHECK: %[[P:.*]] = arith.addi %[[P0]], %[[I]]
// CHECK: scf.for %[[Q:.*]] = %c0 to %c8 step %c4
// CHECK: vector.load %{{.*}}[%c0, %c0, %c0, %c0] : memref<3x3x1x12xf32>, vector<8xf32>
// CHECK: vector.maskedload %{{.*}}[%c0, %c0, %c0, %c8], {{.*}} : memref<3x3x1x12xf32>
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[P]], %[[Q]], %c0] : memref<2x10x10x1xf32>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: math.fma
// CHECK-NEXT: math.fma
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}}, %[[S]][%c0, %[[I]], %[[Q]], %c0]
// CHECK: vector.maskedstore %[[S]][%c0, %[[I]], %[[Q]], %c8]
// CHECK: memref.subview %{{.*}}[0, %[[PW]], 0, 0] [1, 1, 4, 12]
// CHECK: vector.load %[[S]]
// CHECK: arith.maximumf
// CHECK: vector.store %{{.*}} : memref<1x1x4x12xf32, strided
// CHECK: memref.dealloc %[[S]]
// CHECK-NOT: linalg.
// AVX512-LABEL: func.func @conv_nhwc_pool
// AVX512: scf.for %{{.*}} = %c0 to %c8 step %c8
// AVX512: vector.maskedload %{{.*}}[%c0, %c0, %c0, %c0], {{.*}} : memref<3x3x1x12xf32>, vector<16xi1>, vector<16xf32>
// GENERIC-LABEL: func.func @conv_nhwc_pool
// GENERIC: scf.for %{{.*}} = %c0 to %c8 step %c4
// GENERIC-NOT: math.fma
// GENERIC: arith.mulf {{.*}} : vector<8xf32>
// PAR-LABEL: func.func @conv_nhwc_pool
// PAR: scf.parallel
func.func @conv_nhwc_pool(%x: memref<2x10x10x1xf32>, %w: memref<3x3x1x12xf32>, %b: memref<12xf32>, %out: memref<2x4x4x12xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %y = memref.alloc() : memref<2x8x8x12xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x12xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<2x10x10x1xf32>, memref<3x3x1x12xf32>) outs(%y : memref<2x8x8x12xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, p, q, f) -> (n, p, q, f)>, affine_map<(n, p, q, f) -> (f)>, affine_map<(n, p, q, f) -> (n, p, q, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %b : memref<2x8x8x12xf32>, memref<12xf32>) outs(%y : memref<2x8x8x12xf32>) {
    ^bb0(%v: f32, %bb: f32, %o: f32):
      %s = arith.addf %v, %bb : f32
      %m = arith.maximumf %s, %zero : f32
      linalg.yield %m : f32
  }
  %k = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%ninf : f32) outs(%out : memref<2x4x4x12xf32>)
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%y, %k : memref<2x8x8x12xf32>, memref<2x2xf32>) outs(%out : memref<2x4x4x12xf32>)
  memref.dealloc %y : memref<2x8x8x12xf32>
  return
}

// -----

// Without a pooling after it, from the output's values: (image, row) pairs
// (shared among the threads), blocks of 8 pixels then the tail of 3 (Q = 11).
// CHECK-LABEL: func.func @conv_nhwc_rows
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c8
// CHECK: vector.load %{{.*}} : memref<1x11x11x8xf32>, vector<8xf32>
// CHECK: math.fma
// CHECK: vector.store %{{.*}} : memref<1x11x11x8xf32>, vector<8xf32>
// CHECK-COUNT-3: vector.load %{{.*}} : memref<1x11x11x8xf32>, vector<8xf32>
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// PAR-LABEL: func.func @conv_nhwc_rows
// PAR: scf.parallel
func.func @conv_nhwc_rows(%x: memref<1x23x23x3xf32>, %w: memref<3x3x3x8xf32>, %y: memref<1x11x11x8xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x23x23x3xf32>, memref<3x3x3x8xf32>) outs(%y : memref<1x11x11x8xf32>)
  return
}

// -----

// A padded input (a bufferized tensor.pad): each image is padded into a
// scratch buffer (its border rows and columns the pad value, its rows
// copied as vectors of W·C values), which the convolution reads; the padded
// tensor is never made.
// CHECK-LABEL: func.func @conv_nhwc_padded
// CHECK-NOT: memref<2x8x8x1xf32>
// CHECK: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x8x1xf32>
// CHECK: memref.collapse_shape %[[S]] {{\[\[}}0, 1], [2, 3]] : memref<1x8x8x1xf32> into memref<8x8xf32>
// CHECK: vector.maskedload %{{.*}} : memref<6x6xf32, strided<[6, 1], offset: ?>>
// CHECK: memref.load %[[S]]
// CHECK: math.fma
// CHECK: memref.dealloc %[[S]]
// CHECK-NOT: linalg.
func.func @conv_nhwc_padded(%src: memref<2x6x6x1xf32>, %w: memref<3x3x1x8xf32>, %y: memref<2x6x6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloc() : memref<2x8x8x1xf32>
  linalg.map outs(%pad : memref<2x8x8x1xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %in = memref.subview %pad[0, 1, 1, 0] [2, 6, 6, 1] [1, 1, 1, 1] : memref<2x8x8x1xf32> to memref<2x6x6x1xf32, strided<[64, 8, 1, 1], offset: 9>>
  memref.copy %src, %in : memref<2x6x6x1xf32> to memref<2x6x6x1xf32, strided<[64, 8, 1, 1], offset: 9>>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x6x6x8xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x8x8x1xf32>, memref<3x3x1x8xf32>) outs(%y : memref<2x6x6x8xf32>)
  memref.dealloc %pad : memref<2x8x8x1xf32>
  return
}
