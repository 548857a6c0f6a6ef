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

/// The coefficient of loop `d` in the affine expression `e` of the loops
/// (0 when it is not linear in it).
int64_t coefficientOf(AffineExpr e, unsigned d, unsigned loops) {
  MLIRContext *ctx = e.getContext();
  auto at = [&](int64_t v) {
    SmallVector<AffineExpr> dims(loops, getAffineConstantExpr(0, ctx));
    dims[d] = getAffineConstantExpr(v, ctx);
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(e.replaceDims(dims), loops, 0));
    return c ? std::optional<int64_t>(c.getValue()) : std::nullopt;
  };
  std::optional<int64_t> zero = at(0), one = at(1);
  return zero && one ? *one - *zero : 0;
}

/// Whether the input that walks loop `d` along its last dim does so with a
/// stride (a strided pooling window): then the window's innermost loop
/// stays innermost behind d, so that once LLVM unrolls it the loads of one
/// output are neighbours (an interleaved group it vectorizes).
bool stridedAlong(linalg::LinalgOp op, unsigned d) {
  unsigned loops = op.getNumLoops();
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (map.getNumResults() == 0 || !map.getResults().back().isFunctionOfDim(d))
      continue;
    AffineExpr last = map.getResults().back();
    return coefficientOf(last, d, loops) > 1 && last.isFunctionOfDim(loops - 1);
  }
  return false;
}

struct ContiguousLoopInnermost : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<unsigned> d = contiguousOutputLoop(op);
    if (!d)
      return rewriter.notifyMatchFailure(op, "no loop to move innermost");
    // Decided on `op` itself: generalizing a named op erases it.
    bool strided = stridedAlong(op, *d);
    if (*d + 2 == op.getNumLoops() && strided)
      return rewriter.notifyMatchFailure(op, "already in order");
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        return rewriter.notifyMatchFailure(op, "cannot be generalized");
      generic = *g;
    }
    // New loop i is old loop order[i]: every loop but d in order, then d
    // (then the innermost reduction, for a strided window). A permutation
    // of the loops, which the interchange always accepts (it notifies the
    // rewriter of the change itself).
    unsigned loops = generic.getNumLoops();
    SmallVector<unsigned> order;
    for (unsigned i = 0; i < loops; ++i)
      if (i != *d && !(strided && i == loops - 1))
        order.push_back(i);
    order.push_back(*d);
    if (strided)
      order.push_back(loops - 1);
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
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     mlir::tq::loopNestRewriteConfig())))
      return signalPassFailure();
  }
};

} // namespace

void mlir::tq::populateCPULoopOrderPatterns(RewritePatternSet &patterns) {
  patterns.add<ContiguousLoopInnermost>(patterns.getContext());
}
