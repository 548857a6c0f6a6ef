# RUN: %python %s tq-run tq-ref | FileCheck %s
# tq.quantize and tq.dequantize compiled by tq-to-cpu and run (T1, T3, A2):
# the data, steps and dequantized values equal the numpy reference bit for
# bit, for V = 8, 16, 32, 128, widths 2, 4, 8, 12, 16 (fixed and run-time
# `?`), shapes that are not multiples of the tile, 1xV / Vx1 tiles, 3-D
# tensors, the directed rounding modes and adversarial data: NaN, ±Inf,
# all-zero tiles, tiles of zeros and ±Inf (step 0, ±qmax), FLT_MAX,
# denormals; 4-D tiles split on (N, C) (quantized
# in memory order, or as N x C with one pixel); 4-D and 3-D tiles split on (N, C) with C last (NHWC,
# in memory order, channels as vectors); and the run-time bit-width search
# (tq.adaptive_bit_width) against the C++ golden model's.
import sys

import numpy as np

from tq import reference as ref
from tq.cpu import Runner

cpu = Runner(sys.argv[1])
rng = np.random.default_rng(7)


FORMS = {"f32": "scaled", "pow2": "pow2", "pow2_f32": "pow2_scaled"}


def tiled(shape, storage, bits, tile, dims, scale="f32"):
    s = "x".join(map(str, shape))
    return (f"!tq.tiled<{s}x{storage}:{bits}, f32, tile = {tile[0]}x{tile[1]}, "
            f"dims = [{dims[0]}, {dims[1]}], scale = {scale}>")


def adversarial(shape, tile):
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
    flat = x.reshape(-1)
    n = flat.size
    picks = rng.choice(n, size=min(n, 12), replace=False)
    vals = [np.nan, np.inf, -np.inf, np.float32(3.4e38), np.float32(-3.4e38),
            np.float32(1e-45), np.float32(-2e-44), 0.0, np.nan, np.inf, 1e30, -1e-30]
    flat[picks] = np.array(vals[:len(picks)], np.float32)
    # One tile entirely zero.
    x[tuple(slice(0, t) for t in tile) + (Ellipsis,)] = 0.0
    # The next one down zero but for +Inf, -Inf and NaN: its step is 0 (no
    # finite element is other than 0), the infinities saturate and NaN is 0.
    if x.shape[0] > tile[0]:
        region = (slice(tile[0], 2 * tile[0]),) + tuple(slice(0, t) for t in tile[1:])
        x[region + (Ellipsis,)] = 0.0
        inside = np.zeros(x.shape, bool)
        inside[region + (Ellipsis,)] = True
        for at, v in zip(np.argwhere(inside)[:3], (np.inf, -np.inf, np.nan)):
            x[tuple(at)] = v
    return x


failures = 0
cases = 0


def check(name, got, want):
    global failures, cases
    cases += 1
    same = got.shape == want.shape and np.array_equal(
        np.asarray(got), np.asarray(want), equal_nan=True)
    if not same:
        failures += 1
        print(f"MISMATCH {name}")


def quantize_op(fty, ty, dynamic, rounding, seed, offset=None):
    """The function arguments a run-time width and a run-time seed offset
    need, and `%q = tq.quantize %x` from `fty` into `ty`."""
    bits_use = " bits(%n : i32)" if dynamic else ""
    rnd = f" rounding {rounding}" if rounding != "nearest_even" else ""
    if offset is not None:
        rnd += " seed_offset(%o)"
    if seed is not None:
        rnd += f" {{seed = {seed} : i64}}"
    args = (", %n: i32" if dynamic else "") + (", %o: i32" if offset is not None else "")
    return (args, f"%q = tq.quantize %x{bits_use}{rnd} : {fty} -> {ty}")


def run_inputs(x, bits, dynamic, offset):
    """The arguments: x, then the width and the seed offset if given."""
    return ([x] + ([np.array(bits, np.int32)] if dynamic else [])
            + ([np.array(offset, np.int32)] if offset is not None else []))


def ref_seed(seed, offset):
    """The seed the reference draws the noise of: seed + offset, modulo
    2^32 (only the low 32 bits count)."""
    return ((seed or 0) + (offset or 0)) % (1 << 32)


def quantize_case(shape, storage, bits, tile, dims, rounding="nearest_even",
                  dynamic=False, scale="f32", seed=None, threads=1, offset=None,
                  data=adversarial):
    x = data(shape, tile)
    ty = tiled(shape, storage, "?" if dynamic else bits, tile, dims, scale)
    fty = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    bits_arg, quantize = quantize_op(fty, ty, dynamic, rounding, seed, offset)
    src = f"""
func.func @main(%x: {fty}{bits_arg}) -> ({ty}, {fty}) {{
  {quantize}
  %d = tq.dequantize %q : {ty} -> {fty}
  return %q, %d : {ty}, {fty}
}}
"""
    inputs = run_inputs(x, bits, dynamic, offset)
    q, steps, deq = cpu.run(src, inputs, outputs=3, threads=threads)
    rq, rs, ro, _ = ref.quantize(x, tile, dims, bits, FORMS[scale], rounding,
                                 seed=ref_seed(seed, offset))
    name = f"{shape} {storage}:{bits} {scale} tile {tile} dims {dims} {rounding}" + (
        " dynamic" if dynamic else "") + (f" threads {threads}" if threads > 1 else "") + (
        f" offset {offset}" if offset is not None else "")
    check(name + " q", q.astype(np.int32), rq)
    check(name + " steps", steps, rs)
    check(name + " deq", deq, ref.dequantize(rq, rs, ro, tile, dims))


for v in (8, 16, 32, 128):
    quantize_case((v + 3, 2 * v - 5), "i8", 8, (v, v), (0, 1))
for bits, storage in ((2, "i8"), (4, "i8"), (4, "i4"), (12, "i16"), (16, "i16")):
    quantize_case((19, 21), storage, bits, (8, 8), (0, 1))
quantize_case((5, 40), "i8", 8, (1, 16), (0, 1))
quantize_case((40, 5), "i8", 8, (16, 1), (0, 1))
quantize_case((3, 10, 12), "i8", 6, (4, 4), (0, 2))
for rounding in ("up", "down", "toward_zero"):
    quantize_case((17, 9), "i8", 5, (8, 8), (0, 1), rounding)
quantize_case((20, 33), "i8", 7, (16, 16), (0, 1), dynamic=True)
# Shared among 2 threads (tiles, and for NCHW the steps and the values;
# large enough for tq-cpu-share-loops to share them), stochastic rounding
# included: the same bits as the reference.
quantize_case((150, 77), "i8", 8, (16, 16), (0, 1), threads=2)
quantize_case((64, 16, 14, 14), "i8", 8, (32, 32), (0, 1), threads=2)
quantize_case((64, 16, 14, 14), "i8", 4, (32, 32), (0, 1), "stochastic", seed=5,
              threads=2)
# Power-of-two point positions (A2), including tiles whose max is tiny
# (subnormal steps, clamped at 2^-149) or near FLT_MAX.
for scale in ("pow2", "pow2_f32"):
    for bits, storage in ((8, "i8"), (4, "i8"), (16, "i16")):
        quantize_case((21, 19), storage, bits, (8, 8), (0, 1), scale=scale)
    quantize_case((20, 33), "i8", 6, (16, 16), (0, 1), dynamic=True, scale=scale)
quantize_case((20, 33), "i16", 11, (16, 16), (0, 1), dynamic=True)
# Split dims that leave the last dim out (an NCHW activation split on
# (N, C)): the tiles' elements are far apart, quantized in memory order.
quantize_case((37, 20, 5, 7), "i8", 8, (32, 32), (0, 1))
quantize_case((9, 12, 3, 4), "i8", 4, (8, 8), (0, 1), scale="pow2")
quantize_case((6, 10, 3, 5), "i16", 12, (4, 4), (0, 1), dynamic=True)
quantize_case((5, 7, 6), "i8", 8, (4, 4), (0, 1), "up")
# Unit dims after the split dims (N x C x 1 x 1): quantized as N x C.
quantize_case((37, 40, 1, 1), "i8", 8, (32, 32), (0, 1))
quantize_case((9, 12, 1), "i8", 4, (8, 8), (0, 1), "stochastic", seed=3)
quantize_case((19, 20, 1, 1), "i16", 12, (8, 8), (0, 1), dynamic=True, scale="pow2")
# Split on the first and last dims with dims between (an NHWC activation
# split on (N, C)): one tile per pixel, quantized in memory order with the
# channels as vectors. Channels fewer than a tile, not a multiple of the 16
# lanes, two tiles across them (the last partial), tiles of 8 over 6
# channels, pow2 steps, a run-time 12-bit width, stochastic rounding, 2
# threads.
quantize_case((37, 5, 7, 40), "i8", 8, (32, 32), (0, 3))
quantize_case((64, 7, 7, 24), "i8", 8, (32, 32), (0, 3), threads=2)


def nhwc_adversarial(shape, tile):
    """adversarial's values for a tensor split on its first and last dims
    (N x pixels x C): a tile is then rows [n0, n0 + t0) x channels
    [c0, c0 + t1) at one pixel. At pixel 0 the first tile is all zero, at
    pixel 1 zero but for +Inf, -Inf and NaN (step 0), at pixel 2 only
    subnormals (an f32 step of max / qmax rounds to 0: the values are 0)."""
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=min(flat.size, 10), replace=False)
    flat[picks] = np.array([np.nan, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-45, -2e-44,
                            0.0, 1e30, -1e-30][:len(picks)], np.float32)
    n, c = min(shape[0], tile[0]), min(shape[-1], tile[1])
    pix = x.reshape(shape[0], -1, shape[-1])
    pix[:n, 0, :c] = 0.0
    pix[:n, 1, :c] = 0.0
    pix[0, 1, 0], pix[n - 1, 1, c - 1], pix[0, 1, c // 2] = np.inf, -np.inf, np.nan
    pix[:n, 2, :c] = np.float32(1e-45) * rng.integers(-3, 4, (n, c)).astype(np.float32)
    return x


# A small batch (at most 4 rows of a tile at each pixel) is quantized pixel
# by pixel, each tile's steps then its values: one row, 3 rows, row tiles
# of 4 and 3 rows (4 x 4 tiles), 1 x 16 tiles, channels below the lanes (6,
# tiles of 8) and across tile and lane ends (130 in tiles of 16, 40 in
# 1 x 16), pow2 steps of both kinds, a
# run-time 12-bit width, stochastic rounding, 2 threads; the same bits as
# the reference. Fewer row tiles than threads (one image; 2 images on 3
# threads): the pixels are shared in blocks (63 pixels in blocks of 32, 9 in
# 3). Then 5 rows, and the cases above with this data, in memory order.
quantize_case((1, 9, 7, 24), "i8", 8, (32, 32), (0, 3), threads=2,
              data=nhwc_adversarial)
quantize_case((2, 3, 3, 40), "i8", 8, (32, 32), (0, 3), threads=3,
              data=nhwc_adversarial)
quantize_case((3, 5, 40), "i8", 8, (32, 32), (0, 2), data=nhwc_adversarial)
quantize_case((7, 3, 3, 4), "i8", 8, (4, 4), (0, 3), threads=2,
              data=nhwc_adversarial)
quantize_case((2, 6, 5, 6), "i8", 4, (8, 8), (0, 3), data=nhwc_adversarial)
quantize_case((5, 3, 3, 40), "i8", 8, (1, 16), (0, 3), data=nhwc_adversarial)
quantize_case((1, 4, 130), "i8", 8, (16, 16), (0, 2), scale="pow2",
              data=nhwc_adversarial)
quantize_case((2, 3, 3, 72), "i8", 6, (32, 32), (0, 3), scale="pow2_f32",
              data=nhwc_adversarial)
quantize_case((3, 4, 3, 48), "i16", 12, (16, 16), (0, 3), dynamic=True,
              data=nhwc_adversarial)
quantize_case((4, 5, 5, 40), "i8", 4, (32, 32), (0, 3), "stochastic", seed=9,
              threads=2, data=nhwc_adversarial)
quantize_case((5, 3, 4, 20), "i8", 8, (8, 8), (0, 3), data=nhwc_adversarial)
quantize_case((37, 5, 7, 40), "i8", 8, (32, 32), (0, 3), data=nhwc_adversarial)
quantize_case((70, 3, 3, 48), "i8", 4, (32, 32), (0, 3), "stochastic", seed=9,
              threads=2, data=nhwc_adversarial)
quantize_case((10, 3, 5, 6), "i8", 8, (8, 8), (0, 3))
quantize_case((33, 4, 130), "i8", 4, (16, 16), (0, 2), scale="pow2")
quantize_case((19, 3, 3, 48), "i16", 12, (16, 16), (0, 3), dynamic=True)
quantize_case((70, 3, 3, 48), "i8", 4, (32, 32), (0, 3), "stochastic", seed=9,
              threads=2)
# Stochastic rounding (a 32-bit hash of the seed and the row-major index):
# vector rows (2-D, and 3-D split on (0, 2)), in memory order, a run-time
# width, and a seed beyond 2^63 (its low 32 bits count).
quantize_case((19, 37), "i8", 4, (8, 8), (0, 1), "stochastic", seed=7)
quantize_case((3, 10, 12), "i8", 8, (4, 4), (0, 2), "stochastic", seed=3)
quantize_case((9, 12, 3, 4), "i16", 12, (8, 8), (0, 1), "stochastic", seed=11)
quantize_case((20, 33), "i8", 6, (16, 16), (0, 1), "stochastic", dynamic=True,
              seed=12345678901234567890)
# A run-time seed offset (a training step's iteration): the noise of seed +
# offset, modulo 2^32 (negative offsets, and sums past 2^32, wrap).
quantize_case((19, 37), "i8", 4, (8, 8), (0, 1), "stochastic", seed=7, offset=1234)
quantize_case((20, 33), "i8", 6, (16, 16), (0, 1), "stochastic", dynamic=True,
              seed=12345678901234567890, offset=-3)
quantize_case((64, 16, 14, 14), "i8", 4, (32, 32), (0, 1), "stochastic", seed=5,
              threads=2, offset=2**31 - 1)



# An NCHW quantization whose only user is a transpose to NHWC (a tq.conv2d's
# input) is written in NHWC directly, 16 channels x 16 pixels at a time
# transposed in registers: the data and steps equal the reference's,
# transposed. Channels and pixels that are not multiples of 16 (the last
# block masked both ways), a run-time 12-bit width in i16, pow2 steps,
# stochastic rounding (the noise of the NCHW index), 2 threads, every SIMD
# path.
from tq.cpu import host_targets, report_targets

TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)


def quantize_transpose_case(shape, storage, bits, tile, rounding="nearest_even",
                            dynamic=False, scale="f32", seed=None, threads=1,
                            target="native", offset=None):
    x = adversarial(shape, tile)
    n, c, h, w = shape
    ty = tiled(shape, storage, "?" if dynamic else bits, tile, (0, 1), scale)
    tty = tiled((n, h, w, c), storage, "?" if dynamic else bits, tile, (0, 3), scale)
    fty = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    bits_arg, quantize = quantize_op(fty, ty, dynamic, rounding, seed, offset)
    src = f"""
func.func @main(%x: {fty}{bits_arg}) -> {tty} {{
  {quantize}
  %t = tq.transpose %q [0, 2, 3, 1] : {ty} -> {tty}
  return %t : {tty}
}}
"""
    inputs = run_inputs(x, bits, dynamic, offset)
    q, steps = cpu.run(src, inputs, outputs=2, threads=threads, target=target)
    rq, rs, _, _ = ref.quantize(x, tile, (0, 1), bits, FORMS[scale], rounding,
                                seed=ref_seed(seed, offset))
    name = f"quantize-transpose {shape} {storage}:{bits} {scale} {rounding} {target}"
    check(name + " q", q.astype(np.int32), rq.transpose(0, 2, 3, 1))
    check(name + " steps", steps, rs.transpose(0, 2, 3, 1))


# The checks of the cases run on every target this host has, apart.
before = cases
for target in TARGETS:
    quantize_transpose_case((37, 20, 5, 7), "i8", 8, (32, 32), target=target)
    quantize_transpose_case((9, 40, 3, 4), "i8", 4, (8, 8), "stochastic", seed=5,
                            target=target)
looped = cases - before
quantize_transpose_case((6, 33, 3, 5), "i16", 12, (16, 16), dynamic=True)
quantize_transpose_case((9, 12, 3, 4), "i8", 4, (8, 8), scale="pow2")
quantize_transpose_case((64, 16, 14, 14), "i8", 8, (32, 32), threads=2)
quantize_transpose_case((64, 24, 7, 7), "i8", 4, (32, 32), "stochastic", seed=9,
                        threads=2)
quantize_transpose_case((9, 40, 3, 4), "i8", 4, (8, 8), "stochastic", seed=5,
                        offset=77)
# One pixel: a plain quantization, the transpose a reshape.
quantize_transpose_case((37, 40, 1, 1), "i8", 8, (32, 32))
quantize_transpose_case((70, 24, 1, 1), "i8", 4, (16, 16), "stochastic", seed=9,
                        threads=2)


# Given steps (tq.quantize ... scales(%s)): every tile uses its step, as
# the training step's frozen parameters do (SPEC A6); zero, negative, NaN
# and infinite steps quantize their tile to 0; values beyond qmax · step
# saturate.
def given_steps_case(shape, storage, bits, tile, dims, scale="f32",
                     rounding="nearest_even", refresh=None):
    x = adversarial(shape, tile)
    grid = list(shape)
    for k in range(2):
        grid[dims[k]] = -(-shape[dims[k]] // tile[k])
    # Steps from the data of another draw, some tiles much too small (they
    # saturate) and a few unusable.
    _, other, _, _ = ref.quantize(adversarial(shape, tile), tile, dims, bits,
                                  FORMS[scale])
    given = (other * np.where(rng.random(grid) < 0.3, 0.01, 1.0)).astype(np.float32)
    flat = given.reshape(-1)
    for i, v in enumerate([0.0, -1.0, np.nan, np.inf, 1e-40][:flat.size]):
        flat[(i * 7) % flat.size] = v
    ty = tiled(shape, storage, bits, tile, dims, scale)
    fty = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    gty = "tensor<" + "x".join(map(str, grid)) + "xf32>"
    rnd = f" rounding {rounding}" if rounding != "nearest_even" else ""
    # With refresh(%due), the steps are computed after all when it is set.
    due = "" if refresh is None else " refresh(%due)"
    src = f"""
func.func @main(%x: {fty}, %s: {gty}, %r: i32) -> ({ty}, {fty}) {{
  %c0 = arith.constant 0 : i32
  %due = arith.cmpi ne, %r, %c0 : i32
  %q = tq.quantize %x scales(%s : {gty}){due}{rnd} : {fty} -> {ty}
  %d = tq.dequantize %q : {ty} -> {fty}
  return %q, %d : {ty}, {fty}
}}
"""
    q, steps, deq = cpu.run(src, [x, given, np.array(refresh or 0, np.int32)],
                            outputs=3)
    rq, rs, ro, _ = ref.quantize(x, tile, dims, bits, FORMS[scale], rounding,
                                 steps=None if refresh else given)
    name = (f"given steps {shape} {storage}:{bits} tile {tile} dims {dims} "
            f"refresh {refresh}")
    check(name + " q", q.astype(np.int32), rq)
    check(name + " steps", steps, rs)
    check(name + " deq", deq, ref.dequantize(rq, rs, ro, tile, dims))
    saturated = int(np.sum(np.abs(rq) == ref.qmax(bits)))
    print(f"given steps {shape}: {saturated} saturated")


# tq.steps of a quantization given back to tq.quantize: the same bits.
def steps_round_trip_case(shape, storage, bits, tile, dims, scale="f32"):
    x = adversarial(shape, tile)
    grid = list(shape)
    for k in range(2):
        grid[dims[k]] = -(-shape[dims[k]] // tile[k])
    ty = tiled(shape, storage, bits, tile, dims, scale)
    fty = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    gty = "tensor<" + "x".join(map(str, grid)) + "xf32>"
    src = f"""
func.func @main(%x: {fty}) -> ({gty}, {ty}) {{
  %f = tq.quantize %x : {fty} -> {ty}
  %s = tq.steps %f : {ty} -> {gty}
  %q = tq.quantize %x scales(%s : {gty}) : {fty} -> {ty}
  return %s, %q : {gty}, {ty}
}}
"""
    s, q, qsteps = cpu.run(src, [x], outputs=3)
    rq, rs, _, _ = ref.quantize(x, tile, dims, bits, FORMS[scale])
    name = f"steps round trip {shape} {storage}:{bits} {scale}"
    check(name + " steps", s, rs)
    check(name + " q", q.astype(np.int32), rq)
    check(name + " q steps", qsteps, rs)


steps_round_trip_case((33, 50), "i8", 8, (16, 16), (0, 1))
steps_round_trip_case((21, 19), "i8", 4, (8, 8), (0, 1), scale="pow2")
steps_round_trip_case((37, 20, 5, 7), "i8", 8, (32, 32), (0, 1))
given_steps_case((19, 37), "i8", 8, (8, 8), (0, 1))
given_steps_case((40, 33), "i8", 4, (16, 16), (0, 1), scale="pow2", rounding="up")
given_steps_case((9, 12, 3, 4), "i16", 12, (8, 8), (0, 1))
given_steps_case((64, 16, 4, 4), "i8", 8, (16, 16), (0, 1))
given_steps_case((20, 12, 1, 1), "i8", 8, (8, 8), (0, 1))
for flag in (0, 1):
    given_steps_case((19, 37), "i8", 8, (8, 8), (0, 1), refresh=flag)
    given_steps_case((9, 12, 3, 4), "i16", 12, (8, 8), (0, 1), refresh=flag)
    given_steps_case((20, 12, 1, 1), "i8", 8, (8, 8), (0, 1), refresh=flag)


# Run-time adaptive bit width (A3/A4): tq.adaptive_bit_width searches the
# width on the data, tq.quantize uses it; the width equals the C++ golden
# model's search (tq-ref search) and the data its quantization.
import re
import subprocess

tq_ref = sys.argv[2]


def adaptive_case(shape, v, low, high, init, scale="f32", far=""):
    global failures, cases
    x = (rng.standard_normal(shape) * np.linspace(0.01, 3, shape[1])).astype(np.float32)
    x[0, 0] = np.nan
    ty = tiled(shape, "i16", "?", (v, v), (0, 1), scale)
    fty = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    src = f"""
func.func @main(%x: {fty}) -> (i32, {ty}) {{
  %n = tq.adaptive_bit_width %x for {ty} {{low = {low} : f32, high = {high} : f32, init = {init} : i64{far}}} : {fty} -> i32
  %q = tq.quantize %x bits(%n : i32) : {fty} -> {ty}
  return %n, %q : i32, {ty}
}}
"""
    n, q, steps = cpu.run(src, [x], outputs=3)
    path = cpu.flow.path(f"adaptive-{cases}.npy")
    np.save(path, x)
    args = [tq_ref, "search", path, f"--tile={v}x{v}", f"--low={low}",
            f"--high={high}", f"--init={init}", f"--form={FORMS[scale]}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    want = int(re.search(r"bits (\d+)", out).group(1))
    print(f"adaptive V={v} thresholds {low}..{high} from {init} bits: {want} bits")
    check(f"adaptive {shape} V={v} {low}..{high} init {init} {scale} bits",
          np.asarray(n).reshape(()), np.array(want, np.int32))
    rq, rs, _, _ = ref.quantize(x, (v, v), (0, 1), want, FORMS[scale])
    check(f"adaptive {shape} V={v} q", q.astype(np.int32), rq)
    check(f"adaptive {shape} V={v} steps", steps, rs)


adaptive_case((40, 52), 16, 0.002, 0.01, 8)   # goes up
adaptive_case((40, 52), 16, 0.05, 0.2, 8)     # goes down
adaptive_case((33, 30), 8, 0.0005, 0.001, 4, scale="pow2")
adaptive_case((64, 64), 32, 0.004, 0.006, 12)

print(f"quantize cases: {cases - looped} and {looped // len(TARGETS)} per target, "
      f"mismatches: {failures}")
# CHECK-NOT: MISMATCH
# CHECK: given steps (19, 37): {{[1-9][0-9]*}} saturated
# CHECK: adaptive V=16 thresholds 0.002..0.01 from 8 bits: {{9|1[0-6]}} bits
# CHECK: adaptive V=16 thresholds 0.05..0.2 from 8 bits: {{[2-7]}} bits
# CHECK-NOT: MISMATCH
# CHECK: quantize cases: 251 and 4 per target, mismatches: 0
