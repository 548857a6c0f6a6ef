// RUN: tq-opt %s -tq-insert-quantization="policy=schedule schedule=0-75:4,76-86:8" -cse | FileCheck %s --check-prefix=SCHED
// RUN: tq-opt %s -tq-insert-quantization="policy=adaptive low=0.01 high=0.05 max-bits=12" | FileCheck %s --check-prefix=ADAPT
// RUN: tq-opt %s -tq-insert-quantization="policy=adaptive per-tile" | FileCheck %s --check-prefix=TILE
// RUN: tq-opt %s -tq-quantize="policy=adaptive max-bits=8" | FileCheck %s --check-prefix=PIPE
// RUN: tq-opt %s -tq-quantize="policy=adaptive per-tile run-time-search=false act-bits=6" | FileCheck %s --check-prefix=CONST
// Bit-width policies (SPEC T8, A4) in tq-insert-quantization.

// T8: the width follows the epoch argument: 4 bits up to epoch 75, then 8
// (and 8 after epoch 86, the last range's width).
// SCHED-LABEL: func.func @layer
// SCHED: %[[E:.*]] = arith.index_cast %arg1 : index to i32
// SCHED: %[[C8:.*]] = arith.constant 8 : i32
// SCHED: %[[C75:.*]] = arith.constant 75 : i32
// SCHED: %[[LE:.*]] = arith.cmpi sle, %[[E]], %[[C75]] : i32
// SCHED: %[[C4:.*]] = arith.constant 4 : i32
// SCHED: %[[N:.*]] = arith.select %[[LE]], %[[C4]], %[[C8]] : i32
// SCHED: tq.quantize %arg0 bits(%[[N]] : i32) : tensor<64x256xf32> -> !tq.tiled<64x256xi8:?, f32, tile = 32x32
// SCHED: tq.quantize %{{.*}} bits(%[[N]] : i32) : tensor<256x128xf32> -> !tq.tiled<256x128xi8:?

// A4 at run time for the activation; the constant weight keeps a fixed
// width (refined at compile time by tq-adaptive-bit-width).
// ADAPT-LABEL: func.func @layer
// ADAPT: %[[N:.*]] = tq.adaptive_bit_width %arg0 for !tq.tiled<64x256xi16:?(12), f32, tile = 32x32, dims = [0, 1], scale = f32> {high = 5.000000e-02 : f32, low = 0.00999999977 : f32, max = 12 : i64} : tensor<64x256xf32> -> i32
// ADAPT: tq.quantize %arg0 bits(%[[N]] : i32) : tensor<64x256xf32> -> !tq.tiled<64x256xi16:?(12)
// ADAPT: tq.quantize %{{.*}} : tensor<256x128xf32> -> !tq.tiled<256x128xi8:8

// TILE-LABEL: func.func @layer
// TILE: %[[N:.*]] = tq.adaptive_bit_width %arg0 for !tq.tiled<64x256xi8:per_tile, {{.*}}> {{.*}} -> tensor<2x8xi32>
// TILE: tq.quantize %arg0 bits(%[[N]] : tensor<2x8xi32>) : tensor<64x256xf32> -> !tq.tiled<64x256xi8:per_tile

// The pipeline chooses the constant weight's width at compile time.
// PIPE-LABEL: func.func @layer
// PIPE: tq.adaptive_bit_width %arg0
// PIPE: tq.constant {{{.*}}tq.bit_width = {bits = {{[2-8]}} : i64

// run-time-search=false: only the constant's widths are searched (per
// tile); the activation keeps act-bits, with no run-time search.
// CONST-LABEL: func.func @layer
// CONST-NOT: tq.adaptive_bit_width
// CONST: tq.quantize %arg0 : tensor<64x256xf32> -> !tq.tiled<64x256xi8:6, f32, tile = 32x32
// CONST: tq.constant {{.*}}tile_bits = dense<2> : tensor<8x4xi8>{{.*}} : !tq.tiled<256x128xi4:per_tile

func.func @layer(%x: tensor<64x256xf32>, %epoch: index {tq.epoch}) -> tensor<64x128xf32> {
  %w = arith.constant dense<0.5> : tensor<256x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// A transposed constant is still a constant: it gets a fixed width (the
// compile-time search refines it once the transpose is folded), not a
// run-time search.
// ADAPT-LABEL: func.func @transposed_weight
// ADAPT-NOT: tq.adaptive_bit_width %transposed
// ADAPT: tq.quantize %transposed : tensor<128x256xf32> -> !tq.tiled<128x256xi8:8
func.func @transposed_weight(%dy: tensor<64x128xf32>, %epoch: index {tq.epoch}) -> tensor<64x256xf32> {
  %w = arith.constant dense<0.5> : tensor<256x128xf32>
  %et = tensor.empty() : tensor<128x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x128xf32>) outs(%et : tensor<128x256xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %dx = linalg.matmul ins(%dy, %wt : tensor<64x128xf32>, tensor<128x256xf32>) outs(%acc : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %dx : tensor<64x256xf32>
}
