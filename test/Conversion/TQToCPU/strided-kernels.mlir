// RUN: tq-opt %s -tq-cpu-float-kernels=target=avx2 -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-cpu-float-kernels="target=avx512 threads=2" -split-input-file | FileCheck %s --check-prefix=PAR

// The elementwise generics with several outputs or strided operands
// (StridedKernels.cpp): rows of vectors, a pair of taps one element apart
// loaded and stored as one run of 2L elements, a lone tap as the even lanes
// of such a load, any other stride a gather. What is left alone, and why,
// is at the end.

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// A max-pool gradient's routing on 2 taps of each window (rows of 8 pooled
// values): one load of 16 values of x per row, split into even and odd
// lanes; the two results interleaved into two stores of dX.
// CHECK-LABEL: func.func @route_pair
// CHECK-DAG:     %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [752], strides: [1]
// CHECK-DAG:     %[[DX:.*]] = memref.reinterpret_cast %arg3 to offset: [0], sizes: [752], strides: [1]
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:               %[[LO:.*]] = vector.load %[[X]][%{{.*}}] : memref<752xf32>, vector<8xf32>
// CHECK:               %[[HI:.*]] = vector.load %[[X]][%{{.*}}] : memref<752xf32>, vector<8xf32>
// CHECK:               %[[EVEN:.*]] = vector.shuffle %[[LO]], %[[HI]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK:               %[[ODD:.*]] = vector.shuffle %[[LO]], %[[HI]] [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK:               arith.cmpf oeq, %[[EVEN]]
// CHECK:               %[[R0:.*]] = arith.select
// CHECK:               arith.cmpf oeq, %[[ODD]]
// CHECK:               %[[R1:.*]] = arith.select
// CHECK:               %[[A:.*]] = vector.shuffle %[[R0]], %[[R1]] [0, 8, 1, 9, 2, 10, 3, 11]
// CHECK:               vector.store %[[A]], %[[DX]]
// CHECK:               %[[B:.*]] = vector.shuffle %[[R0]], %[[R1]] [4, 12, 5, 13, 6, 14, 7, 15]
// CHECK:               vector.store %[[B]], %[[DX]]
// CHECK-NOT:     linalg.generic
// On avx512 the rows of 8 go two to a vector of 16: each x row's 16 values
// in one load, the even lanes of two rows in one shuffle; p and dy's two
// rows are one load; each dX row is stored whole, interleaved from its half
// of the two results.
// PAR-LABEL: func.func @route_pair
// PAR:         scf.parallel ({{.*}}) = ({{.*}}) to (%c2, %c3, %c2)
// PAR:           %[[A:.*]] = vector.load {{.*}} : memref<752xf32>, vector<16xf32>
// PAR:           %[[B:.*]] = vector.load {{.*}} : memref<752xf32>, vector<16xf32>
// PAR:           vector.shuffle %[[A]], %[[B]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>
// PAR:           vector.shuffle %[[A]], %[[B]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>
// PAR:           vector.load {{.*}} : memref<192xf32>, vector<16xf32>
// PAR:           vector.load {{.*}} : memref<192xf32>, vector<16xf32>
// PAR:           %[[R0:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23]
// PAR:           vector.store %[[R0]]
// PAR:           %[[R1:.*]] = vector.shuffle %{{.*}}, %{{.*}} [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31]
// PAR:           vector.store %[[R1]]
// PAR-NOT:       scf.if
func.func @route_pair(%x: memref<2x3x8x16xf32>, %p: memref<2x3x4x8xf32>, %dy: memref<2x3x4x8xf32>, %dx: memref<2x3x8x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %true = arith.constant true
  %x0 = memref.subview %x[0, 0, 0, 0] [2, 3, 4, 8] [1, 1, 2, 2] : memref<2x3x8x16xf32> to memref<2x3x4x8xf32, strided<[384, 128, 32, 2]>>
  %x1 = memref.subview %x[0, 0, 0, 1] [2, 3, 4, 8] [1, 1, 2, 2] : memref<2x3x8x16xf32> to memref<2x3x4x8xf32, strided<[384, 128, 32, 2], offset: 1>>
  %d0 = memref.subview %dx[0, 0, 0, 0] [2, 3, 4, 8] [1, 1, 2, 2] : memref<2x3x8x16xf32> to memref<2x3x4x8xf32, strided<[384, 128, 32, 2]>>
  %d1 = memref.subview %dx[0, 0, 0, 1] [2, 3, 4, 8] [1, 1, 2, 2] : memref<2x3x8x16xf32> to memref<2x3x4x8xf32, strided<[384, 128, 32, 2], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%x0, %x1, %p, %dy : memref<2x3x4x8xf32, strided<[384, 128, 32, 2]>>, memref<2x3x4x8xf32, strided<[384, 128, 32, 2], offset: 1>>, memref<2x3x4x8xf32>, memref<2x3x4x8xf32>)
    outs(%d0, %d1 : memref<2x3x4x8xf32, strided<[384, 128, 32, 2]>>, memref<2x3x4x8xf32, strided<[384, 128, 32, 2], offset: 1>>) {
  ^bb0(%a: f32, %b: f32, %m: f32, %g: f32, %o0: f32, %o1: f32):
    %e0 = arith.cmpf oeq, %a, %m : f32
    %r0 = arith.select %e0, %g, %cst : f32
    %e1 = arith.cmpf oeq, %b, %m : f32
    %n0 = arith.xori %e0, %true : i1
    %c1 = arith.andi %e1, %n0 : i1
    %r1 = arith.select %c1, %g, %cst : f32
    linalg.yield %r0, %r1 : f32, f32
  }
  return
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// In place, as a training step has it: the taps are read from the buffer
// that the gradient is written into, each where it is written.
// CHECK-LABEL: func.func @route_in_place
// CHECK:         %[[BUF:.*]] = memref.reinterpret_cast %arg0
// CHECK:         vector.load %[[BUF]]
// CHECK:         vector.load %[[BUF]]
// CHECK:         vector.store {{.*}}, %[[BUF]]
// CHECK:         vector.store {{.*}}, %[[BUF]]
// CHECK-NOT:     linalg.generic
func.func @route_in_place(%x: memref<2x3x8x16xf32>, %p: memref<2x3x4x8xf32>, %dy: memref<2x3x4x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %true = arith.constant true
  %x0 = memref.subview %x[0, 0, 0, 0] [2, 3, 4, 8] [1, 1, 2, 2] : memref<2x3x8x16xf32> to memref<2x3x4x8xf32, strided<[384, 128, 32, 2]>>
  %x1 = memref.subview %x[0, 0, 0, 1] [2, 3, 4, 8] [1, 1, 2, 2] : memref<2x3x8x16xf32> to memref<2x3x4x8xf32, strided<[384, 128, 32, 2], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%x0, %x1, %p, %dy : memref<2x3x4x8xf32, strided<[384, 128, 32, 2]>>, memref<2x3x4x8xf32, strided<[384, 128, 32, 2], offset: 1>>, memref<2x3x4x8xf32>, memref<2x3x4x8xf32>)
    outs(%x0, %x1 : memref<2x3x4x8xf32, strided<[384, 128, 32, 2]>>, memref<2x3x4x8xf32, strided<[384, 128, 32, 2], offset: 1>>) {
  ^bb0(%a: f32, %b: f32, %m: f32, %g: f32, %o0: f32, %o1: f32):
    %e0 = arith.cmpf oeq, %a, %m : f32
    %r0 = arith.select %e0, %g, %cst : f32
    %e1 = arith.cmpf oeq, %b, %m : f32
    %r1 = arith.select %e1, %g, %cst : f32
    linalg.yield %r0, %r1 : f32, f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// Rows of 12 pairs (avx2: a whole vector of 8, then 4): the last vector
// loads 2·4 = 8 values, the first half only, and stores the 8 interleaved
// values at once, the second store dropped.
// CHECK-LABEL: func.func @pair_tail
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             vector.load
// CHECK:             vector.load
// CHECK:             vector.store
// CHECK:             vector.store
// CHECK:           %[[T:.*]] = vector.load %{{.*}} : memref<96xf32>, vector<8xf32>
// CHECK-NOT:       vector.maskedload
// CHECK:           %[[E:.*]] = vector.shuffle %[[T]], %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK:           %[[O:.*]] = vector.shuffle %[[T]], %{{.*}} [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK:           %[[LO:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 8, 1, 9, 2, 10, 3, 11]
// CHECK:           vector.store %[[LO]]
// CHECK-NOT:       vector.store
// CHECK:         return
func.func @pair_tail(%x: memref<4x24xf32>, %d: memref<4x24xf32>) {
  %x0 = memref.subview %x[0, 0] [4, 12] [1, 2] : memref<4x24xf32> to memref<4x12xf32, strided<[24, 2]>>
  %x1 = memref.subview %x[0, 1] [4, 12] [1, 2] : memref<4x24xf32> to memref<4x12xf32, strided<[24, 2], offset: 1>>
  %d0 = memref.subview %d[0, 0] [4, 12] [1, 2] : memref<4x24xf32> to memref<4x12xf32, strided<[24, 2]>>
  %d1 = memref.subview %d[0, 1] [4, 12] [1, 2] : memref<4x24xf32> to memref<4x12xf32, strided<[24, 2], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%x0, %x1 : memref<4x12xf32, strided<[24, 2]>>, memref<4x12xf32, strided<[24, 2], offset: 1>>)
    outs(%d0, %d1 : memref<4x12xf32, strided<[24, 2]>>, memref<4x12xf32, strided<[24, 2], offset: 1>>) {
  ^bb0(%a: f32, %b: f32, %o0: f32, %o1: f32):
    linalg.yield %b, %a : f32, f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// A view at a stride of 2 without its partner: the even lanes of a load of
// 2L - 1 values (the second half masked to 7 lanes), rows of 12: one whole
// vector and a tail of 4 (2·4 - 1 = 7 values).
// CHECK-LABEL: func.func @lone_tap
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             vector.load
// CHECK:             %[[M7:.*]] = vector.create_mask %c7 : vector<8xi1>
// CHECK:             vector.maskedload {{.*}}, %[[M7]]
// CHECK:             vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK:             vector.store
// CHECK:           %[[T7:.*]] = vector.create_mask %c7 : vector<8xi1>
// CHECK:           %[[T:.*]] = vector.maskedload {{.*}}, %[[T7]]
// CHECK:           vector.shuffle %[[T]], %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK:           vector.maskedstore
func.func @lone_tap(%x: memref<3x24xf32>, %y: memref<3x12xf32>, %z: memref<3x12xf32>) {
  %two = arith.constant 2.0 : f32
  %s = memref.subview %x[0, 0] [3, 12] [1, 2] : memref<3x24xf32> to memref<3x12xf32, strided<[24, 2]>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%s, %y : memref<3x12xf32, strided<[24, 2]>>, memref<3x12xf32>) outs(%z : memref<3x12xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.mulf %a, %two : f32
    %r = arith.addf %d, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#sc = affine_map<(d0, d1) -> ()>
// Two outputs of an update reading a transposed gradient (a gather of
// stride 4) and a 0-d learning rate (one scalar load per row).
// CHECK-LABEL: func.func @update
// CHECK-DAG:     %[[STRIDE:.*]] = arith.constant dense<[0, 4, 8, 12, 16, 20, 24, 28]> : vector<8xi32>
// CHECK-DAG:     %[[G:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [64], strides: [1]
// CHECK-DAG:     %[[LR:.*]] = memref.reinterpret_cast %arg2 to offset: [0], sizes: [1], strides: [1]
// CHECK:         scf.for
// CHECK:           vector.load
// CHECK:           vector.gather %[[G]][%{{.*}}] [%[[STRIDE]]]
// CHECK:           memref.load %[[LR]]
// CHECK:           arith.mulf
// CHECK:           vector.store
// CHECK:           vector.store
// CHECK-NOT:     linalg.generic
func.func @update(%w: memref<4x16xf32>, %g: memref<16x4xf32>, %lr: memref<f32>, %w2: memref<4x16xf32>, %v2: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#id, #tr, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%w, %g, %lr : memref<4x16xf32>, memref<16x4xf32>, memref<f32>) outs(%w2, %v2 : memref<4x16xf32>, memref<4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %l: f32, %o: f32, %p: f32):
    %s = arith.mulf %c, %l : f32
    %x = arith.subf %a, %s : f32
    linalg.yield %x, %c : f32, f32
  }
  return
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
// Rows of 7 (the Fashion CNN's second max-pool gradient) on avx512: two to
// a vector of 16, pairs of the 7 rows, and the last row alone under an
// scf.if. x is a view of rows of 9 (two masked loads merged), s one value
// per row (two broadcasts merged), y contiguous (one load of both rows),
// the output a view of rows of 9 (the second row's lanes moved down).
// PAR-LABEL: func.func @rows_of_seven
// PAR:         scf.parallel ({{.*}}) = ({{.*}}) to (%c2, %c4)
// PAR:           scf.if
// PAR:             %[[X0:.*]] = vector.maskedload {{.*}} : memref<124xf32>, vector<16xi1>, vector<16xf32>
// PAR:             %[[X1:.*]] = vector.maskedload {{.*}} : memref<124xf32>, vector<16xi1>, vector<16xf32>
// PAR:             vector.shuffle %[[X0]], %[[X1]] [0, 1, 2, 3, 4, 5, 6, 16, 17, 18, 19, 20, 21, 22, 0, 0]
// PAR:             memref.load
// PAR:             memref.load
// PAR:             vector.shuffle {{.*}} [0, 1, 2, 3, 4, 5, 6, 16, 17, 18, 19, 20, 21, 22, 0, 0]
// PAR:             vector.maskedload {{.*}} : memref<98xf32>, vector<16xi1>, vector<16xf32>
// PAR:             vector.maskedstore {{.*}} : memref<98xf32>, vector<16xi1>, vector<16xf32>
// PAR:             vector.maskedstore %[[O:reinterpret_cast_[0-9]+]][%{{[0-9]+}}], %{{[0-9]+}}, %[[R:[0-9]+]] : memref<124xf32>
// PAR:             %[[HI:.*]] = vector.shuffle %[[R]], %[[R]] [7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6]
// PAR:             vector.maskedstore %[[O]][%{{[0-9]+}}], %{{[0-9]+}}, %[[HI]]
// PAR:           } else {
// PAR:             vector.maskedload {{.*}} : memref<124xf32>, vector<16xi1>, vector<16xf32>
// PAR-NOT:         vector.shuffle
// PAR:           }
func.func @rows_of_seven(%xb: memref<2x7x9xf32>, %s: memref<2x7xf32>, %y: memref<2x7x7xf32>, %z: memref<2x7x7xf32>, %ob: memref<2x7x9xf32>) {
  %x = memref.subview %xb[0, 0, 0] [2, 7, 7] [1, 1, 1] : memref<2x7x9xf32> to memref<2x7x7xf32, strided<[63, 9, 1]>>
  %o = memref.subview %ob[0, 0, 0] [2, 7, 7] [1, 1, 1] : memref<2x7x9xf32> to memref<2x7x7xf32, strided<[63, 9, 1]>>
  linalg.generic {indexing_maps = [#id, #row, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
    ins(%x, %s, %y : memref<2x7x7xf32, strided<[63, 9, 1]>>, memref<2x7xf32>, memref<2x7x7xf32>)
    outs(%z, %o : memref<2x7x7xf32>, memref<2x7x7xf32, strided<[63, 9, 1]>>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %e: f32):
    %m = arith.mulf %a, %b : f32
    %n = arith.addf %m, %c : f32
    linalg.yield %m, %n : f32, f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#flip = affine_map<(d0, d1) -> (d0, -d1 + 7)>
#red = affine_map<(d0, d1) -> (d0)>
// Left alone, one reason each: an input on the outputs' buffer where other
// iterations write (shifted by one window), two outputs that overlap (the
// scalar loops write them in turn, element by element), a lone output at a
// stride of 2,
// a map that is not a projected permutation, a reduction, one output with
// a transposed input (a gather: for a layout kernel, not this one). One
// contiguous output is ElementwiseKernel's (a vector loop on a collapsed
// view).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT:     memref.reinterpret_cast
// CHECK:         memref.collapse_shape
// CHECK-NOT:     linalg.generic
func.func @left_alone(%x: memref<4x16xf32>, %y: memref<4x8xf32>, %z: memref<4x8xf32>, %z2: memref<4x8xf32>, %r: memref<4xf32>, %t: memref<8x4xf32>) {
  %x0 = memref.subview %x[0, 0] [4, 8] [1, 2] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 2]>>
  %x2 = memref.subview %x[0, 2] [4, 7] [1, 2] : memref<4x16xf32> to memref<4x7xf32, strided<[16, 2], offset: 2>>
  %x3 = memref.subview %x[0, 0] [4, 7] [1, 2] : memref<4x16xf32> to memref<4x7xf32, strided<[16, 2]>>
  %x4 = memref.subview %x[0, 1] [4, 7] [1, 2] : memref<4x16xf32> to memref<4x7xf32, strided<[16, 2], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%x2 : memref<4x7xf32, strided<[16, 2], offset: 2>>) outs(%x3, %x4 : memref<4x7xf32, strided<[16, 2]>>, memref<4x7xf32, strided<[16, 2], offset: 1>>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    linalg.yield %a, %a : f32, f32
  }
  %o0 = memref.subview %x[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  %o1 = memref.subview %x[0, 1] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 1>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%y : memref<4x8xf32>) outs(%o0, %o1 : memref<4x8xf32, strided<[16, 1]>>, memref<4x8xf32, strided<[16, 1], offset: 1>>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %a, %s : f32, f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%y : memref<4x8xf32>) outs(%x0 : memref<4x8xf32, strided<[16, 2]>>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#flip, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%y : memref<4x8xf32>) outs(%z, %z2 : memref<4x8xf32>, memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    linalg.yield %a, %a : f32, f32
  }
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
    ins(%x0 : memref<4x8xf32, strided<[16, 2]>>) outs(%r : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #id], iterator_types = ["parallel", "parallel"]}
    ins(%y : memref<4x8xf32>) outs(%t : memref<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%y : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}
