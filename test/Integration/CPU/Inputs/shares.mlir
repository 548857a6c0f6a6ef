// Two shares of 32 rows on 2 threads (tq-cpu-split-batch): one OpenMP
// parallel loop.
func.func @main(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %q = tq.quantize %x : tensor<64x32xf32> -> !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %q : !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x32xf32>
  return %d : tensor<64x32xf32>
}
