//===- SplitGroupedConvs.cpp - one convolution per wide group -------------===//
//
// See the description of tq-split-grouped-convs in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQSPLITGROUPEDCONVS
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// The slice of `v` at index `g` of dim `dim`, with that dim dropped.
Value groupSlice(PatternRewriter &rewriter, Location loc, Value v, int64_t dim,
                 int64_t g) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
      strides(rank, rewriter.getIndexAttr(1));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    sizes.push_back(rewriter.getIndexAttr(d == dim ? 1 : type.getDimSize(d)));
    if (d != dim)
      shape.push_back(type.getDimSize(d));
  }
  offsets[dim] = rewriter.getIndexAttr(g);
  return tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()), v,
      offsets, sizes, strides);
}

struct SplitGroupedConv : OpRewritePattern<linalg::Conv2DNgchwGfchwOp> {
  SplitGroupedConv(MLIRContext *ctx, int64_t minChannels)
      : OpRewritePattern(ctx), minChannels(minChannels) {}

  LogicalResult matchAndRewrite(linalg::Conv2DNgchwGfchwOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInputs()[0], w = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    auto xt = dyn_cast<RankedTensorType>(x.getType());
    auto wt = dyn_cast<RankedTensorType>(w.getType());
    auto yt = dyn_cast<RankedTensorType>(init.getType());
    if (!xt || !wt || !yt || !xt.hasStaticShape() || !wt.hasStaticShape() ||
        !yt.hasStaticShape() || !op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "needs static tensor operands");
    int64_t groups = xt.getDimSize(1), channels = xt.getDimSize(2);
    if (groups < 2)
      return rewriter.notifyMatchFailure(op, "a single group");
    if (channels < minChannels)
      return rewriter.notifyMatchFailure(op, "groups narrower than "
                                             "min-channels stay one op");
    Location loc = op.getLoc();
    std::optional<std::vector<float>> filter = mlir::tq::getConstantF32(w);
    ArrayRef<int64_t> ws = wt.getShape();
    int64_t perGroup = ws[1] * ws[2] * ws[3] * ws[4];
    auto groupFilterType =
        RankedTensorType::get(ws.drop_front(), rewriter.getF32Type());
    Value y = init;
    for (int64_t g = 0; g < groups; ++g) {
      Value xg = groupSlice(rewriter, loc, x, 1, g);
      Value wg;
      if (filter && wt.getElementType().isF32())
        // A constant filter's groups stay constants.
        wg = arith::ConstantOp::create(
            rewriter, loc,
            DenseElementsAttr::get(
                groupFilterType,
                ArrayRef<float>(filter->data() + g * perGroup, perGroup)));
      else
        wg = groupSlice(rewriter, loc, w, 0, g);
      // A filled init (zeros, as imported) is filled again per group, so
      // that the group's convolution still starts from a known constant.
      Value ig;
      if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
        SmallVector<int64_t> shape(yt.getShape());
        shape.erase(shape.begin() + 1);
        Value empty =
            tensor::EmptyOp::create(rewriter, loc, shape, yt.getElementType());
        ig = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
                 .getResult(0);
      } else {
        ig = groupSlice(rewriter, loc, init, 1, g);
      }
      Value yg = linalg::Conv2DNchwFchwOp::create(
                     rewriter, loc, TypeRange{ig.getType()}, ValueRange{xg, wg},
                     ValueRange{ig}, op.getStrides(), op.getDilations())
                     .getResult(0);
      auto ygType = cast<RankedTensorType>(yg.getType());
      SmallVector<OpFoldResult> offsets(5, rewriter.getIndexAttr(0)), sizes,
          strides(5, rewriter.getIndexAttr(1));
      offsets[1] = rewriter.getIndexAttr(g);
      sizes = {rewriter.getIndexAttr(ygType.getDimSize(0)),
               rewriter.getIndexAttr(1),
               rewriter.getIndexAttr(ygType.getDimSize(1)),
               rewriter.getIndexAttr(ygType.getDimSize(2)),
               rewriter.getIndexAttr(ygType.getDimSize(3))};
      y = tensor::InsertSliceOp::create(rewriter, loc, yg, y, offsets, sizes,
                                        strides);
    }
    rewriter.replaceOp(op, y);
    return success();
  }

  int64_t minChannels;
};

struct TQSplitGroupedConvsPass
    : mlir::tq::impl::TQSplitGroupedConvsBase<TQSplitGroupedConvsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (minChannels < 0) {
      mlir::emitError(getOperation()->getLoc(),
                      "min-channels must be 0 or more, got ")
          << static_cast<int64_t>(minChannels);
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    mlir::tq::populateSplitGroupedConvPatterns(patterns, minChannels);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::tq::populateSplitGroupedConvPatterns(RewritePatternSet &patterns,
                                                int64_t minChannels) {
  patterns.add<SplitGroupedConv>(patterns.getContext(), minChannels);
}
