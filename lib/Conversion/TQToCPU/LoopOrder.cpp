//===- LoopOrder.cpp - vectorizable loop order for float linalg ops -------===//
//
// See the description of tq-cpu-loop-order in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPULOOPORDER
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// The loop to move innermost: the parallel loop of the first output's
/// last index, when the innermost loop is a reduction and an input's last
/// index also depends on it (so that both walk memory with unit stride).
std::optional<unsigned> contiguousOutputLoop(linalg::LinalgOp op) {
  unsigned loops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (loops < 2 || op.getNumDpsInits() != 1 ||
      iterators.back() != utils::IteratorType::reduction)
    return std::nullopt;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() == 0)
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(out.getResults().back());
  if (!last || iterators[last.getPosition()] != utils::IteratorType::parallel)
    return std::nullopt;
  unsigned d = last.getPosition();
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (map.getNumResults() > 0 && map.getResults().back().isFunctionOfDim(d))
      return d;
  }
  return std::nullopt;
}

struct ContiguousLoopInnermost : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<unsigned> d = contiguousOutputLoop(op);
    if (!d)
      return rewriter.notifyMatchFailure(op, "no loop to move innermost");
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        return rewriter.notifyMatchFailure(op, "cannot be generalized");
      generic = *g;
    }
    // New loop i is old loop order[i]: every loop but d in order, then d.
    // A permutation of the loops, which the interchange always accepts (it
    // notifies the rewriter of the change itself).
    SmallVector<unsigned> order;
    for (unsigned i = 0, e = generic.getNumLoops(); i < e; ++i)
      if (i != *d)
        order.push_back(i);
    order.push_back(*d);
    FailureOr<linalg::GenericOp> moved =
        linalg::interchangeGenericOp(rewriter, generic, order);
    assert(succeeded(moved) && "the order is a permutation of the loops");
    (void)moved;
    return success();
  }
};

struct TQCPULoopOrderPass
    : mlir::tq::impl::TQCPULoopOrderBase<TQCPULoopOrderPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mlir::tq::populateCPULoopOrderPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::tq::populateCPULoopOrderPatterns(RewritePatternSet &patterns) {
  patterns.add<ContiguousLoopInnermost>(patterns.getContext());
}
