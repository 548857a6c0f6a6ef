"""tq.quantize and TiledTensor against an independent numpy reference of
SPEC T1/A2/A3: per tile, Z = max|x| over the finite elements; with an f32
scale the step is Z / qmax (in f32), with pow2 it is 2^ceil(log2(Z / qmax));
q = round-half-even(x / step) clipped to [-qmax, qmax]; a tile of zeros has
step 0 and q 0; +-Inf saturates to +-qmax and NaN quantizes to 0 (SPEC T3
leaves the choice to the implementation). The point position is clamped
to [-149, 127], as include/tq/Runtime/Quant.h documents, so that 2^s is a
finite f32."""
import numpy as np
import pytest

import tq


def reference(x, tile, bits, scale):
    qmax = 2 ** (bits - 1) - 1
    rows, cols = x.shape
    q = np.zeros(x.shape, np.int64)
    gr, gc = -(-rows // tile[0]), -(-cols // tile[1])
    steps = np.zeros((gr, gc), np.float32)
    for i in range(gr):
        for j in range(gc):
            block = x[i * tile[0]:(i + 1) * tile[0], j * tile[1]:(j + 1) * tile[1]]
            finite = np.isfinite(block)
            z = np.float32(np.abs(block[finite]).max()) if finite.any() else np.float32(0)
            if z == 0:
                continue
            if scale == "f32":
                step = np.float32(z) / np.float32(qmax)
            else:  # the smallest s with z <= qmax * 2^s, in [-149, 127]
                s = int(np.ceil(np.log2(np.float64(z) / qmax)))
                while np.float64(z) <= qmax * 2.0 ** (s - 1):
                    s -= 1
                while np.float64(z) > qmax * 2.0 ** s:
                    s += 1
                step = np.float32(2.0 ** min(max(s, -149), 127))
            steps[i, j] = step
            with np.errstate(invalid="ignore"):
                v = np.where(finite, block / step, 0)
            v = np.where(np.isinf(block), np.sign(block) * qmax, v)
            q[i * tile[0]:(i + 1) * tile[0], j * tile[1]:(j + 1) * tile[1]] = \
                np.clip(np.rint(v), -qmax, qmax)
    return q, steps


def adversarial(rng):
    x = rng.standard_normal((37, 50)).astype(np.float32)  # not a multiple of 16
    x[:16, :16] = 0                                      # an all-zero tile
    x[20, 3], x[21, 4], x[22, 5] = np.nan, np.inf, -np.inf
    x[33, 40:50] = 3e38                                  # near FLT_MAX
    x[0, 49] = -1e-30                                    # tiny
    return x


@pytest.mark.parametrize("bits", [2, 4, 8, 16])
@pytest.mark.parametrize("scale", ["f32", "pow2"])
def test_matches_reference(bits, scale):
    rng = np.random.default_rng(bits)
    x = adversarial(rng)
    t = tq.quantize(x, tile=(16, 16), bits=bits, scale=scale)
    q, steps = reference(x, (16, 16), bits, scale)
    assert t.data.shape == (37, 50) and t.scales.shape == (3, 4)
    np.testing.assert_array_equal(t.data, q)
    np.testing.assert_array_equal(t.scales, steps)
    assert t.non_finite == 3
    assert (t.data[:16, :16] == 0).all() and t.scales[0, 0] == 0


def test_rectangular_tiles():
    x = np.random.default_rng(1).standard_normal((40, 24)).astype(np.float32)
    t = tq.quantize(x, tile=(8, 12), bits=6)
    q, steps = reference(x, (8, 12), 6, "f32")
    np.testing.assert_array_equal(t.data, q)
    np.testing.assert_array_equal(t.scales, steps)


def test_transpose_shares_scales():
    x = np.random.default_rng(2).standard_normal((48, 80)).astype(np.float32)
    t = tq.quantize(x, tile=16)
    tt = t.T
    assert np.shares_memory(tt.scales, t.scales)  # the same scales, not a copy
    assert tt.shape == (80, 48) and tt.tile == (16, 16)
    np.testing.assert_array_equal(tt.dequantize(), t.dequantize().T)
    np.testing.assert_array_equal(tt.T.data, t.data)
    # Quantizing the transpose afresh gives the same tiles (square tiles
    # hold the same elements): the transpose needs no requantization.
    fresh = tq.quantize(x.T, tile=16)
    np.testing.assert_array_equal(fresh.data, tt.data)
    np.testing.assert_array_equal(fresh.scales, tt.scales)


def test_dequantize_and_error():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    x[5, 5] = np.nan
    t8, t4 = tq.quantize(x, tile=32, bits=8), tq.quantize(x, tile=32, bits=4)
    xhat = t8.dequantize()
    step = np.repeat(np.repeat(t8.scales, 32, 0), 32, 1)
    finite = np.isfinite(x)
    # Every finite element within half a step of its value.
    assert (np.abs(xhat - x)[finite] <= step[finite] / 2 * (1 + 1e-6)).all()
    expected = np.log2(np.abs(xhat[finite].astype(np.float64) - x[finite]).sum()
                       / np.abs(x[finite].astype(np.float64)).sum() + 1)
    assert t8.error() == pytest.approx(expected, rel=1e-12)
    assert 0 < t8.error() < t4.error()
    assert tq.quantize(np.zeros((8, 8)), tile=8).error() == 0.0


def test_offset_form():
    x = np.random.default_rng(4).uniform(5, 9, (32, 32)).astype(np.float32)
    sym, off = tq.quantize(x, tile=16), tq.quantize(x, tile=16, offset=True)
    assert (off.offsets != 0).all() and (sym.offsets == 0).all()
    assert off.error() < sym.error()  # the offset centres each tile


@pytest.mark.parametrize("call, message", [
    (lambda: tq.quantize(np.zeros((2, 2, 2))), "2-D array"),
    (lambda: tq.quantize(np.zeros((4, 4)), bits=1), "bits must be in [2, 16]"),
    (lambda: tq.quantize(np.zeros((4, 4)), scale="int"), "scale must be f32, pow2 or pow2_f32"),
    (lambda: tq.quantize(np.zeros((4, 4)), tile=0), "positive"),
])
def test_errors(call, message):
    with pytest.raises((ValueError, tq.TQError, RuntimeError)) as e:
        call()
    assert message in str(e.value)
