"""An independent numpy implementation of tile-quant's reference numerics.

Written from docs/Requirements.md (T3, T5, A2, A3, A4) and docs/Numerics.md
(the choices the spec leaves open), not from the C++ code, so that the
test suite can cross-check the two: same f32 operations in the same order,
hence bit-identical results. Needs Debian's numpy (/usr/bin/python3).
"""
from fractions import Fraction
import math

import numpy as np

F32 = np.float32

FORMS = ("pow2", "pow2_scaled", "scaled", "offset", "offset_pow2",
         "offset_scaled", "offset_pow2_scaled")
ROUNDINGS = ("nearest_even", "up", "down", "toward_zero", "stochastic")
MASK32 = (1 << 32) - 1
MASK64 = (1 << 64) - 1


def qmax(bits):
    return (1 << (bits - 1)) - 1


def point_position(z, bits):
    """Smallest integer s with z <= qmax * 2^s, in exact rational arithmetic."""
    z = Fraction(float(z))
    q = qmax(bits)
    s = math.ceil(math.log2(float(z) / q))  # an estimate, then made exact
    while z <= q * Fraction(2) ** (s - 1):
        s -= 1
    while z > q * Fraction(2) ** s:
        s += 1
    return s


def clamped_point_position(z, bits):
    """2^s must stay a finite, non-zero f32: s in [-149, 127]."""
    return min(max(point_position(z, bits), -149), 127)


def tile_params(values, bits, form):
    """(point position, factor, offset) of one tile (SPEC A2)."""
    fin = values[np.isfinite(values)].astype(F32)
    zmax = F32(fin.max()) if fin.size else F32(0)
    zmin = F32(fin.min()) if fin.size else F32(0)
    z = F32(np.abs(fin).max()) if fin.size else F32(0)
    offset = F32(0)
    if form.startswith("offset"):
        offset = F32(zmax / F32(2) + zmin / F32(2))
        z = F32(zmax / F32(2) - zmin / F32(2))
    q = F32(qmax(bits))
    if form == "offset":
        return 0, F32(1), offset
    if z == 0:
        return 0, F32(0), offset
    if form in ("pow2", "offset_pow2"):
        return clamped_point_position(z, bits), F32(1), offset
    if form in ("pow2_scaled", "offset_pow2_scaled"):
        s = clamped_point_position(z, bits)
        return s, F32(F32(np.ldexp(z, -s)) / q), offset
    return 0, F32(z / q), offset


def hash_noise(seed, index):
    """Stochastic rounding's noise for element `index` (docs/Numerics.md):
    a 32-bit hash of index + seed·0x9E3779B9 (mod 2^32), its top 24 bits
    times 2^-24."""
    x = (index + (seed & MASK32) * 0x9E3779B9) & MASK32
    x = ((x ^ (x >> 16)) * 0x7FEB352D) & MASK32
    x = ((x ^ (x >> 15)) * 0x846CA68B) & MASK32
    x ^= x >> 16
    return F32((x >> 8) * (1.0 / 16777216.0))


def round_values(v, rounding, noise=None):
    if rounding == "nearest_even":
        return np.rint(v)
    if rounding == "up":
        return np.ceil(v)
    if rounding == "down":
        return np.floor(v)
    if rounding == "toward_zero":
        return np.trunc(v)
    f = np.floor(v)
    return np.where((v - f).astype(F32) > noise, f + F32(1), f)


def tile_slices(shape, tile, dims):
    """Yields (grid index, tuple of slices) for every tile, grid row-major."""
    grid = list(shape)
    for k in range(2):
        grid[dims[k]] = -(-shape[dims[k]] // tile[k])
    for g in np.ndindex(*grid):
        sl = []
        for d, i in enumerate(g):
            if d in dims:
                t = tile[dims.index(d)]
                sl.append(slice(i * t, min((i + 1) * t, shape[d])))
            else:
                sl.append(slice(i, i + 1))
        yield g, tuple(sl)


def quantize(x, tile, dims, bits, form, rounding="nearest_even", seed=0,
             steps=None):
    """Returns (q int32, steps f32 grid, offsets f32 grid, points i32 grid).

    `bits` is one width for every tile, or an integer array of the grid's
    shape: each tile's own width (per-tile widths, A4 per tile).

    With `steps` (f32, the grid's shape), each tile uses its given step
    instead of one computed from its data; a given step that is not finite
    and positive counts as 0. Points are then 0."""
    given = None if steps is None else np.asarray(steps, dtype=F32)
    x = np.asarray(x, dtype=F32)
    grid = list(x.shape)
    for k in range(2):
        grid[dims[k]] = -(-x.shape[dims[k]] // tile[k])
    steps = np.zeros(grid, F32)
    offsets = np.zeros(grid, F32)
    points = np.zeros(grid, np.int32)
    q = np.zeros(x.shape, np.int32)
    widths = np.broadcast_to(np.asarray(bits, dtype=np.int64), grid)
    noise_all = None
    if rounding == "stochastic":
        noise_all = np.array([hash_noise(seed, i) for i in range(x.size)],
                             F32).reshape(x.shape)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for g, sl in tile_slices(x.shape, tile, dims):
            vals = x[sl]
            b = int(widths[g])
            m = F32(qmax(b))
            if given is None:
                s, f, o = tile_params(vals, b, form)
                step = F32(np.ldexp(f, s))
            else:
                step, o, s = given[g], F32(0), 0
                if not (np.isfinite(step) and step > 0):
                    step = F32(0)
            steps[g], offsets[g], points[g] = step, o, s
            if step == 0:
                out = np.zeros(vals.shape, F32)
            else:
                v = ((vals - o).astype(F32) / step).astype(F32)
                v = np.clip(v, -m, m)
                noise = noise_all[sl] if noise_all is not None else None
                out = round_values(v, rounding, noise)
            out = np.where(np.isnan(vals), F32(0), out)
            out = np.where(np.isposinf(vals), m, out)
            out = np.where(np.isneginf(vals), -m, out)
            q[sl] = out.astype(np.int32)
    return q, steps, offsets, points


def dequantize(q, steps, offsets, tile, dims):
    out = np.zeros(q.shape, F32)
    # Near FLT_MAX, q * step may overflow to inf, as in the C++ library.
    with np.errstate(over="ignore", invalid="ignore"):
        for g, sl in tile_slices(q.shape, tile, dims):
            out[sl] = (q[sl].astype(F32) * steps[g]).astype(F32) + offsets[g]
    return out


def requantize(q, steps, offsets, tile, dims, to_tile, to_dims, bits, form,
               rounding="nearest_even", seed=0, perm=None):
    """tq.requantize: the tensor's values (dequantized), permuted by `perm`
    (result dim i is input dim perm[i]) if given, quantized afresh into
    `to_tile` tiles on `to_dims` at `bits` in `form`. Returns what
    `quantize` returns."""
    x = dequantize(q, steps, offsets, tile, dims)
    if perm is not None:
        x = np.ascontiguousarray(np.transpose(x, perm))
    return quantize(x, to_tile, to_dims, bits, form, rounding, seed)


def error_a3(x, xhat):
    """SPEC A3: log2(sum|xhat - x| / sum|x| + 1) over finite x, in f64."""
    x = np.asarray(x, np.float64)
    keep = np.isfinite(x)
    total = np.abs(x[keep]).sum()
    if total == 0:
        return 0.0
    return math.log2(np.abs(np.asarray(xhat, np.float64)[keep] - x[keep]).sum()
                     / total + 1)


def search_bits(error_at, low, high, init=8, min_bits=2, max_bits=16, step=1,
                far_step=0, far_margin=0.0):
    """SPEC A4 as docs/Numerics.md states it: from `init` (clamped to
    [min_bits, max_bits]), move up by `step` while error_at(bits) is above
    `high` and below `max_bits`, down while it is below `low` and above
    `min_bits`; a move whose error is more than `far_margin` beyond the
    threshold uses `far_step` when it is set. A search that turns back
    (crosses the band) stops at the larger of its last two widths.
    Returns (bits, error at bits, errors measured)."""
    bits = min(max(init, min_bits), max_bits)
    previous, last_dir, measured = bits, 0, 0
    while True:
        err = error_at(bits)
        measured += 1
        if err > high and bits < max_bits:
            direction, excess = 1, err - high
        elif err < low and bits > min_bits:
            direction, excess = -1, low - err
        else:
            return bits, err, measured
        if last_dir == -direction:
            if bits > previous:
                return bits, err, measured
            return previous, error_at(previous), measured + 1
        move = far_step if far_step > 0 and excess > far_margin else step
        previous, last_dir = bits, direction
        bits = min(max_bits, max(min_bits, bits + direction * move))


def search_tiled(x, tile, dims, form, **options):
    """A4 over the whole tensor, quantized in tiles (each with its own
    parameters), the error over all its elements: (bits, error, measured)."""
    def error_at(bits):
        q, steps, offsets, _ = quantize(x, tile, dims, bits, form)
        return error_a3(x, dequantize(q, steps, offsets, tile, dims))
    return search_bits(error_at, **options)


def search_per_tile(x, tile, dims, form, **options):
    """A4 for each tile on its own (grid row-major): [(bits, error, measured)]."""
    out = []
    for _, sl in tile_slices(np.shape(x), tile, dims):
        values = np.asarray(x, F32)[sl].reshape(1, -1)
        out.append(search_tiled(values, (1, values.size), (0, 1), form, **options))
    return out


def round_bf16(x):
    """f32 -> nearest-even bf16 precision, kept in f32 (Inf/NaN unchanged)."""
    x = np.asarray(x, F32)
    bits = x.view(np.uint32).astype(np.uint64)
    lsb = (bits >> 16) & 1
    rounded = (((bits + 0x7FFF + lsb) & 0xFFFF0000) & 0xFFFFFFFF).astype(np.uint32)
    return np.where(np.isfinite(x), rounded.view(F32), x).astype(F32)


def matmul(qa, sa, tile_a, qb, sb, tile_b, scale_product="exact"):
    """SPEC T5 for 2-D operands split on (0, 1): int partial sums per K-tile,
    times sA*sB in f32 (rounded to bf16 with scale_product="bf16"),
    accumulated in f32 in increasing K-tile order. A transposed operand is
    passed transposed (q.T, steps.T, tile reversed: T4)."""
    m, k = qa.shape
    n = qb.shape[1]
    ktile = tile_a[1]
    assert tile_b[0] == ktile, "K-tile extents differ"
    acc = np.zeros((m, n), F32)
    for t, k0 in enumerate(range(0, k, ktile)):
        k1 = min(k, k0 + ktile)
        psum = qa[:, k0:k1].astype(np.int64) @ qb[k0:k1, :].astype(np.int64)
        assert np.abs(psum).max(initial=0) <= 2**31 - 1
        s_a = np.repeat(sa[:, t], tile_a[0])[:m].astype(F32)
        s_b = np.repeat(sb[t, :], tile_b[1])[:n].astype(F32)
        scale = (s_a[:, None] * s_b[None, :]).astype(F32)
        if scale_product == "bf16":
            scale = round_bf16(scale)
        acc = (acc + (psum.astype(F32) * scale).astype(F32)).astype(F32)
    return acc


def conv2d(qx, sx, qw, sw, v, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0),
           rows=None):
    """SPEC T5 for NHWC x KRSC, tiles split on (N, C) / (K, C): for each
    output, over r, then s, then C-tiles, int partial sums times
    sx(n, h, w, t) * sw(k, r, s, t) in f32, accumulated in f32; padding
    contributes nothing. `rows` gives the tiles' extents along N and K
    (default v and v; 1 and 1 for 1 x V vectors along C)."""
    tn, tk = rows if rows is not None else (v, v)
    n_, h_, w_, c_ = qx.shape
    k_, r_, s_, _ = qw.shape
    p_ = (h_ + pad[0] + pad[2] - dilation[0] * (r_ - 1) - 1) // stride[0] + 1
    q_ = (w_ + pad[1] + pad[3] - dilation[1] * (s_ - 1) - 1) // stride[1] + 1
    out = np.zeros((n_, p_, q_, k_), F32)
    for p in range(p_):
        for q in range(q_):
            acc = np.zeros((n_, k_), F32)
            for r in range(r_):
                for s in range(s_):
                    h = p * stride[0] - pad[0] + r * dilation[0]
                    w = q * stride[1] - pad[1] + s * dilation[1]
                    if not (0 <= h < h_ and 0 <= w < w_):
                        continue
                    for t, c0 in enumerate(range(0, c_, v)):
                        c1 = min(c_, c0 + v)
                        psum = (qx[:, h, w, c0:c1].astype(np.int64)
                                @ qw[:, r, s, c0:c1].astype(np.int64).T)
                        s_x = np.repeat(sx[:, h, w, t], tn)[:n_].astype(F32)
                        s_w = np.repeat(sw[:, r, s, t], tk)[:k_].astype(F32)
                        scale = (s_x[:, None] * s_w[None, :]).astype(F32)
                        acc = (acc + (psum.astype(F32) * scale).astype(F32)).astype(F32)
            out[:, p, q, :] = acc
    return out


def postprocess(acc, tile, dims, bits, form, layer_scale=None, compute_layer_scale=False,
                relu=False, rounding="nearest_even", seed=0):
    """SPEC T6 as docs/Numerics.md states it: s_layer is `layer_scale`, or
    max|L| over the finite elements / qmax(bits) in f32, or 1; y = L /
    s_layer in f32 (0 where s_layer is 0); ReLU replaces the negative
    values by 0 and keeps NaN (which the quantization then maps to 0
    without counting it in the range); then y is quantized like
    tq.quantize. Returns (q, steps, offsets, s_layer)."""
    acc = np.asarray(acc, F32)
    if layer_scale is not None:
        s_layer = F32(layer_scale)
    elif compute_layer_scale:
        fin = np.abs(acc[np.isfinite(acc)])
        s_layer = F32(F32(fin.max() if fin.size else 0) / F32(qmax(bits)))
    else:
        s_layer = F32(1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        y = np.zeros_like(acc) if s_layer == 0 else (acc / s_layer).astype(F32)
    if relu:
        y = np.where(y < 0, F32(0), y).astype(F32)
    q, steps, offsets, _ = quantize(y, tile, dims, bits, form, rounding, seed)
    return q, steps, offsets, s_layer


def weight_update(q, steps, offsets, tile, dims, dw, lr, bits, form,
                  rounding="nearest_even", seed=0):
    """SPEC T7 as docs/Numerics.md states it: W <- quantize(dequantize(W) -
    lr * dW), the product rounded to f32, then the difference, quantized
    into W's tiles, form and width with fresh parameters."""
    w = dequantize(q, steps, offsets, tile, dims)
    with np.errstate(invalid="ignore", over="ignore"):
        x = (w - (F32(lr) * np.asarray(dw, F32)).astype(F32)).astype(F32)
    nq, nsteps, noffsets, _ = quantize(x, tile, dims, bits, form, rounding, seed)
    return nq, nsteps, noffsets
