//===- InlineAllocaScopes.cpp - scopes without stack allocations inlined -===//
//
// See the description of tq-cpu-inline-alloca-scopes in
// tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUINLINEALLOCASCOPES
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// Whether `scope` allocates on the stack itself (not in a scope nested in
/// it, nor in a function it calls).
bool allocates(memref::AllocaScopeOp scope) {
  WalkResult r =
      scope.getBodyRegion().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<memref::AllocaScopeOp>(op))
          return WalkResult::skip();
        return isa<memref::AllocaOp>(op) ? WalkResult::interrupt()
                                         : WalkResult::advance();
      });
  return r.wasInterrupted();
}

struct TQCPUInlineAllocaScopesPass
    : mlir::tq::impl::TQCPUInlineAllocaScopesBase<TQCPUInlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation()->walk([&](memref::AllocaScopeOp scope) {
      if (!allocates(scope))
        scopes.push_back(scope);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block *body = &scope.getBodyRegion().front();
      if (!scope.getBodyRegion().hasOneBlock())
        continue;
      auto ret = cast<memref::AllocaScopeReturnOp>(body->getTerminator());
      SmallVector<Value> results(ret.getResults());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};

} // namespace
