//===- AdaptiveBitWidth.cpp - bit widths of constants from their data -----===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace mlir::tq {
#define GEN_PASS_DEF_TQADAPTIVEBITWIDTH
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

/// Attribute recording the search result on the quantize op.
static constexpr StringLiteral kBitWidthAttr = "tq.bit_width";

/// The largest width the tiled value `v` can take without a consumer's
/// int32 partial sum overflowing, or 0 when a consumer cannot take another
/// width. Transposes only move tiles: their consumers count.
static int64_t widthCap(Value v, int64_t maxBits) {
  int64_t cap = maxBits;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<DequantizeOp>(user))
      continue;
    if (auto t = dyn_cast<TransposeOp>(user)) {
      cap = std::min(cap, widthCap(t.getResult(), cap));
      continue;
    }
    Value other;
    int64_t kTile = 0;
    TiledType self = cast<TiledType>(v.getType());
    if (auto mm = dyn_cast<MatmulOp>(user)) {
      bool isLhs = use.getOperandNumber() == 0;
      bool transposed = isLhs ? mm.getTransposeA() : mm.getTransposeB();
      kTile = self.getTileShape()[isLhs != transposed ? 1 : 0];
      other = isLhs ? mm.getRhs() : mm.getLhs();
    } else if (auto conv = dyn_cast<Conv2DOp>(user)) {
      kTile = self.getTileShape()[1];
      other = use.getOperandNumber() == 0 ? conv.getFilter() : conv.getInput();
    } else {
      return 0;
    }
    auto otherType = dyn_cast<TiledType>(other.getType());
    if (!otherType)
      continue; // mixed case: f32 partial sums
    while (cap >= 2 && ::tq::ref::maxKTile(cap, otherType.getMaxBits()) < kTile)
      --cap;
  }
  return cap;
}

static IntegerType storageFor(MLIRContext *ctx, int64_t bits) {
  return IntegerType::get(ctx, bits <= 4 ? 4 : bits <= 8 ? 8 : 16);
}

/// Gives the tiled value `v`, and the transposes of it, the fixed width
/// `bits`.
static void setFixedWidth(Value v, int64_t bits) {
  auto type = cast<TiledType>(v.getType());
  MLIRContext *ctx = v.getContext();
  v.setType(TiledType::get(ctx, type.getShape(), storageFor(ctx, bits),
                           BitsKind::fixed, bits, type.getExpressedType(),
                           type.getTileShape(), type.getSplitDims(),
                           type.getScaleKind(), type.getHasOffset()));
  for (Operation *user : v.getUsers())
    if (auto t = dyn_cast<TransposeOp>(user))
      setFixedWidth(t.getResult(), bits);
}

namespace {
struct TQAdaptiveBitWidthPass
    : mlir::tq::impl::TQAdaptiveBitWidthBase<TQAdaptiveBitWidthPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!(low >= 0 && low < high) ||
        !(2 <= minBits && minBits <= initBits && initBits <= maxBits &&
          maxBits <= 16) ||
        step < 1 || farStep < 0) {
      mlir::emitError(
          getOperation()->getLoc(),
          "tq-adaptive-bit-width: options must satisfy 0 <= low < high, 2 <= "
          "min-bits <= init-bits <= max-bits <= 16, step >= 1, far-step >= 0");
      return signalPassFailure();
    }
    SmallVector<QuantizeOp> candidates;
    getOperation()->walk([&](QuantizeOp op) {
      if (!op.getScales() && !op.getBits() &&
          op.getResult().getType().getBitsKind() == BitsKind::fixed &&
          op.getResult().getType().hasStaticShape() &&
          matchPattern(op.getInput(), m_Constant()))
        candidates.push_back(op);
    });
    for (QuantizeOp op : candidates)
      choose(op);
  }

  /// Statistics of the last searched tensor (A5).
  struct Searched {
    double mean = 0, max = 0;
    int64_t bits = 0;
    bool valid = false;
  } last;

  static bool close(double a, double b, double tolerance) {
    double scale = std::max(std::fabs(a), std::fabs(b));
    return scale == 0 || std::fabs(a - b) <= tolerance * scale;
  }

  /// Why a tensor got one width under per-tile.
  static constexpr const char *kOneWidth =
      "one width: a tq.transpose reads it, and per-tile widths would have "
      "to be permuted with its tiles";

  void choose(QuantizeOp op) {
    int64_t cap = widthCap(op.getResult(), maxBits);
    if (cap < minBits)
      return; // a consumer fixes the width
    std::optional<std::vector<float>> cst = getConstantF32(op.getInput());
    if (!cst)
      return; // not an f32 constant: searched at run time
    TiledType type = op.getResult().getType();
    ::tq::ref::FloatTensor x;
    x.shape.assign(type.getShape().begin(), type.getShape().end());
    x.data = std::move(*cst);
    ::tq::ref::BitSearchOptions o;
    o.low = low;
    o.high = high;
    o.min = minBits;
    o.max = cap;
    o.init = std::min<int64_t>(initBits, cap);
    o.step = step;
    o.farStep = farStep;
    o.farMargin = farMargin;
    MLIRContext *ctx = op.getContext();
    Builder b(ctx);
    // Per-tile widths are laid out on this tile grid: a transpose would
    // have to permute them, so a tensor read through one gets one width.
    bool transposed = llvm::any_of(op.getResult().getUsers(), [](Operation *u) {
      return isa<TransposeOp>(u);
    });
    if (!perTile || transposed) {
      double mean = 0, max = 0;
      for (float v : x.data) {
        mean += std::fabs(v);
        max = std::max<double>(max, std::fabs(v));
      }
      mean /= std::max<size_t>(x.data.size(), 1);
      bool reused = reuse && last.valid && last.bits <= cap &&
                    close(mean, last.mean, reuseMean) &&
                    close(max, last.max, reuseMax);
      ::tq::ref::BitSearchResult r;
      if (reused) {
        // Keep the width; measure its error for the record.
        ::tq::ref::BitSearchOptions fixed = o;
        fixed.min = fixed.max = fixed.init = last.bits;
        r = ::tq::ref::searchBitWidthTiled(x, getRefLayout(type),
                                           getRefForm(type), fixed);
      } else {
        r = ::tq::ref::searchBitWidthTiled(x, getRefLayout(type),
                                           getRefForm(type), o);
        last = {mean, max, r.bits, true};
      }
      setFixedWidth(op.getResult(), r.bits);
      SmallVector<NamedAttribute> record = {
          b.getNamedAttr("bits", b.getI64IntegerAttr(r.bits)),
          b.getNamedAttr("error", b.getF64FloatAttr(r.error))};
      if (reused)
        record.push_back(b.getNamedAttr("reused", b.getBoolAttr(true)));
      if (perTile)
        record.push_back(
            b.getNamedAttr("per_tile", b.getStringAttr(kOneWidth)));
      op->setAttr(kBitWidthAttr, b.getDictionaryAttr(record));
      if (report) {
        InFlightDiagnostic remark = emitRemark(op.getLoc(), "bit width ");
        remark << r.bits << ", error " << r.error
               << (reused ? " (reused from the previous tensor)" : "");
        if (perTile)
          remark << " (" << kOneWidth << ")";
      }
      return;
    }
    std::vector<::tq::ref::BitSearchResult> results =
        ::tq::ref::searchBitWidthPerTile(x, getRefLayout(type),
                                         getRefForm(type), o);
    SmallVector<int32_t> widths;
    double sum = 0, maxError = 0;
    int64_t widest = 2;
    for (const ::tq::ref::BitSearchResult &r : results) {
      widths.push_back(r.bits);
      sum += r.bits;
      maxError = std::max(maxError, r.error);
      widest = std::max<int64_t>(widest, r.bits);
    }
    TiledType newType = TiledType::get(
        ctx, type.getShape(), storageFor(ctx, widest), BitsKind::per_tile, 0,
        type.getExpressedType(), type.getTileShape(), type.getSplitDims(),
        type.getScaleKind(), type.getHasOffset());
    OpBuilder builder(op);
    auto gridType =
        RankedTensorType::get(newType.getGridShape(), builder.getI32Type());
    Value bits = arith::ConstantOp::create(
        builder, op.getLoc(),
        DenseIntElementsAttr::get(gridType, ArrayRef<int32_t>(widths)));
    op.getBitsMutable().assign(bits);
    op.getResult().setType(newType);
    op->setAttr(
        kBitWidthAttr,
        b.getDictionaryAttr(
            {b.getNamedAttr("average_bits",
                            b.getF64FloatAttr(sum / results.size())),
             b.getNamedAttr("max_error", b.getF64FloatAttr(maxError))}));
    if (report)
      emitRemark(op.getLoc(), "bit widths per tile: average ")
          << sum / results.size() << ", max error " << maxError;
  }
};
} // namespace
