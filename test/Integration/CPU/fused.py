# RUN: %python %s tq-run | FileCheck %s
# A7: a tq.quantize whose only use is a matmul's lhs is quantized inside
# the matmul's loop nest, one block of whole row tiles at a time (with the
# blocks shared among threads). The results equal quantizing first, bit for
# bit: the numpy reference, for f32 and pow2 scales, fixed and run-time
# widths, given steps (tq.quantize ... scales, as tq-update-interval
# emits), row counts that are not multiples of the tile, every SIMD path,
# 1 and 2 threads. The elementwise ops after a product, applied by its
# kernel as it stores (epilogue fusion), give the bits of applying them
# after it.
import sys

import numpy as np

from tq import reference as ref
from tq.cpu import Runner, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(17)
failures = cases = 0


def case(M, N, K, v, scale="f32", dynamic=False, bits=8, threads=(1,),
         given=False, refresh=None, epilogue=None, relu=False):
    """`relu`: the quantized lhs is a ReLU's output (a linalg.generic), which
    tq-cpu-mark-nonnegative marks: vpmaddubsw on avx2."""
    global failures, cases
    form = {"f32": "scaled", "pow2": "pow2"}[scale]
    x = (rng.standard_normal((M, K)) * 3).astype(np.float32)
    x[0, 1] = np.inf
    if relu:
        x[1, 0] = np.nan
        x[1, 1] = -0.0
        x[2, :] = -np.inf
    w = rng.standard_normal((K, N)).astype(np.float32)
    width = "?" if dynamic else str(bits)
    ta = (f"!tq.tiled<{M}x{K}xi8:{width}, f32, tile = {v}x{v}, dims = [0, 1], "
          f"scale = {scale}>")
    tb = (f"!tq.tiled<{K}x{N}xi8:8, f32, tile = {v}x{v}, dims = [0, 1], "
          f"scale = {scale}>")
    extra = ", %n: i32" if dynamic else ""
    use = " bits(%n : i32)" if dynamic else ""
    grid = f"tensor<{-(-M // v)}x{-(-K // v)}xf32>"
    steps = None
    if given:
        # Steps of other data: some tiles saturate, one step is unusable.
        _, steps, _, _ = ref.quantize(x * 0.5, (v, v), (0, 1), bits, form)
        steps.reshape(-1)[-1] = np.nan
        extra += f", %s: {grid}"
        use = f" scales(%s : {grid})" + use
        if refresh is not None:
            extra += ", %due: i1"
            use += " refresh(%due)"
    out_ty = f"tensor<{M}x{N}xf32>"
    tail = f"return %c : {out_ty}"
    bias = rng.standard_normal(N).astype(np.float32)
    res = rng.standard_normal((2, M // 2, N)).astype(np.float32)
    if epilogue == "bias_relu":
        # Applied by the kernel as it stores each vector of C.
        extra += f", %bias: tensor<{N}xf32>"
        tail = f"""%e = tensor.empty() : {out_ty}
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>,
      affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}}
      ins(%c, %bias : {out_ty}, tensor<{N}xf32>) outs(%e : {out_ty}) {{
    ^bb0(%p: f32, %b: f32, %o: f32):
      %s = arith.addf %p, %b : f32
      %t = arith.maximumf %s, %zero : f32
      linalg.yield %t : f32
  }} -> {out_ty}
  return %r : {out_ty}"""
    elif epilogue == "residual":
        # Through an expand_shape of the rows, with a bias and a residual.
        out_ty = f"tensor<2x{M // 2}x{N}xf32>"
        extra += f", %bias: tensor<{N}xf32>, %res: {out_ty}"
        tail = f"""%x3 = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, {M // 2}, {N}] : tensor<{M}x{N}xf32> into {out_ty}
  %e = tensor.empty() : {out_ty}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, i, j) -> (n, i, j)>,
      affine_map<(n, i, j) -> (j)>, affine_map<(n, i, j) -> (n, i, j)>,
      affine_map<(n, i, j) -> (n, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%x3, %bias, %res : {out_ty}, tensor<{N}xf32>, {out_ty}) outs(%e : {out_ty}) {{
    ^bb0(%p: f32, %b: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %b : f32
      %t = arith.addf %s, %q : f32
      linalg.yield %t : f32
  }} -> {out_ty}
  return %r : {out_ty}"""
    head = ""
    lhs = "%x"
    if relu:
        head = f"""%ex = tensor.empty() : tensor<{M}x{K}xf32>
  %z = arith.constant 0.0 : f32
  %xr = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>,
      affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%x : tensor<{M}x{K}xf32>) outs(%ex : tensor<{M}x{K}xf32>) {{
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %z : f32
      linalg.yield %m : f32
  }} -> tensor<{M}x{K}xf32>
  """
        lhs = "%xr"
    src = f"""
func.func @main(%x: tensor<{M}x{K}xf32>, %w: tensor<{K}x{N}xf32>{extra}) -> {out_ty} {{
  {head}%qa = tq.quantize {lhs}{use} : tensor<{M}x{K}xf32> -> {ta}
  %qb = tq.quantize %w : tensor<{K}x{N}xf32> -> {tb}
  %c = tq.matmul %qa, %qb : {ta}, {tb} -> tensor<{M}x{N}xf32>
  {tail}
}}
"""
    if relu:
        # IEEE maximum: NaN stays NaN, -0 becomes +0.
        x = np.where(np.isnan(x), x, np.maximum(x, np.float32(0)))
    qa, sa, _, _ = ref.quantize(x, (v, v), (0, 1), bits, form,
                                steps=None if refresh else steps)
    qb, sb, _, _ = ref.quantize(w, (v, v), (0, 1), 8, form)
    want = ref.matmul(qa, sa, (v, v), qb, sb, (v, v))
    inputs = [x, w] + ([np.array(bits, np.int32)] if dynamic else []) + (
        [steps] if given else []) + (
        [np.array(bool(refresh))] if refresh is not None else [])
    if epilogue == "bias_relu":
        want = np.maximum(want + bias, np.float32(0))
        inputs.append(bias)
    elif epilogue == "residual":
        want = want.reshape(res.shape) + bias + res
        inputs += [bias, res]
    for target in TARGETS:
        for t in threads:
            cases += 1
            got, = cpu.run(src, inputs, target=target, threads=t)
            if not np.array_equal(got, want):
                failures += 1
                print(f"MISMATCH M={M} N={N} K={K} V={v} {scale} "
                      f"dynamic={dynamic} given={given} {target} threads={t}")


case(37, 50, 64, 16, threads=(1, 2))
case(100, 40, 128, 8, threads=(2,))
case(9, 70, 96, 32, scale="pow2")
case(70, 33, 256, 128, dynamic=True, bits=6, threads=(1, 2))
case(37, 50, 64, 16, given=True, threads=(1, 2))
case(9, 70, 96, 32, scale="pow2", given=True)
case(37, 50, 64, 16, given=True, refresh=True, threads=(1, 2))
case(37, 50, 64, 16, given=True, refresh=False)
# The elementwise generic after the product, applied by the kernel as it
# stores C: a bias and ReLU, and through an expand_shape of the rows, a
# bias and a residual add. The same bits as applying them to the product.
case(37, 50, 64, 16, threads=(1, 2), epilogue="bias_relu")
case(100, 40, 128, 8, threads=(2,), epilogue="residual")
case(70, 33, 256, 128, dynamic=True, bits=6, epilogue="residual")
# A ReLU's output as the lhs (NaN, -0, -inf among it), quantized in the
# loop nest: marked not negative, vpmaddubsw on avx2; on 2 threads, with
# given steps, and with a bias and ReLU after.
case(37, 50, 64, 16, relu=True, threads=(1, 2))
case(37, 50, 64, 16, relu=True, given=True)
case(9, 70, 96, 32, relu=True, epilogue="bias_relu")
print(f"fused cases per target: {cases // len(TARGETS)}, "
      f"mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: fused cases per target: 20, mismatches: 0
