// RUN: tq-opt %s -tq-cpu-share-loops=threads=2 | FileCheck %s
// RUN: not tq-opt %s -tq-cpu-share-loops=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS
// The loops of a float op stay parallel over enough leading dims for the
// threads (here the first: 64 >= 4 x 2), the others become a sequential
// nest inside; small nests and nested ones become sequential, and a
// kernel's parallel loop with few iterations but much work is kept.

// THREADS: error: tq-cpu-share-loops: threads must be at least 1, got 0

// CHECK-LABEL: func.func @big
// CHECK: scf.parallel (%[[N:.*]]) = (%c0) to (%c64) step (%c1) {
// CHECK-NEXT: scf.for %[[C:.*]] = %c0 to %c16 step %c1 {
// CHECK-NEXT: scf.for %[[W:.*]] = %c0 to %c28 step %c1 {
// CHECK-NEXT: memref.load %{{.*}}[%[[N]], %[[C]], %[[W]]]
func.func @big(%x: memref<64x16x28xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c28 = arith.constant 28 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%n, %c, %w) = (%c0, %c0, %c0) to (%c64, %c16, %c28) step (%c1, %c1, %c1) {
    %v = memref.load %x[%n, %c, %w] : memref<64x16x28xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %x[%n, %c, %w] : memref<64x16x28xf32>
    scf.reduce
  }
  return
}

// Two leading dims when the first has too few iterations (3 x 16 >= 8).
// CHECK-LABEL: func.func @narrow
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c3, %c16) step (%c1, %c1) {
// CHECK-NEXT: scf.for
func.func @narrow(%x: memref<3x16x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%a, %b, %c) = (%c0, %c0, %c0) to (%c3, %c16, %c128) step (%c1, %c1, %c1) {
    %v = memref.load %x[%a, %b, %c] : memref<3x16x128xf32>
    memref.store %v, %x[%a, %b, %c] : memref<3x16x128xf32>
    scf.reduce
  }
  return
}

// Fewer than 16384 ops executed: sequential.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-NEXT: scf.for
func.func @small(%x: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    memref.store %v, %x[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @kernel
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c7, %c2)
func.func @kernel(%x: memref<7x2x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%b, %p) = (%c0, %c0) to (%c7, %c2) step (%c1, %c1) {
    scf.for %i = %c0 to %c4096 step %c1 {
      %v = memref.load %x[%b, %p, %i] : memref<7x2x4096xf32>
      memref.store %v, %x[%b, %p, %i] : memref<7x2x4096xf32>
    }
    scf.reduce
  }
  return
}

// Tiles of 32 x 32 (a quantization's loops): the inner loops run from a
// tile's start to min(start + 32, end), at most 32 iterations each, so
// the nest is big enough to share (2 x 4 tiles x 32 x 32 ops). Counted as
// one iteration each, it was not.
// CHECK-LABEL: func.func @tiles
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c2, %c4)
// An inner loop up to an argument has no known extent and counts once: the
// nest stays sequential.
// CHECK-LABEL: func.func @unknown_extent
// CHECK-NOT: scf.parallel
func.func @tiles(%x: memref<64x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    %r0 = arith.muli %i, %c32 : index
    %r1 = arith.addi %r0, %c32 : index
    %r2 = arith.minsi %r1, %c64 : index
    %k0 = arith.muli %j, %c32 : index
    %k1 = arith.addi %k0, %c32 : index
    %k2 = arith.minui %c100, %k1 : index
    scf.for %r = %r0 to %r2 step %c1 {
      scf.for %k = %k0 to %k2 step %c1 {
        %v = memref.load %x[%r, %k] : memref<64x100xf32>
        memref.store %v, %x[%r, %k] : memref<64x100xf32>
      }
    }
    scf.reduce
  }
  return
}
func.func @unknown_extent(%x: memref<64x100xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    %r0 = arith.muli %i, %c32 : index
    %k0 = arith.muli %j, %c32 : index
    %r2 = arith.minsi %n, %c32 : index
    scf.for %r = %r0 to %r2 step %c1 {
      scf.for %k = %k0 to %n step %c1 {
        %v = memref.load %x[%r, %k] : memref<64x100xf32>
        memref.store %v, %x[%r, %k] : memref<64x100xf32>
      }
    }
    scf.reduce
  }
  return
}

// The shares of a split batch (an scf.forall after bufferization) become
// one scf.parallel that stays parallel however little it holds; a kernel
// called only from inside it runs on the calling thread (its loop becomes
// sequential), one also called from outside keeps its parallel loop.
// CHECK-LABEL: func.func private @share_only
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-LABEL: func.func private @also_outside
// CHECK: scf.parallel
// CHECK-LABEL: func.func @shares
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c2{{.*}}) step (%c1{{.*}}) {
// CHECK: func.call @share_only
// CHECK: func.call @also_outside
func.func private @share_only(%x: memref<64x16x28xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c28 = arith.constant 28 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%n, %c, %w) = (%c0, %c0, %c0) to (%c64, %c16, %c28) step (%c1, %c1, %c1) {
    %v = memref.load %x[%n, %c, %w] : memref<64x16x28xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %x[%n, %c, %w] : memref<64x16x28xf32>
    scf.reduce
  }
  return
}
func.func private @also_outside(%x: memref<64x16x28xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c28 = arith.constant 28 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%n, %c, %w) = (%c0, %c0, %c0) to (%c64, %c16, %c28) step (%c1, %c1, %c1) {
    %v = memref.load %x[%n, %c, %w] : memref<64x16x28xf32>
    %d = arith.mulf %v, %v : f32
    memref.store %d, %x[%n, %c, %w] : memref<64x16x28xf32>
    scf.reduce
  }
  return
}
func.func @shares(%a: memref<64x16x28xf32>, %b: memref<64x16x28xf32>) {
  scf.forall (%t) in (2) {
    func.call @share_only(%a) : (memref<64x16x28xf32>) -> ()
    func.call @also_outside(%a) : (memref<64x16x28xf32>) -> ()
  }
  func.call @also_outside(%b) : (memref<64x16x28xf32>) -> ()
  return
}
