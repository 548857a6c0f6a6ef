// RUN: tq-opt %s "-tq-insert-quantization=grad-rounding=stochastic seed=7" -tq-fold-transposes=report 2>&1 | FileCheck %s
// RUN: tq-opt %s "-tq-insert-quantization=granularity=vector grad-rounding=stochastic seed=7" -tq-fold-transposes=report 2>&1 | FileCheck %s --check-prefix=VECTOR
// The layer of fold-transposes.mlir in a training step, whose iteration
// (an i32 argument marked {tq.iteration}) offsets the seeds of stochastic
// rounding at run time. Square tiles: dY's two quantizations (seeds 7 and
// 8, the same offset) are one, the first, as without the offset.

// CHECK: 0 requantizations
// CHECK-LABEL: func.func @layer
// CHECK-COUNT-2: tq.quantize %arg{{[01]}} :
// CHECK: tq.quantize %arg2 rounding stochastic seed_offset(%arg3) {seed = 7 : i64}
// CHECK-NOT: tq.quantize
// CHECK-NOT: tq.requantize

// With 1xV tiles dY's two quantizations have different types: each stays,
// with its seed and the offset (tq.requantize takes no run-time offset).
// VECTOR: 2 requantizations
// VECTOR-LABEL: func.func @layer
// VECTOR-NOT: tq.requantize {{.*}}stochastic
// VECTOR: tq.quantize %arg2 rounding stochastic seed_offset(%arg3) {seed = 7 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 1x32
// VECTOR-NOT: tq.requantize {{.*}}stochastic
// VECTOR: tq.quantize %arg2 rounding stochastic seed_offset(%arg3) {seed = 8 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x1
// VECTOR-NOT: tq.requantize {{.*}}stochastic

func.func @layer(%x: tensor<64x256xf32>, %w: tensor<256x128xf32> {tq.parameter},
                 %dy: tensor<64x128xf32> {tq.role = #tq.role<output_grad>},
                 %it: i32 {tq.iteration})
    -> (tensor<64x128xf32>, tensor<64x256xf32>, tensor<256x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x128xf32>
  %a0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%a0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  // dX = dY . W^T
  %et = tensor.empty() : tensor<128x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x128xf32>) outs(%et : tensor<128x256xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<64x256xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %dx = linalg.matmul ins(%dy, %wt : tensor<64x128xf32>, tensor<128x256xf32>) outs(%a1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  // dW = X^T . dY
  %ext = tensor.empty() : tensor<256x64xf32>
  %xt = linalg.transpose ins(%x : tensor<64x256xf32>) outs(%ext : tensor<256x64xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<256x128xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<256x128xf32>) -> tensor<256x128xf32>
  %dw = linalg.matmul ins(%xt, %dy : tensor<256x64xf32>, tensor<64x128xf32>) outs(%a2 : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %y, %dx, %dw : tensor<64x128xf32>, tensor<64x256xf32>, tensor<256x128xf32>
}
