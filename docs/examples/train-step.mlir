// One training step of a linear layer on tile-quantized tensors (SPEC T7):
// Y = X·W, dX = dY·Wᵀ, dW = Xᵀ·dY, W ← W − η·dW. W is a constant that
// `tq-quantize-constants` quantizes at compile time; the backward GEMMs read
// Wᵀ and Xᵀ through tq.transpose, reusing every tile scale (T4).
//
//   tq-opt docs/examples/train-step.mlir -tq-quantize-constants -canonicalize

!x = !tq.tiled<4x8xi8:8, f32, tile = 4x4, dims = [0, 1]>
!xt = !tq.tiled<8x4xi8:8, f32, tile = 4x4, dims = [0, 1]>
!w = !tq.tiled<8x4xi4:4, f32, tile = 4x4, dims = [0, 1], scale = pow2>
!wt = !tq.tiled<4x8xi4:4, f32, tile = 4x4, dims = [0, 1], scale = pow2>
!dy = !tq.tiled<4x4xi8:8, f32, tile = 4x4, dims = [0, 1]>

func.func @train_step(%xf: tensor<4x8xf32>, %dyf: tensor<4x4xf32>, %lr: f32)
    -> (tensor<4x4xf32>, tensor<4x8xf32>, !w) {
  %wf = arith.constant dense<[[ 0.50, -0.25,  0.125,  1.0],
                              [-1.00,  0.75,  0.0,    0.5],
                              [ 0.25,  0.25, -0.5,    0.0],
                              [ 0.00, -0.125, 0.375, -0.75],
                              [ 2.00,  1.0,  -2.0,    0.5],
                              [-0.50,  0.0,   1.5,   -1.0],
                              [ 1.00, -1.5,   0.25,   0.0],
                              [ 0.75,  0.5,  -0.25,   2.0]]> : tensor<8x4xf32>
  %w = tq.quantize %wf : tensor<8x4xf32> -> !w
  %x = tq.quantize %xf : tensor<4x8xf32> -> !x
  %dy = tq.quantize %dyf : tensor<4x4xf32> -> !dy
  %y = tq.matmul %x, %w : !x, !w -> tensor<4x4xf32>
  %wT = tq.transpose %w [1, 0] : !w -> !wt
  %dx = tq.matmul %dy, %wT : !dy, !wt -> tensor<4x8xf32>
  %xT = tq.transpose %x [1, 0] : !x -> !xt
  %dw = tq.matmul %xT, %dy : !xt, !dy -> tensor<8x4xf32>
  %w2 = tq.weight_update %w, %dw, %lr : !w, tensor<8x4xf32>
  return %y, %dx, %w2 : tensor<4x4xf32>, tensor<4x8xf32>, !w
}
