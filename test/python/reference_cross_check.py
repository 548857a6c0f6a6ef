# RUN: %python %s tq-ref | FileCheck %s
# Cross-checks the C++ reference numerics (through tq-ref) against the
# independent numpy implementation in python/tq/reference.py: quantized
# data, steps, offsets and dequantized values bit for bit, on random and
# adversarial tensors, every form, rounding mode and bit width; tiled matmul
# (with both transposed forms and the bf16 scale product) and conv2d bit for
# bit; the A4 search's width and error;
# post-processing, the weight update, per-tile widths and requantization
# (into other tiles, widths and forms, transposed) bit for bit.
import os
import subprocess
import sys
import tempfile

import numpy as np

from tq import reference as ref

TQ_REF = sys.argv[1]
rng = np.random.default_rng(2026)
tmp = tempfile.mkdtemp()
failures = 0
checked = 0


def same_bits(a, b):
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def run(*args):
    out = subprocess.run([TQ_REF, *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return out.stdout


def check_quantize(name, x, tile, dims, bits, form, rounding="nearest_even", seed=0):
    global failures, checked
    path = os.path.join(tmp, "x.npy")
    np.save(path, x.astype(np.float32))
    prefix = os.path.join(tmp, "out")
    if np.ndim(bits):
        np.save(os.path.join(tmp, "bits.npy"), np.asarray(bits, np.int32))
        width = f"--bits-per-tile={os.path.join(tmp, 'bits.npy')}"
    else:
        width = f"--bits={bits}"
    run("quantize", path, f"--tile={tile[0]}x{tile[1]}", f"--dims={dims[0]},{dims[1]}",
        width, f"--form={form}", f"--rounding={rounding}", f"--seed={seed}",
        "-o", prefix)
    q, steps, offsets, points = ref.quantize(x, tile, dims, bits, form, rounding, seed)
    deq = ref.dequantize(q, steps, offsets, tile, dims)
    got = {k: np.load(f"{prefix}.{k}.npy") for k in ("q", "steps", "offsets", "deq")}
    for key, want in (("q", q), ("steps", steps), ("offsets", offsets), ("deq", deq)):
        checked += 1
        if not same_bits(got[key], want):
            failures += 1
            bad = np.argwhere(got[key] != want)[:3]
            print(f"MISMATCH {name} {key} bits={bits} form={form} rounding={rounding} at {bad.tolist()}")


def compare(name, prefix, want):
    global failures, checked
    for key, value in zip(("q", "steps", "offsets"), want):
        checked += 1
        got = np.load(f"{prefix}.{key}.npy")
        if not same_bits(got, value.astype(got.dtype) if key == "q" else value):
            failures += 1
            bad = np.argwhere(got != value)[:3]
            print(f"MISMATCH {name} {key} at {bad.tolist()}")


def grid_of(shape, tile, dims):
    grid = list(shape)
    for k in range(2):
        grid[dims[k]] = -(-shape[dims[k]] // tile[k])
    return grid


cases = [
    ("random", rng.standard_normal((37, 45)).astype(np.float32), (16, 16), (0, 1)),
    ("wide", (rng.standard_normal((8, 70)) * 100).astype(np.float32), (1, 32), (0, 1)),
    ("rank3", rng.uniform(-3, 5, (5, 4, 33)).astype(np.float32), (8, 8), (0, 2)),
    ("rank4", rng.standard_normal((3, 2, 2, 20)).astype(np.float32), (2, 2), (0, 3)),
]
zeros = np.zeros((20, 20), np.float32)
zeros[:4, :4] = rng.standard_normal((4, 4))
cases.append(("zero-tiles", zeros, (8, 8), (0, 1)))
special = rng.standard_normal((9, 9)).astype(np.float32)
special[0, 0], special[1, 1], special[2, 2] = np.nan, np.inf, -np.inf
special[8, :] = 3.0e38
special[7, :] = -1.0e-40  # denormals
cases.append(("nan-inf-extreme", special, (4, 4), (0, 1)))
cases.append(("shifted", rng.uniform(10, 14, (16, 16)).astype(np.float32), (8, 8), (0, 1)))

for name, x, tile, dims in cases:
    for form in ref.FORMS:
        for bits in (2, 3, 4, 8, 12, 16):
            check_quantize(name, x, tile, dims, bits, form)
for rounding in ref.ROUNDINGS:
    for form in ("scaled", "pow2", "offset_pow2_scaled"):
        check_quantize("random", cases[0][1], (16, 16), (0, 1), 4, form, rounding, seed=99)

# Per-tile widths: each tile at its own width, 2 to 16, drawn at random.
for name, x, tile, dims in cases:
    widths = rng.integers(2, 17, grid_of(x.shape, tile, dims))
    for form in ("scaled", "pow2", "offset_pow2_scaled"):
        check_quantize(f"{name} per-tile widths", x, tile, dims, widths, form)
check_quantize("per-tile widths, stochastic", cases[0][1], (16, 16), (0, 1),
               rng.integers(2, 9, (3, 3)), "scaled", "stochastic", seed=5)


# tq.requantize: x quantized in one layout, then into another, bit for bit.
def check_requantize(name, x, tile, dims, bits, form, to_tile, to_dims, to_bits, to_form,
                     perm=None, rounding="nearest_even", seed=0):
    global failures, checked
    path, prefix = os.path.join(tmp, "rq.npy"), os.path.join(tmp, "rq")
    np.save(path, x.astype(np.float32))
    flags = [f"--tile={tile[0]}x{tile[1]}", f"--dims={dims[0]},{dims[1]}", f"--bits={bits}",
             f"--form={form}", f"--to-tile={to_tile[0]}x{to_tile[1]}",
             f"--to-dims={to_dims[0]},{to_dims[1]}", f"--to-bits={to_bits}",
             f"--to-form={to_form}", f"--rounding={rounding}", f"--seed={seed}"]
    if perm is not None:
        flags.append("--perm=" + ",".join(map(str, perm)))
    run("requantize", path, *flags, "-o", prefix)
    q, steps, offsets, _ = ref.quantize(x, tile, dims, bits, form, rounding, seed)
    want = ref.requantize(q, steps, offsets, tile, dims, to_tile, to_dims, to_bits, to_form,
                          rounding, seed, perm)
    compare(f"requantize {name}", prefix, want[:3])


for name, x, tile, dims in cases:
    if x.ndim != 2:
        continue
    # The transposed use of a 1xV quantization: VxV tiles of the transpose.
    check_requantize(f"{name} 1xV to transposed VxV", x, (1, 16), (0, 1), 8, "scaled",
                     (16, 16), (0, 1), 8, "scaled", perm=(1, 0))
    check_requantize(f"{name} 8 to 4 bits", x, (8, 8), (0, 1), 8, "scaled", (8, 8), (0, 1),
                     4, "offset_pow2_scaled")
    check_requantize(f"{name} to other tiles", x, (4, 4), (0, 1), 6, "pow2", (3, 5),
                     (0, 1), 12, "scaled")
check_requantize("rank3, dims moved", cases[2][1], (8, 8), (0, 2), 8, "scaled", (4, 8),
                 (1, 2), 8, "scaled", perm=(0, 2, 1))
check_requantize("stochastic", cases[0][1], (16, 16), (0, 1), 8, "scaled", (16, 16), (0, 1),
                 4, "scaled", rounding="stochastic", seed=11)

# Tiled matmul, forward and the two transposed forms, bit for bit.
def check_matmul(m, k, n, v, bits, transpose_a=False, transpose_b=False, bf16=False):
    global failures, checked
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    pa, pb, pc = (os.path.join(tmp, f) for f in ("a.npy", "b.npy", "c.npy"))
    np.save(pa, a)
    np.save(pb, b)
    flags = (["--transpose-a"] * transpose_a + ["--transpose-b"] * transpose_b +
             ["--bf16-scale-product"] * bf16)
    run("matmul", pa, pb, f"--tile={v}x{v}", f"--bits={bits}", "--form=scaled", *flags, "-o", pc)
    qa, sa, _, _ = ref.quantize(a, (v, v), (0, 1), bits, "scaled")
    qb, sb, _, _ = ref.quantize(b, (v, v), (0, 1), bits, "scaled")
    # Square tiles: the transpose is the transposed data and scale grid (T4).
    if transpose_a:
        qa, sa = qa.T, sa.T
    if transpose_b:
        qb, sb = qb.T, sb.T
    want = ref.matmul(qa, sa, (v, v), qb, sb, (v, v), "bf16" if bf16 else "exact")
    checked += 1
    if not same_bits(np.load(pc), want):
        failures += 1
        print(f"MISMATCH matmul {m}x{k}x{n} V={v} tA={transpose_a} tB={transpose_b} "
              f"bf16={bf16}")

for v in (8, 16, 32):
    check_matmul(37, 70, 29, v, 8)
    check_matmul(37, 70, 29, v, 8, transpose_b=True)  # dX = dY . W^T
    check_matmul(37, 70, 29, v, 4, transpose_a=True)  # dW = X^T . dY
check_matmul(5, 129, 3, 128, 8)
# The bf16 scale product: each pair of steps multiplied in bf16.
for v in (8, 32):
    check_matmul(37, 70, 29, v, 8, bf16=True)
    check_matmul(37, 70, 29, v, 4, transpose_b=True, bf16=True)

# Tiled conv2d (NHWC x KRSC, tiles on N and C / K and C), bit for bit:
# strides, dilations, asymmetric padding, C not a multiple of V.
def check_conv2d(n, h, w, c, k, r, s, v, bits, stride=(1, 1), dilation=(1, 1),
                 pad=(0, 0, 0, 0)):
    global failures, checked
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    f = rng.standard_normal((k, r, s, c)).astype(np.float32)
    px, pf, py = (os.path.join(tmp, name) for name in ("cx.npy", "cf.npy", "cy.npy"))
    np.save(px, x)
    np.save(pf, f)
    run("conv2d", px, pf, f"--tile={v}x{v}", f"--bits={bits}", "--form=scaled",
        f"--stride={stride[0]},{stride[1]}", f"--dilation={dilation[0]},{dilation[1]}",
        "--pad=" + ",".join(map(str, pad)), "-o", py)
    qx, sx, _, _ = ref.quantize(x, (v, v), (0, 3), bits, "scaled")
    qf, sf, _, _ = ref.quantize(f, (v, v), (0, 3), bits, "scaled")
    want = ref.conv2d(qx, sx, qf, sf, v, stride, dilation, pad)
    checked += 1
    if not same_bits(np.load(py), want):
        failures += 1
        print(f"MISMATCH conv2d {n}x{h}x{w}x{c} * {k}x{r}x{s} V={v} stride={stride} "
              f"dilation={dilation} pad={pad}")


check_conv2d(3, 7, 6, 20, 5, 3, 3, 8, 8)
check_conv2d(2, 9, 9, 16, 17, 3, 2, 16, 4, stride=(2, 1), pad=(1, 0, 2, 1))
check_conv2d(4, 8, 8, 9, 6, 2, 2, 4, 8, dilation=(2, 3), pad=(1, 1, 1, 1))
check_conv2d(1, 5, 5, 33, 3, 1, 1, 32, 8)

# The A4 bit-width search (docs/Numerics.md): the same width and the same
# error (within f64 summation order) as tq-ref, over the whole tensor in
# tiles and per tile, going up, going down, crossing the band, stopping at
# a bound, with a variable step.
def check_search(name, x, tile, form, low, high, init, min_bits=2, max_bits=16,
                 step=1, far_step=0, far_margin=0.0):
    global failures, checked
    path = os.path.join(tmp, "s.npy")
    np.save(path, x)
    flags = [f"--tile={tile[0]}x{tile[1]}", f"--low={low}", f"--high={high}",
             f"--init={init}", f"--min={min_bits}", f"--max={max_bits}",
             f"--step={step}", f"--far-step={far_step}", f"--far-margin={far_margin}",
             f"--form={form}"]
    options = dict(low=low, high=high, init=init, min_bits=min_bits, max_bits=max_bits,
                   step=step, far_step=far_step, far_margin=far_margin)
    dims = (x.ndim - 2, x.ndim - 1)
    lines = run("search", path, *flags).splitlines()
    want = [ref.search_tiled(x, tile, dims, form, **options)]
    lines += run("search", path, *flags, "--per-tile").splitlines()
    want += ref.search_per_tile(x, tile, dims, form, **options)
    for line, (bits, err, _) in zip(lines, want):
        words = line.split()
        checked += 1
        got_bits, got_err = int(words[1]), float(words[3])
        if got_bits != bits or abs(got_err - err) > 1e-12 * max(err, 1e-300):
            failures += 1
            print(f"MISMATCH search {name} {form} {low}..{high} init {init}: "
                  f"tq-ref {got_bits} bits {got_err}, numpy {bits} bits {err}")
            return
    if len(lines) != len(want):
        failures += 1
        print(f"MISMATCH search {name}: {len(lines)} results, numpy {len(want)}")


x = rng.standard_normal((64, 64)).astype(np.float32)
check_search("random up", x, (32, 32), "scaled", 0.002, 0.01, 4)
check_search("random down", x, (32, 32), "scaled", 0.002, 0.01, 16)
check_search("random pow2", x, (16, 16), "pow2", 0.01, 0.03, 8)
check_search("random offset", x, (16, 16), "offset_pow2_scaled", 0.005, 0.02, 3)
# The band lies between 9 and 10 bits: going up the search stops at 10;
# going down it turns back at 9 and ends at 10.
check_search("band crossed going up", x, (32, 32), "scaled", 0.004, 0.0045, 2)
check_search("band crossed going down", x, (32, 32), "scaled", 0.004, 0.0045, 16)
check_search("at the cap", x, (32, 32), "scaled", 1e-9, 2e-9, 8, max_bits=10)
check_search("at the floor", x, (32, 32), "scaled", 0.9, 0.95, 8, min_bits=3)
check_search("far step", x, (32, 32), "scaled", 0.002, 0.004, 2, max_bits=16,
             far_step=4, far_margin=0.05)
check_search("far step down", x, (16, 16), "pow2", 0.05, 0.08, 16, far_step=3, far_margin=0.01)
check_search("step 2", x, (16, 16), "scaled", 0.003, 0.02, 3, step=2)
for name, y, tile, _ in cases:
    check_search(name, y, tile, "scaled", 0.005, 0.02, 8)
    check_search(name, y, tile, "offset_scaled", 0.01, 0.05, 4)

# Post-processing (T6) and the weight update (T7), bit for bit: data,
# steps, offsets and the layer scale.
def check_postprocess(name, acc, tile, bits, form, layer_scale=None, compute=False,
                      relu=False, rounding="nearest_even", seed=0):
    global failures, checked
    path, prefix = os.path.join(tmp, "acc.npy"), os.path.join(tmp, "pp")
    np.save(path, acc)
    flags = [f"--tile={tile[0]}x{tile[1]}", f"--bits={bits}", f"--form={form}",
             f"--rounding={rounding}", f"--seed={seed}"]
    if layer_scale is not None:
        flags.append(f"--layer-scale={layer_scale!r}")
    flags += ["--compute-layer-scale"] * compute + ["--relu"] * relu
    out = run("postprocess", path, *flags, "-o", prefix)
    dims = (acc.ndim - 2, acc.ndim - 1)
    *want, s_layer = ref.postprocess(acc, tile, dims, bits, form, layer_scale, compute,
                                     relu, rounding, seed)
    compare(f"postprocess {name}", prefix, want)
    checked += 1
    if np.float32(float(out.split()[-1])) != s_layer:
        failures += 1
        print(f"MISMATCH postprocess {name} layer scale {out.strip()} vs {s_layer!r}")


def check_weight_update(name, w, dw, lr, tile, bits, form, rounding="nearest_even", seed=0):
    pw, pdw, prefix = (os.path.join(tmp, f) for f in ("w.npy", "dw.npy", "wu"))
    np.save(pw, w)
    np.save(pdw, dw)
    run("weight-update", pw, pdw, f"--lr={lr!r}", f"--tile={tile[0]}x{tile[1]}",
        f"--bits={bits}", f"--form={form}", f"--rounding={rounding}", f"--seed={seed}",
        "-o", prefix)
    q, steps, offsets, _ = ref.quantize(w, tile, (0, 1), bits, form)
    want = ref.weight_update(q, steps, offsets, tile, (0, 1), dw, lr, bits, form,
                             rounding, seed)
    compare(f"weight-update {name}", prefix, want)


acc = (rng.standard_normal((37, 45)) * 40).astype(np.float32)
acc_special = acc.copy()
acc_special[0, 0], acc_special[1, 1], acc_special[2, 2] = np.nan, np.inf, -np.inf
acc_special[3, :] = 3.0e38
for form in ("scaled", "pow2", "offset_pow2_scaled"):
    for bits in (4, 8):
        check_postprocess("computed scale, relu", acc, (16, 16), bits, form, compute=True,
                          relu=True)
        check_postprocess("given scale", acc, (16, 16), bits, form, layer_scale=2.5)
        check_postprocess("no scale, relu", acc_special, (8, 8), bits, form, relu=True)
        check_postprocess("computed scale, special values", acc_special, (8, 8), bits,
                          form, compute=True)
check_postprocess("zero scale", acc, (16, 16), 8, "scaled", layer_scale=0.0)
check_postprocess("all zero", np.zeros((20, 20), np.float32), (8, 8), 8, "scaled",
                  compute=True, relu=True)
check_postprocess("stochastic", acc, (16, 16), 4, "scaled", compute=True,
                  rounding="stochastic", seed=7)

w = rng.standard_normal((40, 24)).astype(np.float32)
dw = (rng.standard_normal((40, 24)) * 3).astype(np.float32)
dw_special = dw.copy()
dw_special[0, 0], dw_special[5, 5] = np.nan, np.inf
for form in ("scaled", "pow2", "offset_scaled"):
    for bits in (4, 8, 12):
        check_weight_update(f"{form} {bits}", w, dw, 0.05, (8, 8), bits, form)
check_weight_update("special gradients", w, dw_special, 0.1, (16, 16), 8, "scaled")
check_weight_update("stochastic", w, dw, 0.01, (8, 8), 4, "scaled", "stochastic", 3)
check_weight_update("zero rate", w, dw, 0.0, (8, 8), 8, "pow2_scaled")

print(f"checked {checked}, failures {failures}")
# CHECK-NOT: MISMATCH
# CHECK: failures 0
