//===- Intrinsics.cpp - the x86 dot products as LLVM intrinsics -----------===//
//
// convert-tq-cpu-intrinsics: the `vpdpbusd` and `vpmaddwd` dot products of
// the kernels become LLVM intrinsic calls (the latter plus an add).
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

struct MAddToIntrinsic : OpRewritePattern<DotI16Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotI16Op op,
                                PatternRewriter &rw) const override {
    StringRef name = op.getAcc().getType().getNumElements() == 16
                         ? "llvm.x86.avx512.pmaddw.d.512"
                         : "llvm.x86.avx2.pmadd.wd";
    Value products = LLVM::CallIntrinsicOp::create(
                         rw, op.getLoc(), op.getType(), rw.getStringAttr(name),
                         ValueRange{op.getLhs(), op.getRhs()})
                         .getResult(0);
    rw.replaceOpWithNewOp<arith::AddIOp>(op, op.getAcc(), products);
    return success();
  }
};

struct ConvertTQCPUIntrinsics
    : mlir::tq::impl::ConvertTQCPUIntrinsicsBase<ConvertTQCPUIntrinsics> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DotToIntrinsic, MAddToIntrinsic>(&getContext());
    // Each op is rewritten once, by itself: one walk, without the greedy
    // driver's folding and worklist over the whole program.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
