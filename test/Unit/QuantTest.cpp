//===- QuantTest.cpp - unit tests of the reference numerics ---------------===//
//
// Each test names the SPEC requirement it covers. Expected values are
// derived by hand in the comments, or checked against an independent
// computation (float products of dequantized values, an explicit
// transpose), never against the function under test itself.
//
//===----------------------------------------------------------------------===//
#include "tq/Runtime/Quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace tq::ref;

namespace {

FloatTensor randomTensor(Shape shape, uint32_t seed, float lo = -1.0f,
                         float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  FloatTensor t{shape, {}};
  t.data.resize(numElements(shape));
  for (float &v : t.data)
    v = dist(rng);
  return t;
}

TileLayout layout(int64_t t0, int64_t t1, int d0, int d1) {
  TileLayout l;
  l.tile[0] = t0;
  l.tile[1] = t1;
  l.dims[0] = d0;
  l.dims[1] = d1;
  return l;
}

BitsSpec uniformBits(int n) {
  BitsSpec b;
  b.uniform = n;
  return b;
}

const QuantForm kAllForms[] = {QuantForm::Pow2,
                               QuantForm::Pow2Scaled,
                               QuantForm::Scaled,
                               QuantForm::Offset,
                               QuantForm::OffsetPow2,
                               QuantForm::OffsetScaled,
                               QuantForm::OffsetPow2Scaled};
const QuantForm kScaledForms[] = {
    QuantForm::Pow2,         QuantForm::Pow2Scaled,
    QuantForm::Scaled,       QuantForm::OffsetPow2,
    QuantForm::OffsetScaled, QuantForm::OffsetPow2Scaled};
const int kBitWidths[] = {2, 3, 4, 8, 12, 16};

} // namespace

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

TEST(Scalar, QmaxT3) {
  EXPECT_EQ(qmax(2), 1);
  EXPECT_EQ(qmax(3), 3);
  EXPECT_EQ(qmax(4), 7);
  EXPECT_EQ(qmax(8), 127);
  EXPECT_EQ(qmax(12), 2047);
  EXPECT_EQ(qmax(16), 32767);
}

TEST(Scalar, EveryRoundingModeA2) {
  struct Case {
    float v, nearest, up, down, zero;
  } cases[] = {
      {2.5f, 2, 3, 2, 2},      {3.5f, 4, 4, 3, 3},
      {-2.5f, -2, -2, -3, -2}, {-3.5f, -4, -3, -4, -3},
      {0.5f, 0, 1, 0, 0},      {-0.5f, -0.0f, -0.0f, -1, -0.0f},
      {2.4f, 2, 3, 2, 2},      {-2.6f, -3, -2, -3, -2},
      {7.0f, 7, 7, 7, 7},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.v);
    EXPECT_EQ(roundValue(c.v, Rounding::NearestEven), c.nearest);
    EXPECT_EQ(roundValue(c.v, Rounding::Up), c.up);
    EXPECT_EQ(roundValue(c.v, Rounding::Down), c.down);
    EXPECT_EQ(roundValue(c.v, Rounding::TowardZero), c.zero);
  }
}

TEST(Scalar, StochasticRoundingIsSeededAndUnbiasedA2) {
  // floor(v) + 1 with probability frac(v).
  EXPECT_EQ(roundValue(2.25f, Rounding::Stochastic, 0.1f), 3.0f);
  EXPECT_EQ(roundValue(2.25f, Rounding::Stochastic, 0.3f), 2.0f);
  EXPECT_EQ(roundValue(-2.25f, Rounding::Stochastic, 0.7f), -2.0f);
  EXPECT_EQ(roundValue(-2.25f, Rounding::Stochastic, 0.8f), -3.0f);
  // Deterministic for a seed and index; different seeds differ somewhere.
  int differ = 0;
  double mean = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    float u = stochasticNoise(42, i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    EXPECT_EQ(u, stochasticNoise(42, i));
    differ += u != stochasticNoise(43, i);
    mean += roundValue(0.3f, Rounding::Stochastic, u);
  }
  EXPECT_GT(differ, n * 99 / 100);
  EXPECT_NEAR(mean / n, 0.3, 0.01);
}

TEST(Scalar, PointPositionIsExactA2) {
  // z exactly qmax * 2^k: s = k; one ulp more: s = k + 1.
  for (int bits : kBitWidths)
    for (int k = -30; k <= 30; ++k) {
      float z = std::ldexp(static_cast<float>(qmax(bits)), k);
      EXPECT_EQ(pointPosition(z, bits), k) << bits << " " << k;
      float above = std::nextafter(z, std::numeric_limits<float>::infinity());
      EXPECT_EQ(pointPosition(above, bits), k + 1) << bits << " " << k;
    }
  // The definition: the smallest s with z <= qmax * 2^s.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(1e-6f, 1e6f);
  for (int i = 0; i < 1000; ++i) {
    float z = dist(rng);
    int s = pointPosition(z, 8);
    EXPECT_LE(z, std::ldexp(127.0, s));
    EXPECT_GT(z, std::ldexp(127.0, s - 1));
  }
  // Tiny and huge finite values.
  EXPECT_EQ(pointPosition(std::numeric_limits<float>::denorm_min(), 2), -149);
  EXPECT_EQ(pointPosition(std::numeric_limits<float>::max(), 2), 128);
}

TEST(Scalar, ParamsOfEachFormA2) {
  // x in [-2, 4]: Z1 = 4, Zmax = 4, Zmin = -2, o = 1, Z2 = 3; 8 bits.
  Range r;
  r.absMax = 4;
  r.max = 4;
  r.min = -2;
  TileParams p = computeParams(r, 8, QuantForm::Pow2);
  EXPECT_EQ(p.pointPos, -4); // 127 * 2^-5 = 3.97 < 4 <= 127 * 2^-4
  EXPECT_EQ(p.step(), 0.0625f);
  p = computeParams(r, 8, QuantForm::Pow2Scaled);
  EXPECT_EQ(p.pointPos, -4);
  EXPECT_EQ(p.factor, 64.0f / 127.0f); // f1 = 4 / (2^-4 * 127)
  EXPECT_LE(p.factor, 1.0f);
  p = computeParams(r, 8, QuantForm::Scaled);
  EXPECT_EQ(p.step(), 4.0f / 127.0f); // f2
  p = computeParams(r, 8, QuantForm::Offset);
  EXPECT_EQ(p.offset, 1.0f);
  EXPECT_EQ(p.step(), 1.0f);
  p = computeParams(r, 8, QuantForm::OffsetPow2);
  EXPECT_EQ(p.offset, 1.0f);
  EXPECT_EQ(p.pointPos, -5); // 127 * 2^-6 < 3 <= 127 * 2^-5
  p = computeParams(r, 8, QuantForm::OffsetScaled);
  EXPECT_EQ(p.step(), 3.0f / 127.0f); // f4
  p = computeParams(r, 8, QuantForm::OffsetPow2Scaled);
  EXPECT_EQ(p.pointPos, -5);
  EXPECT_EQ(p.factor, 96.0f / 127.0f); // f3 = 3 / (2^-5 * 127)
}

TEST(Scalar, QuantizeFormulasA2) {
  // round((x - o) / step), clamped to +-qmax.
  TileParams p;
  p.bits = 4;
  p.factor = 0.5f;
  p.pointPos = 1; // step 1
  p.offset = 10.0f;
  EXPECT_EQ(p.step(), 1.0f);
  EXPECT_EQ(quantizeValue(12.5f, p, Rounding::NearestEven), 2);
  EXPECT_EQ(quantizeValue(13.5f, p, Rounding::NearestEven), 4);
  EXPECT_EQ(quantizeValue(100.0f, p, Rounding::NearestEven), 7);
  EXPECT_EQ(quantizeValue(-100.0f, p, Rounding::NearestEven), -7);
  EXPECT_EQ(quantizeValue(12.5f, p, Rounding::Up), 3);
  EXPECT_EQ(quantizeValue(12.5f, p, Rounding::Down), 2);
  EXPECT_EQ(quantizeValue(7.5f, p, Rounding::TowardZero), -2);
  EXPECT_EQ(dequantizeValue(-3, p), 7.0f);
}

TEST(Scalar, ErrorA3) {
  float x[] = {1, -2, 3}, xhat[] = {1, -2.5f, 3};
  EXPECT_DOUBLE_EQ(quantError(x, xhat, 3), std::log2(0.5 / 6 + 1));
  float zero[] = {0, 0, 0};
  EXPECT_EQ(quantError(zero, zero, 3), 0.0);
  EXPECT_EQ(quantError(x, x, 3), 0.0);
  // Non-finite inputs are skipped.
  float nf[] = {1, NAN, INFINITY}, nfh[] = {1.5f, 0, 0};
  EXPECT_DOUBLE_EQ(quantError(nf, nfh, 3), std::log2(0.5 / 1 + 1));
}

TEST(Scalar, BF16ScaleProduct) {
  EXPECT_EQ(roundToBF16(1.0f), 1.0f);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even mantissa is 1.
  EXPECT_EQ(roundToBF16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(roundToBF16(1.0f + 3 * std::ldexp(1.0f, -8)),
            1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(roundToBF16(NAN)));
}

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

TEST(Tiled, AllZeroTileT3) {
  for (QuantForm form : kAllForms)
    for (int bits : kBitWidths) {
      FloatTensor x{{4, 6}, std::vector<float>(24, 0.0f)};
      x.data[0] = 3.0f; // tile (0,0) is not all zero; tile (0,1) is
      TiledTensor t =
          quantizeTiled(x, layout(4, 4, 0, 1), uniformBits(bits), form);
      ASSERT_EQ(t.params.size(), 2u);
      if (form != QuantForm::Offset) {
        EXPECT_EQ(t.params[1].step(), 0.0f);
      }
      FloatTensor back = dequantizeTiled(t);
      for (int i = 0; i < 4; ++i)
        for (int j = 4; j < 6; ++j) {
          EXPECT_EQ(t.q[i * 6 + j], 0);
          EXPECT_EQ(back.data[i * 6 + j], 0.0f);
        }
    }
}

TEST(Tiled, NonFiniteInputIsDefinedT3) {
  // NaN -> 0, +-Inf -> +-qmax; neither affects the scale.
  FloatTensor x{{2, 4},
                {1.0f, NAN, INFINITY, -INFINITY, -0.5f, 0.25f, 2.0f, 0}};
  for (QuantForm form : kScaledForms) {
    TiledTensor t = quantizeTiled(x, layout(2, 2, 0, 1), uniformBits(8), form);
    EXPECT_EQ(t.nonFinite, 3);
    EXPECT_EQ(t.q[1], 0);
    EXPECT_EQ(t.q[2], 127);
    EXPECT_EQ(t.q[3], -127);
    // Tile (0,0) holds 1, NaN, -0.5, 0.25: its range ignores NaN.
    Range r = computeRange(x.data.data(), 2, 1);
    EXPECT_EQ(r.nonFinite, 1);
    EXPECT_EQ(r.absMax, 1.0f);
    TileParams expected = computeParams(
        computeRange(std::vector<float>{1, -0.5f, 0.25f}.data(), 3), 8, form);
    EXPECT_EQ(t.params[0].step(), expected.step());
    EXPECT_EQ(t.params[0].offset, expected.offset);
  }
  // A tile of only Inf: step 0, saturated values dequantize to the offset.
  FloatTensor inf{{1, 2}, {INFINITY, -INFINITY}};
  TiledTensor t =
      quantizeTiled(inf, layout(1, 2, 0, 1), uniformBits(4), QuantForm::Scaled);
  EXPECT_EQ(t.params[0].step(), 0.0f);
  EXPECT_EQ(t.q[0], 7);
  EXPECT_EQ(dequantizeTiled(t).data[0], 0.0f);
}

TEST(Tiled, PartialEdgeTilesT1) {
  // 33x7 in 32x32 tiles: a grid of 2x1; the second tile is one row.
  FloatTensor x = randomTensor({33, 7}, 3);
  x.data[32 * 7 + 3] = 100.0f; // only in the edge tile
  TiledTensor t =
      quantizeTiled(x, layout(32, 32, 0, 1), uniformBits(8), QuantForm::Scaled);
  EXPECT_EQ(gridShape(x.shape, t.layout), (Shape{2, 1}));
  ASSERT_EQ(t.params.size(), 2u);
  EXPECT_EQ(t.params[1].step(), 100.0f / 127.0f);
  EXPECT_LE(t.params[0].step(), 1.0f / 127.0f);
  EXPECT_EQ(t.q[32 * 7 + 3], 127);
  // Rank 4, split on (0, 3) with other dims untiled: grid keeps H and W.
  FloatTensor y = randomTensor({5, 3, 2, 20}, 4);
  TileLayout l = layout(4, 4, 0, 3);
  EXPECT_EQ(gridShape(y.shape, l), (Shape{2, 3, 2, 5}));
  int64_t idx[] = {4, 2, 1, 19};
  EXPECT_EQ(tileOf(y.shape, l, idx), ((1 * 3 + 2) * 2 + 1) * 5 + 4);
}

TEST(Tiled, RoundTripBoundForEveryWidthAndForm) {
  // Nearest rounding: |x - x^| <= step / 2 (plus f32 rounding) for all
  // finite x, at every N and form; q within +-qmax.
  for (QuantForm form : kScaledForms)
    for (int bits : kBitWidths) {
      FloatTensor x = randomTensor({37, 45}, bits * 7 + 1, -3.0f, 5.0f);
      TiledTensor t =
          quantizeTiled(x, layout(16, 16, 0, 1), uniformBits(bits), form);
      FloatTensor back = dequantizeTiled(t);
      std::vector<int64_t> idx(2);
      for (int64_t i = 0; i < 37; ++i)
        for (int64_t j = 0; j < 45; ++j) {
          idx = {i, j};
          const TileParams &p = t.params[tileOf(x.shape, t.layout, idx.data())];
          int32_t q = t.q[i * 45 + j];
          ASSERT_LE(std::abs(q), qmax(bits));
          float err = std::fabs(back.data[i * 45 + j] - x.data[i * 45 + j]);
          ASSERT_LE(err, p.step() * 0.5f * (1 + 1e-5f) + 1e-6f)
              << "bits " << bits << " at " << i << "," << j;
        }
    }
}

TEST(Tiled, Pow2VersusF32ScalesA2) {
  FloatTensor x = randomTensor({32, 32}, 9);
  TiledTensor f =
      quantizeTiled(x, layout(32, 32, 0, 1), uniformBits(8), QuantForm::Scaled);
  TiledTensor p =
      quantizeTiled(x, layout(32, 32, 0, 1), uniformBits(8), QuantForm::Pow2);
  float fs = f.params[0].step(), ps = p.params[0].step();
  // The power-of-two step is the next power of two at or above the f32 one.
  int e;
  EXPECT_EQ(std::frexp(ps, &e), 0.5f);
  EXPECT_GE(ps, fs);
  EXPECT_LT(ps, 2 * fs);
  // The f32 scale uses the full range: max |q| = qmax; pow2 may not.
  int32_t maxF = 0, maxP = 0;
  for (size_t i = 0; i < x.data.size(); ++i) {
    maxF = std::max(maxF, std::abs(f.q[i]));
    maxP = std::max(maxP, std::abs(p.q[i]));
  }
  EXPECT_EQ(maxF, 127);
  EXPECT_LE(maxP, 127);
  std::vector<float> bf = dequantizeTiled(f).data, bp = dequantizeTiled(p).data;
  EXPECT_LE(quantError(x.data.data(), bf.data(), bf.size()),
            quantError(x.data.data(), bp.data(), bp.size()));
}

TEST(Tiled, AsymmetricOffsetsA2) {
  // Data in [10, 14]: symmetric scaling wastes half the range on negatives.
  FloatTensor x = randomTensor({16, 16}, 11, 10.0f, 14.0f);
  TiledTensor sym =
      quantizeTiled(x, layout(16, 16, 0, 1), uniformBits(4), QuantForm::Scaled);
  TiledTensor asym = quantizeTiled(x, layout(16, 16, 0, 1), uniformBits(4),
                                   QuantForm::OffsetScaled);
  Range r = computeRange(x.data.data(), x.data.size());
  EXPECT_EQ(asym.params[0].offset, r.max / 2 + r.min / 2);
  int32_t lo = 0, hi = 0;
  for (int32_t q : asym.q) {
    lo = std::min(lo, q);
    hi = std::max(hi, q);
  }
  EXPECT_EQ(lo, -7);
  EXPECT_EQ(hi, 7);
  std::vector<float> bs = dequantizeTiled(sym).data,
                     ba = dequantizeTiled(asym).data;
  EXPECT_LT(quantError(x.data.data(), ba.data(), ba.size()),
            quantError(x.data.data(), bs.data(), bs.size()) / 2);
}

TEST(Tiled, GivenStepsAndPerTileBitsA1) {
  FloatTensor x{{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}};
  std::vector<float> steps = {0.5f, 2.0f};
  BitsSpec bits;
  bits.perTile = {8, 3};
  TiledTensor t = quantizeTiled(x, layout(2, 2, 0, 1), bits, QuantForm::Scaled,
                                Rounding::NearestEven, 0, &steps);
  // Tile 0 (cols 0-1) step 0.5 at 8 bits; tile 1 (cols 2-3) step 2 at 3 bits
  // (qmax 3): 3/2 -> 2, 4/2 -> 2, 7/2 -> 3.5 -> 4 -> clamp 3, 8/2 -> 3.
  EXPECT_EQ(t.q, (std::vector<int32_t>{2, 4, 2, 2, 10, 12, 3, 3}));
}

TEST(Tiled, StochasticQuantizationIsReproducible) {
  FloatTensor x = randomTensor({8, 8}, 5);
  TiledTensor a = quantizeTiled(x, layout(8, 8, 0, 1), uniformBits(4),
                                QuantForm::Scaled, Rounding::Stochastic, 7);
  TiledTensor b = quantizeTiled(x, layout(8, 8, 0, 1), uniformBits(4),
                                QuantForm::Scaled, Rounding::Stochastic, 7);
  TiledTensor c = quantizeTiled(x, layout(8, 8, 0, 1), uniformBits(4),
                                QuantForm::Scaled, Rounding::Stochastic, 8);
  EXPECT_EQ(a.q, b.q);
  EXPECT_NE(a.q, c.q);
  // Each value is the floor or the ceiling of x / step.
  for (size_t i = 0; i < x.data.size(); ++i) {
    float v = x.data[i] / a.params[0].step();
    EXPECT_TRUE(a.q[i] == std::floor(v) || a.q[i] == std::ceil(v));
  }
}

//===----------------------------------------------------------------------===//
// Bit-width search (A4)
//===----------------------------------------------------------------------===//

TEST(BitSearch, IncreasesDecreasesAndStopsInBandA4) {
  FloatTensor x = randomTensor({64, 64}, 21);
  BitSearchOptions o;
  o.low = 0.002;
  o.high = 0.01;
  o.init = 4;
  BitSearchResult r =
      searchBitWidth(x.data.data(), x.data.size(), QuantForm::Scaled, o);
  EXPECT_GT(r.bits, 4);
  EXPECT_LE(r.error, o.high);
  EXPECT_GE(r.error, o.low);
  // Starting high, it comes down into the band (the first width found in
  // it from above, which may be larger than the one found from below).
  o.init = 16;
  BitSearchResult d =
      searchBitWidth(x.data.data(), x.data.size(), QuantForm::Scaled, o);
  EXPECT_LT(d.bits, 16);
  EXPECT_GE(d.bits, r.bits);
  EXPECT_LE(d.error, o.high);
  EXPECT_GE(d.error, o.low);
  // The result is the width whose error is in the band: check the neighbours
  // with an independent quantization.
  auto errorAt = [&](int bits) {
    TiledTensor t = quantizeTiled(x, layout(64, 64, 0, 1), uniformBits(bits),
                                  QuantForm::Scaled);
    std::vector<float> b = dequantizeTiled(t).data;
    return quantError(x.data.data(), b.data(), b.size());
  };
  EXPECT_DOUBLE_EQ(errorAt(r.bits), r.error);
  EXPECT_GT(errorAt(r.bits - 1), o.high);
}

TEST(BitSearch, BoundsAndVariableStepA4) {
  FloatTensor x = randomTensor({32, 32}, 22);
  BitSearchOptions o;
  o.low = 0.0;
  o.high = 1e-9; // unreachable: stops at max
  o.init = 8;
  o.max = 12;
  EXPECT_EQ(searchBitWidth(x.data.data(), 1024, QuantForm::Scaled, o).bits, 12);
  o.low = 0.9;
  o.high = 1.0; // every width is too precise: stops at min
  o.min = 3;
  EXPECT_EQ(searchBitWidth(x.data.data(), 1024, QuantForm::Scaled, o).bits, 3);
  // Variable step: far from the band, moves by far_step (fewer iterations).
  o = BitSearchOptions();
  o.low = 1e-5;
  o.high = 5e-5;
  o.init = 2;
  BitSearchResult fixed =
      searchBitWidth(x.data.data(), 1024, QuantForm::Scaled, o);
  o.farStep = 4;
  o.farMargin = 0.05;
  BitSearchResult var =
      searchBitWidth(x.data.data(), 1024, QuantForm::Scaled, o);
  EXPECT_LT(var.iterations, fixed.iterations);
  EXPECT_LE(var.error, o.high);
}

TEST(BitSearch, NoOscillationKeepsTheLargerWidthA4) {
  // A band narrower than one bit's change: n is too coarse, n + 1 too fine.
  FloatTensor x = randomTensor({32, 32}, 23);
  auto err = [&](int bits) {
    BitSearchOptions probe;
    probe.low = 0;
    probe.high = 1;
    probe.init = probe.min = probe.max = bits;
    return searchBitWidth(x.data.data(), 1024, QuantForm::Scaled, probe).error;
  };
  BitSearchOptions o;
  o.high = err(6) * 0.99; // 6 bits is above the band
  o.low = err(7) * 1.01;  // 7 bits is below it
  ASSERT_LT(o.low, o.high);
  o.init = 6;
  EXPECT_EQ(searchBitWidth(x.data.data(), 1024, QuantForm::Scaled, o).bits, 7);
  o.init = 10;
  EXPECT_EQ(searchBitWidth(x.data.data(), 1024, QuantForm::Scaled, o).bits, 7);
}

TEST(BitSearch, PerTileWidthsDifferWithTheDataA1A4) {
  // Left tile: uniform values; right tile: one outlier among small values,
  // which needs more bits for the same relative error.
  FloatTensor x = randomTensor({16, 32}, 24);
  for (int i = 0; i < 16; ++i)
    for (int j = 16; j < 32; ++j)
      x.data[i * 32 + j] *= 0.01f;
  x.data[16] = 1.0f;
  BitSearchOptions o;
  o.low = 0.005;
  o.high = 0.02;
  std::vector<BitSearchResult> r =
      searchBitWidthPerTile(x, layout(16, 16, 0, 1), QuantForm::Scaled, o);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_GT(r[1].bits, r[0].bits);
}

TEST(BitSearch, TilesNeedFewerBitsThanOneScaleA1A4) {
  // Four 16x16 blocks whose magnitudes differ by 10x each: one scale for the
  // tensor wastes the small blocks' range; per-tile scales do not.
  FloatTensor x = randomTensor({32, 32}, 25);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j)
      x.data[i * 32 + j] *= std::pow(10.0f, -((i / 16) * 2 + j / 16));
  BitSearchOptions o;
  o.low = 0.001;
  o.high = 0.005;
  BitSearchResult whole =
      searchBitWidthTiled(x, layout(32, 32, 0, 1), QuantForm::Scaled, o);
  BitSearchResult tiled =
      searchBitWidthTiled(x, layout(16, 16, 0, 1), QuantForm::Scaled, o);
  EXPECT_LT(tiled.bits, whole.bits);
  EXPECT_LE(tiled.error, o.high);
  // One subset is the same as one tile covering everything.
  BitSearchResult single =
      searchBitWidth(x.data.data(), x.data.size(), QuantForm::Scaled, o);
  EXPECT_EQ(single.bits, whole.bits);
  EXPECT_DOUBLE_EQ(single.error, whole.error);
}

//===----------------------------------------------------------------------===//
// Transpose (T4)
//===----------------------------------------------------------------------===//

TEST(Transpose, SquareTilesReuseEveryScaleT4) {
  FloatTensor x = randomTensor({40, 24}, 31);
  TiledTensor t =
      quantizeTiled(x, layout(16, 16, 0, 1), uniformBits(8), QuantForm::Scaled);
  TiledTensor tt = transposeTiled(t, {1, 0});
  ASSERT_EQ(tt.shape, (Shape{24, 40}));
  Shape g = gridShape(t.shape, t.layout), gt = gridShape(tt.shape, tt.layout);
  ASSERT_EQ(gt, (Shape{g[1], g[0]}));
  for (int64_t i = 0; i < g[0]; ++i)
    for (int64_t j = 0; j < g[1]; ++j) {
      const TileParams &a = t.params[i * g[1] + j],
                       &b = tt.params[j * g[0] + i];
      EXPECT_EQ(a.step(), b.step());
      EXPECT_EQ(a.bits, b.bits);
    }
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 24; ++j)
      EXPECT_EQ(t.q[i * 24 + j], tt.q[j * 40 + i]);
  // Quantizing the transposed floats gives the same data and scales: no
  // requantization is needed.
  FloatTensor xt{{24, 40}, std::vector<float>(960)};
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 24; ++j)
      xt.data[j * 40 + i] = x.data[i * 24 + j];
  TiledTensor direct = quantizeTiled(xt, layout(16, 16, 0, 1), uniformBits(8),
                                     QuantForm::Scaled);
  EXPECT_EQ(direct.q, tt.q);
  for (size_t i = 0; i < direct.params.size(); ++i)
    EXPECT_EQ(direct.params[i].step(), tt.params[i].step());
}

TEST(Transpose, PerVectorTilesDoNotCommuteT4) {
  // With 1xV tiles, quantizing the transpose gives different scales than
  // transposing the quantized tensor: that is why it must requantize.
  FloatTensor x = randomTensor({8, 8}, 32);
  TiledTensor rows =
      quantizeTiled(x, layout(1, 8, 0, 1), uniformBits(8), QuantForm::Scaled);
  FloatTensor xt{{8, 8}, std::vector<float>(64)};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      xt.data[j * 8 + i] = x.data[i * 8 + j];
  TiledTensor cols =
      quantizeTiled(xt, layout(1, 8, 0, 1), uniformBits(8), QuantForm::Scaled);
  int different = 0;
  for (int i = 0; i < 8; ++i)
    different += rows.params[i].step() != cols.params[i].step();
  EXPECT_GT(different, 0);
}

TEST(Requantize, SameTypeKeepsTheDataAndNarrowingBoundsTheError) {
  FloatTensor x = randomTensor({40, 24}, 33);
  TileLayout l = layout(8, 8, 0, 1);
  TiledTensor t = quantizeTiled(x, l, uniformBits(8), QuantForm::Scaled);
  // Requantizing to the same type reproduces the data (the max of each tile
  // maps to qmax again).
  TiledTensor same = requantizeTiled(t, l, uniformBits(8), QuantForm::Scaled);
  EXPECT_EQ(same.q, t.q);
  // 8 -> 4 bits: each value within half a 4-bit step of the 8-bit value.
  TiledTensor narrow = requantizeTiled(t, l, uniformBits(4), QuantForm::Pow2);
  FloatTensor a = dequantizeTiled(t), b = dequantizeTiled(narrow);
  std::vector<int64_t> idx(2);
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 24; ++j) {
      idx = {i, j};
      float step = narrow.params[tileOf(narrow.shape, l, idx.data())].step();
      ASSERT_LE(std::fabs(a.data[i * 24 + j] - b.data[i * 24 + j]),
                step / 2 + 1e-6f);
    }
}

TEST(Requantize, PermutationTransposesPerVectorTilesT4) {
  // 1xV rows of x become 1xV rows of x^T: the same as quantizing the
  // transposed dequantized data directly.
  FloatTensor x = randomTensor({12, 20}, 34);
  TileLayout rows = layout(1, 8, 0, 1);
  TiledTensor t = quantizeTiled(x, rows, uniformBits(8), QuantForm::Scaled);
  std::vector<int64_t> perm = {1, 0};
  TiledTensor r = requantizeTiled(t, rows, uniformBits(8), QuantForm::Scaled,
                                  Rounding::NearestEven, 0, &perm);
  EXPECT_EQ(r.shape, (Shape{20, 12}));
  FloatTensor back = dequantizeTiled(t);
  FloatTensor backT{{20, 12}, std::vector<float>(240)};
  for (int64_t i = 0; i < 12; ++i)
    for (int64_t j = 0; j < 20; ++j)
      backT.data[j * 12 + i] = back.data[i * 20 + j];
  TiledTensor direct =
      quantizeTiled(backT, rows, uniformBits(8), QuantForm::Scaled);
  EXPECT_EQ(r.q, direct.q);
  EXPECT_EQ(r.params.size(), 20u * 2u);
}

//===----------------------------------------------------------------------===//
// Matmul (T5, T7)
//===----------------------------------------------------------------------===//

namespace {
/// Float product of dequantized operands, in f64: the independent check.
std::vector<double> denseProduct(const FloatTensor &a, const FloatTensor &b,
                                 int64_t M, int64_t K, int64_t N) {
  std::vector<double> c(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        c[i * N + j] += double(a.data[i * K + k]) * b.data[k * N + j];
  return c;
}
FloatTensor transpose2D(const FloatTensor &x) {
  FloatTensor t{{x.shape[1], x.shape[0]}, std::vector<float>(x.data.size())};
  for (int64_t i = 0; i < x.shape[0]; ++i)
    for (int64_t j = 0; j < x.shape[1]; ++j)
      t.data[j * x.shape[0] + i] = x.data[i * x.shape[1] + j];
  return t;
}
} // namespace

TEST(Matmul, HandComputedExampleT5) {
  // A = [[1, 2, 3, 4]] in 1x2 tiles... use 2x2 tiles of a 2x4 and a 4x2.
  TiledTensor a, b;
  a.shape = {2, 4};
  a.layout = layout(2, 2, 0, 1);
  a.q = {1, 2, 3, 4, 5, 6, 7, 8};
  a.params.resize(2);
  a.params[0].factor = 0.5f; // K-tile 0
  a.params[1].factor = 2.0f; // K-tile 1
  b.shape = {4, 2};
  b.layout = layout(2, 2, 0, 1);
  b.q = {1, 0, 0, 1, 1, 1, -1, 2};
  b.params.resize(2);
  b.params[0].factor = 1.0f;
  b.params[1].factor = 0.25f;
  FloatTensor c;
  ASSERT_TRUE(matmulTiled({&a}, {&b}, false, c).ok);
  // C[0,0] = 0.5*1*(1*1 + 2*0) + 2*0.25*(3*1 + 4*-1) = 0.5 - 0.5 = 0
  // C[0,1] = 0.5*(1*0 + 2*1) + 0.5*(3*1 + 4*2) = 1 + 5.5 = 6.5
  // C[1,0] = 0.5*(5) + 0.5*(7 - 8) = 2.5 - 0.5 = 2
  // C[1,1] = 0.5*(6) + 0.5*(7 + 16) = 3 + 11.5 = 14.5
  EXPECT_EQ(c.shape, (Shape{2, 2}));
  EXPECT_EQ(c.data, (std::vector<float>{0.0f, 6.5f, 2.0f, 14.5f}));
}

TEST(Matmul, MatchesDequantizedProductT5) {
  for (int64_t V : {8, 16, 32}) {
    FloatTensor x = randomTensor({37, 70}, 41), w = randomTensor({70, 29}, 42);
    TiledTensor tx =
        quantizeTiled(x, layout(V, V, 0, 1), uniformBits(8), QuantForm::Scaled);
    TiledTensor tw =
        quantizeTiled(w, layout(V, V, 0, 1), uniformBits(8), QuantForm::Pow2);
    FloatTensor c;
    ASSERT_TRUE(matmulTiled({&tx}, {&tw}, false, c).ok);
    std::vector<double> ref =
        denseProduct(dequantizeTiled(tx), dequantizeTiled(tw), 37, 70, 29);
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(c.data[i], ref[i], 1e-4) << "V " << V << " at " << i;
  }
}

TEST(Matmul, TransposedOperandsAreBitExactT4T7) {
  // dX = dY · Wᵀ and dW = Xᵀ · dY with the transpose flag equal, bit for
  // bit, the product with an explicitly transposed tiled tensor.
  FloatTensor x = randomTensor({48, 80}, 51), w = randomTensor({80, 40}, 52),
              dy = randomTensor({48, 40}, 53);
  TileLayout l = layout(16, 16, 0, 1);
  TiledTensor tx = quantizeTiled(x, l, uniformBits(8), QuantForm::Scaled);
  TiledTensor tw = quantizeTiled(w, l, uniformBits(4), QuantForm::Pow2Scaled);
  TiledTensor tdy = quantizeTiled(dy, l, uniformBits(8), QuantForm::Scaled);
  FloatTensor dx1, dx2, dw1, dw2;
  ASSERT_TRUE(matmulTiled({&tdy}, {&tw, nullptr, true}, false, dx1).ok);
  TiledTensor twT = transposeTiled(tw, {1, 0});
  ASSERT_TRUE(matmulTiled({&tdy}, {&twT}, false, dx2).ok);
  EXPECT_EQ(dx1.shape, (Shape{48, 80}));
  EXPECT_EQ(dx1.data, dx2.data);
  ASSERT_TRUE(matmulTiled({&tx, nullptr, true}, {&tdy}, true, dw1).ok);
  TiledTensor txT = transposeTiled(tx, {1, 0});
  ASSERT_TRUE(matmulTiled({&txT}, {&tdy}, true, dw2).ok);
  EXPECT_EQ(dw1.shape, (Shape{80, 40}));
  EXPECT_EQ(dw1.data, dw2.data);
  // And both are close to the float products of the dequantized operands.
  std::vector<double> ref = denseProduct(
      dequantizeTiled(tdy), transpose2D(dequantizeTiled(tw)), 48, 40, 80);
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(dx1.data[i], ref[i], 1e-4);
}

TEST(Matmul, MixedTiledTimesFloatT5) {
  FloatTensor x = randomTensor({20, 33}, 61), w = randomTensor({33, 9}, 62);
  TiledTensor tx =
      quantizeTiled(x, layout(8, 8, 0, 1), uniformBits(8), QuantForm::Scaled);
  FloatTensor c, c2;
  ASSERT_TRUE(matmulTiled({&tx}, {nullptr, &w}, false, c).ok);
  std::vector<double> ref = denseProduct(dequantizeTiled(tx), w, 20, 33, 9);
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(c.data[i], ref[i], 1e-4);
  // float × tiled too.
  TiledTensor tw =
      quantizeTiled(w, layout(8, 8, 0, 1), uniformBits(8), QuantForm::Scaled);
  ASSERT_TRUE(matmulTiled({nullptr, &x}, {&tw}, false, c2).ok);
  ref = denseProduct(x, dequantizeTiled(tw), 20, 33, 9);
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(c2.data[i], ref[i], 1e-4);
}

TEST(Matmul, BatchedAndRectangularKTiles) {
  // Batch of 3; 1xV lhs tiles and Vx1 rhs tiles (per-vector scaling).
  FloatTensor a = randomTensor({3, 5, 24}, 71),
              b = randomTensor({3, 24, 4}, 72);
  TiledTensor ta =
      quantizeTiled(a, layout(1, 8, 1, 2), uniformBits(8), QuantForm::Scaled);
  TiledTensor tb =
      quantizeTiled(b, layout(8, 1, 1, 2), uniformBits(8), QuantForm::Scaled);
  FloatTensor c;
  ASSERT_TRUE(matmulTiled({&ta}, {&tb}, false, c).ok);
  EXPECT_EQ(c.shape, (Shape{3, 5, 4}));
  FloatTensor da = dequantizeTiled(ta), db = dequantizeTiled(tb);
  for (int64_t bt = 0; bt < 3; ++bt)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < 24; ++k)
          ref += double(da.data[(bt * 5 + i) * 24 + k]) *
                 db.data[(bt * 24 + k) * 4 + j];
        ASSERT_NEAR(c.data[(bt * 5 + i) * 4 + j], ref, 1e-4);
      }
  // Mismatched K-tiles are an error.
  TiledTensor tb2 =
      quantizeTiled(b, layout(4, 1, 1, 2), uniformBits(8), QuantForm::Scaled);
  EXPECT_FALSE(matmulTiled({&ta}, {&tb2}, false, c).ok);
}

TEST(Matmul, Int32AccumulatorBound) {
  EXPECT_EQ(maxKTile(8, 8), 133144); // floor((2^31-1) / 127^2)
  EXPECT_EQ(maxKTile(16, 16), 2);    // (2^31-1) / 32767^2
  EXPECT_EQ(maxKTile(16, 8), 516);
  EXPECT_EQ(maxKTile(4, 4), 43826196); // floor((2^31-1) / 7^2)
  // All-qmax operands at the largest legal K-tile: exact int32 sum.
  auto ones = [](Shape shape, int64_t t0, int64_t t1, int32_t v) {
    TiledTensor t;
    t.shape = shape;
    t.layout = layout(t0, t1, 0, 1);
    t.q.assign(numElements(shape), v);
    t.params.resize(numElements(gridShape(shape, t.layout)));
    for (TileParams &p : t.params)
      p.factor = 1.0f;
    return t;
  };
  int64_t K = maxKTile(8, 8);
  TiledTensor a = ones({1, K}, 1, K, 127), b = ones({K, 1}, K, 1, -127);
  FloatTensor c;
  ASSERT_TRUE(matmulTiled({&a}, {&b}, false, c).ok);
  EXPECT_EQ(c.data[0], static_cast<float>(-K * 127 * 127));
  // One more element per K-tile overflows int32: reported, not wrapped.
  TiledTensor a2 = ones({1, K + 1}, 1, K + 1, 127),
              b2 = ones({K + 1, 1}, K + 1, 1, 127);
  Status st = matmulTiled({&a2}, {&b2}, false, c);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(st.message, "int32 partial sum overflow");
  // 16-bit: a K-tile of 3 overflows.
  TiledTensor a3 = ones({1, 3}, 1, 3, 32767), b3 = ones({3, 1}, 3, 1, 32767);
  EXPECT_FALSE(matmulTiled({&a3}, {&b3}, false, c).ok);
}

TEST(Matmul, BF16ScaleProduct) {
  TiledTensor a, b;
  a.shape = b.shape = {1, 1};
  a.layout = b.layout = layout(1, 1, 0, 1);
  a.q = {3};
  b.q = {5};
  a.params.resize(1);
  b.params.resize(1);
  a.params[0].factor = 1.0f + std::ldexp(1.0f, -10);
  b.params[0].factor = 1.0f;
  FloatTensor exact, rounded;
  ASSERT_TRUE(matmulTiled({&a}, {&b}, false, exact).ok);
  ASSERT_TRUE(matmulTiled({&a}, {&b}, true, rounded).ok);
  EXPECT_EQ(exact.data[0], 15.0f * (1.0f + std::ldexp(1.0f, -10)));
  EXPECT_EQ(rounded.data[0], 15.0f);
}

//===----------------------------------------------------------------------===//
// Conv2D, postprocess, weight update (T5, T6, T7)
//===----------------------------------------------------------------------===//

TEST(Conv2D, MatchesDequantizedConvolution) {
  FloatTensor x = randomTensor({3, 7, 6, 20}, 81),
              w = randomTensor({5, 3, 2, 20}, 82);
  TiledTensor tx =
      quantizeTiled(x, layout(8, 8, 0, 3), uniformBits(8), QuantForm::Scaled);
  TiledTensor tw =
      quantizeTiled(w, layout(8, 8, 0, 3), uniformBits(4), QuantForm::Pow2);
  Conv2DParams p;
  p.stride[0] = 2;
  p.dilation[1] = 2;
  p.pad[0] = 1;
  p.pad[1] = 2;
  p.pad[2] = 0;
  p.pad[3] = 1;
  FloatTensor y;
  ASSERT_TRUE(conv2dTiled(tx, tw, p, false, y).ok);
  // P = (7 + 1 + 0 - 2 - 1) / 2 + 1 = 3; Q = (6 + 2 + 1 - 2 - 1) / 1 + 1 = 7
  ASSERT_EQ(y.shape, (Shape{3, 3, 7, 5}));
  FloatTensor dx = dequantizeTiled(tx), dw = dequantizeTiled(tw);
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t pp = 0; pp < 3; ++pp)
      for (int64_t q = 0; q < 7; ++q)
        for (int64_t k = 0; k < 5; ++k) {
          double ref = 0;
          for (int64_t r = 0; r < 3; ++r)
            for (int64_t s = 0; s < 2; ++s) {
              int64_t h = pp * 2 - 1 + r, ww = q - 2 + s * 2;
              if (h < 0 || h >= 7 || ww < 0 || ww >= 6)
                continue;
              for (int64_t c = 0; c < 20; ++c)
                ref += double(dx.data[((n * 7 + h) * 6 + ww) * 20 + c]) *
                       dw.data[((k * 3 + r) * 2 + s) * 20 + c];
            }
          ASSERT_NEAR(y.data[((n * 3 + pp) * 7 + q) * 5 + k], ref, 1e-4);
        }
}

TEST(Postprocess, LayerScaleReluRequantizeT6) {
  FloatTensor acc{{2, 3}, {-4, 2, 8, 1, -1, 0}};
  // Computed: s = 8 / 127; y = relu(acc / s) then 2x2-tile quantization.
  PostprocessResult r =
      postprocess(acc, std::nullopt, true, Activation::Relu, layout(2, 2, 0, 1),
                  uniformBits(8), QuantForm::Scaled);
  EXPECT_EQ(r.layerScale, 8.0f / 127.0f);
  FloatTensor back = dequantizeTiled(r.out);
  for (size_t i = 0; i < acc.data.size(); ++i) {
    float expected = std::max(acc.data[i], 0.0f);
    EXPECT_NEAR(back.data[i] * r.layerScale, expected, 8.0f / 127 / 2 + 1e-5);
    EXPECT_GE(r.out.q[i], 0); // ReLU before quantization
  }
  // Given scale, no activation.
  r = postprocess(acc, 2.0f, false, Activation::None, layout(2, 2, 0, 1),
                  uniformBits(8), QuantForm::Scaled);
  EXPECT_EQ(r.layerScale, 2.0f);
  back = dequantizeTiled(r.out);
  EXPECT_NEAR(back.data[0], -2.0f, 1e-6);
  // An all-zero layer: scale 0, output 0, no division by zero.
  FloatTensor zero{{2, 2}, {0, 0, 0, 0}};
  r = postprocess(zero, std::nullopt, true, Activation::Relu,
                  layout(2, 2, 0, 1), uniformBits(8), QuantForm::Scaled);
  EXPECT_EQ(r.layerScale, 0.0f);
  EXPECT_EQ(r.out.q, (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(WeightUpdate, SubtractsAndRequantizesT7) {
  FloatTensor w = randomTensor({16, 16}, 91), dw = randomTensor({16, 16}, 92);
  TiledTensor tw =
      quantizeTiled(w, layout(8, 8, 0, 1), uniformBits(8), QuantForm::Scaled);
  TiledTensor up = weightUpdate(tw, dw, 0.1f);
  FloatTensor before = dequantizeTiled(tw), after = dequantizeTiled(up);
  for (size_t i = 0; i < w.data.size(); ++i) {
    float expected = before.data[i] - 0.1f * dw.data[i];
    int64_t idx[] = {int64_t(i / 16), int64_t(i % 16)};
    float step = up.params[tileOf(up.shape, up.layout, idx)].step();
    EXPECT_NEAR(after.data[i], expected, step / 2 + 1e-6);
  }
  // Layout, form and widths are the weight's.
  EXPECT_EQ(up.params.size(), tw.params.size());
  EXPECT_EQ(up.params[0].bits, 8);
}

TEST(Tiled, ExtremeValuesKeepAFiniteStep) {
  // Near FLT_MAX at 2 bits, ceil(log2(Z / 1)) = 128 would make 2^s infinite:
  // the point position is clamped to 127 and the values saturate.
  float big = std::numeric_limits<float>::max();
  FloatTensor x{{1, 2}, {big, -big / 4}};
  for (QuantForm form : kScaledForms)
    for (int bits : kBitWidths) {
      TiledTensor t =
          quantizeTiled(x, layout(1, 2, 0, 1), uniformBits(bits), form);
      EXPECT_TRUE(std::isfinite(t.params[0].step())) << bits;
      EXPECT_GT(t.params[0].step(), 0.0f);
      EXPECT_LE(t.params[0].pointPos, 127);
      for (float v : dequantizeTiled(t).data)
        EXPECT_FALSE(std::isnan(v));
    }
  // Denormal tiles: 2^s stays at least 2^-149, never 0.
  float tiny = std::numeric_limits<float>::denorm_min();
  FloatTensor y{{1, 2}, {tiny, 3 * tiny}};
  TiledTensor t =
      quantizeTiled(y, layout(1, 2, 0, 1), uniformBits(16), QuantForm::Pow2);
  EXPECT_EQ(t.params[0].pointPos, -149);
  EXPECT_EQ(t.q, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(dequantizeTiled(t).data, y.data);
}
