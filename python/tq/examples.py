"""Small float programs in upstream MLIR, as a frontend would emit them."""


def mlp_mlir(m, k, h, n):
    """A two-layer MLP: x[m,k] . w1[k,h] -> ReLU -> . w2[h,n], weights as
    arguments marked {tq.parameter}."""
    return f"""
func.func @mlp(%x: tensor<{m}x{k}xf32>, %w1: tensor<{k}x{h}xf32> {{tq.parameter}},
               %w2: tensor<{h}x{n}xf32> {{tq.parameter}}) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<{m}x{h}xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{m}x{h}xf32>) -> tensor<{m}x{h}xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<{m}x{k}xf32>, tensor<{k}x{h}xf32>) outs(%a1 : tensor<{m}x{h}xf32>) -> tensor<{m}x{h}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%h : tensor<{m}x{h}xf32>) outs(%e1 : tensor<{m}x{h}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %mx = arith.maximumf %in, %zero : f32
    linalg.yield %mx : f32
  }} -> tensor<{m}x{h}xf32>
  %e2 = tensor.empty() : tensor<{m}x{n}xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<{m}x{h}xf32>, tensor<{h}x{n}xf32>) outs(%a2 : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %y : tensor<{m}x{n}xf32>
}}
"""
