# RUN: %python %s tq-run | FileCheck %s
# tq.conv2d compiled by tq-to-cpu (an implicit GEMM on the matmul kernel)
# and run on every SIMD path, bit for bit against the numpy reference (T5):
# NHWC input split on (N, C), KRSC filter split on (K, C), C not a multiple
# of the tile or smaller than it, strides, dilations, asymmetric padding, a constant filter
# packed at compile time, 2 threads (a constant filter and an argument).
import sys

import numpy as np

from tq import reference as ref
from tq.cpu import Runner, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(23)
failures = cases = 0


def tiled(shape, v):
    s = "x".join(map(str, shape))
    return f"!tq.tiled<{s}xi8:8, f32, tile = {v}x{v}, dims = [0, 3], scale = f32>"


def dense(values):
    return ("dense<" + np.array2string(values, separator=", ", threshold=1 << 30)
            .replace("\n", "") + f"> : tensor<{'x'.join(map(str, values.shape))}xi8>")


def case(xshape, wshape, v, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0),
         const=False, threads=1):
    global failures, cases
    x = rng.standard_normal(xshape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    qx, sx, _, _ = ref.quantize(x, (v, v), (0, 3), 8, "scaled")
    qw, sw, _, _ = ref.quantize(w, (v, v), (0, 3), 8, "scaled")
    want = ref.conv2d(qx, sx, qw, sw, v, stride, dilation, pad)
    tx, tw = tiled(xshape, v), tiled(wshape, v)
    out = f"tensor<{'x'.join(map(str, want.shape))}xf32>"
    attrs = (f"{{strides = array<i64: {stride[0]}, {stride[1]}>, "
             f"dilations = array<i64: {dilation[0]}, {dilation[1]}>, "
             f"padding = array<i64: {', '.join(map(str, pad))}>}}")
    if const:
        grid = "x".join(map(str, sw.shape))
        scales = f'dense<"0x{sw.astype("<f4").tobytes().hex()}"> : tensor<{grid}xf32>'
        src = f"""
func.func @main(%x: {tx}) -> {out} {{
  %w = tq.constant {{values = {dense(qw.astype(np.int8))}, scales = {scales}}} : {tw}
  %y = tq.conv2d %x, %w {attrs} : {tx}, {tw} -> {out}
  return %y : {out}
}}"""
        inputs = [qx.astype(np.int8), sx]
    else:
        src = f"""
func.func @main(%x: {tx}, %w: {tw}) -> {out} {{
  %y = tq.conv2d %x, %w {attrs} : {tx}, {tw} -> {out}
  return %y : {out}
}}"""
        inputs = [qx.astype(np.int8), sx, qw.astype(np.int8), sw]
    for target in TARGETS:
        cases += 1
        got, = cpu.run(src, inputs, target=target, threads=threads)
        if not np.array_equal(got, want):
            failures += 1
            print(f"MISMATCH x{xshape} w{wshape} V={v} stride={stride} "
                  f"dilation={dilation} pad={pad} const={const} {target}: "
                  f"max diff {np.abs(got - want).max()}")


case((3, 5, 6, 10), (7, 3, 3, 10), 4, pad=(1, 1, 1, 1))
case((2, 9, 8, 16), (12, 3, 2, 16), 8, stride=(2, 1), dilation=(1, 2), pad=(0, 2, 1, 0))
case((4, 6, 6, 20), (16, 1, 1, 20), 16)
case((3, 7, 7, 12), (9, 3, 3, 12), 8, pad=(1, 0, 2, 1), const=True, threads=2)
# Fewer channels than the tile (one K-tile of C channels), odd C.
case((5, 6, 6, 16), (8, 3, 3, 16), 32, pad=(1, 1, 1, 1), const=True)
case((2, 5, 5, 3), (4, 3, 3, 3), 8, pad=(1, 1, 1, 1))
# im2col rows and the kernel's blocks shared among 2 threads, the filter
# an argument.
case((8, 10, 10, 16), (32, 3, 3, 16), 16, pad=(1, 1, 1, 1), threads=2)

print(f"conv cases per target: {cases // len(TARGETS)}, "
      f"mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: conv cases per target: 7, mismatches: 0
