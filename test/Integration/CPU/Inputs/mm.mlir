!A = !tq.tiled<4x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!B = !tq.tiled<8x3xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %qa = tq.quantize %x : tensor<4x8xf32> -> !A
  %qb = tq.quantize %w : tensor<8x3xf32> -> !B
  %c = tq.matmul %qa, %qb : !A, !B -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}
