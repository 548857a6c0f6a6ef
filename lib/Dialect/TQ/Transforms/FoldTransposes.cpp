//===- FoldTransposes.cpp - transposed operands without requantization ----===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQFOLDTRANSPOSES
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

/// Whether `perm` swaps the two innermost dims and keeps the others.
static bool swapsInnermost(ArrayRef<int64_t> perm) {
  int64_t r = perm.size();
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2)
    return false;
  for (int64_t i = 0; i + 2 < r; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

namespace {

/// Rewrites operand `index` of a tq.matmul to read a value in the other
/// orientation, flipping its flag.
struct FoldOperandTranspose : OpRewritePattern<MatmulOp> {
  FoldOperandTranspose(MLIRContext *ctx, int64_t *numFolded)
      : OpRewritePattern(ctx), numFolded(numFolded) {}

  /// The untransposed value of `v` (a tiled operand), or null.
  Value untransposed(Value v, PatternRewriter &rewriter) const {
    if (auto t = v.getDefiningOp<TransposeOp>())
      return swapsInnermost(t.getPermutation()) ? t.getInput() : Value();
    auto quant = v.getDefiningOp<QuantizeOp>();
    if (!quant || quant.getScales() || quant.getBits())
      return {};
    auto transpose = quant.getInput().getDefiningOp<linalg::TransposeOp>();
    if (!transpose || !swapsInnermost(transpose.getPermutation()))
      return {};
    // The same tiles, seen before the transpose: swap the tile extents.
    TiledType type = quant.getResult().getType();
    int64_t r = type.getRank();
    ArrayRef<int64_t> tile = type.getTileShape();
    Value source = transpose.getInput();
    TiledType sourceType =
        type.cloneWith(cast<RankedTensorType>(source.getType()).getShape(),
                       {tile[1], tile[0]}, {r - 2, r - 1});
    rewriter.setInsertionPoint(quant);
    return QuantizeOp::create(rewriter, quant.getLoc(), sourceType, source,
                              Value(), Value(), Value(), quant.getSeedOffset(),
                              quant.getRounding(), quant.getSeedAttr());
  }

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    for (unsigned i = 0; i < 2; ++i) {
      Value operand = op->getOperand(i);
      if (!isa<TiledType>(operand.getType()))
        continue;
      Value source = untransposed(operand, rewriter);
      if (!source)
        continue;
      rewriter.modifyOpInPlace(op, [&] {
        op->setOperand(i, source);
        if (i == 0)
          op.setTransposeA(!op.getTransposeA());
        else
          op.setTransposeB(!op.getTransposeB());
      });
      changed = true;
      if (numFolded)
        ++*numFolded;
    }
    return success(changed);
  }

  int64_t *numFolded;
};

/// quantize(linalg.transpose(x)) -> tq.transpose(quantize(x)): the same
/// tiles (so the same scales and integers, with nearest rounding) quantized
/// in x's layout, where the quantization sharing below finds the forward
/// pass's tiles of x. Only where tq.transpose can move those tiles back:
/// square tiles, or a permutation keeping the split dims in order.
struct QuantizeBeforeTranspose : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getInput().getDefiningOp<linalg::TransposeOp>();
    if (!transpose || op.getScales() || op.getBits())
      return failure();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    TiledType type = op.getResult().getType();
    ArrayRef<int64_t> dims = type.getSplitDims(), tile = type.getTileShape();
    SmallVector<int64_t> sourceDims{perm[dims[0]], perm[dims[1]]},
        sourceTile(tile);
    if (sourceDims[0] > sourceDims[1]) {
      std::swap(sourceDims[0], sourceDims[1]);
      std::swap(sourceTile[0], sourceTile[1]);
    }
    Value source = transpose.getInput();
    TiledType sourceType =
        type.cloneWith(cast<RankedTensorType>(source.getType()).getShape(),
                       sourceTile, sourceDims);
    std::string why;
    FailureOr<TiledType> back = getTransposedType(sourceType, perm, why);
    if (failed(back) || *back != type)
      return failure();
    auto q = QuantizeOp::create(rewriter, op.getLoc(), sourceType, source,
                                Value(), Value(), Value(), op.getSeedOffset(),
                                op.getRounding(), op.getSeedAttr());
    q->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOpWithNewOp<TransposeOp>(op, type, q,
                                             transpose.getPermutationAttr());
    return success();
  }
};

struct TQFoldTransposesPass
    : mlir::tq::impl::TQFoldTransposesBase<TQFoldTransposesPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    int64_t folded = 0;
    populateFoldTransposesPatterns(patterns, &folded);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      mlir::emitError(getOperation()->getLoc(),
                      "tq-fold-transposes did not converge");
      return signalPassFailure();
    }
    int64_t requantized = shareQuantizations(getOperation());
    numFolded += folded;
    numRequantized += requantized;
    if (report)
      emitRemark(getOperation()->getLoc(), "tq-fold-transposes: ")
          << folded << " transposes folded into matmul operands (scales "
          << "reused), " << requantized << " requantizations";
  }
};

} // namespace

void mlir::tq::populateFoldTransposesPatterns(RewritePatternSet &patterns,
                                              int64_t *numFolded) {
  patterns.add<FoldOperandTranspose>(patterns.getContext(), numFolded);
  patterns.add<QuantizeBeforeTranspose>(patterns.getContext());
  TransposeOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}

int64_t mlir::tq::shareQuantizations(Operation *root) {
  int64_t requantized = 0;
  // First quantization of each (value, rounding), in walk order. Two
  // stochastic roundings of one value into one type share the first one's
  // seed: one gradient read by two products (dY by dX and dW) is quantized
  // once.
  llvm::DenseMap<std::pair<Value, unsigned>, QuantizeOp> first;
  SmallVector<QuantizeOp> later;
  auto keyOf = [](QuantizeOp op) {
    return std::make_pair(op.getInput(),
                          static_cast<unsigned>(op.getRounding()));
  };
  root->walk([&](QuantizeOp op) {
    if (op.getScales() || op.getBits())
      return;
    auto [it, inserted] = first.try_emplace(keyOf(op), op);
    if (!inserted && it->second->getBlock() == op->getBlock())
      later.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (QuantizeOp op : later) {
    QuantizeOp primary = first.lookup(keyOf(op));
    if (!primary->isBeforeInBlock(op) ||
        primary.getSeedOffset() != op.getSeedOffset())
      continue;
    if (primary.getResult().getType() == op.getResult().getType()) {
      rewriter.replaceOp(op, primary.getResult());
      continue;
    }
    // Into another type, a stochastic quantization with its own seed (or
    // a run-time offset, which tq.requantize does not take) stays: a
    // stochastic requantization of the first would round twice (and the
    // CPU backend does not lower one).
    if (op.getRounding() == RoundingMode::stochastic &&
        (primary.getSeed() != op.getSeed() || op.getSeedOffset()))
      continue;
    rewriter.setInsertionPoint(op);
    rewriter.replaceOpWithNewOp<RequantizeOp>(
        op, op.getResult().getType(), primary.getResult(), Value(),
        DenseI64ArrayAttr(), op.getRoundingAttr(), op.getSeedAttr());
    ++requantized;
  }
  return requantized;
}
