//===- CollapseDims.cpp - one loop for each contiguous run of loops -------===//
//
// See the description of tq-cpu-collapse-dims in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUCOLLAPSEDIMS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// Whether `map` reads dims in increasing order, one per result.
bool isOrderedProjection(AffineMap map) {
  int64_t last = -1;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || static_cast<int64_t>(d.getPosition()) <= last)
      return false;
    last = d.getPosition();
  }
  return true;
}

/// The runs of loops of `op` to merge (some with more than one loop), or
/// none.
SmallVector<ReassociationIndices> runsToMerge(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
      !isa<func::FuncOp>(op->getParentOp()) || op.getNumLoops() < 2 ||
      !llvm::all_of(op.getIndexingMapsArray(), isOrderedProjection))
    return {};
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape())
      return {};
    // A reshape is a view: look through it for a slice.
    while (Operation *reshape = v.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(reshape))
        break;
      v = reshape->getOperand(0);
    }
    Operation *def = v.getDefiningOp();
    if (def && (isa<tensor::ExtractSliceOp>(def) ||
                (isa<linalg::LinalgOp>(def) && !isa<linalg::GenericOp>(def) &&
                 !isa<linalg::FillOp>(def))))
      return {};
  }
  // A result the function returns is written into its out-parameter only
  // when it is the buffer itself, not a reshape of it.
  for (Value r : op->getResults())
    for (Operation *user : r.getUsers())
      if (isa<func::ReturnOp>(user))
        return {};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> runs{{0}};
  bool merges = false;
  for (int64_t d = 1, e = op.getNumLoops(); d < e; ++d) {
    ReassociationIndices longer = runs.back();
    longer.push_back(d);
    if (iters[d] == iters[d - 1] &&
        linalg::areDimSequencesPreserved(maps, {longer})) {
      runs.back() = longer;
      merges = true;
    } else {
      runs.push_back({d});
    }
  }
  return merges ? runs : SmallVector<ReassociationIndices>{};
}

struct TQCPUCollapseDimsPass
    : mlir::tq::impl::TQCPUCollapseDimsBase<TQCPUCollapseDimsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      SmallVector<ReassociationIndices> runs = runsToMerge(op);
      if (runs.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, runs, rewriter);
      if (failed(collapsed))
        continue;
      rewriter.replaceOp(op, collapsed->results);
      ++numCollapsed;
    }
  }
};

} // namespace
