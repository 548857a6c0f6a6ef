# RUN: %python %s tq-run | FileCheck %s
# A7: a tq.quantize whose only use is a matmul's lhs is quantized inside
# the matmul's loop nest, one block of whole row tiles at a time (with the
# blocks shared among threads). The results equal quantizing first, bit for
# bit: the numpy reference, for f32 and pow2 scales, fixed and run-time
# widths, given steps (tq.quantize ... scales, as tq-update-interval
# emits), row counts that are not multiples of the tile, every SIMD path,
# 1 and 2 threads.
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
         given=False, refresh=None):
    global failures, cases
    form = {"f32": "scaled", "pow2": "pow2"}[scale]
    x = (rng.standard_normal((M, K)) * 3).astype(np.float32)
    x[0, 1] = np.inf
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
    src = f"""
func.func @main(%x: tensor<{M}x{K}xf32>, %w: tensor<{K}x{N}xf32>{extra}) -> tensor<{M}x{N}xf32> {{
  %qa = tq.quantize %x{use} : tensor<{M}x{K}xf32> -> {ta}
  %qb = tq.quantize %w : tensor<{K}x{N}xf32> -> {tb}
  %c = tq.matmul %qa, %qb : {ta}, {tb} -> tensor<{M}x{N}xf32>
  return %c : tensor<{M}x{N}xf32>
}}
"""
    qa, sa, _, _ = ref.quantize(x, (v, v), (0, 1), bits, form,
                                steps=None if refresh else steps)
    qb, sb, _, _ = ref.quantize(w, (v, v), (0, 1), 8, form)
    want = ref.matmul(qa, sa, (v, v), qb, sb, (v, v))
    inputs = [x, w] + ([np.array(bits, np.int32)] if dynamic else []) + (
        [steps] if given else []) + (
        [np.array(bool(refresh))] if refresh is not None else [])
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
print(f"fused cases per target: {cases // len(TARGETS)}, "
      f"mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: fused cases per target: 12, mismatches: 0
