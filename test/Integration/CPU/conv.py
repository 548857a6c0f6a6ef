# RUN: %python %s tq-run | FileCheck %s
# tq.conv2d compiled by tq-to-cpu (an implicit GEMM on the matmul kernel)
# and run on every SIMD path, bit for bit against the numpy reference (T5):
# NHWC input split on (N, C), KRSC filter split on (K, C), C not a multiple
# of the tile or smaller than it, whole C-tiles (read in place), short last
# C-tiles (read in place where the kernel's steps end at their channels,
# else gathered by im2col), strides, dilations, asymmetric padding, a constant filter
# packed at compile time, 2 threads (a constant filter and an argument),
# operands at the edges (extreme int8 values, zero, huge, tiny,
# infinite and NaN steps), and inputs marked not negative (vpmaddubsw on
# avx2).
import sys

import numpy as np

from tq import reference as ref
from tq.cpu import Runner, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(23)
failures = cases = 0


def tiled(shape, v, bits=8):
    s = "x".join(map(str, shape))
    elem = "i8" if bits <= 8 else "i16"
    return f"!tq.tiled<{s}x{elem}:{bits}, f32, tile = {v}x{v}, dims = [0, 3], scale = f32>"


def dense(values):
    return ("dense<" + np.array2string(values, separator=", ", threshold=1 << 30)
            .replace("\n", "") + f"> : tensor<{'x'.join(map(str, values.shape))}xi8>")


def case(xshape, wshape, v, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0),
         const=False, threads=1, data=None, bits=8, nonneg=False):
    """`data`: the quantized operands (qx, sx, qw, sw) as given, else
    quantized from normal samples to `bits` (int16 containers above 8).
    `nonneg`: the input's values are not negative, and the op says so
    (tq.nonnegative_input: vpmaddubsw on AVX2)."""
    global failures, cases
    if data is None:
        x = rng.standard_normal(xshape).astype(np.float32)
        if nonneg:
            x = np.maximum(x, 0)
        w = rng.standard_normal(wshape).astype(np.float32)
        qx, sx, _, _ = ref.quantize(x, (v, v), (0, 3), bits, "scaled")
        qw, sw, _, _ = ref.quantize(w, (v, v), (0, 3), bits, "scaled")
    else:
        qx, sx, qw, sw = data
    container = np.int8 if bits <= 8 else np.int16
    with np.errstate(over="ignore", invalid="ignore"):
        want = ref.conv2d(qx, sx, qw, sw, v, stride, dilation, pad)
    tx, tw = tiled(xshape, v, bits), tiled(wshape, v, bits)
    out = f"tensor<{'x'.join(map(str, want.shape))}xf32>"
    attrs = (f"{{strides = array<i64: {stride[0]}, {stride[1]}>, "
             f"dilations = array<i64: {dilation[0]}, {dilation[1]}>, "
             f"padding = array<i64: {', '.join(map(str, pad))}>"
             + (", tq.nonnegative_input" if nonneg else "") + "}")
    if const:
        grid = "x".join(map(str, sw.shape))
        scales = f'dense<"0x{sw.astype("<f4").tobytes().hex()}"> : tensor<{grid}xf32>'
        src = f"""
func.func @main(%x: {tx}) -> {out} {{
  %w = tq.constant {{values = {dense(qw.astype(np.int8))}, scales = {scales}}} : {tw}
  %y = tq.conv2d %x, %w {attrs} : {tx}, {tw} -> {out}
  return %y : {out}
}}"""
        inputs = [qx.astype(container), sx]
    else:
        src = f"""
func.func @main(%x: {tx}, %w: {tw}) -> {out} {{
  %y = tq.conv2d %x, %w {attrs} : {tx}, {tw} -> {out}
  return %y : {out}
}}"""
        inputs = [qx.astype(container), sx, qw.astype(container), sw]
    for target in TARGETS:
        cases += 1
        got, = cpu.run(src, inputs, target=target, threads=threads)
        if not np.array_equal(got, want, equal_nan=True):
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
case((8, 10, 10, 20), (32, 3, 3, 20), 16, pad=(1, 1, 1, 1), threads=2)

# Whole C-tiles of whole dot groups are read in place from the input
# (with its border, or as it is), not gathered: the bordered input's rows
# and the kernel's blocks on 2 threads; no padding (the input itself, 2
# threads); one group of 4 channels per K-tile; strides and dilations
# along each dim, with and without padding; 12-bit values in int16
# (widened for vpmaddwd, or read as they are without padding).
case((8, 10, 10, 16), (32, 3, 3, 16), 16, pad=(1, 1, 1, 1), threads=2)
case((4, 6, 6, 32), (16, 1, 1, 32), 16, threads=2)
case((3, 6, 5, 8), (6, 3, 3, 8), 4)
case((6, 7, 7, 16), (20, 3, 3, 16), 4, stride=(2, 2), pad=(2, 1, 0, 1), threads=2)
case((2, 9, 8, 16), (12, 2, 3, 16), 8, dilation=(2, 1), pad=(1, 1, 1, 1))
case((3, 9, 9, 16), (8, 3, 3, 16), 16, stride=(2, 2))
case((3, 6, 6, 16), (8, 3, 3, 16), 16, pad=(1, 1, 1, 1), bits=12)
case((3, 5, 5, 32), (8, 1, 1, 32), 16, bits=12, threads=2)
# Few rows and at most a vector of filters (a weight gradient's shape):
# one micro-tile of one vector per row, 9 rows (AVX-512) or 5 (AVX2 and
# generic).
case((1, 3, 3, 16), (8, 3, 3, 16), 16, pad=(1, 1, 1, 1))
case((1, 1, 5, 16), (16, 1, 3, 16), 16, pad=(0, 1, 0, 1), threads=2)
# A C-tile of 128 channels (copied and summed 64 at a time).
case((2, 4, 4, 128), (8, 3, 3, 128), 128, pad=(1, 1, 1, 1))
# Micro-tiles whose rows are addressed from their first row's offsets:
# 7 rows within output rows of 14 (2 vectors of filters, then 1 on 2
# threads), and two whole output rows of 5 with a stride of 2 down the
# image (AVX-512: 10 rows, the sixth 2 padded input rows after the first).
case((2, 14, 14, 16), (32, 3, 3, 16), 16, pad=(1, 1, 1, 1))
case((2, 14, 14, 32), (16, 3, 3, 32), 16, pad=(1, 1, 1, 1), threads=2)
case((3, 8, 5, 16), (12, 3, 3, 16), 16, stride=(2, 1), pad=(1, 1, 1, 1))
# 3 x 3 outputs with more filters than a vector (a weight gradient, whose
# image is the transposed batch): micro-tiles of the whole image's 9 rows
# of one vector, each panel of 16 filters in turn (the last one masked).
case((16, 4, 4, 64), (32, 4, 4, 64), 16, pad=(1, 1, 1, 1))
case((4, 5, 5, 32), (20, 3, 3, 32), 16, threads=2)
# 24 filters (the wake-word embedding's 1 x 3 convolutions): on AVX2 three
# panels of one vector (two of two would compute 32 columns), micro-tiles
# of a whole output row of 6.
case((2, 3, 6, 24), (24, 1, 3, 24), 32, pad=(0, 1, 0, 1))
case((3, 4, 30, 24), (24, 3, 1, 24), 32, pad=(1, 0, 1, 0), threads=2)


def adversarial(n, h, w, c, k, r, s, v):
    """Operands at the edges: every 8-bit value, runs of -127 and 127 (the
    largest int32 partial sums), an all-zero tile with step 0, huge, tiny,
    infinite and NaN input steps."""
    qx = rng.integers(-127, 128, (n, h, w, c)).astype(np.int8)
    qw = rng.integers(-127, 128, (k, r, s, c)).astype(np.int8)
    qx[0, :, :, :v] = 127
    qw[0, :, :, :v] = 127
    qx[1, 1, :, :v] = -127
    qw[1, :, :, :v] = -127
    qx[:v, 0, 0, :v] = 0
    sx = rng.uniform(0.5, 2, (-(-n // v), h, w, -(-c // v))).astype(np.float32)
    sw = rng.uniform(0.5, 2, (-(-k // v), r, s, -(-c // v))).astype(np.float32)
    sx[0, 0, 0, 0] = 0
    sx[0, 1, 2, 0] = 3e38
    sx[0, 2, 1, 0] = 1e-38
    sx[-1, 2, 2, -1] = np.inf
    sx[-1, h - 1, 0, 0] = np.nan
    return qx, sx, qw, sw


case((33, 5, 5, 32), (20, 3, 3, 32), 16, pad=(2, 1, 0, 1),
     data=adversarial(33, 5, 5, 32, 20, 3, 3, 16))
case((33, 5, 5, 32), (20, 3, 3, 32), 16, pad=(2, 1, 0, 1), const=True, threads=2,
     data=adversarial(33, 5, 5, 32, 20, 3, 3, 16))
# The row sums of an input read as it is or of its bordered copy, by the
# dot product with ones (whole C-tiles in a vector): C-tiles of 4 (one lane
# each), 16, 32 and 64 channels; operands at the edges, also on 2 threads
# and with a border.
case((4, 4, 4, 8), (6, 1, 1, 8), 4)
case((32, 5, 5, 32), (20, 3, 3, 32), 16, pad=(1, 1, 1, 1),
     data=adversarial(32, 5, 5, 32, 20, 3, 3, 16))
case((2, 3, 3, 64), (8, 1, 1, 64), 64)
case((32, 5, 5, 32), (20, 1, 1, 32), 16, data=adversarial(32, 5, 5, 32, 20, 1, 1, 16))
case((32, 3, 3, 64), (16, 1, 1, 64), 32, threads=2,
     data=adversarial(32, 3, 3, 64, 16, 1, 1, 32))
# 40 channels in C-tiles of 32: each tap's second K-tile holds 8 (the
# kernel stops after them), next to extreme operands.
case((32, 5, 5, 40), (20, 3, 3, 40), 32, pad=(1, 1, 1, 1),
     data=adversarial(32, 5, 5, 40, 20, 3, 3, 32))
# Inputs not negative (a ReLU's), marked so: on AVX2 vpmaddubsw on the
# bytes as they are (no int16 copy), read in place, padded, gathered by
# im2col (C of 12 in tiles of 8), on 2 threads, a constant filter; and at
# the largest pair sums: inputs of 127 against weights of 127, -127 and
# -128 (2 x 127 x 128 = 32512, still below int16's saturation).
case((4, 6, 6, 16), (24, 3, 3, 16), 16, nonneg=True)
case((3, 7, 7, 32), (20, 3, 3, 32), 32, pad=(1, 1, 1, 1), nonneg=True, threads=2)
case((2, 5, 5, 12), (8, 3, 3, 12), 8, pad=(1, 0, 1, 0), nonneg=True, const=True)
qx, sx, qw, sw = adversarial(32, 5, 5, 32, 20, 3, 3, 16)
qx = np.abs(qx)
qx[2:6] = 127
qw[2, :, :, :] = -128
qw[3, :, :, 1::2] = -128
case((32, 5, 5, 32), (20, 3, 3, 32), 16, pad=(1, 1, 1, 1), nonneg=True, data=(qx, sx, qw, sw))
# Windows wholly in the padding (0, whatever the steps at the border),
# next to infinite and NaN steps at the input's corners.
qx, sx, qw, sw = adversarial(17, 3, 3, 16, 8, 3, 3, 16)
sx[:, 0, 0, :] = np.inf
sx[:, 2, 2, :] = np.nan
case((17, 3, 3, 16), (8, 3, 3, 16), 16, pad=(3, 3, 3, 3), data=(qx, sx, qw, sw))

# A short last C-tile is read in place when the kernel's steps end at its
# channels (KernelShape::tailExact; the next pixel's channels follow them),
# else gathered by im2col: 48 and 72 channels in tiles of 32 (the wake-word
# embedding's 1x3 and 3x1 layers), 24 in 16 with a constant filter, 20 in
# 16 not negative (one vpmaddubsw step), 18 in 16 (one vpmaddwd step; half
# a vpdpbusd one and of the portable kernel's unrolled four: im2col there),
# 21 in 16 (5 channels: im2col everywhere).
case((2, 6, 16, 48), (24, 1, 3, 48), 32, pad=(0, 1, 0, 1), threads=2)
case((3, 8, 4, 72), (16, 3, 1, 72), 32)
case((4, 5, 5, 24), (12, 3, 3, 24), 16, pad=(1, 1, 1, 1), const=True)
case((2, 5, 5, 20), (8, 3, 3, 20), 16, pad=(1, 1, 1, 1), nonneg=True)
case((2, 7, 6, 18), (8, 3, 3, 18), 16, stride=(2, 1), dilation=(1, 2), pad=(1, 1, 1, 1),
     threads=2)
case((3, 6, 6, 21), (8, 3, 3, 21), 16, pad=(1, 1, 1, 1))

print(f"conv cases per target: {cases // len(TARGETS)}, "
      f"mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: conv cases per target: 44, mismatches: 0
