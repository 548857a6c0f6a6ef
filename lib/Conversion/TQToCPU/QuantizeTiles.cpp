//===- QuantizeTiles.cpp - the loops of tile quantization on the CPU -----===//
//
// The element-wise numerics of quantization as tq::ref has them (Quant.cpp:
// steps, rounding, stochastic noise) and the loop nests that quantize a
// buffer tile by tile (cpu::emitQuantizeTiles), one per layout: tiles
// along the unit-stride dim, tiles whose elements lie far apart (walked in
// memory order), NHWC activations split on (N, C) (channels inner), and
// NCHW ones written channels-last. Shared by the tq.quantize lowering and
// the ops that quantize inside their own loops (TQToCPU.cpp, Matmul.cpp).
//
//===----------------------------------------------------------------------===//
#include "QuantizeTiles.h"
#include "FloatKernels.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace mlir::tq;
using cpu::forEachIndex;
using cpu::index;
using cpu::maxFiniteAbs;
using cpu::qmaxOf;

/// K of stochasticNoise's index + seed · K.
static constexpr uint32_t kNoiseSeedMultiplier = 0x9E3779B9u;

uint32_t cpu::noiseSeedShift(uint64_t shift) {
  // K's inverse modulo 2^32 by Newton's iteration: each step doubles the
  // number of correct low bits, and K · K = 1 modulo 8 gives three to
  // start from.
  uint32_t inverse = kNoiseSeedMultiplier;
  for (int i = 0; i < 4; ++i)
    inverse *= 2u - kNoiseSeedMultiplier * inverse;
  return static_cast<uint32_t>(shift) * inverse;
}

//===----------------------------------------------------------------------===//
// Element-wise numerics, as in tq::ref (Quant.cpp)
//===----------------------------------------------------------------------===//

Value cpu::qmaxOf(ImplicitLocOpBuilder &b, Value bits) {
  Value one = arith::ConstantIntOp::create(b, b.getI32Type(), 1);
  Value p = arith::ShLIOp::create(b, one, arith::SubIOp::create(b, bits, one));
  return arith::SIToFPOp::create(b, b.getF32Type(),
                                 arith::SubIOp::create(b, p, one));
}

namespace {

/// `scalar` as the type of `like`: itself, or its splat when `like` is a
/// vector (a vector `scalar` is already of that shape).
Value splatLike(ImplicitLocOpBuilder &b, Value like, Value scalar) {
  auto vt = dyn_cast<VectorType>(like.getType());
  if (!vt || isa<VectorType>(scalar.getType()))
    return scalar;
  return vector::BroadcastOp::create(
      b, VectorType::get(vt.getShape(), scalar.getType()), scalar);
}

/// The f32 constant `v` as the type of `like` (f32 or a vector of f32).
Value f32Like(ImplicitLocOpBuilder &b, Value like, APFloat v) {
  return splatLike(b, like,
                   arith::ConstantFloatOp::create(b, b.getF32Type(), v));
}

} // namespace

Value cpu::maxFiniteAbs(ImplicitLocOpBuilder &b, Value acc, Value x) {
  Value a = math::AbsFOp::create(b, x);
  Value inf = f32Like(b, x, APFloat::getInf(APFloat::IEEEsingle()));
  Value finite = arith::SelectOp::create(
      b, arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, a, inf), a,
      f32Like(b, x, APFloat(0.0f)));
  return arith::MaxNumFOp::create(b, acc, finite, arith::FastMathFlags::nnan);
}

namespace {

/// The uniform [0, 1) noise of stochastic rounding for the elements at
/// row-major `index` (i64 or i32, or a vector of them; i64 is taken modulo
/// 2^32): a 32-bit hash of the seed (an i32, see seedValue) and the index,
/// as tq::ref::stochasticNoise (docs/Numerics.md). 32-bit lanes: twice as
/// many per vector as 64-bit ones.
Value stochasticNoise(ImplicitLocOpBuilder &b, Value seed, Value index) {
  Type i32 = b.getI32Type();
  if (auto vt = dyn_cast<VectorType>(index.getType()))
    i32 = VectorType::get(vt.getShape(), i32);
  auto c = [&](uint32_t v) {
    return splatLike(b, index,
                     arith::ConstantIntOp::create(b, b.getI32Type(),
                                                  static_cast<int32_t>(v)));
  };
  auto shiftXor = [&](Value x, uint32_t shift) {
    return arith::XOrIOp::create(b, x, arith::ShRUIOp::create(b, x, c(shift)));
  };
  // index + seed · K, modulo 2^32 (the seed's low 32 bits).
  Value low = index;
  if (getElementTypeOrSelf(index.getType()).getIntOrFloatBitWidth() != 32)
    low = arith::TruncIOp::create(b, i32, index);
  Value seedTerm = arith::MulIOp::create(
      b, seed,
      arith::ConstantIntOp::create(b, b.getI32Type(),
                                   static_cast<int32_t>(kNoiseSeedMultiplier)));
  Value x = arith::AddIOp::create(b, low, splatLike(b, index, seedTerm));
  x = arith::MulIOp::create(b, shiftXor(x, 16), c(0x7FEB352Du));
  x = arith::MulIOp::create(b, shiftXor(x, 15), c(0x846CA68Bu));
  x = shiftXor(x, 16);
  Type f32 = b.getF32Type();
  if (auto vt = dyn_cast<VectorType>(index.getType()))
    f32 = VectorType::get(vt.getShape(), f32);
  // The top 24 bits, exact in f32, times 2^-24.
  Value top =
      arith::UIToFPOp::create(b, f32, arith::ShRUIOp::create(b, x, c(8)));
  return arith::MulFOp::create(
      b, top,
      splatLike(b, index,
                arith::ConstantFloatOp::create(b, b.getF32Type(),
                                               APFloat(1.0f / 16777216.0f))));
}

} // namespace

Value cpu::seedValue(ImplicitLocOpBuilder &b, std::optional<uint64_t> seed,
                     Value offset) {
  if (!seed)
    return {};
  Value s = arith::ConstantIntOp::create(
      b, b.getI32Type(), static_cast<int32_t>(static_cast<uint32_t>(*seed)));
  return offset ? arith::AddIOp::create(b, s, offset).getResult() : s;
}

namespace {

/// The row-major index (i64) of element `idx` of a tensor of `shape`.
Value linearIndex(ImplicitLocOpBuilder &b, ValueRange idx,
                  ArrayRef<int64_t> shape) {
  Value lin = arith::ConstantIndexOp::create(b, 0);
  for (auto [i, n] : llvm::zip(idx, shape))
    lin = arith::AddIOp::create(
        b, arith::MulIOp::create(b, lin, arith::ConstantIndexOp::create(b, n)),
        i);
  return arith::IndexCastOp::create(b, b.getI64Type(), lin);
}

/// q = clamp(round(x / step), -m, m) with NaN -> 0, ±Inf -> ±m, step 0 -> 0
/// (quantizeValue), as an i32; element by element when `x` is a vector
/// (`m` a scalar, `step` a scalar or a vector like `x`). Stochastic rounding
/// takes `noise`, of the type of `x`.
Value quantizeValue(ImplicitLocOpBuilder &b, Value x, Value step, Value m,
                    RoundingMode mode, Value noise = Value()) {
  Type i32 = b.getI32Type();
  if (auto vt = dyn_cast<VectorType>(x.getType()))
    i32 = VectorType::get(vt.getShape(), i32);
  step = splatLike(b, x, step);
  m = splatLike(b, x, m);
  Value v = arith::DivFOp::create(b, x, step);
  Value negM = arith::NegFOp::create(b, m);
  v = arith::MinimumFOp::create(b, arith::MaximumFOp::create(b, v, negM), m);
  switch (mode) {
  case RoundingMode::up:
    v = math::CeilOp::create(b, v);
    break;
  case RoundingMode::down:
    v = math::FloorOp::create(b, v);
    break;
  case RoundingMode::toward_zero:
    v = math::TruncOp::create(b, v);
    break;
  case RoundingMode::stochastic: {
    // floor(v) + 1 when frac(v) exceeds the noise.
    Value f = math::FloorOp::create(b, v);
    Value up = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                     arith::SubFOp::create(b, v, f), noise);
    v = arith::SelectOp::create(
        b, up, arith::AddFOp::create(b, f, f32Like(b, x, APFloat(1.0f))), f);
    break;
  }
  default:
    v = math::RoundEvenOp::create(b, v);
    break;
  }
  // NaN is 0; ±Inf saturates to ±qmax, which it already is (±Inf / step,
  // with a step of 0 too, clamped to ±qmax); with a step of 0 the rest is
  // 0. Steps are never NaN or negative (see tileStep and usableStep). So
  // the value is kept where |x| >= (step != 0 ? 0 : Inf), an ordered
  // compare (false for NaN), and is 0 elsewhere, before the conversion:
  // one compare per element, the threshold one per step.
  Value inf = f32Like(b, x, APFloat::getInf(APFloat::IEEEsingle()));
  Value zeroF = f32Like(b, x, APFloat(0.0f));
  Value threshold = arith::SelectOp::create(
      b, arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, step, zeroF),
      zeroF, inf);
  Value keep = arith::CmpFOp::create(b, arith::CmpFPredicate::OGE,
                                     math::AbsFOp::create(b, x), threshold);
  return arith::FPToSIOp::create(b, i32,
                                 arith::SelectOp::create(b, keep, v, zeroF));
}

/// 2^k as a double, for |k| < 1022 (built from its exponent bits).
Value exp2Double(ImplicitLocOpBuilder &b, Value k) {
  Type i64 = b.getI64Type();
  Value e = arith::AddIOp::create(b, arith::ExtSIOp::create(b, i64, k),
                                  arith::ConstantIntOp::create(b, i64, 1023));
  Value bits =
      arith::ShLIOp::create(b, e, arith::ConstantIntOp::create(b, i64, 52));
  return arith::BitcastOp::create(b, b.getF64Type(), bits);
}

/// The point position s = ceil(log2(z / qmax)) of a finite z > 0, exactly as
/// tq::ref::pointPosition: an estimate from the exponent of z / qmax in
/// double, corrected against qmax · 2^s (exact in double), clamped to
/// [-149, 127].
Value pointPosition(ImplicitLocOpBuilder &b, Value z, Value m) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f64 = b.getF64Type();
  Value zd = arith::ExtFOp::create(b, f64, z);
  Value qd = arith::ExtFOp::create(b, f64, m);
  Value r = arith::BitcastOp::create(b, i64, arith::DivFOp::create(b, zd, qd));
  // frexp: r = f · 2^e with f in [0.5, 1).
  Value field = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, r, arith::ConstantIntOp::create(b, i64, 52)),
      arith::ConstantIntOp::create(b, i64, 0x7FF));
  Value s = arith::TruncIOp::create(
      b, i32,
      arith::SubIOp::create(b, field,
                            arith::ConstantIntOp::create(b, i64, 1022)));
  Value one = arith::ConstantIntOp::create(b, i32, 1);
  auto bound = [&](Value k) {
    return arith::MulFOp::create(b, qd, exp2Double(b, k));
  };
  for (int i = 0; i < 2; ++i) { // z <= qmax · 2^(s-1): s is one too large
    Value lower = arith::SubIOp::create(b, s, one);
    Value le =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, zd, bound(lower));
    s = arith::SelectOp::create(b, le, lower, s);
  }
  for (int i = 0; i < 2; ++i) { // z > qmax · 2^s: s is one too small
    Value gt =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, zd, bound(s));
    s = arith::SelectOp::create(b, gt, arith::AddIOp::create(b, s, one), s);
  }
  s = arith::MaxSIOp::create(b, s, arith::ConstantIntOp::create(b, i32, -149));
  return arith::MinSIOp::create(b, s,
                                arith::ConstantIntOp::create(b, i32, 127));
}

/// A tile's step from z = max|x| (T3, A2): z / qmax (f32), 2^s (pow2) or
/// (z / 2^s / qmax) · 2^s (pow2_f32); 0 for an all-zero tile.
Value tileStep(ImplicitLocOpBuilder &b, Value z, Value m, ScaleKind kind) {
  if (kind == ScaleKind::f32)
    return arith::DivFOp::create(b, z, m);
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  Value s = pointPosition(b, z, m);
  Value step;
  if (kind == ScaleKind::pow2) {
    // 2^s in f32 (s >= -149: exact, possibly subnormal).
    step = arith::TruncFOp::create(b, f32, exp2Double(b, s));
  } else {
    Value negS = arith::SubIOp::create(
        b, arith::ConstantIntOp::create(b, b.getI32Type(), 0), s);
    // z · 2^-s is exact in double and in f32 (it lies in [1, 2·qmax]).
    Value scaled = arith::TruncFOp::create(
        b, f32,
        arith::MulFOp::create(b, arith::ExtFOp::create(b, f64, z),
                              exp2Double(b, negS)));
    Value factor = arith::DivFOp::create(b, scaled, m);
    // ldexp(f, s) rounds once: the double product is exact.
    step = arith::TruncFOp::create(
        b, f32,
        arith::MulFOp::create(b, arith::ExtFOp::create(b, f64, factor),
                              exp2Double(b, s)));
  }
  Value zero = arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));
  Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, z, zero);
  return arith::SelectOp::create(b, positive, step, zero);
}

} // namespace

Value cpu::index(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

void cpu::forEachIndex(
    ImplicitLocOpBuilder &b, ArrayRef<int64_t> shape,
    function_ref<void(ImplicitLocOpBuilder &, ValueRange)> body,
    int64_t threads) {
  SmallVector<Value> lbs(shape.size(), index(b, 0)),
      steps(shape.size(), index(b, 1)), ubs;
  for (int64_t s : shape)
    ubs.push_back(index(b, s));
  cpu::buildIndependentLoops(b, b.getLoc(), lbs, ubs, steps, threads,
                             [&](OpBuilder &nb, Location loc, ValueRange ivs) {
                               ImplicitLocOpBuilder ib(loc, nb);
                               body(ib, ivs);
                             });
}

namespace {
/// Whether the last dim of memref `v` has unit stride.
bool unitInnerStride(Value v) {
  auto t = cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(t.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// The lanes of the vectors the quantization loops use.
constexpr int64_t kQuantizeLanes = 16;

/// The row-major indices, modulo 2^32 (a vector of i32: what the noise of
/// stochastic rounding hashes), of the kQuantizeLanes elements from `idx`
/// along the last dim of `shape`.
Value laneIndices(ImplicitLocOpBuilder &b, ValueRange idx,
                  ArrayRef<int64_t> shape) {
  auto i32Vec = VectorType::get({kQuantizeLanes}, b.getI32Type());
  SmallVector<int32_t> lane(kQuantizeLanes);
  for (int32_t k = 0; k < kQuantizeLanes; ++k)
    lane[k] = k;
  Value first =
      arith::TruncIOp::create(b, b.getI32Type(), linearIndex(b, idx, shape));
  return arith::AddIOp::create(
      b, vector::BroadcastOp::create(b, i32Vec, first),
      arith::ConstantOp::create(
          b, DenseElementsAttr::get(i32Vec, ArrayRef<int32_t>(lane))));
}

/// Loops over `shape` with the last dim kQuantizeLanes at a time: `body`
/// gets the index of each vector's first element and, for the last vector
/// of a row when it is partial, the mask of its lanes inside the shape
/// (null for whole vectors: plain loads and stores, as masked stores are
/// slow on some x86 cores). With `threads` > 1 the iterations of the outer
/// dims must be independent.
void forEachVector(
    ImplicitLocOpBuilder &b, ArrayRef<int64_t> shape, int64_t threads,
    function_ref<void(ImplicitLocOpBuilder &, ValueRange, Value)> body) {
  SmallVector<Value> lbs(shape.size() - 1, index(b, 0)),
      steps(shape.size() - 1, index(b, 1)), ubs;
  for (int64_t s : shape.drop_back())
    ubs.push_back(index(b, s));
  int64_t last = shape.back(), whole = last / kQuantizeLanes * kQuantizeLanes;
  cpu::buildIndependentLoops(
      b, b.getLoc(), lbs, ubs, steps, threads,
      [&](OpBuilder &nb, Location loc, ValueRange outer) {
        ImplicitLocOpBuilder ib(loc, nb);
        auto at = [&](Value col) {
          SmallVector<Value> idx(outer.begin(), outer.end());
          idx.push_back(col);
          return idx;
        };
        if (whole > 0)
          scf::ForOp::create(
              ib, index(ib, 0), index(ib, whole), index(ib, kQuantizeLanes),
              ValueRange{},
              [&](OpBuilder &fb, Location fl, Value col, ValueRange) {
                ImplicitLocOpBuilder vb(fl, fb);
                body(vb, at(col), Value());
                scf::YieldOp::create(vb);
              });
        if (whole < last) {
          Value mask = vector::ConstantMaskOp::create(
              ib, VectorType::get({kQuantizeLanes}, ib.getI1Type()),
              ArrayRef<int64_t>{last - whole});
          body(ib, at(index(ib, whole)), mask);
        }
      });
}

/// A vector of `type` from `mem` at `idx`: masked (0 elsewhere) when `mask`
/// is not null.
Value loadVector(ImplicitLocOpBuilder &b, VectorType type, Value mem,
                 ValueRange idx, Value mask) {
  if (!mask)
    return vector::LoadOp::create(b, type, mem, idx);
  return vector::MaskedLoadOp::create(
      b, type, mem, idx, mask,
      arith::ConstantOp::create(
          b,
          DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType()))));
}

/// Stores `v` into `mem` at `idx`, only the lanes of `mask` when it is not
/// null.
void storeVector(ImplicitLocOpBuilder &b, Value v, Value mem, ValueRange idx,
                 Value mask) {
  if (!mask)
    vector::StoreOp::create(b, v, mem, idx);
  else
    vector::MaskedStoreOp::create(b, mem, idx, mask, v);
}

using TileOfFn =
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange)>;

/// The steps pass of emitQuantizeInMemoryOrderVectors: the maxima of all
/// tiles at once into a grid-shaped buffer (walking x in memory order),
/// then each tile's step. `rows0` consecutive indices of dim 0 share a
/// tile (its tile size when it is split, else 1).
void emitStepsInMemoryOrderVectors(ImplicitLocOpBuilder &b, Value x,
                                   Value steps, Value m, int64_t threads,
                                   ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> grid, ScaleKind kind,
                                   TileOfFn tileOf, int64_t rows0) {
  auto f32Vec = VectorType::get({kQuantizeLanes}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(f32Vec, APFloat(0.0f)));
  Value zmax = cpu::allocBuffer(b, b.getLoc(), grid, b.getF32Type());
  forEachVector(b, grid, threads,
                [&](ImplicitLocOpBuilder &ib, ValueRange g, Value mask) {
                  storeVector(ib, zeros, zmax, g, mask);
                });
  // A tile's elements are spread over the nest below its rows of dim 0:
  // the threads share those rows a tile at a time, and each thread walks
  // its tiles' elements in order.
  cpu::buildIndependentLoops(
      b, b.getLoc(), ValueRange{index(b, 0)},
      ValueRange{index(b, llvm::divideCeil(shape[0], rows0))},
      ValueRange{index(b, 1)}, threads,
      [&](OpBuilder &nb, Location loc, ValueRange tile) {
        ImplicitLocOpBuilder tb(loc, nb);
        Value lo = arith::MulIOp::create(tb, tile[0], index(tb, rows0));
        Value hi = arith::MinSIOp::create(
            tb, arith::AddIOp::create(tb, lo, index(tb, rows0)),
            index(tb, shape[0]));
        scf::ForOp::create(
            tb, lo, hi, index(tb, 1), ValueRange{},
            [&](OpBuilder &fb, Location fl, Value row, ValueRange) {
              ImplicitLocOpBuilder rb(fl, fb);
              forEachVector(
                  rb, shape.drop_front(), 1,
                  [&](ImplicitLocOpBuilder &ib, ValueRange rest, Value mask) {
                    SmallVector<Value> idx = {row};
                    llvm::append_range(idx, rest);
                    SmallVector<Value> g = tileOf(ib, idx);
                    Value v = loadVector(ib, f32Vec, x, idx, mask);
                    Value z = loadVector(ib, f32Vec, zmax, g, mask);
                    storeVector(ib, maxFiniteAbs(ib, z, v), zmax, g, mask);
                  });
              scf::YieldOp::create(rb);
            });
      });
  forEachIndex(
      b, grid,
      [&](ImplicitLocOpBuilder &ib, ValueRange g) {
        Value z = memref::LoadOp::create(ib, zmax, g);
        memref::StoreOp::create(ib, tileStep(ib, z, m, kind), steps, g);
      },
      threads);
}

/// The values pass of the memory-order quantizations: each vector of
/// kQuantizeLanes elements of x (the last dim of `shape` innermost, masked
/// at each row's end) quantized with the step `stepOf` gives it (a vector,
/// or a scalar for all its lanes) and stored into q.
void emitQuantizeVectors(
    ImplicitLocOpBuilder &b, Value x, Value q, Value m, RoundingMode rounding,
    Value seed, int64_t threads, ArrayRef<int64_t> shape,
    function_ref<Value(ImplicitLocOpBuilder &, ValueRange, Value)> stepOf) {
  Type container = cast<MemRefType>(q.getType()).getElementType();
  auto f32Vec = VectorType::get({kQuantizeLanes}, b.getF32Type());
  auto qVec = VectorType::get({kQuantizeLanes}, container);
  forEachVector(
      b, shape, threads,
      [&](ImplicitLocOpBuilder &ib, ValueRange idx, Value mask) {
        Value step = stepOf(ib, idx, mask);
        Value v = loadVector(ib, f32Vec, x, idx, mask);
        Value noise =
            rounding == RoundingMode::stochastic
                ? stochasticNoise(ib, seed, laneIndices(ib, idx, shape))
                : Value();
        Value qi = quantizeValue(ib, v, step, m, rounding, noise);
        storeVector(ib, arith::TruncIOp::create(ib, qVec, qi), q, idx, mask);
      });
}

/// The vector form of emitQuantizeInMemoryOrder (below), on buffers whose
/// last dim has unit stride.
void emitQuantizeInMemoryOrderVectors(ImplicitLocOpBuilder &b, Value x, Value q,
                                      Value steps, Value m,
                                      RoundingMode rounding, bool stepsGiven,
                                      Value seed, int64_t threads,
                                      ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> grid, ScaleKind kind,
                                      TileOfFn tileOf, int64_t rows0) {
  auto f32Vec = VectorType::get({kQuantizeLanes}, b.getF32Type());
  if (!stepsGiven)
    emitStepsInMemoryOrderVectors(b, x, steps, m, threads, shape, grid, kind,
                                  tileOf, rows0);
  emitQuantizeVectors(
      b, x, q, m, rounding, seed, threads, shape,
      [&](ImplicitLocOpBuilder &ib, ValueRange idx, Value mask) -> Value {
        return loadVector(ib, f32Vec, steps, tileOf(ib, idx), mask);
      });
}

/// emitQuantizeTiles when neither split dim is the last one (an NCHW
/// activation split on (N, C)): a tile's elements are then far apart, so
/// both passes walk x in memory order instead, the last dim innermost
/// (unit stride, vectorized): the maxima of all tiles at once into a
/// grid-shaped buffer, then the steps, then the values. max is exact in any
/// order, so the results are the same bits. With `stepsGiven`, `steps`
/// already holds them and only the values are computed.
void emitQuantizeInMemoryOrder(ImplicitLocOpBuilder &b, TiledType type, Value x,
                               Value q, Value steps, Value m,
                               RoundingMode rounding, bool stepsGiven,
                               Value seed, int64_t threads) {
  SmallVector<int64_t> shape(type.getShape());
  int64_t d0 = type.getSplitDims()[0], d1 = type.getSplitDims()[1];
  int64_t t0 = type.getTileShape()[0], t1 = type.getTileShape()[1];
  Type container = cast<MemRefType>(q.getType()).getElementType();
  SmallVector<int64_t> grid = type.getGridShape();
  // The dims after the split ones, collapsed into one when the buffers are
  // row-major: one long unit-stride innermost loop (H·W, not W).
  int64_t after = std::max(d0, d1) + 1, rank = type.getRank();
  auto rowMajor = [](Value v) {
    return cast<MemRefType>(v.getType()).getLayout().isIdentity();
  };
  if (rank - after > 1 && rowMajor(x) && rowMajor(q) && rowMajor(steps)) {
    SmallVector<ReassociationIndices> groups =
        cpu::mergeTrailingDims(rank, after);
    x = memref::CollapseShapeOp::create(b, x, groups);
    q = memref::CollapseShapeOp::create(b, q, groups);
    steps = memref::CollapseShapeOp::create(b, steps, groups);
    int64_t inner = 1;
    for (int64_t d = after; d < rank; ++d)
      inner *= shape[d];
    shape.resize(after);
    shape.push_back(inner);
    grid.resize(after);
    grid.push_back(inner);
  }
  auto tileOf = [&](ImplicitLocOpBuilder &ib, ValueRange idx) {
    SmallVector<Value> g(idx.begin(), idx.end());
    g[d0] = arith::DivUIOp::create(ib, idx[d0], index(ib, t0));
    g[d1] = arith::DivUIOp::create(ib, idx[d1], index(ib, t1));
    return g;
  };
  // The last dim is not split, so it is the grid's too: with unit strides,
  // both passes go kQuantizeLanes elements at a time, masked at the end of
  // each row. Element by element it is the same arithmetic.
  if (unitInnerStride(x) && unitInnerStride(q) && unitInnerStride(steps))
    return emitQuantizeInMemoryOrderVectors(b, x, q, steps, m, rounding,
                                            stepsGiven, seed, threads, shape,
                                            grid, type.getScaleKind(), tileOf,
                                            d0 == 0   ? t0
                                            : d1 == 0 ? t1
                                                      : 1);
  if (!stepsGiven) {
    Value zmax = cpu::allocBuffer(b, b.getLoc(), grid, b.getF32Type());
    Value zero =
        arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));
    forEachIndex(
        b, grid,
        [&](ImplicitLocOpBuilder &ib, ValueRange g) {
          memref::StoreOp::create(ib, zero, zmax, g);
        },
        threads);
    // A tile's elements are spread over the nest: one thread.
    forEachIndex(b, shape, [&](ImplicitLocOpBuilder &ib, ValueRange idx) {
      SmallVector<Value> g = tileOf(ib, idx);
      Value v = memref::LoadOp::create(ib, x, idx);
      Value z = memref::LoadOp::create(ib, zmax, g);
      memref::StoreOp::create(ib, maxFiniteAbs(ib, z, v), zmax, g);
    });
    forEachIndex(
        b, grid,
        [&](ImplicitLocOpBuilder &ib, ValueRange g) {
          Value z = memref::LoadOp::create(ib, zmax, g);
          memref::StoreOp::create(ib, tileStep(ib, z, m, type.getScaleKind()),
                                  steps, g);
        },
        threads);
  }
  forEachIndex(
      b, shape,
      [&](ImplicitLocOpBuilder &ib, ValueRange idx) {
        Value step = memref::LoadOp::create(ib, steps, tileOf(ib, idx));
        // The collapsed dims are row-major: the same linear index.
        Value noise =
            rounding == RoundingMode::stochastic
                ? stochasticNoise(ib, seed, linearIndex(ib, idx, shape))
                : Value();
        Value qi = quantizeValue(ib, memref::LoadOp::create(ib, x, idx), step,
                                 m, rounding, noise);
        memref::StoreOp::create(ib, arith::TruncIOp::create(ib, container, qi),
                                q, idx);
      },
      threads);
  // zmax is freed by the buffer deallocation that follows bufferization.
}

} // namespace

Value cpu::emitQuantizeChannelsLast(ImplicitLocOpBuilder &b, TiledType type,
                                    Value x, Value qT, Value m,
                                    RoundingMode rounding, Value seed,
                                    int64_t threads) {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t N = shape[0], C = shape[1], HW = shape[2] * shape[3];
  int64_t t0 = type.getTileShape()[0], t1 = type.getTileShape()[1];
  constexpr int64_t L = kQuantizeLanes;
  SmallVector<int64_t> grid = type.getGridShape();
  Value steps = cpu::allocBuffer(b, b.getLoc(), grid, b.getF32Type());
  SmallVector<ReassociationIndices> hw = cpu::mergeTrailingDims(4, 2);
  Value x3 = memref::CollapseShapeOp::create(b, x, hw);
  Value s3 = memref::CollapseShapeOp::create(b, steps, hw);
  Value q3 = memref::CollapseShapeOp::create(
      b, qT, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
  SmallVector<int64_t> shape3 = {N, C, HW}, grid3 = {grid[0], grid[1], HW};
  auto tileOf = [&](ImplicitLocOpBuilder &ib, ValueRange idx) {
    return SmallVector<Value>{arith::DivUIOp::create(ib, idx[0], index(ib, t0)),
                              arith::DivUIOp::create(ib, idx[1], index(ib, t1)),
                              idx[2]};
  };
  emitStepsInMemoryOrderVectors(b, x3, s3, m, threads, shape3, grid3,
                                type.getScaleKind(), tileOf, t0);

  Type container = cast<MemRefType>(qT.getType()).getElementType();
  auto f32Vec = VectorType::get({L}, b.getF32Type());
  auto qVec = VectorType::get({L}, container);
  auto maskOf = [&](ImplicitLocOpBuilder &mb, int64_t valid) -> Value {
    if (valid == L)
      return Value();
    return vector::ConstantMaskOp::create(
        mb, VectorType::get({L}, mb.getI1Type()), ArrayRef<int64_t>{valid});
  };
  // Channels [c0, c0 + cValid) × pixels [hw0, hw0 + hwValid) of image n;
  // rows past the last channel repeat it and are not stored.
  auto block = [&](ImplicitLocOpBuilder &kb, Value n, Value c0, Value hw0,
                   int64_t cValid, int64_t hwValid) {
    Value cMask = maskOf(kb, cValid), hwMask = maskOf(kb, hwValid);
    SmallVector<Value> rows;
    for (int64_t i = 0; i < L; ++i) {
      SmallVector<Value> at = {
          n, arith::AddIOp::create(kb, c0, index(kb, std::min(i, cValid - 1))),
          hw0};
      Value step = loadVector(kb, f32Vec, s3, tileOf(kb, at), hwMask);
      Value v = loadVector(kb, f32Vec, x3, at, hwMask);
      Value noise = rounding == RoundingMode::stochastic
                        ? stochasticNoise(kb, seed, laneIndices(kb, at, shape3))
                        : Value();
      rows.push_back(quantizeValue(kb, v, step, m, rounding, noise));
    }
    SmallVector<Value> pixels = floatkernels::transposeBlock(kb, rows);
    for (int64_t j = 0; j < hwValid; ++j) {
      SmallVector<Value> at = {n, arith::AddIOp::create(kb, hw0, index(kb, j)),
                               c0};
      Value v = arith::TruncIOp::create(kb, qVec, pixels[j]);
      // LLVM 22 compiles a masked store of one lane of this truncated
      // shuffle as a 4-byte store (three bytes past the lane): one lane is
      // stored as a scalar.
      if (cValid == 1)
        memref::StoreOp::create(kb, vector::ExtractOp::create(kb, v, 0), q3,
                                at);
      else
        storeVector(kb, v, q3, at, cMask);
    }
  };
  // The images are independent (shared among the threads).
  forEachIndex(
      b, {N},
      [&](ImplicitLocOpBuilder &ib, ValueRange n) {
        floatkernels::forEachBlock(
            ib, C, HW, L,
            [&](ImplicitLocOpBuilder &kb, Value c0, int64_t cn, Value hw0,
                int64_t hwn) { block(kb, n[0], c0, hw0, cn, hwn); });
      },
      threads);
  return cpu::emitPermute(b, steps, {0, 2, 3, 1}, threads);
}

namespace {

/// The rows of a tile at one pixel up to which emitQuantizeChannelsInner
/// quantizes pixel by pixel: as many rows of x at once as the hardware
/// prefetchers follow (one at batch 1).
constexpr int64_t kPixelByPixelRows = 4;
/// Pixels whose steps it computes before their values: enough
/// independent chains of max and division to fill the pipelines, few
/// enough that their values are still in L1.
constexpr int64_t kPixelGroup = 16;

/// emitQuantizeTiles for a tensor split on its first and last dims with
/// dims between them (an NHWC activation split on (N, C)): a tile is then
/// t0 rows far apart of a few channels, one tile per pixel. Needs t1 to be
/// a whole number of vectors of kQuantizeLanes, or one tile across the
/// channels. max is exact in any order and the values are quantized
/// element by element: the same bits as tile by tile, either way:
/// - with few rows per tile (kPixelByPixelRows: a small batch), pixel by
///   pixel: each tile's max in registers, its step, then its values, while
///   the pixel's channels are in L1;
/// - else both passes walk x in memory order, the channels kQuantizeLanes
///   at a time: the lane-wise maxima of each (row tile, pixel) into a
///   buffer of vectors, each tile's max across its lanes, its step; then
///   the values, each vector with the step of its channels' tile.
void emitQuantizeChannelsInner(ImplicitLocOpBuilder &b, TiledType type, Value x,
                               Value q, Value steps, Value m,
                               RoundingMode rounding, Value seed,
                               int64_t threads) {
  ArrayRef<int64_t> full = type.getShape();
  int64_t rank = type.getRank(), N = full.front(), C = full.back();
  int64_t t0 = type.getTileShape()[0], t1 = type.getTileShape()[1];
  int64_t M = 1;
  for (int64_t d = 1; d + 1 < rank; ++d)
    M *= full[d];
  SmallVector<ReassociationIndices> groups = {{0}, {}, {rank - 1}};
  for (int64_t d = 1; d + 1 < rank; ++d)
    groups[1].push_back(d);
  x = memref::CollapseShapeOp::create(b, x, groups);
  q = memref::CollapseShapeOp::create(b, q, groups);
  steps = memref::CollapseShapeOp::create(b, steps, groups);
  int64_t G0 = llvm::divideCeil(N, t0), G1 = llvm::divideCeil(C, t1);
  int64_t CV = llvm::divideCeil(C, kQuantizeLanes);
  SmallVector<int64_t> shape = {N, M, C};
  auto f32Vec = VectorType::get({kQuantizeLanes}, b.getF32Type());
  auto qVec = VectorType::get({kQuantizeLanes},
                              cast<MemRefType>(q.getType()).getElementType());
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(f32Vec, APFloat(0.0f)));
  // The maxima are finite and not negative (maxFiniteAbs): no NaN checks.
  auto nnan = arith::FastMathFlags::nnan;
  bool pixelByPixel = std::min(N, t0) <= kPixelByPixelRows;
  // Vector k of the channels: its mask past C (null for a whole vector).
  auto maskOf = [&](ImplicitLocOpBuilder &ib, int64_t k) -> Value {
    int64_t valid = std::min<int64_t>(C - k * kQuantizeLanes, kQuantizeLanes);
    if (valid == kQuantizeLanes)
      return Value();
    return vector::ConstantMaskOp::create(
        ib, VectorType::get({kQuantizeLanes}, ib.getI1Type()),
        ArrayRef<int64_t>{valid});
  };
  // The vectors of tile g1's channels.
  int64_t perTile = G1 == 1 ? CV : t1 / kQuantizeLanes;
  auto tileVectors = [&](int64_t g1) {
    return llvm::seq<int64_t>(g1 * perTile, std::min(CV, (g1 + 1) * perTile));
  };
  Value zvec;
  if (!pixelByPixel)
    zvec = cpu::allocBuffer(b, b.getLoc(), {G0, M, CV * kQuantizeLanes},
                            b.getF32Type());
  // Per row tile and block of pixels (shared among the threads). With
  // fewer row tiles than threads (a small batch), the pixels are split
  // into blocks so that every thread has some.
  int64_t MB =
      threads > G0 ? std::min<int64_t>(M, llvm::divideCeil(threads, G0)) : 1;
  int64_t Mb = llvm::divideCeil(M, MB);
  cpu::buildIndependentLoops(
      b, b.getLoc(), ValueRange{index(b, 0), index(b, 0)},
      ValueRange{index(b, G0), index(b, MB)},
      ValueRange{index(b, 1), index(b, 1)}, threads,
      [&](OpBuilder &nb, Location loc, ValueRange gm) {
        ImplicitLocOpBuilder tb(loc, nb);
        Value g0 = gm[0];
        Value mlo = arith::MulIOp::create(tb, gm[1], index(tb, Mb));
        Value mhi = arith::MinSIOp::create(
            tb, arith::AddIOp::create(tb, mlo, index(tb, Mb)), index(tb, M));
        Value lo = arith::MulIOp::create(tb, g0, index(tb, t0));
        Value hi = arith::MinSIOp::create(
            tb, arith::AddIOp::create(tb, lo, index(tb, t0)), index(tb, N));
        // The body for each pixel m in [from, to) (by default, the block).
        auto forEachPixel =
            [&](ImplicitLocOpBuilder &pb,
                function_ref<void(ImplicitLocOpBuilder &, Value)> body,
                Value from = Value(), Value to = Value()) {
              scf::ForOp::create(
                  pb, from ? from : mlo, to ? to : mhi, index(pb, 1),
                  ValueRange{},
                  [&](OpBuilder &fb, Location fl, Value mi, ValueRange) {
                    ImplicitLocOpBuilder ib(fl, fb);
                    body(ib, mi);
                    scf::YieldOp::create(ib);
                  });
            };
        // The max of vectors `z` (lane-wise maxima of one tile) and its step.
        auto storeStep = [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> z,
                             Value mi, int64_t g1) {
          Value all = z.front();
          for (Value v : z.drop_front())
            all = arith::MaxNumFOp::create(ib, all, v, nnan);
          Value tileMax = vector::ReductionOp::create(
              ib, vector::CombiningKind::MAXNUMF, all, nnan);
          Value step = tileStep(ib, tileMax, m, type.getScaleKind());
          memref::StoreOp::create(ib, step, steps,
                                  ValueRange{g0, mi, index(ib, g1)});
          return step;
        };
        if (pixelByPixel) {
          auto at = [&](ImplicitLocOpBuilder &ib, Value n, Value mi,
                        int64_t k) {
            return SmallVector<Value>{n, mi, index(ib, k * kQuantizeLanes)};
          };
          // Groups of pixels: the steps of the group, each tile's chain of
          // max, reduction and division independent of the others', then
          // its values, from L1.
          scf::ForOp::create(
              tb, mlo, mhi, index(tb, kPixelGroup), ValueRange{},
              [&](OpBuilder &gb, Location gl, Value first, ValueRange) {
                ImplicitLocOpBuilder pb(gl, gb);
                Value last = arith::MinSIOp::create(
                    pb,
                    arith::AddIOp::create(pb, first, index(pb, kPixelGroup)),
                    mhi);
                forEachPixel(
                    pb,
                    [&](ImplicitLocOpBuilder &ib, Value mi) {
                      for (int64_t g1 = 0; g1 < G1; ++g1) {
                        SmallVector<Value> init(tileVectors(g1).size(), zeros);
                        auto maxima = scf::ForOp::create(
                            ib, lo, hi, index(ib, 1), init,
                            [&](OpBuilder &fb, Location fl, Value n,
                                ValueRange z) {
                              ImplicitLocOpBuilder rb(fl, fb);
                              SmallVector<Value> next;
                              for (auto [i, k] :
                                   llvm::enumerate(tileVectors(g1)))
                                next.push_back(maxFiniteAbs(
                                    rb, z[i],
                                    loadVector(rb, f32Vec, x, at(rb, n, mi, k),
                                               maskOf(rb, k))));
                              scf::YieldOp::create(rb, next);
                            });
                        SmallVector<Value> z(maxima.getResults());
                        storeStep(ib, z, mi, g1);
                      }
                    },
                    first, last);
                forEachPixel(
                    pb,
                    [&](ImplicitLocOpBuilder &ib, Value mi) {
                      for (int64_t g1 = 0; g1 < G1; ++g1) {
                        Value step = memref::LoadOp::create(
                            ib, steps, ValueRange{g0, mi, index(ib, g1)});
                        scf::ForOp::create(
                            ib, lo, hi, index(ib, 1), ValueRange{},
                            [&](OpBuilder &fb, Location fl, Value n,
                                ValueRange) {
                              ImplicitLocOpBuilder rb(fl, fb);
                              for (int64_t k : tileVectors(g1)) {
                                SmallVector<Value> idx = at(rb, n, mi, k);
                                Value mask = maskOf(rb, k);
                                Value v = loadVector(rb, f32Vec, x, idx, mask);
                                Value noise =
                                    rounding == RoundingMode::stochastic
                                        ? stochasticNoise(
                                              rb, seed,
                                              laneIndices(rb, idx, shape))
                                        : Value();
                                Value qi = quantizeValue(rb, v, step, m,
                                                         rounding, noise);
                                storeVector(
                                    rb, arith::TruncIOp::create(rb, qVec, qi),
                                    q, idx, mask);
                              }
                              scf::YieldOp::create(rb);
                            });
                      }
                    },
                    first, last);
                scf::YieldOp::create(pb);
              });
          return;
        }
        // Pass 1: the lane-wise maxima of each pixel's tiles in zvec, the
        // rows of the row tile in memory order, then each tile's step.
        forEachPixel(tb, [&](ImplicitLocOpBuilder &ib, Value mi) {
          for (int64_t k = 0; k < CV; ++k)
            vector::StoreOp::create(
                ib, zeros, zvec,
                ValueRange{g0, mi, index(ib, k * kQuantizeLanes)});
        });
        scf::ForOp::create(
            tb, lo, hi, index(tb, 1), ValueRange{},
            [&](OpBuilder &fb, Location fl, Value n, ValueRange) {
              ImplicitLocOpBuilder rb(fl, fb);
              forEachPixel(rb, [&](ImplicitLocOpBuilder &pb, Value mi) {
                forEachVector(
                    pb, {C}, 1,
                    [&](ImplicitLocOpBuilder &ib, ValueRange c, Value mask) {
                      Value v = loadVector(ib, f32Vec, x,
                                           ValueRange{n, mi, c[0]}, mask);
                      SmallVector<Value> at = {g0, mi, c[0]};
                      Value z = vector::LoadOp::create(ib, f32Vec, zvec, at);
                      vector::StoreOp::create(ib, maxFiniteAbs(ib, z, v), zvec,
                                              at);
                    });
              });
              scf::YieldOp::create(rb);
            });
        forEachPixel(tb, [&](ImplicitLocOpBuilder &ib, Value mi) {
          for (int64_t g1 = 0; g1 < G1; ++g1) {
            SmallVector<Value> z;
            for (int64_t k : tileVectors(g1))
              z.push_back(vector::LoadOp::create(
                  ib, f32Vec, zvec,
                  ValueRange{g0, mi, index(ib, k * kQuantizeLanes)}));
            storeStep(ib, z, mi, g1);
          }
        });
      });
  if (pixelByPixel)
    return;
  // Pass 2: the values, each vector's channels in one tile.
  emitQuantizeVectors(
      b, x, q, m, rounding, seed, threads, shape,
      [&](ImplicitLocOpBuilder &ib, ValueRange idx, Value) -> Value {
        return memref::LoadOp::create(
            ib, steps,
            ValueRange{arith::DivUIOp::create(ib, idx[0], index(ib, t0)),
                       idx[1],
                       arith::DivUIOp::create(ib, idx[2], index(ib, t1))});
      });
}
} // namespace

namespace {
/// A given step as quantization uses it: one that is not finite and
/// positive is taken as 0 (its tile quantizes to 0).
Value usableStep(ImplicitLocOpBuilder &b, Value s) {
  Value zero = arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));
  Value inf = arith::ConstantFloatOp::create(
      b, b.getF32Type(), APFloat::getInf(APFloat::IEEEsingle()));
  Value usable = arith::AndIOp::create(
      b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, s, zero),
      arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, s, inf));
  return arith::SelectOp::create(b, usable, s, zero);
}

/// One tile of emitQuantizeTiles whose rows [lo0, hi0) run along d0 and
/// whose columns [lo1, hi1) are the unit-stride last dim: both passes load
/// kQuantizeLanes columns at a time, masked at the tile's end. The max is
/// exact in any order and the values are quantized element by element, so
/// the results are the same bits as one element at a time. With
/// `givenStep`, pass 1 is skipped.
void emitQuantizeTileRows(
    ImplicitLocOpBuilder &b, Value x, Value q, Value steps, ValueRange g,
    Value lo0, Value hi0, Value lo1, Value hi1,
    function_ref<SmallVector<Value>(Value, Value)> elementIndex, Value m,
    ScaleKind kind, RoundingMode rounding, Value givenStep,
    ArrayRef<int64_t> shape, Value seed) {
  Type container = cast<MemRefType>(q.getType()).getElementType();
  auto f32Vec = VectorType::get({kQuantizeLanes}, b.getF32Type());
  auto maskVec = VectorType::get({kQuantizeLanes}, b.getI1Type());
  Value one = index(b, 1), lanes = index(b, kQuantizeLanes);
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(f32Vec, APFloat(0.0f)));
  // The mask of the columns [c, hi1) among the next kQuantizeLanes.
  auto maskAt = [&](ImplicitLocOpBuilder &ib, Value c) {
    return vector::CreateMaskOp::create(
        ib, maskVec, ValueRange{arith::SubIOp::create(ib, hi1, c)});
  };
  Value step = givenStep;
  if (!step) {
    // Pass 1: Z = max |x| over the finite elements.
    auto rows = scf::ForOp::create(
        b, lo0, hi0, one, ValueRange{zeros},
        [&](OpBuilder &nb, Location l, Value r, ValueRange acc) {
          auto cols = scf::ForOp::create(
              nb, l, lo1, hi1, lanes, acc,
              [&](OpBuilder &nb2, Location l2, Value c, ValueRange acc2) {
                ImplicitLocOpBuilder ib(l2, nb2);
                Value v = vector::MaskedLoadOp::create(
                    ib, f32Vec, x, elementIndex(r, c), maskAt(ib, c), zeros);
                scf::YieldOp::create(ib,
                                     ValueRange{maxFiniteAbs(ib, acc2[0], v)});
              });
          scf::YieldOp::create(nb, l, cols.getResults());
        });
    Value z = vector::ReductionOp::create(b, vector::CombiningKind::MAXNUMF,
                                          rows.getResult(0));
    step = tileStep(b, z, m, kind);
  }
  memref::StoreOp::create(b, step, steps, g);
  // Pass 2: the values.
  auto qVec = VectorType::get({kQuantizeLanes}, container);
  scf::buildLoopNest(
      b, b.getLoc(), ValueRange{lo0, lo1}, ValueRange{hi0, hi1},
      ValueRange{one, lanes}, [&](OpBuilder &nb, Location l, ValueRange rc) {
        ImplicitLocOpBuilder ib(l, nb);
        SmallVector<Value> idx = elementIndex(rc[0], rc[1]);
        Value mask = maskAt(ib, rc[1]);
        Value v = vector::MaskedLoadOp::create(ib, f32Vec, x, idx, mask, zeros);
        Value noise;
        if (rounding == RoundingMode::stochastic)
          noise = stochasticNoise(ib, seed, laneIndices(ib, idx, shape));
        Value qi = quantizeValue(ib, v, step, m, rounding, noise);
        vector::MaskedStoreOp::create(ib, q, idx, mask,
                                      arith::TruncIOp::create(ib, qVec, qi));
      });
}
} // namespace

SmallVector<ReassociationIndices> cpu::mergeTrailingDims(int64_t rank,
                                                         int64_t from) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < from; ++d)
    groups.push_back({d});
  groups.emplace_back();
  for (int64_t d = from; d < rank; ++d)
    groups.back().push_back(d);
  return groups;
}

void cpu::buildIndependentLoops(
    OpBuilder &b, Location loc, ValueRange lbs, ValueRange ubs,
    ValueRange steps, int64_t threads,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  if (threads <= 1 || lbs.empty()) {
    scf::buildLoopNest(b, loc, lbs, ubs, steps, body);
    return;
  }
  scf::ParallelOp::create(b, loc, lbs, ubs, steps, body);
}

void cpu::emitQuantizeTiles(OpBuilder &ob, Location loc, TiledType type,
                            Value x, Value q, Value steps, Value bits,
                            RoundingMode rounding, Value tilesBegin,
                            Value tilesEnd, Value given, Value refresh,
                            Value seed, int64_t threads) {
  ImplicitLocOpBuilder b(loc, ob);
  if (given && refresh) {
    // Computed from the data when `refresh` is set, else the given steps.
    scf::IfOp::create(
        b, refresh,
        [&](OpBuilder &tb, Location tl) {
          cpu::emitQuantizeTiles(tb, tl, type, x, q, steps, bits, rounding,
                                 tilesBegin, tilesEnd, Value(), Value(), seed,
                                 threads);
          scf::YieldOp::create(tb, tl);
        },
        [&](OpBuilder &eb, Location el) {
          cpu::emitQuantizeTiles(eb, el, type, x, q, steps, bits, rounding,
                                 tilesBegin, tilesEnd, given, Value(), seed,
                                 threads);
          scf::YieldOp::create(eb, el);
        });
    return;
  }
  ArrayRef<int64_t> shape = type.getShape();
  int64_t d0 = type.getSplitDims()[0], d1 = type.getSplitDims()[1];
  int64_t t0 = type.getTileShape()[0], t1 = type.getTileShape()[1];
  int64_t last = type.getRank() - 1, lastSplit = std::max(d0, d1);
  // Unit dims after both split dims (an SE block's N x C x 1 x 1) are the
  // same bytes without them: quantized as the tensor whose last dim is
  // split, a tile's rows in vectors, instead of vectors of one lane.
  if (lastSplit < last && llvm::all_of(shape.drop_front(lastSplit + 1),
                                       [](int64_t n) { return n == 1; })) {
    SmallVector<ReassociationIndices> groups =
        cpu::mergeTrailingDims(type.getRank(), lastSplit);
    auto collapse = [&](Value v) {
      return v ? Value(memref::CollapseShapeOp::create(b, v, groups)) : v;
    };
    TiledType collapsed =
        type.cloneWith(shape.take_front(lastSplit + 1), type.getTileShape(),
                       type.getSplitDims());
    return cpu::emitQuantizeTiles(b, loc, collapsed, collapse(x), collapse(q),
                                  collapse(steps), bits, rounding, tilesBegin,
                                  tilesEnd, collapse(given), refresh, seed,
                                  threads);
  }
  Type container = cast<MemRefType>(q.getType()).getElementType();
  Value m = qmaxOf(b, bits);
  if (!tilesBegin && d0 != last && d1 != last) {
    if (given)
      forEachIndex(
          b, type.getGridShape(),
          [&](ImplicitLocOpBuilder &ib, ValueRange g) {
            memref::StoreOp::create(
                ib, usableStep(ib, memref::LoadOp::create(ib, given, g)), steps,
                g);
          },
          threads);
    return emitQuantizeInMemoryOrder(b, type, x, q, steps, m, rounding,
                                     /*stepsGiven=*/bool(given), seed, threads);
  }
  auto rowMajor = [](Value v) {
    return cast<MemRefType>(v.getType()).getLayout().isIdentity();
  };
  if (!tilesBegin && !given && d0 == 0 && d1 == last && last >= 2 &&
      rowMajor(x) && rowMajor(q) && rowMajor(steps) &&
      (t1 % kQuantizeLanes == 0 || shape[last] <= t1))
    return emitQuantizeChannelsInner(b, type, x, q, steps, m, rounding, seed,
                                     threads);
  SmallVector<int64_t> grid = type.getGridShape();
  SmallVector<Value> lbs(grid.size(), index(b, 0)),
      stepsOne(grid.size(), index(b, 1)), ubs;
  for (int64_t n : grid)
    ubs.push_back(index(b, n));
  // A tile's rows along the last dim, unit stride: vector loads and stores.
  bool vectorRows = d1 == last && unitInnerStride(x) && unitInnerStride(q);
  if (tilesBegin) {
    lbs[d0] = tilesBegin;
    ubs[d0] = tilesEnd;
  }
  // Each iteration quantizes its own tile.
  cpu::buildIndependentLoops(
      b, b.getLoc(), lbs, ubs, stepsOne, threads,
      [&](OpBuilder &nb, Location nl, ValueRange g) {
        ImplicitLocOpBuilder b(nl, nb);
        // The tile's rows [lo0, hi0) along d0 and columns [lo1, hi1) along d1.
        auto bounds = [&](int64_t d, int64_t t) {
          Value lo = arith::MulIOp::create(b, g[d], index(b, t));
          Value hi = arith::MinSIOp::create(
              b, arith::AddIOp::create(b, lo, index(b, t)), index(b, shape[d]));
          return std::make_pair(lo, hi);
        };
        Value lo0, hi0, lo1, hi1;
        std::tie(lo0, hi0) = bounds(d0, t0);
        std::tie(lo1, hi1) = bounds(d1, t1);
        auto elementIndex = [&](Value r, Value c) {
          SmallVector<Value> idx(g.begin(), g.end());
          idx[d0] = r;
          idx[d1] = c;
          return idx;
        };
        Value one = index(b, 1);
        Value zero =
            arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));
        Value givenStep =
            given ? usableStep(b, memref::LoadOp::create(b, given, g))
                  : Value();
        if (vectorRows) {
          emitQuantizeTileRows(b, x, q, steps, g, lo0, hi0, lo1, hi1,
                               elementIndex, m, type.getScaleKind(), rounding,
                               givenStep, shape, seed);
          return;
        }
        Value step = givenStep;
        if (!step) {
          // Pass 1: Z = max |x| over the finite elements.
          auto rows = scf::ForOp::create(
              b, lo0, hi0, one, ValueRange{zero},
              [&](OpBuilder &nb, Location l, Value r, ValueRange acc) {
                auto cols = scf::ForOp::create(
                    nb, l, lo1, hi1, one, acc,
                    [&](OpBuilder &nb2, Location l2, Value c, ValueRange acc2) {
                      ImplicitLocOpBuilder ib(l2, nb2);
                      Value v =
                          memref::LoadOp::create(ib, x, elementIndex(r, c));
                      Value mx = maxFiniteAbs(ib, acc2[0], v);
                      scf::YieldOp::create(ib, mx);
                    });
                scf::YieldOp::create(nb, l, cols.getResults());
              });
          step = tileStep(b, rows.getResult(0), m, type.getScaleKind());
        }
        memref::StoreOp::create(b, step, steps, g);
        // Pass 2: the values.
        scf::buildLoopNest(
            b, b.getLoc(), ValueRange{lo0, lo1}, ValueRange{hi0, hi1},
            ValueRange{one, one},
            [&](OpBuilder &nb, Location l, ValueRange rc) {
              ImplicitLocOpBuilder ib(l, nb);
              SmallVector<Value> idx = elementIndex(rc[0], rc[1]);
              Value v = memref::LoadOp::create(ib, x, idx);
              Value noise =
                  rounding == RoundingMode::stochastic
                      ? stochasticNoise(ib, seed, linearIndex(ib, idx, shape))
                      : Value();
              Value qi = quantizeValue(ib, v, step, m, rounding, noise);
              memref::StoreOp::create(
                  ib, arith::TruncIOp::create(ib, container, qi), q, idx);
            });
      });
}
