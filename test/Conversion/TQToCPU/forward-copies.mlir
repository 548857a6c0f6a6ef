// RUN: tq-opt %s -pass-pipeline="builtin.module(func.func(tq-cpu-forward-copies))" -split-input-file | FileCheck %s

#id = affine_map<(n, h, w) -> (n, h, w)>

// A max-pool gradient's shape: the generic reads two interleaved taps of
// %dx and writes each result into the same tap, in place. Both buffers
// and copies go; the subviews move before the generic. The copies come
// in the other order than the results, so the first result's copy is
// forwarded across the second's (into a slice that does not meet it).
// CHECK-LABEL: func.func @routing
// CHECK: %[[DX:.*]] = memref.alloc() : memref<2x6x6xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[X0:.*]] = memref.subview %[[DX]][0, 0, 0] [2, 3, 3] [1, 2, 2]
// CHECK: %[[X1:.*]] = memref.subview %[[DX]][0, 0, 1] [2, 3, 3] [1, 2, 2]
// CHECK: %[[T0:.*]] = memref.subview %[[DX]][0, 0, 0] [2, 3, 3] [1, 2, 2]
// CHECK: %[[T1:.*]] = memref.subview %[[DX]][0, 0, 1] [2, 3, 3] [1, 2, 2]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X0]], %[[X1]], %arg0 :
// CHECK-SAME: outs(%[[T0]], %[[T1]] :
// CHECK-NOT: memref.copy %{{.*}}, %{{.*}} : memref<2x3x3xf32> to
// CHECK: memref.copy %[[DX]], %arg1
func.func @routing(%y: memref<2x3x3xf32>, %out: memref<2x6x6xf32>) {
  %dx = memref.alloc() : memref<2x6x6xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x6x6xf32>)
  %x0 = memref.subview %dx[0, 0, 0] [2, 3, 3] [1, 2, 2] : memref<2x6x6xf32> to memref<2x3x3xf32, strided<[36, 12, 2]>>
  %x1 = memref.subview %dx[0, 0, 1] [2, 3, 3] [1, 2, 2] : memref<2x6x6xf32> to memref<2x3x3xf32, strided<[36, 12, 2], offset: 1>>
  %b0 = memref.alloc() : memref<2x3x3xf32>
  %b1 = memref.alloc() : memref<2x3x3xf32>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x0, %x1, %y : memref<2x3x3xf32, strided<[36, 12, 2]>>, memref<2x3x3xf32, strided<[36, 12, 2], offset: 1>>, memref<2x3x3xf32>)
      outs(%b0, %b1 : memref<2x3x3xf32>, memref<2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %g: f32, %o0: f32, %o1: f32):
    %s = arith.addf %a, %g : f32
    %t = arith.mulf %b, %g : f32
    linalg.yield %s, %t : f32, f32
  }
  %v1 = memref.subview %dx[0, 0, 1] [2, 3, 3] [1, 2, 2] : memref<2x6x6xf32> to memref<2x3x3xf32, strided<[36, 12, 2], offset: 1>>
  memref.copy %b1, %v1 : memref<2x3x3xf32> to memref<2x3x3xf32, strided<[36, 12, 2], offset: 1>>
  memref.dealloc %b1 : memref<2x3x3xf32>
  %v0 = memref.subview %dx[0, 0, 0] [2, 3, 3] [1, 2, 2] : memref<2x6x6xf32> to memref<2x3x3xf32, strided<[36, 12, 2]>>
  memref.copy %b0, %v0 : memref<2x3x3xf32> to memref<2x3x3xf32, strided<[36, 12, 2]>>
  memref.dealloc %b0 : memref<2x3x3xf32>
  memref.copy %dx, %out : memref<2x6x6xf32> to memref<2x6x6xf32>
  memref.dealloc %dx : memref<2x6x6xf32>
  return
}

// -----

#id = affine_map<(i) -> (i)>

// Left alone, one reason each (every %dx is a local buffer that only views,
// loads, copies and linalg ops use, as after bufferization):
// - @reads_init: the body reads its output (the buffer's contents matter);
// - @read_between: a load of the target between the generic and the copy;
// - @overlapping: the second slice meets the first (offsets 0 and 2 with
//   stride 2), so only the first copy goes;
// - @shifted_read: the generic reads a slice of %dx that meets the target
//   without being it;
// - @other_map: the generic reads the target itself, but reversed;
// - @body_load: the body loads from %dx itself (a gather);
// - @negative_stride: slices with stride -1 that meet;
// - @argument: the target's buffer is an argument, which may alias the
//   generic's input;
// - @late_buffer: the target's buffer is made after the generic;
// - @used_after: the buffer is read after the copy.
// CHECK-LABEL: func.func @reads_init
// CHECK: memref.copy %{{.*}} : memref<4xf32> to
func.func @reads_init(%x: memref<4xf32>, %out: memref<8xf32>) {
  %dx = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %v = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %b, %v : memref<4xf32> to memref<4xf32, strided<[2]>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// CHECK-LABEL: func.func @read_between
// CHECK: memref.load
// CHECK: memref.copy %{{.*}} : memref<4xf32> to
func.func @read_between(%x: memref<4xf32>, %out: memref<8xf32>) -> f32 {
  %c2 = arith.constant 2 : index
  %dx = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %r = memref.load %dx[%c2] : memref<8xf32>
  %v = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %b, %v : memref<4xf32> to memref<4xf32, strided<[2]>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return %r : f32
}

// CHECK-LABEL: func.func @overlapping
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}}, %[[B1:.*]] : memref<3xf32, strided<[2]>>, memref<3xf32>)
// CHECK: memref.copy %[[B1]]
func.func @overlapping(%x: memref<3xf32>, %out: memref<8xf32>) {
  %dx = memref.alloc() : memref<8xf32>
  %b0 = memref.alloc() : memref<3xf32>
  %b1 = memref.alloc() : memref<3xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<3xf32>) outs(%b0, %b1 : memref<3xf32>, memref<3xf32>) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    linalg.yield %a, %a : f32, f32
  }
  %v0 = memref.subview %dx[0] [3] [2] : memref<8xf32> to memref<3xf32, strided<[2]>>
  memref.copy %b0, %v0 : memref<3xf32> to memref<3xf32, strided<[2]>>
  %v1 = memref.subview %dx[2] [3] [2] : memref<8xf32> to memref<3xf32, strided<[2], offset: 2>>
  memref.copy %b1, %v1 : memref<3xf32> to memref<3xf32, strided<[2], offset: 2>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// CHECK-LABEL: func.func @shifted_read
// CHECK: memref.copy %{{.*}} : memref<3xf32> to
func.func @shifted_read(%out: memref<8xf32>) {
  %dx = memref.alloc() : memref<8xf32>
  %x = memref.subview %dx[2] [3] [2] : memref<8xf32> to memref<3xf32, strided<[2], offset: 2>>
  %b = memref.alloc() : memref<3xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<3xf32, strided<[2], offset: 2>>) outs(%b : memref<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %v = memref.subview %dx[0] [3] [2] : memref<8xf32> to memref<3xf32, strided<[2]>>
  memref.copy %b, %v : memref<3xf32> to memref<3xf32, strided<[2]>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// CHECK-LABEL: func.func @other_map
// CHECK: memref.copy %{{.*}} : memref<4xf32> to
func.func @other_map(%out: memref<8xf32>) {
  %dx = memref.alloc() : memref<8xf32>
  %x = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (3 - i)>, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32, strided<[2]>>) outs(%b : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %v = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %b, %v : memref<4xf32> to memref<4xf32, strided<[2]>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// CHECK-LABEL: func.func @body_load
// CHECK: memref.copy %{{.*}} : memref<4xf32> to
func.func @body_load(%out: memref<8xf32>) {
  %c3 = arith.constant 3 : index
  %dx = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%b : memref<4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = arith.subi %c3, %i : index
    %v = memref.load %dx[%j] : memref<8xf32>
    linalg.yield %v : f32
  }
  %t = memref.subview %dx[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %b, %t : memref<4xf32> to memref<4xf32, strided<[1]>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// CHECK-LABEL: func.func @negative_stride
// CHECK: memref.copy %{{.*}} : memref<3xf32> to
func.func @negative_stride(%out: memref<8xf32>) {
  %dx = memref.alloc() : memref<8xf32>
  %x = memref.subview %dx[4] [1] [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: 4>>
  %b = memref.alloc() : memref<3xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (0)>, #id], iterator_types = ["parallel"]}
      ins(%x : memref<1xf32, strided<[1], offset: 4>>) outs(%b : memref<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %t = memref.subview %dx[5] [3] [-1] : memref<8xf32> to memref<3xf32, strided<[-1], offset: 5>>
  memref.copy %b, %t : memref<3xf32> to memref<3xf32, strided<[-1], offset: 5>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// CHECK-LABEL: func.func @argument
// CHECK: memref.copy %{{.*}} : memref<4xf32> to
func.func @argument(%x: memref<4xf32>, %dx: memref<8xf32>) {
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (3 - i)>, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %v = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %b, %v : memref<4xf32> to memref<4xf32, strided<[2]>>
  return
}

// CHECK-LABEL: func.func @late_buffer
// CHECK: memref.copy %{{.*}} : memref<4xf32> to
func.func @late_buffer(%x: memref<4xf32>, %out: memref<8xf32>) {
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %dx = memref.alloc() : memref<8xf32>
  %v = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %b, %v : memref<4xf32> to memref<4xf32, strided<[2]>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// CHECK-LABEL: func.func @used_after
// CHECK: memref.copy %{{.*}} : memref<4xf32> to
func.func @used_after(%x: memref<4xf32>, %out: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %dx = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %v = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %b, %v : memref<4xf32> to memref<4xf32, strided<[2]>>
  %r = memref.load %b[%c0] : memref<4xf32>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return %r : f32
}

// -----

#id = affine_map<(i) -> (i)>

// The same generic, with the target's buffer made locally: forwarded
// (the counterpart of @argument and @read_between above).
// CHECK-LABEL: func.func @local
// CHECK-NOT: memref.copy %{{.*}} : memref<4xf32> to
// CHECK: return
func.func @local(%x: memref<4xf32>, %out: memref<8xf32>) {
  %dx = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (3 - i)>, #id], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %v = memref.subview %dx[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  memref.copy %b, %v : memref<4xf32> to memref<4xf32, strided<[2]>>
  memref.copy %dx, %out : memref<8xf32> to memref<8xf32>
  return
}

// -----

// A max pool's output copied into the interior of the buffer a bufferized
// tensor.pad made (the next convolution's input): the pool's fill and the
// pool write the interior directly; the padded buffer, its fill (the
// linalg.map of the pad value) and the view move to the top of the block,
// before the layer before the pool (whose kernel may pool in place), and
// the pool's buffer and the copy go.
// CHECK-LABEL: func.func @pool_into_pad
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[P:.*]] = memref.alloc() : memref<2x3x6x6xf32>
// CHECK-NEXT: linalg.map outs(%[[P]] : memref<2x3x6x6xf32>)
// CHECK: %[[V:.*]] = memref.subview %[[P]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
// CHECK-NEXT: %[[Y:.*]] = memref.alloc() : memref<2x3x8x8xf32>
// CHECK-NEXT: linalg.generic
// CHECK-NOT: memref.alloc() : memref<2x3x4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[V]] :
// CHECK-NEXT: linalg.pooling_nchw_max {{.*}} ins(%[[Y]], %{{.*}} : memref<2x3x8x8xf32>, memref<2x2xf32>) outs(%[[V]] :
// CHECK-NOT: memref.copy
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %arg1 :
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @pool_into_pad(%x: memref<2x3x8x8xf32>, %w: memref<5x3x3x3xf32>, %out: memref<2x5x4x4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x3x8x8xf32>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x3x8x8xf32>) outs(%y : memref<2x3x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %c0 : f32
    linalg.yield %r : f32
  }
  %ninf = arith.constant 0xFF800000 : f32
  %win = memref.alloc() : memref<2x2xf32>
  %pool = memref.alloc() : memref<2x3x4x4xf32>
  linalg.fill ins(%ninf : f32) outs(%pool : memref<2x3x4x4xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%y, %win : memref<2x3x8x8xf32>, memref<2x2xf32>) outs(%pool : memref<2x3x4x4xf32>)
  memref.dealloc %y : memref<2x3x8x8xf32>
  %padded = memref.alloc() : memref<2x3x6x6xf32>
  linalg.map outs(%padded : memref<2x3x6x6xf32>)
    (%init: f32) {
      linalg.yield %c0 : f32
    }
  %v = memref.subview %padded[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1] : memref<2x3x6x6xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  memref.copy %pool, %v : memref<2x3x4x4xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  memref.dealloc %pool : memref<2x3x4x4xf32>
  linalg.fill ins(%c0 : f32) outs(%out : memref<2x5x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : memref<2x3x6x6xf32>, memref<5x3x3x3xf32>) outs(%out : memref<2x5x4x4xf32>)
  memref.dealloc %padded : memref<2x3x6x6xf32>
  return
}

// -----

// Left as they are, the copy kept:
// - @not_filled: the source's first writer is not a fill (it could leave
//   elements the copy carries over);
// - @reads_padded: the pool reads the padded buffer;
// - @padded_read_between: the padded buffer is read between the pool and
//   the copy;
// - @padded_argument: the padded buffer is an argument, which may alias.
// CHECK-LABEL: func.func @not_filled
// CHECK: memref.copy
func.func @not_filled(%x: memref<4xf32>, %out: memref<6xf32>) {
  %c0 = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%p : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %padded = memref.alloc() : memref<6xf32>
  linalg.fill ins(%c0 : f32) outs(%padded : memref<6xf32>)
  %v = memref.subview %padded[1] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %p, %v : memref<4xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %padded, %out : memref<6xf32> to memref<6xf32>
  return
}

// CHECK-LABEL: func.func @reads_padded
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to
func.func @reads_padded(%out: memref<6xf32>) {
  %c0 = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<6xf32>
  linalg.fill ins(%c0 : f32) outs(%padded : memref<6xf32>)
  %p = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c0 : f32) outs(%p : memref<4xf32>)
  %in = memref.subview %padded[2] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1], offset: 2>>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : memref<4xf32, strided<[1], offset: 2>>) outs(%p : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %v = memref.subview %padded[1] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %p, %v : memref<4xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %padded, %out : memref<6xf32> to memref<6xf32>
  return
}

// CHECK-LABEL: func.func @padded_read_between
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to
func.func @padded_read_between(%x: memref<4xf32>, %out: memref<6xf32>) -> f32 {
  %c0 = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : index
  %p = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c0 : f32) outs(%p : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%p : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %padded = memref.alloc() : memref<6xf32>
  linalg.fill ins(%c0 : f32) outs(%padded : memref<6xf32>)
  %r = memref.load %padded[%i0] : memref<6xf32>
  %v = memref.subview %padded[1] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %p, %v : memref<4xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %padded, %out : memref<6xf32> to memref<6xf32>
  return %r : f32
}

// CHECK-LABEL: func.func @padded_argument
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to
func.func @padded_argument(%x: memref<4xf32>, %padded: memref<6xf32>) {
  %c0 = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c0 : f32) outs(%p : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%p : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %v = memref.subview %padded[1] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %p, %v : memref<4xf32> to memref<4xf32, strided<[1], offset: 1>>
  return
}

// -----

// A share of a split batch hands out its part of a value: bufferized, it
// computed the part in a fresh buffer and copied it into its slice of dim
// 0 of the whole. The whole becomes a view of bytes and the share's buffer
// a view of its part of them (at 2 · 64 · 4 bytes per image of the share,
// the same identity-layout type): the generic writes there, and the copy
// and the buffer go. The ops after the loop read the whole as before.

// CHECK-LABEL: func.func @share_in_place
// CHECK: %[[BYTES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4096xi8>
// CHECK: %[[WHOLE:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<4096xi8> to memref<8x2x64xf32>
// CHECK: scf.forall (%[[I:.*]]) in (2) {
// CHECK: %[[AT:.*]] = arith.muli %[[I]], %c4
// CHECK: %[[SHIFT:.*]] = arith.muli %[[AT]], %c512
// CHECK: %[[PART:.*]] = memref.view %[[BYTES]][%[[SHIFT]]][] : memref<4096xi8> to memref<4x2x64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[PART]] : memref<4x2x64xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%[[WHOLE]] : memref<8x2x64xf32>)
#id3 = affine_map<(n, c, w) -> (n, c, w)>
func.func @share_in_place(%x: memref<8x2x64xf32>, %out: memref<8x2x64xf32>) {
  %c4 = arith.constant 4 : index
  %whole = memref.alloc() {alignment = 64 : i64} : memref<8x2x64xf32>
  scf.forall (%i) in (2) {
    %at = arith.muli %i, %c4 : index
    %xs = memref.subview %x[%at, 0, 0] [4, 2, 64] [1, 1, 1] : memref<8x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    %part = memref.alloc() {alignment = 64 : i64} : memref<4x2x64xf32>
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%xs : memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>) outs(%part : memref<4x2x64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %d = arith.addf %a, %a : f32
      linalg.yield %d : f32
    }
    %slice = memref.subview %whole[%at, 0, 0] [4, 2, 64] [1, 1, 1] : memref<8x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    memref.copy %part, %slice : memref<4x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
  }
  linalg.copy ins(%whole : memref<8x2x64xf32>) outs(%out : memref<8x2x64xf32>)
  return
}

// -----

// Kept: a slice along dim 1 (not one run of the whole), a whole that is an
// argument (it could alias anything), a whole the share also reads, one
// it reads through a view made before the loop, and a slice whose offset
// is not the share's (the same for both: they would write each other's).

// CHECK-LABEL: func.func @share_copies_kept
// CHECK-NOT: memref.view
// CHECK-COUNT-5: memref.copy
func.func @share_copies_kept(%arg: memref<8x2x64xf32>, %out: memref<8x2x64xf32>) {
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  %cols = memref.alloc() : memref<8x4x64xf32>
  %read = memref.alloc() : memref<8x2x64xf32>
  %viewed = memref.alloc() : memref<8x2x64xf32>
  %early = memref.subview %viewed[0, 0, 0] [8, 2, 64] [1, 1, 1] : memref<8x2x64xf32> to memref<8x2x64xf32, strided<[128, 64, 1]>>
  %same = memref.alloc() : memref<8x2x64xf32>
  scf.forall (%i) in (2) {
    %at = arith.muli %i, %c4 : index
    %a = memref.alloc() : memref<8x2x64xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<8x2x64xf32>)
    %s1 = memref.subview %cols[0, %at, 0] [8, 2, 64] [1, 1, 1] : memref<8x4x64xf32> to memref<8x2x64xf32, strided<[256, 64, 1], offset: ?>>
    memref.copy %a, %s1 : memref<8x2x64xf32> to memref<8x2x64xf32, strided<[256, 64, 1], offset: ?>>
    %b = memref.alloc() : memref<4x2x64xf32>
    linalg.fill ins(%cst : f32) outs(%b : memref<4x2x64xf32>)
    %s2 = memref.subview %arg[%at, 0, 0] [4, 2, 64] [1, 1, 1] : memref<8x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    memref.copy %b, %s2 : memref<4x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    %c = memref.alloc() : memref<4x2x64xf32>
    linalg.copy ins(%read : memref<8x2x64xf32>) outs(%out : memref<8x2x64xf32>)
    linalg.fill ins(%cst : f32) outs(%c : memref<4x2x64xf32>)
    %s3 = memref.subview %read[%at, 0, 0] [4, 2, 64] [1, 1, 1] : memref<8x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    memref.copy %c, %s3 : memref<4x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    %d = memref.alloc() : memref<4x2x64xf32>
    %mine = memref.subview %early[%at, 0, 0] [4, 2, 64] [1, 1, 1] : memref<8x2x64xf32, strided<[128, 64, 1]>> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    linalg.copy ins(%mine : memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>) outs(%d : memref<4x2x64xf32>)
    %s4 = memref.subview %viewed[%at, 0, 0] [4, 2, 64] [1, 1, 1] : memref<8x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    memref.copy %d, %s4 : memref<4x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    %e = memref.alloc() : memref<4x2x64xf32>
    linalg.fill ins(%cst : f32) outs(%e : memref<4x2x64xf32>)
    %s5 = memref.subview %same[%c4, 0, 0] [4, 2, 64] [1, 1, 1] : memref<8x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
    memref.copy %e, %s5 : memref<4x2x64xf32> to memref<4x2x64xf32, strided<[128, 64, 1], offset: ?>>
  }
  return
}
