//===- QuantizeConstants.cpp - compile-time quantization of constants -----===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQQUANTIZECONSTANTS
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {

/// tq.quantize(arith.constant) -> tq.constant, computed by the reference
/// numerics.
struct QuantizeConstant : OpRewritePattern<QuantizeOp> {
  QuantizeConstant(MLIRContext *ctx, int64_t maxElements)
      : OpRewritePattern(ctx), maxElements(maxElements) {}

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<std::vector<float>> input = getConstantF32(op.getInput());
    if (!input)
      return rewriter.notifyMatchFailure(op, "input is not an f32 constant");
    FailureOr<::tq::ref::TiledTensor> q =
        evaluateQuantize(op, *input, maxElements);
    if (failed(q))
      return rewriter.notifyMatchFailure(
          op, "not evaluable at compile time (run-time scales or bits, "
              "dynamic shape or width, or too large)");
    ConstantOp cst =
        buildConstant(rewriter, op.getLoc(), op.getResult().getType(), *q);
    // Keep what earlier passes recorded (e.g. the bit-width search result).
    for (NamedAttribute attr : op->getDiscardableAttrs())
      cst->setAttr(attr.getName(), attr.getValue());
    rewriter.replaceOp(op, cst);
    return success();
  }

  int64_t maxElements;
};

struct TQQuantizeConstantsPass
    : mlir::tq::impl::TQQuantizeConstantsBase<TQQuantizeConstantsPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateQuantizeConstantsPatterns(patterns, maxElements);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      mlir::emitError(getOperation()->getLoc(),
                      "tq-quantize-constants did not converge");
      signalPassFailure();
    }
  }
};

} // namespace

void mlir::tq::populateQuantizeConstantsPatterns(RewritePatternSet &patterns,
                                                 int64_t maxElements) {
  patterns.add<QuantizeConstant>(patterns.getContext(), maxElements);
}
