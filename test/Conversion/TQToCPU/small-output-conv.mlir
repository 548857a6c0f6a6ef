// RUN: tq-opt %s -tq-cpu-float-kernels=target=avx512 -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-cpu-float-kernels="target=avx512 threads=2" -split-input-file | FileCheck %s --check-prefix=PAR
// RUN: tq-opt %s -tq-cpu-float-kernels=target=avx2 -split-input-file | FileCheck %s --check-prefix=AVX2
// A convolution whose output image has fewer pixels than a vector has
// lanes (a weight gradient: 3 x 3 outputs, 16 filters) keeps one vector of
// filters per pixel across the reduction: each filter row read 16 values of
// s at a time and transposed in registers, a broadcast of the image per
// pixel and tap, and a scatter of each pixel's filters at the end. No
// im2col copy.

// CHECK-LABEL: func.func @weight_gradient
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK-NOT: memref.alloc() {{.*}} : memref<
// The reduction: channels, rows, then the one whole block of 16 of s, whose
// taps are read from the 16 filter rows and transposed.
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK: scf.for %{{.*}} = %c0 to %c28 step %c1 iter_args
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c16 iter_args
// CHECK-COUNT-16: vector.load %{{.*}} : memref<16x64x28x28xf32>, vector<16xf32>
// CHECK: vector.shuffle
// CHECK: memref.load %{{.*}} : memref<1x64x30x30xf32>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: math.fma
// The last 12 taps of each row: masked loads.
// CHECK: vector.create_mask %c12
// CHECK-COUNT-16: vector.maskedload
// The fill is the accumulators' start; nine pixels stored.
// CHECK-COUNT-9: vector.scatter
// CHECK-NOT: linalg.fill
// On 2 threads the pixels stay one group (a second group would read and
// transpose the whole filter again); the 16 filters are shared instead, in
// two groups of 8 on 8-lane vectors, each thread loading and transposing
// its own 8 filter rows. Each group's last lanes clamp to the last filter
// and its mask drops them.
// PAR-LABEL: func.func @weight_gradient
// PAR: scf.parallel (%[[N:.*]], %[[G:.*]], %[[P:.*]]) = (%c0, %c0, %c0) to (%c1, %c2, %c1)
// PAR: %[[F0:.*]] = arith.muli %[[G]], %c8
// PAR: %[[LEFT:.*]] = arith.subi %c16, %[[F0]]
// PAR: vector.create_mask %[[LEFT]] : vector<8xi1>
// PAR: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// PAR: arith.minui %[[F0]], %c15
// PAR-COUNT-8: vector.load %{{.*}} : memref<16x64x28x28xf32>, vector<8xf32>
// PAR-NOT: vector.load %{{.*}} : memref<16x64x28x28xf32>
// PAR: math.fma {{.*}} : vector<8xf32>
// PAR-COUNT-9: vector.scatter
// PAR-NOT: vector.scatter
// PAR: return
// On AVX2 the 16 filters are two vectors: the convolution kernel takes it.
// AVX2-LABEL: func.func @weight_gradient
// AVX2-NOT: vector.scatter
// AVX2: memref.alloc() : memref<50176x9xf32>
func.func @weight_gradient(%x: memref<1x64x30x30xf32>, %w: memref<16x64x28x28xf32>,
                           %y: memref<1x16x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x16x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x64x30x30xf32>, memref<16x64x28x28xf32>)
    outs(%y : memref<1x16x3x3xf32>)
  return
}

// -----

// The filter is dYᵀ, a transpose of dY that only the convolution reads (as
// tq-training-step emits it): the kernel reads dY where it is and the
// transpose is not made; dY's deallocation moves after the kernel, and
// the filter's buffer goes. The
// output is not filled: each pixel's accumulators start from a gather of it.

// CHECK-LABEL: func.func @transposed_filter
// CHECK-NOT: memref<10x8x6x6xf32>
// CHECK-NOT: linalg.transpose
// CHECK: vector.gather
// Rows of 6 taps: ten masked loads, filter f at dY[c, f, r, 0].
// CHECK: vector.create_mask %c6
// CHECK-NEXT: vector.maskedload %{{.*}}[%{{.*}}, %c0, %{{.*}}, %c0]{{.*}} : memref<8x10x6x6xf32>
// CHECK-COUNT-9: vector.maskedload %{{.*}} : memref<8x10x6x6xf32>
// CHECK-NOT: vector.maskedload %{{.*}} : memref<8x10x6x6xf32>
// CHECK: vector.scatter
// The filter's buffer is not allocated.
// CHECK: memref.dealloc %{{.*}} : memref<8x10x6x6xf32>
// CHECK-NEXT: return
func.func @transposed_filter(%x: memref<1x8x8x8xf32>, %y: memref<1x10x3x3xf32>) {
  %dy = memref.alloc() : memref<8x10x6x6xf32>
  %c1 = arith.constant 1.0 : f32
  linalg.fill ins(%c1 : f32) outs(%dy : memref<8x10x6x6xf32>)
  %w = memref.alloc() : memref<10x8x6x6xf32>
  linalg.transpose ins(%dy : memref<8x10x6x6xf32>) outs(%w : memref<10x8x6x6xf32>) permutation = [1, 0, 2, 3]
  memref.dealloc %dy : memref<8x10x6x6xf32>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x8x8xf32>, memref<10x8x6x6xf32>)
    outs(%y : memref<1x10x3x3xf32>)
  memref.dealloc %w : memref<10x8x6x6xf32>
  return
}

// -----

// The same through the generic a transpose generalizes to, with another
// permutation: w[f, c, r, s] = dy[r, f, c, s].

// CHECK-LABEL: func.func @generic_copy
// CHECK-NOT: linalg.generic
// CHECK: vector.create_mask %c6
// CHECK-NEXT: vector.maskedload %{{.*}}[%{{.*}}, %c0, %{{.*}}, %c0]{{.*}} : memref<6x10x8x6xf32>
// CHECK: vector.scatter
// CHECK-NOT: memref.alloc
#perm = affine_map<(f, c, r, s) -> (r, f, c, s)>
#id = affine_map<(f, c, r, s) -> (f, c, r, s)>
func.func @generic_copy(%x: memref<1x8x8x8xf32>, %dy: memref<6x10x8x6xf32>,
                        %y: memref<1x10x3x3xf32>) {
  %w = memref.alloc() : memref<10x8x6x6xf32>
  linalg.generic {indexing_maps = [#perm, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dy : memref<6x10x8x6xf32>) outs(%w : memref<10x8x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x8x8xf32>, memref<10x8x6x6xf32>)
    outs(%y : memref<1x10x3x3xf32>)
  memref.dealloc %w : memref<10x8x6x6xf32>
  return
}

// -----

// The copy is made when its source is freed in a nested region in between
// (the kernel cannot move that deallocation), or when the convolution's
// output is a view of the same buffer.

// CHECK-LABEL: func.func @freed_in_region
// CHECK: linalg.transpose
// CHECK: vector.scatter
func.func @freed_in_region(%x: memref<1x8x8x8xf32>, %y: memref<1x10x3x3xf32>, %c: i1) {
  %dy = memref.alloc() : memref<8x10x6x6xf32>
  %w = memref.alloc() : memref<10x8x6x6xf32>
  linalg.transpose ins(%dy : memref<8x10x6x6xf32>) outs(%w : memref<10x8x6x6xf32>) permutation = [1, 0, 2, 3]
  scf.if %c {
    memref.dealloc %dy : memref<8x10x6x6xf32>
  }
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x8x8xf32>, memref<10x8x6x6xf32>)
    outs(%y : memref<1x10x3x3xf32>)
  memref.dealloc %w : memref<10x8x6x6xf32>
  return
}

// CHECK-LABEL: func.func @output_aliases_source
// CHECK: linalg.transpose
// CHECK: vector.scatter
func.func @output_aliases_source(%x: memref<1x8x8x8xf32>, %buf: memref<2880xf32>) {
  %dy = memref.expand_shape %buf [[0, 1, 2, 3]] output_shape [8, 10, 6, 6] : memref<2880xf32> into memref<8x10x6x6xf32>
  %y = memref.reinterpret_cast %buf to offset: [0], sizes: [1, 10, 3, 3], strides: [90, 9, 3, 1] : memref<2880xf32> to memref<1x10x3x3xf32>
  %w = memref.alloc() : memref<10x8x6x6xf32>
  linalg.transpose ins(%dy : memref<8x10x6x6xf32>) outs(%w : memref<10x8x6x6xf32>) permutation = [1, 0, 2, 3]
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x8x8xf32>, memref<10x8x6x6xf32>)
    outs(%y : memref<1x10x3x3xf32>)
  memref.dealloc %w : memref<10x8x6x6xf32>
  return
}

// -----

// A transpose whose source is written between it and the convolution is
// made: the kernel reads the filter it wrote.

// CHECK-LABEL: func.func @source_written_after
// CHECK: linalg.transpose
// CHECK: vector.maskedload %{{.*}} : memref<10x8x6x6xf32>
// CHECK: vector.scatter
func.func @source_written_after(%x: memref<1x8x8x8xf32>, %dy: memref<8x10x6x6xf32>,
                                %y: memref<1x10x3x3xf32>) {
  %w = memref.alloc() : memref<10x8x6x6xf32>
  linalg.transpose ins(%dy : memref<8x10x6x6xf32>) outs(%w : memref<10x8x6x6xf32>) permutation = [1, 0, 2, 3]
  %c1 = arith.constant 1.0 : f32
  linalg.fill ins(%c1 : f32) outs(%dy : memref<8x10x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x8x8xf32>, memref<10x8x6x6xf32>)
    outs(%y : memref<1x10x3x3xf32>)
  memref.dealloc %w : memref<10x8x6x6xf32>
  return
}

// -----

// Output images of a vector or more stay with the convolution kernel.

// CHECK-LABEL: func.func @large_output
// CHECK-NOT: vector.scatter
// CHECK: math.fma
func.func @large_output(%x: memref<1x8x10x10xf32>, %w: memref<16x8x3x3xf32>,
                        %y: memref<1x16x8x8xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x8x10x10xf32>, memref<16x8x3x3xf32>)
    outs(%y : memref<1x16x8x8xf32>)
  return
}
