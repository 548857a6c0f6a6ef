// RUN: tq-opt %s -tq-cpu-float-kernels=target=avx512 -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-cpu-float-kernels="target=avx512 threads=2" -split-input-file | FileCheck %s --check-prefix=PAR

// A bias along rows of 32: loops over the two leading dims, two whole
// 16-lane vectors per row, the bias loaded as a vector.
// CHECK-LABEL: func.func @bias_rows
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:.*]] = %c0 to %c64
// CHECK: scf.for %[[J:.*]] = %c0 to %c8
// CHECK: scf.for %[[K:.*]] = %c0 to %c32 step %c16
// CHECK-DAG: %[[B:.*]] = vector.load %arg1[%[[K]]] : memref<32xf32>, vector<16xf32>
// CHECK-DAG: %[[X:.*]] = vector.load %arg0[%[[I]], %[[J]], %[[K]]] : memref<64x8x32xf32>, vector<16xf32>
// CHECK: %[[S:.*]] = arith.addf %[[B]], %[[X]] : vector<16xf32>
// CHECK: vector.store %[[S]], %arg2[%[[I]], %[[J]], %[[K]]]
// CHECK-NOT: vector.maskedstore
// With threads, the leading dims are one parallel loop.
// PAR-LABEL: func.func @bias_rows
// PAR: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c64, %c8)
// PAR: scf.for %{{.*}} = %c0 to %c32 step %c16
func.func @bias_rows(%x: memref<64x8x32xf32>, %b: memref<32xf32>, %y: memref<64x8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (k)>, affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b, %x : memref<32xf32>, memref<64x8x32xf32>) outs(%y : memref<64x8x32xf32>) {
  ^bb0(%in: f32, %v: f32, %o: f32):
    %s = arith.addf %in, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Same-shape operands: every dim merged into one loop of 3·5·7 = 105
// elements, 6 whole vectors and a masked one of 9 lanes; with threads, the
// leading dim stays a loop to share. A 0-d operand is loaded once, before
// the vectors, and broadcast.
// CHECK-LABEL: func.func @residual_flat
// CHECK-DAG: %[[XV:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : memref<3x5x7xf32> into memref<105xf32>
// CHECK-DAG: %[[YV:.*]] = memref.collapse_shape %arg3 {{\[\[}}0, 1, 2]] : memref<3x5x7xf32> into memref<105xf32>
// CHECK: %[[S:.*]] = memref.load %arg2[] : memref<f32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c96 step %c16
// CHECK: vector.load %[[XV]][%[[K]]]
// CHECK: vector.broadcast %[[S]]
// CHECK: vector.store %{{.*}}, %[[YV]][%[[K]]]
// CHECK: %[[M:.*]] = vector.create_mask %c9 : vector<16xi1>
// CHECK-NOT: memref.load
// CHECK: vector.broadcast %[[S]]
// CHECK: vector.maskedstore %[[YV]][%c96], %[[M]]
// PAR-LABEL: func.func @residual_flat
// PAR: memref.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : memref<3x5x7xf32> into memref<3x35xf32>
// PAR: scf.parallel (%{{.*}}) = (%c0) to (%c3)
// PAR: scf.for %{{.*}} = %c0 to %c32 step %c16
// PAR: vector.create_mask %c3 : vector<16xi1>
func.func @residual_flat(%x: memref<3x5x7xf32>, %r: memref<3x5x7xf32>, %s: memref<f32>, %y: memref<3x5x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> ()>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %r, %s : memref<3x5x7xf32>, memref<3x5x7xf32>, memref<f32>) outs(%y : memref<3x5x7xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    %u = arith.mulf %t, %c : f32
    linalg.yield %u : f32
  }
  return
}

// -----

// A row of 10 gets one 16-lane vector, masked; a per-row value (indexed by
// the leading dim only) is loaded as a scalar, at the row's start. The
// body reads the target's old value: it is loaded (masked) before the
// store.
// CHECK-LABEL: func.func @rows_of_ten
// CHECK: scf.for %[[I:.*]] = %c0 to %c3
// CHECK-NOT: scf.for
// CHECK: memref.load %arg1[%[[I]]] : memref<3xf32>
// CHECK: %[[M:.*]] = vector.create_mask %c10 : vector<16xi1>
// CHECK-DAG: vector.maskedload %arg2[%[[I]], %c0], %[[M]]
// CHECK-DAG: vector.maskedload %arg0[%[[I]], %c0], %[[M]]
// CHECK: vector.maskedstore %arg2[%[[I]], %c0], %[[M]]
func.func @rows_of_ten(%x: memref<3x10xf32>, %s: memref<3xf32>, %y: memref<3x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<3x10xf32>, memref<3xf32>) outs(%y : memref<3x10xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    %u = arith.addf %t, %o : f32
    linalg.yield %u : f32
  }
  return
}

// -----

// A layer norm's last step, a row of 32 (two 16-lane vectors) over the
// square root of its variance: the variance is loaded once per row, before
// both vectors, so that LLVM takes one square root per row (it cannot
// tell that the row's stores leave the variances alone).
// CHECK-LABEL: func.func @norm_rows
// CHECK: scf.for %[[I:.*]] = %c0 to %c4
// CHECK: %[[V:.*]] = memref.load %arg1[%[[I]]] : memref<4xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c32 step %c16
// CHECK-NOT: memref.load
// CHECK: %[[B:.*]] = vector.broadcast %[[V]] : f32 to vector<16xf32>
// CHECK: %[[E:.*]] = arith.addf %[[B]], %{{.*}} : vector<16xf32>
// CHECK: %[[R:.*]] = math.sqrt %[[E]] : vector<16xf32>
// CHECK: arith.divf %{{.*}}, %[[R]] : vector<16xf32>
func.func @norm_rows(%x: memref<4x32xf32>, %var: memref<4xf32>, %y: memref<4x32xf32>) {
  %eps = arith.constant 1.0e-05 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %var : memref<4x32xf32>, memref<4xf32>) outs(%y : memref<4x32xf32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %e = arith.addf %v, %eps : f32
    %r = math.sqrt %e : f32
    %d = arith.divf %a, %r : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// Left as they are: an input read transposed (not contiguous along the
// vector), an input that is the output read through another map (each
// row's first element, which the scalar loops rewrite before the rest of
// the row reads it), a body that reads its position, an integer result,
// an i1 operand (memrefs hold a byte per i1, a vector load would read
// packed bits), and an integer division (the masked lanes past the data
// would divide by zero and trap).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: vector.store
func.func @left_alone(%x: memref<8x8xf32>, %y: memref<8x8xf32>, %i: memref<8x8xi32>, %cond: memref<8x8xi1>, %n: memref<3x10xi32>, %q: memref<3x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%n : memref<3x10xi32>) outs(%q : memref<3x10xf32>) {
  ^bb0(%d: i32, %o: f32):
    %c7 = arith.constant 7 : i32
    %r = arith.divsi %c7, %d : i32
    %f = arith.sitofp %r : i32 to f32
    linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%cond, %x : memref<8x8xi1>, memref<8x8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%p: i1, %a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %s = arith.select %p, %a, %z : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<8x8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%y : memref<8x8xf32>) {
  ^bb0(%o: f32):
    %k = linalg.index 1 : index
    %f = arith.index_cast %k : index to i32
    %g = arith.sitofp %f : i32 to f32
    linalg.yield %g : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x8xf32>) outs(%i : memref<8x8xi32>) {
  ^bb0(%a: f32, %o: i32):
    %c = arith.fptosi %a : f32 to i32
    linalg.yield %c : i32
  }
  return
}

// -----

// A sum over rows of 32 into 10 row results: 16 rows per vector, one per
// lane; per 16 columns, 16 row loads transposed in registers (shuffles),
// then one add per column in order. The 10 rows are one block whose rows
// past the last repeat it: the loads of the results and their store are
// masked to 10 lanes.
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: linalg.generic
// CHECK: %[[M:.*]] = vector.create_mask %c10 : vector<16xi1>
// CHECK: %[[ACC:.*]] = vector.maskedload %arg1[%c0], %[[M]]
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %c0 to %c32 step %c16 iter_args(%[[A:.*]] = %[[ACC]])
// CHECK: vector.load %arg0[%c9, %[[K]]] : memref<10x32xf32>, vector<16xf32>
// CHECK: vector.shuffle
// CHECK-COUNT-16: arith.addf
// CHECK: scf.yield
// CHECK: vector.maskedstore %arg1[%c0], %[[M]], %[[R]]
func.func @row_sum(%x: memref<10x32xf32>, %y: memref<10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<10x32xf32>) outs(%y : memref<10xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sum over the first dim (a bias gradient over a batch of 8) into 4 × 37
// columns, flattened to 148: a block of 8 vectors held in registers while
// the 8 rows go by, then the last 20 columns as a block of 2 vectors, the
// second masked to 4 lanes. Each column is read once per row and the
// output once.
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : memref<8x4x37xf32> into memref<8x148xf32>
// CHECK-DAG: %[[Y:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1]] : memref<4x37xf32> into memref<148xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c1 step %c1
// CHECK-COUNT-8: vector.load %[[Y]]
// CHECK: scf.for %[[I:.*]] = %c0 to %c8 step %c1 iter_args(
// CHECK-COUNT-8: vector.load %[[X]][%[[I]], %{{.*}}] : memref<8x148xf32>, vector<16xf32>
// CHECK: scf.yield
// CHECK-COUNT-8: vector.store {{.*}}, %[[Y]]
// CHECK: %[[M:.*]] = vector.create_mask %c4 : vector<16xi1>
// CHECK: vector.load %[[Y]][%c128]
// CHECK: vector.maskedload %[[Y]][%c144], %[[M]]
// CHECK: scf.for %[[J:.*]] = %c0 to %c8 step %c1 iter_args(
// CHECK: vector.load %[[X]][%[[J]], %c128]
// CHECK: vector.maskedload %[[X]][%[[J]], %c144], %[[M]]
// CHECK: vector.store {{.*}}, %[[Y]][%c128]
// CHECK: vector.maskedstore %[[Y]][%c144], %[[M]]
// PAR-LABEL: func.func @column_sum
// PAR: scf.parallel
func.func @column_sum(%x: memref<8x4x37xf32>, %y: memref<4x37xf32>) {
  linalg.generic {indexing_maps = [affine_map<(k, i, j) -> (k, i, j)>, affine_map<(k, i, j) -> (i, j)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x : memref<8x4x37xf32>) outs(%y : memref<4x37xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sum over the middle dims (an NHWC global pooling of 2 images of 4 × 4
// pixels of 40 channels, a bias per channel before it): the pixels merged
// to 16 rows, then per image a block of 3 vectors of channels (the last
// masked to 8 lanes), each held in registers over the image's 16 pixels in
// order, the bias loaded once per image; the images shared among the
// threads.
// CHECK-LABEL: func.func @image_sums
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1, 2], [3]] : memref<2x4x4x40xf32> into memref<2x16x40xf32>
// CHECK: scf.for %[[N:.*]] = %c0 to %c2 step %c1 {
// CHECK: %[[M:.*]] = vector.create_mask %c8 : vector<16xi1>
// CHECK: vector.load %arg1[%c0] : memref<40xf32>, vector<16xf32>
// CHECK: vector.load %arg2[%[[N]], %c0] : memref<2x40xf32>, vector<16xf32>
// CHECK: vector.maskedload %arg2[%[[N]], %c32], %[[M]]
// CHECK: scf.for %[[P:.*]] = %c0 to %c16 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: vector.load %[[X]][%[[N]], %[[P]], %c0] : memref<2x16x40xf32>, vector<16xf32>
// CHECK: vector.maskedload %[[X]][%[[N]], %[[P]], %c32], %[[M]]
// CHECK: scf.yield
// CHECK: vector.store %{{.*}}, %arg2[%[[N]], %c0]
// CHECK: vector.maskedstore %arg2[%[[N]], %c32], %[[M]]
// PAR-LABEL: func.func @image_sums
// PAR: scf.parallel (%{{.*}}) = (%c0) to (%c2) step (%c1) {
func.func @image_sums(%x: memref<2x4x4x40xf32>, %b: memref<40xf32>, %y: memref<2x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, c)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%x, %b : memref<2x4x4x40xf32>, memref<40xf32>) outs(%y : memref<2x40xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %p = arith.addf %a, %bb : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left as they are: reductions whose result is read as an input too (over
// the last dim and over the first).
// CHECK-LABEL: func.func @reductions_left_alone
// CHECK-COUNT-2: linalg.generic
func.func @reductions_left_alone(%x: memref<8x32xf32>, %y: memref<32xf32>, %z: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(k, j) -> (k, j)>, affine_map<(k, j) -> (j)>, affine_map<(k, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x, %y : memref<8x32xf32>, memref<32xf32>) outs(%y : memref<32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    %t = arith.addf %s, %b : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x, %z : memref<8x32xf32>, memref<8xf32>) outs(%z : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    %t = arith.addf %s, %b : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A body that yields a value from above (a fill folded into a generic):
// the value broadcast and stored.
// CHECK-LABEL: func.func @yield_from_above
// CHECK: %[[V:.*]] = vector.broadcast %arg1 : f32 to vector<16xf32>
// CHECK: vector.store %[[V]], %{{.*}} : memref<64xf32>, vector<16xf32>
func.func @yield_from_above(%y: memref<4x16xf32>, %c: f32) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%y : memref<4x16xf32>) {
  ^bb0(%o: f32):
    linalg.yield %c : f32
  }
  return
}
