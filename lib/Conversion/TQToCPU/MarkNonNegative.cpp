//===- MarkNonNegative.cpp - max poolings of ReLU outputs -----------------===//
//
// See the description of tq-cpu-mark-nonnegative in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUMARKNONNEGATIVE
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// Whether `v` is an f32 constant that is not negative (+0 included, -0
/// not) and not NaN.
bool isNonNegativeConstant(Value v) {
  FloatAttr c;
  if (!matchPattern(v, m_Constant(&c)))
    return false;
  const APFloat &f = c.getValue();
  return !f.isNaN() && !f.isNegative();
}

/// Whether every value `v` takes is NaN or at least +0 (never -0): a ReLU
/// (maximumf with +0 or another such value), a clip of one from above
/// (minimumf of two such values), or such a constant.
bool isNonNegative(Value v, int depth = 0) {
  if (isNonNegativeConstant(v))
    return true;
  if (depth > 4)
    return false;
  if (auto m = v.getDefiningOp<arith::MaximumFOp>())
    return isNonNegative(m.getLhs(), depth + 1) ||
           isNonNegative(m.getRhs(), depth + 1);
  if (auto m = v.getDefiningOp<arith::MinimumFOp>())
    return isNonNegative(m.getLhs(), depth + 1) &&
           isNonNegative(m.getRhs(), depth + 1);
  return false;
}

/// Whether the tensor `t` is the result of a linalg.generic whose body
/// yields a non-negative value for it (isNonNegative).
bool isNonNegativeTensor(Value t) {
  auto g = t.getDefiningOp<linalg::GenericOp>();
  if (!g)
    return false;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  return isNonNegative(yield.getOperand(cast<OpResult>(t).getResultNumber()));
}

struct TQCPUMarkNonNegativePass
    : mlir::tq::impl::TQCPUMarkNonNegativeBase<TQCPUMarkNonNegativePass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (!isa<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp>(op))
        return;
      auto pool = cast<linalg::LinalgOp>(op);
      if (pool.hasPureTensorSemantics() &&
          isNonNegativeTensor(pool.getDpsInputs()[0]))
        op->setAttr(mlir::tq::cpu::kNonNegativeInputAttr,
                    UnitAttr::get(op->getContext()));
    });
  }
};

} // namespace
