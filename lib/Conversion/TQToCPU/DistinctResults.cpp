//===- DistinctResults.cpp - one value per returned tensor ----------------===//
//
// See the description of tq-cpu-distinct-results in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUDISTINCTRESULTS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

struct TQCPUDistinctResultsPass
    : mlir::tq::impl::TQCPUDistinctResultsBase<TQCPUDistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      OpBuilder b(ret);
      llvm::SmallPtrSet<Value, 8> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || isa<BlockArgument>(v) || seen.insert(v).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(
            b, ret.getLoc(), type, ValueRange{}, /*copy=*/v));
      }
    });
  }
};

} // namespace
