//===- SelectClamps.cpp - clamps by a constant as compares and selects ----===//
//
// See the description of tq-cpu-select-clamps in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUSELECTCLAMPS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// The float constant (a scalar or a splat) `v` holds, if any.
std::optional<APFloat> constantOf(Value v) {
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getValue();
  SplatElementsAttr splat;
  if (matchPattern(v, m_Constant(&splat)) &&
      isa<FloatType>(splat.getElementType()))
    return splat.getSplatValue<APFloat>();
  return std::nullopt;
}

/// maximumf (or minimumf) of x and a constant c as `x pred c ? x : c`,
/// `pred` true where x is unordered: x > c for the max, x < c for the min.
/// Where x == c the select takes c, which is what the op gives unless both
/// are zeros of different signs and c is the one it does not take: -0 for
/// the max, +0 for the min.
template <typename OpT, arith::CmpFPredicate pred, bool negativeZeroLoses>
struct SelectClamp : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    for (int c = 0; c < 2; ++c) {
      Value x = op->getOperand(1 - c), k = op->getOperand(c);
      std::optional<APFloat> value = constantOf(k);
      if (!value || value->isNaN() ||
          (value->isZero() && value->isNegative() == negativeZeroLoses))
        continue;
      Value take = arith::CmpFOp::create(rewriter, op.getLoc(), pred, x, k);
      rewriter.replaceOpWithNewOp<arith::SelectOp>(op, take, x, k);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no constant other than NaN and "
                                           "the zero the op does not take");
  }
};

struct TQCPUSelectClampsPass
    : mlir::tq::impl::TQCPUSelectClampsBase<TQCPUSelectClampsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mlir::tq::populateCPUSelectClampsPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::tq::populateCPUSelectClampsPatterns(RewritePatternSet &patterns) {
  patterns
      .add<SelectClamp<arith::MaximumFOp, arith::CmpFPredicate::UGT, true>,
           SelectClamp<arith::MinimumFOp, arith::CmpFPredicate::ULT, false>>(
          patterns.getContext());
}
