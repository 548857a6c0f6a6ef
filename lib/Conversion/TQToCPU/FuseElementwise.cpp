//===- FuseElementwise.cpp - elementwise chains as one loop nest ----------===//
//
// See the description of tq-cpu-fuse-elementwise in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUFUSEELEMENTWISE
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// linalg.transpose as a linalg.generic, so that it fuses with the
/// elementwise ops around it.
struct GeneralizeTranspose : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics())
      return rw.notifyMatchFailure(op, "not on tensors");
    return linalg::generalizeNamedOp(rw, op);
  }
};

struct TQCPUFuseElementwisePass
    : mlir::tq::impl::TQCPUFuseElementwiseBase<TQCPUFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mlir::tq::populateCPUFuseElementwisePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     mlir::tq::loopNestRewriteConfig())))
      return signalPassFailure();
  }
};

} // namespace

void mlir::tq::populateCPUFuseElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<GeneralizeTranspose>(patterns.getContext());
  // A producer is fused only into its one user: nothing is computed twice.
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *operand) {
        Operation *producer = operand->get().getDefiningOp();
        return producer && producer->hasOneUse();
      });
}
