//===- Quant.cpp - tile-quant reference numerics --------------------------===//
//
// See Quant.h for the definitions. Written for clarity: straightforward
// loops, no vectorization, every arithmetic step in the documented type.
//
//===----------------------------------------------------------------------===//
#include "tq/Runtime/Quant.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace tq::ref {

bool hasOffset(QuantForm form) {
  switch (form) {
  case QuantForm::Offset:
  case QuantForm::OffsetPow2:
  case QuantForm::OffsetScaled:
  case QuantForm::OffsetPow2Scaled:
    return true;
  default:
    return false;
  }
}

int32_t qmax(int bits) {
  assert(bits >= 2 && bits <= 16 && "bit width out of range");
  return (int32_t(1) << (bits - 1)) - 1;
}

float TileParams::step() const { return std::ldexp(factor, pointPos); }

Range computeRange(const float *x, int64_t n, int64_t stride) {
  Range r;
  bool first = true;
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i * stride];
    if (!std::isfinite(v)) {
      ++r.nonFinite;
      continue;
    }
    ++r.finite;
    if (first) {
      r.max = r.min = v;
      first = false;
    }
    r.max = std::max(r.max, v);
    r.min = std::min(r.min, v);
    r.absMax = std::max(r.absMax, std::fabs(v));
  }
  return r;
}

int32_t pointPosition(float z, int bits) {
  assert(std::isfinite(z) && z > 0.0f);
  // z = m * 2^e with m in [0.5, 1): start near log2(z / qmax) and correct,
  // comparing exactly in double (qmax * 2^s is exact there).
  double q = qmax(bits);
  int e;
  std::frexp(static_cast<double>(z) / q, &e);
  int32_t s = e; // 2^(e-1) <= z/q < 2^e
  while (static_cast<double>(z) <= std::ldexp(q, s - 1))
    --s;
  while (static_cast<double>(z) > std::ldexp(q, s))
    ++s;
  return s;
}

/// Keeps 2^s a finite, non-zero f32: s in [-149, 127]. Outside, values
/// saturate (huge tiles) or lose their smallest bits (tiny tiles).
static int32_t clampPointPosition(int32_t s) {
  return std::min<int32_t>(std::max<int32_t>(s, -149), 127);
}

TileParams computeParams(const Range &r, int bits, QuantForm form) {
  TileParams p;
  p.bits = bits;
  float z = r.absMax;
  if (hasOffset(form)) {
    // Halves first, so that neither sum can overflow.
    p.offset = r.max / 2.0f + r.min / 2.0f;
    z = r.max / 2.0f - r.min / 2.0f;
  }
  float q = static_cast<float>(qmax(bits));
  switch (form) {
  case QuantForm::Offset:
    p.factor = 1.0f;
    return p;
  case QuantForm::Pow2:
  case QuantForm::OffsetPow2:
    if (z > 0.0f) {
      p.pointPos = clampPointPosition(pointPosition(z, bits));
      p.factor = 1.0f;
    }
    return p;
  case QuantForm::Pow2Scaled:
  case QuantForm::OffsetPow2Scaled:
    if (z > 0.0f) {
      p.pointPos = clampPointPosition(pointPosition(z, bits));
      // f = Z / (2^s * qmax): the division by 2^s is exact (ldexp).
      p.factor = std::ldexp(z, -p.pointPos) / q;
    }
    return p;
  case QuantForm::Scaled:
  case QuantForm::OffsetScaled:
    p.factor = z / q;
    return p;
  }
  return p;
}

float roundValue(float v, Rounding mode, float noise) {
  switch (mode) {
  case Rounding::NearestEven: {
    float f = std::floor(v);
    float d = v - f; // exact for |v| < 2^24; for larger v, f == v
    if (d > 0.5f || (d == 0.5f && std::fmod(f, 2.0f) != 0.0f))
      return f + 1.0f;
    return f;
  }
  case Rounding::Up:
    return std::ceil(v);
  case Rounding::Down:
    return std::floor(v);
  case Rounding::TowardZero:
    return std::trunc(v);
  case Rounding::Stochastic: {
    // floor(v) + 1 with probability frac(v).
    float f = std::floor(v);
    return (v - f) > noise ? f + 1.0f : f;
  }
  }
  return v;
}

float stochasticNoise(uint64_t seed, uint64_t index) {
  // A 32-bit integer hash (xorshift-multiply, two rounds) of index +
  // seed · K, modulo 2^32.
  uint32_t x =
      static_cast<uint32_t>(index) + static_cast<uint32_t>(seed) * 0x9E3779B9u;
  x = (x ^ (x >> 16)) * 0x7FEB352Du;
  x = (x ^ (x >> 15)) * 0x846CA68Bu;
  x ^= x >> 16;
  return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

int32_t quantizeValue(float x, const TileParams &p, Rounding mode,
                      float noise) {
  float m = static_cast<float>(qmax(p.bits));
  if (std::isnan(x))
    return 0;
  if (std::isinf(x))
    return x > 0 ? static_cast<int32_t>(m) : -static_cast<int32_t>(m);
  float step = p.step();
  if (step == 0.0f)
    return 0;
  float v = (x - p.offset) / step;
  // Clamp before rounding: v may be huge or infinite; qmax is an integer so
  // the result equals round-then-clamp.
  v = std::min(std::max(v, -m), m);
  return static_cast<int32_t>(roundValue(v, mode, noise));
}

float dequantizeValue(int32_t q, const TileParams &p) {
  return static_cast<float>(q) * p.step() + p.offset;
}

double quantError(const float *x, const float *xhat, int64_t n) {
  double diff = 0.0, total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]))
      continue;
    diff += std::fabs(static_cast<double>(xhat[i]) - x[i]);
    total += std::fabs(static_cast<double>(x[i]));
  }
  if (total == 0.0)
    return 0.0;
  return std::log2(diff / total + 1.0);
}

/// Error of quantizing the `n` values at `bits` with one set of parameters.
static double subsetError(const float *x, int64_t n, QuantForm form, int bits) {
  TileParams p = computeParams(computeRange(x, n), bits, form);
  std::vector<float> back(n);
  for (int64_t i = 0; i < n; ++i)
    back[i] = dequantizeValue(quantizeValue(x[i], p, Rounding::NearestEven), p);
  return quantError(x, back.data(), n);
}

/// The A4 search over any error function errorAt(bits).
template <typename ErrorFn>
static BitSearchResult search(ErrorFn errorAt, const BitSearchOptions &o) {
  BitSearchResult r;
  int bits = std::min(std::max(o.init, o.min), o.max);
  int prevBits = bits, lastDir = 0;
  for (;;) {
    double err = errorAt(bits);
    ++r.iterations;
    r.bits = bits;
    r.error = err;
    int dir = 0;
    double excess = 0.0;
    if (err > o.high && bits < o.max) {
      dir = 1;
      excess = err - o.high;
    } else if (err < o.low && bits > o.min) {
      dir = -1;
      excess = o.low - err;
    }
    if (dir == 0)
      break;
    // Crossing the band: a width too coarse next to one too fine. Keep the
    // larger (more accurate) of the two; this also ends any oscillation.
    if (lastDir == 1 && dir == -1)
      break;
    if (lastDir == -1 && dir == 1) {
      r.bits = prevBits;
      r.error = errorAt(prevBits);
      ++r.iterations;
      break;
    }
    int step = (o.farStep > 0 && excess > o.farMargin) ? o.farStep : o.step;
    prevBits = bits;
    bits = std::min(o.max, std::max(o.min, bits + dir * step));
    lastDir = dir;
  }
  return r;
}

BitSearchResult searchBitWidth(const float *x, int64_t n, QuantForm form,
                               const BitSearchOptions &opts) {
  return search([&](int bits) { return subsetError(x, n, form, bits); }, opts);
}

float roundToBF16(float v) {
  if (!std::isfinite(v))
    return v;
  uint32_t bitsV;
  std::memcpy(&bitsV, &v, 4);
  uint32_t lsb = (bitsV >> 16) & 1u;
  bitsV += 0x7FFFu + lsb;
  bitsV &= 0xFFFF0000u;
  float out;
  std::memcpy(&out, &bitsV, 4);
  return out;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape gridShape(const Shape &shape, const TileLayout &layout) {
  Shape g = shape;
  for (int k = 0; k < 2; ++k)
    g[layout.dims[k]] =
        (shape[layout.dims[k]] + layout.tile[k] - 1) / layout.tile[k];
  return g;
}

int64_t tileOf(const Shape &shape, const TileLayout &layout,
               const int64_t *index) {
  Shape g = gridShape(shape, layout);
  int64_t t = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i = index[d];
    for (int k = 0; k < 2; ++k)
      if (layout.dims[k] == static_cast<int>(d))
        i /= layout.tile[k];
    t = t * g[d] + i;
  }
  return t;
}

/// Calls f(linearIndex, tileIndex) for every element in row-major order.
template <typename F>
static void forEachElement(const Shape &shape, const TileLayout &layout,
                           F &&f) {
  int64_t n = numElements(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, tileOf(shape, layout, index.data()));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// Gathers the elements of each tile (in row-major order within the tile).
static std::vector<std::vector<float>> gatherTiles(const FloatTensor &x,
                                                   const TileLayout &layout) {
  std::vector<std::vector<float>> tiles(
      numElements(gridShape(x.shape, layout)));
  forEachElement(x.shape, layout,
                 [&](int64_t i, int64_t t) { tiles[t].push_back(x.data[i]); });
  return tiles;
}

TiledTensor quantizeTiled(const FloatTensor &x, const TileLayout &layout,
                          const BitsSpec &bits, QuantForm form, Rounding mode,
                          uint64_t seed, const std::vector<float> *givenSteps) {
  TiledTensor t;
  t.shape = x.shape;
  t.layout = layout;
  t.form = form;
  std::vector<std::vector<float>> tiles = gatherTiles(x, layout);
  t.params.resize(tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    int b = bits.perTile.empty() ? bits.uniform : bits.perTile[i];
    if (givenSteps) {
      t.params[i].bits = b;
      t.params[i].factor = (*givenSteps)[i];
    } else {
      t.params[i] = computeParams(
          computeRange(tiles[i].data(), tiles[i].size()), b, form);
    }
  }
  t.q.resize(x.data.size());
  forEachElement(x.shape, layout, [&](int64_t i, int64_t tile) {
    float v = x.data[i];
    if (!std::isfinite(v))
      ++t.nonFinite;
    float noise =
        mode == Rounding::Stochastic ? stochasticNoise(seed, i) : 0.0f;
    t.q[i] = quantizeValue(v, t.params[tile], mode, noise);
  });
  return t;
}

FloatTensor dequantizeTiled(const TiledTensor &t) {
  FloatTensor x;
  x.shape = t.shape;
  x.data.resize(t.q.size());
  forEachElement(t.shape, t.layout, [&](int64_t i, int64_t tile) {
    x.data[i] = dequantizeValue(t.q[i], t.params[tile]);
  });
  return x;
}

std::vector<BitSearchResult> searchBitWidthPerTile(const FloatTensor &x,
                                                   const TileLayout &layout,
                                                   QuantForm form,
                                                   const BitSearchOptions &o) {
  std::vector<std::vector<float>> tiles = gatherTiles(x, layout);
  std::vector<BitSearchResult> out;
  for (const std::vector<float> &tile : tiles)
    out.push_back(searchBitWidth(tile.data(), tile.size(), form, o));
  return out;
}

BitSearchResult searchBitWidthTiled(const FloatTensor &x,
                                    const TileLayout &layout, QuantForm form,
                                    const BitSearchOptions &o) {
  return search(
      [&](int bits) {
        TiledTensor t = quantizeTiled(x, layout, BitsSpec{bits, {}}, form);
        FloatTensor back = dequantizeTiled(t);
        return quantError(x.data.data(), back.data.data(), x.data.size());
      },
      o);
}

/// Calls f(index, permutedIndex, linearOut) for every element of `shape` in
/// row-major order, where the output has dims permuted by `perm` (output dim
/// d is input dim perm[d]).
template <typename F>
static void forEachPermuted(const Shape &shape,
                            const std::vector<int64_t> &perm, F &&f) {
  size_t rank = shape.size();
  Shape outShape;
  for (size_t d = 0; d < rank; ++d)
    outShape.push_back(shape[perm[d]]);
  std::vector<int64_t> idx(rank, 0), outIdx(rank);
  int64_t n = numElements(shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t lin = 0;
    for (size_t d = 0; d < rank; ++d) {
      outIdx[d] = idx[perm[d]];
      lin = lin * outShape[d] + outIdx[d];
    }
    f(i, idx.data(), outIdx.data(), lin);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

TiledTensor transposeTiled(const TiledTensor &t,
                           const std::vector<int64_t> &perm) {
  size_t rank = t.shape.size();
  std::vector<int64_t> inverse(rank);
  for (size_t i = 0; i < rank; ++i)
    inverse[perm[i]] = i;
  TiledTensor r;
  r.form = t.form;
  r.nonFinite = t.nonFinite;
  for (size_t i = 0; i < rank; ++i)
    r.shape.push_back(t.shape[perm[i]]);
  int p0 = inverse[t.layout.dims[0]], p1 = inverse[t.layout.dims[1]];
  if (p0 < p1) {
    r.layout = t.layout;
    r.layout.dims[0] = p0;
    r.layout.dims[1] = p1;
  } else {
    assert(t.layout.tile[0] == t.layout.tile[1] &&
           "non-square tiles cannot be transposed without requantization");
    r.layout.tile[0] = t.layout.tile[1];
    r.layout.tile[1] = t.layout.tile[0];
    r.layout.dims[0] = p1;
    r.layout.dims[1] = p0;
  }
  r.q.resize(t.q.size());
  r.params.resize(t.params.size());
  forEachPermuted(
      t.shape, perm,
      [&](int64_t i, const int64_t *idx, const int64_t *outIdx, int64_t lin) {
        r.q[lin] = t.q[i];
        // The output element's tile reuses the input tile's
        // parameters.
        r.params[tileOf(r.shape, r.layout, outIdx)] =
            t.params[tileOf(t.shape, t.layout, idx)];
      });
  return r;
}

TiledTensor requantizeTiled(const TiledTensor &t, const TileLayout &layout,
                            const BitsSpec &bits, QuantForm form, Rounding mode,
                            uint64_t seed, const std::vector<int64_t> *perm) {
  FloatTensor x = dequantizeTiled(t);
  if (perm) {
    FloatTensor p;
    for (int64_t d : *perm)
      p.shape.push_back(x.shape[d]);
    p.data.resize(x.data.size());
    forEachPermuted(x.shape, *perm,
                    [&](int64_t i, const int64_t *, const int64_t *,
                        int64_t lin) { p.data[lin] = x.data[i]; });
    x = std::move(p);
  }
  return quantizeTiled(x, layout, bits, form, mode, seed);
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

int64_t maxKTile(int bitsA, int bitsB) {
  int64_t p = static_cast<int64_t>(qmax(bitsA)) * qmax(bitsB);
  return std::numeric_limits<int32_t>::max() / p;
}

namespace {
/// Reads element [batch, row, col] of an operand after its transpose flag.
struct OperandView {
  const MatmulOperand &op;
  Shape shape; // as stored
  int64_t rows, cols, batch;

  explicit OperandView(const MatmulOperand &o)
      : op(o), shape(o.tiled ? o.tiled->shape : o.dense->shape) {
    size_t r = shape.size();
    rows = shape[r - 2];
    cols = shape[r - 1];
    if (o.transposed)
      std::swap(rows, cols);
    batch = 1;
    for (size_t i = 0; i + 2 < r; ++i)
      batch *= shape[i];
  }
  int64_t linear(int64_t b, int64_t i, int64_t j) const {
    if (op.transposed)
      std::swap(i, j);
    int64_t stored = shape[shape.size() - 1];
    int64_t storedRows = shape[shape.size() - 2];
    return (b * storedRows + i) * stored + j;
  }
  /// Tile parameters of element (b, i, j) of the (transposed) view.
  const TileParams &params(int64_t b, int64_t i, int64_t j) const {
    if (op.transposed)
      std::swap(i, j);
    const TileLayout &l = op.tiled->layout;
    int64_t storedCols = shape[shape.size() - 1];
    int64_t storedRows = shape[shape.size() - 2];
    int64_t gr = (storedRows + l.tile[0] - 1) / l.tile[0];
    int64_t gc = (storedCols + l.tile[1] - 1) / l.tile[1];
    return op.tiled->params[(b * gr + i / l.tile[0]) * gc + j / l.tile[1]];
  }
  /// K-tile extent (along the contracting dim of this operand).
  int64_t kTile(bool isLhs) const {
    const TileLayout &l = op.tiled->layout;
    bool kIsCols = isLhs != op.transposed;
    return l.tile[kIsCols ? 1 : 0];
  }
};
} // namespace

Status matmulTiled(const MatmulOperand &a, const MatmulOperand &b,
                   bool bf16ScaleProduct, FloatTensor &c) {
  if (!a.tiled && !b.tiled)
    return Status::error("at least one operand must be tiled");
  OperandView va(a), vb(b);
  if (va.shape.size() != vb.shape.size() || va.batch != vb.batch)
    return Status::error("batch dimensions differ");
  if (va.cols != vb.rows)
    return Status::error("contracting dimensions differ");
  for (const MatmulOperand *o : {&a, &b})
    if (o->tiled) {
      int r = static_cast<int>(o->tiled->shape.size());
      if (o->tiled->layout.dims[0] != r - 2 ||
          o->tiled->layout.dims[1] != r - 1)
        return Status::error("operands must be split on their innermost dims");
      if (hasOffset(o->tiled->form))
        return Status::error("operands with offsets are not supported");
    }
  // A tile longer than K covers all of it: compare effective extents.
  int64_t K0 = va.cols;
  int64_t kt = std::min(K0, a.tiled ? va.kTile(true) : vb.kTile(false));
  if (a.tiled && b.tiled &&
      std::min(K0, va.kTile(true)) != std::min(K0, vb.kTile(false)))
    return Status::error("K-tile extents differ");
  int64_t M = va.rows, N = vb.cols, K = va.cols;
  c.shape.assign(va.shape.begin(), va.shape.end() - 2);
  c.shape.push_back(M);
  c.shape.push_back(N);
  c.data.assign(va.batch * M * N, 0.0f);
  for (int64_t bt = 0; bt < va.batch; ++bt)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float acc = 0.0f;
        for (int64_t k0 = 0; k0 < K; k0 += kt) {
          int64_t k1 = std::min(K, k0 + kt);
          float term;
          if (a.tiled && b.tiled) {
            int64_t psum = 0;
            for (int64_t k = k0; k < k1; ++k)
              psum += static_cast<int64_t>(a.tiled->q[va.linear(bt, i, k)]) *
                      b.tiled->q[vb.linear(bt, k, j)];
            if (psum > std::numeric_limits<int32_t>::max() ||
                psum < std::numeric_limits<int32_t>::min())
              return Status::error("int32 partial sum overflow");
            float s = va.params(bt, i, k0).step() * vb.params(bt, k0, j).step();
            if (bf16ScaleProduct)
              s = roundToBF16(s);
            term = static_cast<float>(static_cast<int32_t>(psum)) * s;
          } else {
            // Mixed: f32 partial sum, multiplied by the tiled operand's step.
            float psum = 0.0f;
            for (int64_t k = k0; k < k1; ++k) {
              float x =
                  a.tiled ? static_cast<float>(a.tiled->q[va.linear(bt, i, k)])
                          : a.dense->data[va.linear(bt, i, k)];
              float y =
                  b.tiled ? static_cast<float>(b.tiled->q[vb.linear(bt, k, j)])
                          : b.dense->data[vb.linear(bt, k, j)];
              psum += x * y;
            }
            float s = a.tiled ? va.params(bt, i, k0).step()
                              : vb.params(bt, k0, j).step();
            term = psum * s;
          }
          acc += term;
        }
        c.data[(bt * M + i) * N + j] = acc;
      }
  return {};
}

Status conv2dTiled(const TiledTensor &x, const TiledTensor &w,
                   const Conv2DParams &p, bool bf16ScaleProduct,
                   FloatTensor &y) {
  if (x.shape.size() != 4 || w.shape.size() != 4)
    return Status::error("conv2d operands must have rank 4");
  if (x.layout.dims[0] != 0 || x.layout.dims[1] != 3 || w.layout.dims[0] != 0 ||
      w.layout.dims[1] != 3)
    return Status::error("conv2d operands must be split on dims (0, 3)");
  if (hasOffset(x.form) || hasOffset(w.form))
    return Status::error("operands with offsets are not supported");
  int64_t N = x.shape[0], H = x.shape[1], W = x.shape[2], C = x.shape[3];
  int64_t K = w.shape[0], R = w.shape[1], S = w.shape[2];
  if (w.shape[3] != C)
    return Status::error("channel dimensions differ");
  int64_t ct = x.layout.tile[1];
  if (w.layout.tile[1] != ct)
    return Status::error("C-tile extents differ");
  int64_t P =
      (H + p.pad[0] + p.pad[2] - p.dilation[0] * (R - 1) - 1) / p.stride[0] + 1;
  int64_t Q =
      (W + p.pad[1] + p.pad[3] - p.dilation[1] * (S - 1) - 1) / p.stride[1] + 1;
  if (P <= 0 || Q <= 0)
    return Status::error("empty output");
  y.shape = {N, P, Q, K};
  y.data.assign(N * P * Q * K, 0.0f);
  Shape xg = gridShape(x.shape, x.layout), wg = gridShape(w.shape, w.layout);
  auto xIdx = [&](int64_t n, int64_t h, int64_t ww, int64_t c) {
    return ((n * H + h) * W + ww) * C + c;
  };
  auto wIdx = [&](int64_t k, int64_t r, int64_t s, int64_t c) {
    return ((k * R + r) * S + s) * C + c;
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t pp = 0; pp < P; ++pp)
      for (int64_t qq = 0; qq < Q; ++qq)
        for (int64_t k = 0; k < K; ++k) {
          float acc = 0.0f;
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              int64_t h = pp * p.stride[0] - p.pad[0] + r * p.dilation[0];
              int64_t ww = qq * p.stride[1] - p.pad[1] + s * p.dilation[1];
              if (h < 0 || h >= H || ww < 0 || ww >= W)
                continue; // zero padding
              for (int64_t c0 = 0; c0 < C; c0 += ct) {
                int64_t psum = 0;
                for (int64_t c = c0; c < std::min(C, c0 + ct); ++c)
                  psum += static_cast<int64_t>(x.q[xIdx(n, h, ww, c)]) *
                          w.q[wIdx(k, r, s, c)];
                if (psum > std::numeric_limits<int32_t>::max() ||
                    psum < std::numeric_limits<int32_t>::min())
                  return Status::error("int32 partial sum overflow");
                const TileParams &sx =
                    x.params[((n / x.layout.tile[0] * xg[1] + h) * xg[2] + ww) *
                                 xg[3] +
                             c0 / ct];
                const TileParams &sw =
                    w.params[((k / w.layout.tile[0] * wg[1] + r) * wg[2] + s) *
                                 wg[3] +
                             c0 / ct];
                float scale = sx.step() * sw.step();
                if (bf16ScaleProduct)
                  scale = roundToBF16(scale);
                acc += static_cast<float>(static_cast<int32_t>(psum)) * scale;
              }
            }
          y.data[((n * P + pp) * Q + qq) * K + k] = acc;
        }
  return {};
}

PostprocessResult postprocess(const FloatTensor &acc,
                              std::optional<float> givenLayerScale,
                              bool computeLayerScale, Activation act,
                              const TileLayout &layout, const BitsSpec &bits,
                              QuantForm form, Rounding mode, uint64_t seed) {
  PostprocessResult r;
  float s = 1.0f;
  if (givenLayerScale)
    s = *givenLayerScale;
  else if (computeLayerScale)
    s = computeRange(acc.data.data(), acc.data.size()).absMax /
        static_cast<float>(qmax(bits.uniform));
  r.layerScale = s;
  FloatTensor y = acc;
  for (float &v : y.data) {
    v = s == 0.0f ? 0.0f : v / s;
    if (act == Activation::Relu && v < 0.0f)
      v = 0.0f;
  }
  r.out = quantizeTiled(y, layout, bits, form, mode, seed);
  return r;
}

TiledTensor weightUpdate(const TiledTensor &w, const FloatTensor &dw, float lr,
                         Rounding mode, uint64_t seed) {
  FloatTensor x = dequantizeTiled(w);
  for (size_t i = 0; i < x.data.size(); ++i)
    x.data[i] = x.data[i] - lr * dw.data[i];
  BitsSpec bits;
  bits.uniform = w.params.empty() ? 8 : w.params[0].bits;
  for (const TileParams &p : w.params)
    bits.perTile.push_back(p.bits);
  return quantizeTiled(x, w.layout, bits, w.form, mode, seed);
}

} // namespace tq::ref
