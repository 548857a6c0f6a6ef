# RUN: %python %s tq-run | FileCheck %s
# tq.quantize and tq.dequantize compiled by tq-to-cpu and run (T1, T3, A2):
# the data, steps and dequantized values equal the numpy reference bit for
# bit, for V = 8, 16, 32, 128, widths 2, 4, 8, 12, 16 (fixed and run-time
# `?`), shapes that are not multiples of the tile, 1xV / Vx1 tiles, 3-D
# tensors, the directed rounding modes and adversarial data: NaN, ±Inf,
# all-zero tiles, FLT_MAX, denormals.
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


def quantize_case(shape, storage, bits, tile, dims, rounding="nearest_even",
                  dynamic=False, scale="f32"):
    x = adversarial(shape, tile)
    ty = tiled(shape, storage, "?" if dynamic else bits, tile, dims, scale)
    fty = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    bits_arg = ", %n: i32" if dynamic else ""
    bits_use = " bits(%n : i32)" if dynamic else ""
    rnd = f" rounding {rounding}" if rounding != "nearest_even" else ""
    src = f"""
func.func @main(%x: {fty}{bits_arg}) -> ({ty}, {fty}) {{
  %q = tq.quantize %x{bits_use}{rnd} : {fty} -> {ty}
  %d = tq.dequantize %q : {ty} -> {fty}
  return %q, %d : {ty}, {fty}
}}
"""
    inputs = [x] + ([np.array(bits, np.int32)] if dynamic else [])
    q, steps, deq = cpu.run(src, inputs, outputs=3)
    rq, rs, ro, _ = ref.quantize(x, tile, dims, bits, FORMS[scale], rounding)
    name = f"{shape} {storage}:{bits} {scale} tile {tile} dims {dims} {rounding}" + (
        " dynamic" if dynamic else "")
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
# Power-of-two point positions (A2), including tiles whose max is tiny
# (subnormal steps, clamped at 2^-149) or near FLT_MAX.
for scale in ("pow2", "pow2_f32"):
    for bits, storage in ((8, "i8"), (4, "i8"), (16, "i16")):
        quantize_case((21, 19), storage, bits, (8, 8), (0, 1), scale=scale)
    quantize_case((20, 33), "i8", 6, (16, 16), (0, 1), dynamic=True, scale=scale)
quantize_case((20, 33), "i16", 11, (16, 16), (0, 1), dynamic=True)

print(f"quantize cases: {cases}, mismatches: {failures}")
# CHECK-NOT: MISMATCH
# CHECK: quantize cases: 75, mismatches: 0
