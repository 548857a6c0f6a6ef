// RUN: tq-opt %s -tq-insert-quantization -tq-fold-transposes=report 2>&1 | FileCheck %s --check-prefix=SQUARE
// RUN: tq-opt %s -tq-insert-quantization=granularity=vector -tq-fold-transposes=report 2>&1 | FileCheck %s --check-prefix=VECTOR
// RUN: tq-opt %s -tq-insert-quantization=granularity=channel -tq-fold-transposes=report 2>&1 | FileCheck %s --check-prefix=CHANNEL
// RUN: tq-opt %s "-tq-insert-quantization=grad-rounding=stochastic seed=7" -tq-fold-transposes=report 2>&1 | FileCheck %s --check-prefix=STOCH
// RUN: tq-opt %s "-tq-insert-quantization=granularity=vector grad-rounding=stochastic seed=7" -tq-fold-transposes=report 2>&1 | FileCheck %s --check-prefix=STOCH-VECTOR
// SPEC T4 on one program: a layer's forward and backward GEMMs, with the
// transposes written out as linalg.transpose (as autodiff and ONNX emit
// them). Square tiles: every transpose folds into a matmul flag and each
// tensor is quantized once. Per-vector (1xV) tiles: X, W and dY are each
// used once along each dim, so each costs a requantization.

// SQUARE: remark: tq-fold-transposes: 2 transposes folded into matmul operands (scales reused), 0 requantizations
// SQUARE-LABEL: func.func @layer
// SQUARE-COUNT-3: tq.quantize
// SQUARE-NOT: tq.quantize
// SQUARE-NOT: tq.requantize
// SQUARE: tq.matmul %[[DY:.*]], %[[W:.*]] {transpose_b}
// SQUARE: tq.matmul %[[X:.*]], %[[DY]] {transpose_a}

// VECTOR: remark: tq-fold-transposes: 2 transposes folded into matmul operands (scales reused), 3 requantizations
// VECTOR-LABEL: func.func @layer
// VECTOR: %[[X:.*]] = tq.quantize %arg0 : tensor<64x256xf32> -> !tq.tiled<64x256xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32>
// VECTOR: %[[W:.*]] = tq.quantize %arg1 : tensor<256x128xf32> -> !tq.tiled<256x128xi8:8, f32, tile = 32x1, dims = [0, 1], scale = f32>
// VECTOR: tq.requantize %[[W]] : {{.*}} -> !tq.tiled<256x128xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32>
// VECTOR: tq.requantize %[[X]] : {{.*}} -> !tq.tiled<64x256xi8:8, f32, tile = 32x1, dims = [0, 1], scale = f32>
// dY is the lhs of dX (vectors along its rows) and the rhs of dW (along
// its columns): it is requantized too.
// VECTOR: tq.requantize %{{.*}} : !tq.tiled<64x128xi8:8, f32, tile = 1x32, {{.*}}> -> !tq.tiled<64x128xi8:8, f32, tile = 32x1

// CHANNEL: 3 requantizations

// Stochastic gradients: dY is quantized for dX with seed 7 and for dW with
// seed 8; the two are one, the first, as with nearest rounding.
// STOCH: 0 requantizations
// STOCH-LABEL: func.func @layer
// STOCH-COUNT-2: tq.quantize %arg{{[01]}} :
// STOCH: tq.quantize %arg2 rounding stochastic {seed = 7 : i64}
// STOCH-NOT: tq.quantize
// STOCH-NOT: tq.requantize

// With 1xV tiles dY's two quantizations have different types: each keeps
// its seed (a stochastic requantization would round twice); X and W are
// requantized as with nearest rounding.
// STOCH-VECTOR: 2 requantizations
// STOCH-VECTOR-LABEL: func.func @layer
// STOCH-VECTOR-NOT: tq.requantize {{.*}}stochastic
// STOCH-VECTOR: tq.quantize %arg2 rounding stochastic {seed = 7 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 1x32
// STOCH-VECTOR-NOT: tq.requantize {{.*}}stochastic
// STOCH-VECTOR: tq.quantize %arg2 rounding stochastic {seed = 8 : i64} : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8, f32, tile = 32x1
// STOCH-VECTOR-NOT: tq.requantize {{.*}}stochastic

func.func @layer(%x: tensor<64x256xf32>, %w: tensor<256x128xf32> {tq.parameter},
                 %dy: tensor<64x128xf32> {tq.role = #tq.role<output_grad>})
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
