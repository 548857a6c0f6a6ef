//===- FuseElementwise.cpp - elementwise chains as one loop nest ----------===//
//
// See the description of tq-cpu-fuse-elementwise in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
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

/// A linalg.transpose of an f32 constant (a Gemm's transB weight in an f32
/// program) folded into the constant of its permuted values: the program
/// does not transpose it again on every call. Large results stay dense
/// resources.
struct FoldConstantTranspose : OpRewritePattern<linalg::TransposeOp> {
  FoldConstantTranspose(MLIRContext *ctx)
      : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rw) const override {
    auto c = op.getInput().getDefiningOp<arith::ConstantOp>();
    auto from = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!op.hasPureTensorSemantics() || !c || !from || !from.hasStaticShape() ||
        !from.getElementType().isF32())
      return rw.notifyMatchFailure(op, "not a transpose of an f32 constant");
    SmallVector<float> in;
    if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue())) {
      in = llvm::to_vector(dense.getValues<float>());
    } else if (auto res =
                   dyn_cast<DenseF32ResourceElementsAttr>(c.getValue())) {
      std::optional<ArrayRef<float>> data = res.tryGetAsArrayRef();
      if (!data || int64_t(data->size()) != from.getNumElements())
        return rw.notifyMatchFailure(op, "the resource's data is not at hand");
      in.assign(data->begin(), data->end());
    } else {
      return rw.notifyMatchFailure(op, "not a dense f32 constant");
    }
    ArrayRef<int64_t> perm = op.getPermutation();
    auto to = cast<RankedTensorType>(op.getResult()[0].getType());
    SmallVector<int64_t> inStrides = computeStrides(from.getShape()),
                         outStrides = computeStrides(to.getShape());
    SmallVector<float> out(in.size());
    for (int64_t i = 0, e = out.size(); i < e; ++i) {
      SmallVector<int64_t> idx = delinearize(i, outStrides);
      int64_t j = 0;
      for (auto [k, d] : llvm::enumerate(perm))
        j += idx[k] * inStrides[d];
      out[i] = in[j];
    }
    Attribute value;
    if (isa<DenseElementsAttr>(c.getValue()))
      value = DenseElementsAttr::get(to, ArrayRef<float>(out));
    else
      value = DenseF32ResourceElementsAttr::get(
          to, "transposed",
          HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(out)));
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, cast<TypedAttr>(value));
    return success();
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
  patterns.add<FoldConstantTranspose, GeneralizeTranspose, OneFillPerUser>(
      patterns.getContext());
  // A producer is fused only into its one user: nothing is computed twice.
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *operand) {
        Operation *producer = operand->get().getDefiningOp();
        return producer && producer->hasOneUse();
      });
}
