//===- UpdateInterval.cpp - parameters kept across iterations (A6) --------===//
//
// See the description of tq-update-interval in Passes.td: each quantization
// of the training step takes its steps from the caller, or recomputes them
// from the data when the caller's refresh flag for it is set, and returns
// the steps it used.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "tq/Support/ArgNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQUPDATEINTERVAL
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {

/// The layer a quantization belongs to: its location's name (the ONNX
/// node), or "quantize".
std::string layerName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc);
      fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "quantize";
}

/// Whether `q` computes its steps from its data with a fixed width: the
/// quantizations whose parameters the caller can keep.
bool keepable(QuantizeOp q) {
  return !q.getScales() && !q.getBits() &&
         cast<TiledType>(q.getType()).getBitsKind() == BitsKind::fixed;
}

/// Whether `v` is a parameter (an argument marked `tq.parameter`), possibly
/// reshaped or transposed: a weight.
bool isParameter(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             linalg::TransposeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  auto arg = cast<BlockArgument>(v);
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return func && arg.getOwner()->isEntryBlock() &&
         func.getArgAttr(arg.getArgNumber(), kParameterArgAttr);
}

struct UpdateInterval : mlir::tq::impl::TQUpdateIntervalBase<UpdateInterval> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func) {
      module.emitError("tq-update-interval: no function @") << function;
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError("tq-update-interval: the function must have one block");
      return signalPassFailure();
    }
    SmallVector<QuantizeOp> kept;
    SmallVector<std::string> labels;
    func.walk([&](QuantizeOp q) {
      if (!keepable(q))
        return;
      bool weight = isParameter(q.getInput());
      if (weightsOnly && !weight)
        return;
      labels.push_back(layerName(q) + (weight ? " weight" : " data") + " #" +
                       std::to_string(kept.size()));
      kept.push_back(q);
    });
    if (kept.empty())
      return; // Nothing to keep: the signature stays.

    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    auto named = [&](StringRef name) {
      return attrs.getDictionaryAttr(
          attrs.getNamedAttr(kNameArgAttr, attrs.getStringAttr(name)));
    };
    int64_t n = kept.size();
    unsigned first = func.getNumArguments();
    Location loc = func.getLoc();
    (void)func.insertArgument(first,
                              RankedTensorType::get({n}, attrs.getI32Type()),
                              named("refresh"), loc);
    Value refresh = func.getArgument(first);
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, q] : llvm::enumerate(kept)) {
      auto type = cast<TiledType>(q.getType());
      auto stepsType =
          RankedTensorType::get(type.getGridShape(), attrs.getF32Type());
      std::string name = labels[i] + ".steps";
      (void)func.insertArgument(first + 1 + i, stepsType, named(name),
                                q.getLoc());
      Value given = func.getArgument(first + 1 + i);

      OpBuilder b(q);
      Location l = q.getLoc();
      Value index = arith::ConstantIndexOp::create(b, l, i);
      Value flag = tensor::ExtractOp::create(b, l, refresh, index);
      Value due = arith::CmpIOp::create(
          b, l, arith::CmpIPredicate::ne, flag,
          arith::ConstantIntOp::create(b, l, b.getI32Type(), 0));
      q.getScalesMutable().assign(given);
      q.getRefreshMutable().assign(due);

      OpBuilder rb(ret);
      Value used = StepsOp::create(rb, l, stepsType, q.getResult());
      ret->insertOperands(ret->getNumOperands(), used);
      (void)func.insertResult(func.getNumResults(), stepsType, named(name));
    }
  }
};

} // namespace
