//===- MarkNonNegative.cpp - what is known not to be negative -------------===//
//
// See the description of tq-cpu-mark-nonnegative in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// Whether the tensor `t` holds no -0 and every value is NaN or at least +0:
/// the result of a linalg.generic whose body yields such a value for it
/// (isNonNegative) or one of its such inputs as it is (a transpose); a max
/// pooling of such a tensor; or a reshape of one.
bool isNonNegativeTensor(Value t, int depth = 0) {
  if (depth > 8)
    return false;
  Operation *def = t.getDefiningOp();
  if (!def)
    return false;
  if (auto g = dyn_cast<linalg::GenericOp>(def)) {
    auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
    Value v = yield.getOperand(cast<OpResult>(t).getResultNumber());
    if (isNonNegative(v))
      return true;
    // An input's element as it is, every element of the result written
    // (parallel loops, the result's map a permutation: a transpose).
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == g.getBody() &&
           arg.getArgNumber() < g.getNumDpsInputs() &&
           g.getNumLoops() == g.getNumParallelLoops() &&
           g.getIndexingMapMatchingResult(cast<OpResult>(t)).isPermutation() &&
           isNonNegativeTensor(g.getDpsInputs()[arg.getArgNumber()], depth + 1);
  }
  if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp>(def))
    return isNonNegativeTensor(cast<linalg::LinalgOp>(def).getDpsInputs()[0],
                               depth + 1);
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
    return isNonNegativeTensor(def->getOperand(0), depth + 1);
  return false;
}

struct TQCPUMarkNonNegativePass
    : mlir::tq::impl::TQCPUMarkNonNegativeBase<TQCPUMarkNonNegativePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp>(op)) {
        auto pool = cast<linalg::LinalgOp>(op);
        if (pool.hasPureTensorSemantics() &&
            isNonNegativeTensor(pool.getDpsInputs()[0]))
          op->setAttr(mlir::tq::cpu::kNonNegativeInputAttr, UnitAttr::get(ctx));
        return;
      }
      // A product whose input is quantized from such a tensor (NaN
      // quantizes to 0): none of its values is negative.
      if (!isa<mlir::tq::Conv2DOp, mlir::tq::MatmulOp>(op))
        return;
      auto q = op->getOperand(0).getDefiningOp<mlir::tq::QuantizeOp>();
      if (q && isNonNegativeTensor(q.getInput()))
        op->setAttr(mlir::tq::cpu::kNonNegativeInputAttr, UnitAttr::get(ctx));
    });
  }
};

} // namespace
