// A quantized matmul for the PPU, then host code tq-to-cpu cannot lower
// (linalg.softmax): the error is reported in the host compilation.
!A = !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
func.func @main(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %qa = tq.quantize %x : tensor<16x16xf32> -> !A
  %qb = tq.quantize %w : tensor<16x16xf32> -> !A
  %c = tq.matmul %qa, %qb : !A, !A -> tensor<16x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %r = linalg.softmax dimension(1) ins(%c : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
