//===- FusePostprocess.cpp - fuse layer outputs into tq.postprocess -------===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQFUSEPOSTPROCESS
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

bool mlir::tq::isRelu(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto max = yield->getOperand(0).getDefiningOp<arith::MaximumFOp>();
  if (!max || max->getBlock() != &body)
    return false;
  // The zero may be a constant inside the body.
  for (Operation &inner : body.without_terminator())
    if (&inner != max && !inner.hasTrait<OpTrait::ConstantLike>())
      return false;
  Value in = body.getArgument(0);
  return (max.getLhs() == in && matchPattern(max.getRhs(), m_AnyZeroFloat())) ||
         (max.getRhs() == in && matchPattern(max.getLhs(), m_AnyZeroFloat()));
}

namespace {

struct FuseIntoPostprocess : OpRewritePattern<QuantizeOp> {
  FuseIntoPostprocess(MLIRContext *ctx, int64_t *numFused, int64_t *numRelu)
      : OpRewritePattern(ctx), numFused(numFused), numRelu(numRelu) {}

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getScales() || op.getBits() || op.getSeedOffset())
      return rewriter.notifyMatchFailure(
          op, "given scales or bits, or a run-time seed offset");
    Value acc = op.getInput();
    Activation act = Activation::none;
    if (Operation *def = acc.getDefiningOp(); def && isRelu(def)) {
      acc = cast<linalg::GenericOp>(def).getDpsInputOperand(0)->get();
      act = Activation::relu;
    }
    if (!acc.getDefiningOp<MatmulOp>() && !acc.getDefiningOp<Conv2DOp>())
      return rewriter.notifyMatchFailure(
          op, "input is not a tiled matmul or conv2d output");
    if (!cast<RankedTensorType>(acc.getType()).getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "accumulator is not f32");
    auto post = PostprocessOp::create(
        rewriter, op.getLoc(), op.getResult().getType(), rewriter.getF32Type(),
        acc, /*layer_scale=*/Value(), /*bits=*/Value(),
        /*compute_layer_scale=*/UnitAttr(),
        ActivationAttr::get(getContext(), act), op.getRoundingAttr(),
        op.getSeedAttr());
    rewriter.replaceOp(op, post.getResult());
    if (numFused)
      ++*numFused;
    if (numRelu && act == Activation::relu)
      ++*numRelu;
    return success();
  }

  int64_t *numFused, *numRelu;
};

struct TQFusePostprocessPass
    : mlir::tq::impl::TQFusePostprocessBase<TQFusePostprocessPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    int64_t fused = 0, relu = 0;
    populateFusePostprocessPatterns(patterns, &fused, &relu);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      mlir::emitError(getOperation()->getLoc(),
                      "tq-fuse-postprocess did not converge");
      return signalPassFailure();
    }
    numFused += fused;
    numRelu += relu;
  }
};

} // namespace

void mlir::tq::populateFusePostprocessPatterns(RewritePatternSet &patterns,
                                               int64_t *numFused,
                                               int64_t *numRelu) {
  patterns.add<FuseIntoPostprocess>(patterns.getContext(), numFused, numRelu);
}
