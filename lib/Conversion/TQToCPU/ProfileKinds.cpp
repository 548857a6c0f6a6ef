//===- ProfileKinds.cpp - op kinds in locations, for the profiler ---------===//
//
// See the description of tq-cpu-profile-kinds in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUPROFILEKINDS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {
struct TQCPUProfileKindsPass
    : mlir::tq::impl::TQCPUProfileKindsBase<TQCPUProfileKindsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    for (auto f : getOperation().getOps<func::FuncOp>()) {
      if (f.isExternal() || !f.isPublic())
        continue;
      // The ops of the function's body and of the control flow in it
      // (If branches, recurrent loops), not those inside kernels.
      f.walk([&](Operation *op) {
        Operation *parent = op->getParentOp();
        bool inProgram = parent == f.getOperation() ||
                         (parent->getDialect() &&
                          parent->getDialect()->getNamespace() == "scf");
        if (!inProgram || op->hasTrait<OpTrait::IsTerminator>() ||
            op->hasTrait<OpTrait::ConstantLike>())
          return;
        op->setLoc(
            FusedLoc::get(ctx, {op->getLoc()},
                          StringAttr::get(ctx, op->getName().getStringRef())));
      });
    }
  }
};
} // namespace
