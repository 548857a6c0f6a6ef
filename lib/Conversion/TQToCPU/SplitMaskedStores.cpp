//===- SplitMaskedStores.cpp - masked stores as unmasked pieces -----------===//
//
// See the description of tq-cpu-split-masked-stores in
// tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUSPLITMASKEDSTORES
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// Stores the first `count` lanes of `store`'s value where it stores them,
/// as unmasked vectors of powers of two lanes, the largest first.
void storeLanes(OpBuilder &b, vector::MaskedStoreOp store, int64_t count) {
  Location loc = store.getLoc();
  Value value = store.getValueToStore();
  auto type = cast<VectorType>(value.getType());
  SmallVector<Value> indices(store.getIndices());
  Value last = indices.back();
  int64_t at = 0;
  for (int64_t piece = int64_t(llvm::PowerOf2Ceil(type.getNumElements()));
       piece >= 1; piece /= 2) {
    if (!(count & piece))
      continue;
    Value lanes = value;
    if (piece != type.getNumElements())
      lanes = vector::ExtractStridedSliceOp::create(
          b, loc, value, ArrayRef<int64_t>{at}, ArrayRef<int64_t>{piece},
          ArrayRef<int64_t>{1});
    indices.back() =
        at == 0 ? last
                : arith::AddIOp::create(
                      b, loc, last, arith::ConstantIndexOp::create(b, loc, at));
    vector::StoreOp::create(b, loc, lanes, store.getBase(), indices);
    at += piece;
  }
}

/// A 1-D masked store whose mask is the first n lanes, n a constant
/// (vector.constant_mask) or a run-time count (vector.create_mask).
struct SplitMaskedStore : OpRewritePattern<vector::MaskedStoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MaskedStoreOp store,
                                PatternRewriter &rewriter) const override {
    auto type = cast<VectorType>(store.getValueToStore().getType());
    if (type.getRank() != 1 || type.isScalable())
      return rewriter.notifyMatchFailure(store, "not a fixed 1-D vector");
    // The pieces are stored at the next indices of the innermost dim: its
    // elements must be whole bytes, one after the other.
    if (store.getIndices().empty() ||
        !store.getMemRefType().isLastDimUnitStride() ||
        type.getElementTypeBitWidth() % 8 != 0)
      return rewriter.notifyMatchFailure(
          store, "not a unit-stride innermost dim of whole bytes");
    int64_t lanes = type.getNumElements();
    Operation *mask = store.getMask().getDefiningOp();
    std::optional<int64_t> count;
    Value runTimeCount;
    if (auto constant = dyn_cast_or_null<vector::ConstantMaskOp>(mask)) {
      count = constant.getMaskDimSizes()[0];
    } else if (auto create = dyn_cast_or_null<vector::CreateMaskOp>(mask)) {
      runTimeCount = create.getOperand(0);
      count = getConstantIntValue(runTimeCount);
    } else {
      return rewriter.notifyMatchFailure(store, "mask is not the first lanes");
    }
    if (count) {
      storeLanes(rewriter, store, std::clamp<int64_t>(*count, 0, lanes));
      rewriter.eraseOp(store);
      return success();
    }
    // One case per count: the count clamped to [0, lanes] as create_mask
    // takes it, all lanes in the default region.
    Location loc = store.getLoc();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value atLeastZero =
        arith::MaxSIOp::create(rewriter, loc, runTimeCount, zero);
    Value all = arith::ConstantIndexOp::create(rewriter, loc, lanes);
    Value n = arith::MinSIOp::create(rewriter, loc, atLeastZero, all);
    SmallVector<int64_t> cases = llvm::to_vector(llvm::seq<int64_t>(0, lanes));
    auto sw = scf::IndexSwitchOp::create(rewriter, loc, TypeRange{}, n, cases,
                                         cases.size());
    auto fill = [&](Region &region, int64_t stored) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&region.emplaceBlock());
      storeLanes(rewriter, store, stored);
      scf::YieldOp::create(rewriter, loc);
    };
    for (auto [region, c] : llvm::zip(sw.getCaseRegions(), cases))
      fill(region, c);
    fill(sw.getDefaultRegion(), lanes);
    rewriter.eraseOp(store);
    return success();
  }
};

struct TQCPUSplitMaskedStoresPass
    : mlir::tq::impl::TQCPUSplitMaskedStoresBase<TQCPUSplitMaskedStoresPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mlir::tq::populateCPUSplitMaskedStoresPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::tq::populateCPUSplitMaskedStoresPatterns(
    RewritePatternSet &patterns) {
  patterns.add<SplitMaskedStore>(patterns.getContext());
}
