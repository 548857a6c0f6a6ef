//===- FuseElementwise.cpp - elementwise chains as one loop nest ----------===//
//
// See the description of tq-cpu-fuse-elementwise in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// A linalg.fill on tensors with several users (CSE merges the fills of
/// same-shaped outputs) replaced by a clone before each user, on a
/// tensor.empty of its own: one-shot
/// bufferization would otherwise fill one buffer and copy it for the other
/// users, and a kernel takes a fill just before it as its initial value,
/// not a copy.
struct OneFillPerUser : OpRewritePattern<linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::FillOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics() || op->hasOneUse() || op->use_empty())
      return rw.notifyMatchFailure(op, "not a shared fill on tensors");
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : uses) {
      Operation *user = use->getOwner();
      rw.setInsertionPoint(user);
      // Its own tensor.empty too: bufferization would otherwise put the
      // fills into one buffer, reused as soon as the first user is done.
      IRMapping map;
      if (auto empty = op.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        map.map(empty.getResult(), rw.clone(*empty)->getResult(0));
      Operation *copy = rw.clone(*op, map);
      rw.modifyOpInPlace(user, [&] { use->set(copy->getResult(0)); });
    }
    rw.eraseOp(op);
    return success();
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
  patterns.add<GeneralizeTranspose, OneFillPerUser>(patterns.getContext());
  // A producer is fused only into its one user: nothing is computed twice.
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *operand) {
        Operation *producer = operand->get().getDefiningOp();
        return producer && producer->hasOneUse();
      });
}
