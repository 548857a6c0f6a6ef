//===- FreeBuffers.cpp - free each buffer after its last use --------------===//
//
// See the description of tq-cpu-free-buffers in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUFREEBUFFERS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

bool mlir::tq::cpu::keepsBufferLocal(Operation *user, OpOperand &operand,
                                     SmallVectorImpl<Value> &views) {
  if (user->hasTrait<OpTrait::IsTerminator>())
    return false;
  // Deallocating, reallocating, or taking the pointer out of the memref
  // type system.
  if (isa<memref::DeallocOp, memref::ReallocOp,
          memref::ExtractAlignedPointerAsIndexOp, UnrealizedConversionCastOp>(
          user) ||
      user->getDialect() == nullptr ||
      user->getDialect()->getNamespace() == "llvm")
    return false;
  auto view = dyn_cast<ViewLikeOpInterface>(user);
  bool isView = (view && view.getViewSource() == operand.get()) ||
                isa<CastOpInterface>(user);
  for (Value result : user->getResults()) {
    if (!isa<BaseMemRefType, TensorType>(result.getType()))
      continue;
    if (!isView || !isa<BaseMemRefType>(result.getType()))
      return false;
    views.push_back(result);
  }
  return true;
}

namespace {

/// The op of `alloc`'s block after which it can be freed, or null when a
/// view of it leaves the block (or the ops it reaches may alias it).
Operation *lastLocalUse(memref::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Operation *last = alloc;
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (!mlir::tq::cpu::keepsBufferLocal(user, use, worklist))
        return nullptr;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || ancestor->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

struct TQCPUFreeBuffersPass
    : mlir::tq::impl::TQCPUFreeBuffersBase<TQCPUFreeBuffersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Where to free each buffer; found before any is inserted, so that
      // the blocks' op order is computed once.
      SmallVector<std::pair<memref::AllocOp, Operation *>> frees;
      bool local = true;
      func.walk([&](memref::AllocOp alloc) {
        Operation *last = lastLocalUse(alloc);
        if (!last) {
          local = false;
          return WalkResult::interrupt();
        }
        frees.push_back({alloc, last});
        return WalkResult::advance();
      });
      if (!local) {
        if (failed(runPipeline(ownershipPipeline(), func)))
          return signalPassFailure();
        continue;
      }
      for (auto [alloc, last] : frees) {
        OpBuilder b(last->getContext());
        b.setInsertionPointAfter(last);
        memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
      }
    }
  }

  /// Upstream buffer-deallocation-pipeline up to its lowering, for one
  /// function (lower-deallocations needs the module, and follows this
  /// pass).
  OpPassManager &ownershipPipeline() {
    if (!ownership) {
      ownership.emplace(func::FuncOp::getOperationName());
      memref::ExpandReallocPassOptions expand;
      expand.emitDeallocs = false;
      ownership->addPass(memref::createExpandReallocPass(expand));
      ownership->addPass(createCanonicalizerPass());
      ownership->addPass(
          bufferization::createOwnershipBasedBufferDeallocationPass());
      ownership->addPass(createCanonicalizerPass());
      ownership->addPass(
          bufferization::createBufferDeallocationSimplificationPass());
    }
    return *ownership;
  }

  std::optional<OpPassManager> ownership;
};

} // namespace
