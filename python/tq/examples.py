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


def _bias_layer(name, inp, m, k, n, w, b, relu):
    """x[m,k] . w[k,n] + b[n] (then ReLU), as linalg on constants."""
    body = ("%mx = arith.maximumf %s, %zero : f32\n    linalg.yield %mx : f32" if relu
            else "linalg.yield %s : f32")
    return f"""
  %w{name} = arith.constant dense<{dense_literal(w)}> : tensor<{k}x{n}xf32>
  %b{name} = arith.constant dense<{dense_literal(b)}> : tensor<{n}xf32>
  %e{name} = tensor.empty() : tensor<{m}x{n}xf32>
  %f{name} = linalg.fill ins(%zero : f32) outs(%e{name} : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %p{name} = linalg.matmul ins({inp}, %w{name} : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f{name} : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %y{name} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%p{name}, %b{name} : tensor<{m}x{n}xf32>, tensor<{n}xf32>) outs(%e{name} : tensor<{m}x{n}xf32>) {{
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    {body}
  }} -> tensor<{m}x{n}xf32>"""


def mlp_bias_mlir(x_shape, w1, b1, w2, b2):
    """@main(x): ReLU(x . w1 + b1) . w2 + b2 with constant weights and
    biases: the bias adds and the ReLU are float code between the layers."""
    m, k = x_shape
    h, n = w1.shape[1], w2.shape[1]
    return f"""
func.func @main(%x: tensor<{m}x{k}xf32>) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
{_bias_layer(1, '%x', m, k, h, w1, b1, True)}
{_bias_layer(2, '%y1', m, h, n, w2, b2, False)}
  return %y2 : tensor<{m}x{n}xf32>
}}
"""
