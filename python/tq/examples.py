"""Small float programs in upstream MLIR, as a frontend would emit them."""


def dense_literal(a):
    """An array as the body of an MLIR `dense<...>` attribute (exact: repr
    of each float32 widened to a Python float)."""
    if getattr(a, "ndim", 0) == 0:
        return repr(float(a))
    return "[" + ", ".join(dense_literal(v) for v in a) + "]"


def mlp_mlir(m, k, h, n, weights=None):
    """A two-layer MLP: x[m,k] . w1[k,h] -> ReLU -> . w2[h,n].

    Without `weights` the weights are function arguments marked
    {tq.parameter}; with `weights=(w1, w2)` they are `arith.constant`s
    holding those arrays, and `x` is the only argument."""
    if weights is None:
        args = (f"%x: tensor<{m}x{k}xf32>, %w1: tensor<{k}x{h}xf32> {{tq.parameter}},\n"
                f"               %w2: tensor<{h}x{n}xf32> {{tq.parameter}}")
        consts = ""
    else:
        w1, w2 = weights
        assert w1.shape == (k, h) and w2.shape == (h, n), "weights do not match the shape"
        args = f"%x: tensor<{m}x{k}xf32>"
        consts = (f"  %w1 = arith.constant dense<{dense_literal(w1)}> : tensor<{k}x{h}xf32>\n"
                  f"  %w2 = arith.constant dense<{dense_literal(w2)}> : tensor<{h}x{n}xf32>\n")
    return f"""
func.func @mlp({args}) -> tensor<{m}x{n}xf32> {{
{consts}  %zero = arith.constant 0.0 : f32
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
