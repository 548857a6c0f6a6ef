// A PPU product, then a host one whose lhs is rounded stochastically with
// its seed offset by an i32 argument (a training step's iteration): the
// schedule passes the argument to the host function as a 0-d tensor.
!A = !tq.tiled<8x16xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!B = !tq.tiled<16x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!C = !tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!D = !tq.tiled<8x4xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>,
                %v: tensor<8x4xf32>, %it: i32) -> tensor<8x4xf32> {
  %qx = tq.quantize %x : tensor<8x16xf32> -> !A
  %qw = tq.quantize %w : tensor<16x8xf32> -> !B
  %y = tq.matmul %qx, %qw : !A, !B -> tensor<8x8xf32>
  %qy = tq.quantize %y rounding stochastic seed_offset(%it) {seed = 5 : i64} : tensor<8x8xf32> -> !C
  %qv = tq.quantize %v : tensor<8x4xf32> -> !D
  %z = tq.matmul %qy, %qv : !C, !D -> tensor<8x4xf32>
  return %z : tensor<8x4xf32>
}
