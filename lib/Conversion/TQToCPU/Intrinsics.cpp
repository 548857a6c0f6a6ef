//===- Intrinsics.cpp - the x86 dot products as LLVM intrinsics -----------===//
//
// convert-tq-cpu-intrinsics: the `vpdpbusd`, `vpmaddwd` and `vpmaddubsw`
// dot products of the kernels become LLVM intrinsic calls (the latter two
// plus an add).
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_CONVERTTQCPUINTRINSICS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {
struct DotToIntrinsic : OpRewritePattern<DotU8S8Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotU8S8Op op,
                                PatternRewriter &rw) const override {
    StringRef name = op.getAcc().getType().getNumElements() == 16
                         ? "llvm.x86.avx512.vpdpbusd.512"
                         : "llvm.x86.avx512.vpdpbusd.256";
    rw.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, op.getType(), rw.getStringAttr(name),
        ValueRange{op.getAcc(), op.getLhs(), op.getRhs()});
    return success();
  }
};

/// `vpmaddwd` of `lhs` and `rhs` (int16 pairs into `type`'s int32 lanes).
Value pmaddwd(PatternRewriter &rw, Location loc, VectorType type, Value lhs,
              Value rhs) {
  StringRef name = type.getNumElements() == 16 ? "llvm.x86.avx512.pmaddw.d.512"
                                               : "llvm.x86.avx2.pmadd.wd";
  return LLVM::CallIntrinsicOp::create(rw, loc, type, rw.getStringAttr(name),
                                       ValueRange{lhs, rhs})
      .getResult(0);
}

struct MAddToIntrinsic : OpRewritePattern<DotI16Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotI16Op op,
                                PatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<arith::AddIOp>(
        op, op.getAcc(),
        pmaddwd(rw, op.getLoc(), op.getType(), op.getLhs(), op.getRhs()));
    return success();
  }
};

/// `vpmaddubsw` (u8 × s8 pairs into saturated int16), `vpmaddwd` with ones
/// (the pairs of pairs into int32), and the add.
struct PairsToIntrinsics : OpRewritePattern<DotU8S8PairsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotU8S8PairsOp op,
                                PatternRewriter &rw) const override {
    int64_t lanes = op.getAcc().getType().getNumElements();
    auto i16s = VectorType::get({2 * lanes}, rw.getI16Type());
    Value pairs =
        LLVM::CallIntrinsicOp::create(
            rw, op.getLoc(), i16s,
            rw.getStringAttr(lanes == 16 ? "llvm.x86.avx512.pmaddubs.w.512"
                                         : "llvm.x86.avx2.pmadd.ub.sw"),
            ValueRange{op.getLhs(), op.getRhs()})
            .getResult(0);
    Value ones = arith::ConstantOp::create(
        rw, op.getLoc(), i16s,
        DenseElementsAttr::get(i16s, rw.getI16IntegerAttr(1).getValue()));
    rw.replaceOpWithNewOp<arith::AddIOp>(
        op, op.getAcc(), pmaddwd(rw, op.getLoc(), op.getType(), pairs, ones));
    return success();
  }
};

struct ConvertTQCPUIntrinsics
    : mlir::tq::impl::ConvertTQCPUIntrinsicsBase<ConvertTQCPUIntrinsics> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DotToIntrinsic, MAddToIntrinsic, PairsToIntrinsics>(
        &getContext());
    // Each op is rewritten once, by itself: one walk, without the greedy
    // driver's folding and worklist over the whole program.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
