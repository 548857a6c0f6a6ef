//===- AdjointElementwise.cpp - gradients of element-wise linalg.generic --===//
//
// An all-parallel linalg.generic computes out[i] = f(in_0[m_0(i)], ...) with a
// scalar body f. The gradient of input k is Σ dY[i] · ∂f/∂in_k over the
// iterations that read each of its elements: a linalg.generic over the same
// iteration space whose output is indexed by m_k, with the dims m_k drops
// (a broadcast: a bias, a per-channel scale) as reductions. ∂f/∂in_k is
// derived from the body by forward tangents, op by op, inside the new body.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/Transforms/Autodiff.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tq;

namespace {

/// Forward tangents of the scalar values of one body: `tangent(v)` is
/// ∂v/∂x for the block argument x being differentiated (null: zero).
class Tangents {
public:
  Tangents(OpBuilder &b, Location loc, Type type)
      : b(b), loc(loc), type(type) {}

  void seed(Value x) { map[x] = constant(1.0); }
  Value get(Value v) const { return map.lookup(v); }

  /// Derives the tangent of `op`'s result from those of its operands.
  /// Fails (with `op` in `failedOp`) for an op with no derivative rule.
  LogicalResult derive(Operation *op) {
    if (op->getNumResults() != 1 ||
        llvm::none_of(op->getOperands(), [&](Value v) { return get(v); }))
      return success();
    Value r = op->getResult(0);
    auto t = [&](unsigned i) { return get(op->getOperand(i)); };
    auto x = [&](unsigned i) { return op->getOperand(i); };
    Value d;
    if (isa<arith::AddFOp>(op)) {
      d = add(t(0), t(1));
    } else if (isa<arith::SubFOp>(op)) {
      d = add(t(0), neg(t(1)));
    } else if (isa<arith::MulFOp>(op)) {
      d = add(mul(t(0), x(1)), mul(x(0), t(1)));
    } else if (isa<arith::DivFOp>(op)) {
      // (a/b)' = a'/b - (a/b)·b'/b
      d = add(div(t(0), x(1)), neg(mul(r, div(t(1), x(1)))));
    } else if (isa<arith::NegFOp>(op)) {
      d = neg(t(0));
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
      d = choose(arith::CmpFPredicate::OGT, x(0), x(1), t(0), t(1));
    } else if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) {
      d = choose(arith::CmpFPredicate::OLT, x(0), x(1), t(0), t(1));
    } else if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      d = arith::SelectOp::create(b, loc, sel.getCondition(), orZero(t(1)),
                                  orZero(t(2)));
    } else if (isa<math::ExpOp>(op)) {
      d = mul(r, t(0));
    } else if (isa<math::LogOp>(op)) {
      d = div(t(0), x(0));
    } else if (isa<math::TanhOp>(op)) {
      d = mul(add(constant(1.0), neg(mul(r, r))), t(0));
    } else if (isa<math::SqrtOp>(op)) {
      d = div(t(0), mul(constant(2.0), r));
    } else if (isa<math::RsqrtOp>(op)) {
      d = mul(mul(constant(-0.5), mul(r, mul(r, r))), t(0));
    } else if (isa<math::AbsFOp>(op)) {
      Value zero = constant(0.0);
      d = choose(arith::CmpFPredicate::OLT, x(0), zero, neg(t(0)), t(0));
    } else if (isa<arith::CmpFOp>(op)) {
      return success(); // a condition carries no gradient
    } else {
      failedOp = op;
      return failure();
    }
    if (d)
      map[r] = d;
    return success();
  }

  Operation *failedOp = nullptr;

private:
  Value constant(double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  }
  Value orZero(Value v) { return v ? v : constant(0.0); }
  Value add(Value p, Value q) {
    if (!p || !q)
      return p ? p : q;
    return arith::AddFOp::create(b, loc, p, q);
  }
  Value neg(Value p) { return p ? arith::NegFOp::create(b, loc, p) : p; }
  Value mul(Value p, Value q) {
    return p && q ? arith::MulFOp::create(b, loc, p, q) : Value();
  }
  Value div(Value p, Value q) {
    return p ? arith::DivFOp::create(b, loc, p, q) : p;
  }
  /// `lhs pred rhs ? ta : tb`.
  Value choose(arith::CmpFPredicate pred, Value lhs, Value rhs, Value ta,
               Value tb) {
    Value c = arith::CmpFOp::create(b, loc, pred, lhs, rhs);
    return arith::SelectOp::create(b, loc, c, orZero(ta), orZero(tb));
  }

  OpBuilder &b;
  Location loc;
  Type type;
  llvm::DenseMap<Value, Value> map;
};

/// The dims an input map reads (each result a dim, or the constant 0 of a
/// size-1 dim), or failure.
FailureOr<SmallVector<unsigned>> readDims(AffineMap map,
                                          SmallVector<bool> &isConstant) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (llvm::is_contained(dims, d.getPosition()))
        return failure();
      dims.push_back(d.getPosition());
      isConstant.push_back(false);
    } else if (auto c = dyn_cast<AffineConstantExpr>(e); c && !c.getValue()) {
      isConstant.push_back(true);
    } else {
      return failure();
    }
  }
  return dims;
}

/// dX = 0 where Y = max(X, 0) is at most 0, else dY, read from Y as torch
/// does (a NaN passes dY): X is then needed by the ReLU alone, and fuses
/// into it.
void emitReluAdjoint(AdjointContext &ctx, linalg::GenericOp relu) {
  OpBuilder &b = ctx.builder;
  Location loc = relu.getLoc();
  Value y = relu.getResult(0), gY = ctx.grads.lookup(y);
  auto type = cast<RankedTensorType>(y.getType());
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  Value g = linalg::GenericOp::create(
                b, loc, type, ValueRange{gY, y}, init,
                ArrayRef<AffineMap>{id, id, id},
                SmallVector<utils::IteratorType>(type.getRank(),
                                                 utils::IteratorType::parallel),
                [](OpBuilder &nb, Location nloc, ValueRange args) {
                  Value zero = arith::ConstantOp::create(
                      nb, nloc, nb.getF32FloatAttr(0.0));
                  Value positive = arith::CmpFOp::create(
                      nb, nloc, arith::CmpFPredicate::UGT, args[1], zero);
                  linalg::YieldOp::create(
                      nb, nloc,
                      arith::SelectOp::create(nb, nloc, positive, args[0], zero)
                          .getResult());
                })
                .getResult(0);
  ctx.grads.accumulate(b, loc, relu.getDpsInputOperand(0)->get(), g);
}

} // namespace

LogicalResult mlir::tq::emitElementwiseAdjoint(AdjointContext &ctx,
                                               Operation *op) {
  auto generic = cast<linalg::GenericOp>(op);
  OpBuilder &b = ctx.builder;
  Location loc = op->getLoc();
  if (generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.hasPureTensorSemantics())
    return op->emitOpError("is not an element-wise linalg.generic with one "
                           "result: no gradient rule");
  Block &body = generic.getRegion().front();
  BlockArgument outArg = body.getArguments().back();
  if (!outArg.use_empty())
    return op->emitOpError("reads its output in the body: no gradient rule");
  Value gY = ctx.grads.lookup(generic.getResult(0));
  AffineMap outMap = generic.getIndexingMapsArray().back();
  auto resultType = cast<RankedTensorType>(generic.getResult(0).getType());
  if (!outMap.isIdentity() || !resultType.getElementType().isF32())
    return op->emitOpError("needs an f32 result with an identity map for its "
                           "gradient rule");
  if (isRelu(generic)) {
    if (ctx.isActive(generic.getDpsInputOperand(0)->get()))
      emitReluAdjoint(ctx, generic);
    return success();
  }

  unsigned numInputs = generic.getNumDpsInputs();
  unsigned numLoops = generic.getNumLoops();
  for (unsigned k = 0; k < numInputs; ++k) {
    Value in = generic.getDpsInputOperand(k)->get();
    if (!ctx.isActive(in))
      continue;
    auto inType = cast<RankedTensorType>(in.getType());
    SmallVector<bool> isConstant;
    AffineMap inMap = generic.getIndexingMapsArray()[k];
    FailureOr<SmallVector<unsigned>> dims = readDims(inMap, isConstant);
    bool broadcastOfOnes = succeeded(dims);
    for (auto [i, c] : llvm::enumerate(isConstant))
      broadcastOfOnes &= !c || inType.getDimSize(i) == 1;
    if (!broadcastOfOnes)
      return op->emitOpError("input #")
             << k << " is not read through a broadcast map: no gradient rule";

    // The gradient's shape: the input's, without its constant-indexed dims.
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> exprs;
    for (auto [i, c] : llvm::enumerate(isConstant))
      if (!c)
        shape.push_back(inType.getDimSize(i));
    for (unsigned d : *dims)
      exprs.push_back(b.getAffineDimExpr(d));
    auto gradType = RankedTensorType::get(shape, inType.getElementType());
    SmallVector<utils::IteratorType> iters(numLoops,
                                           utils::IteratorType::reduction);
    for (unsigned d : *dims)
      iters[d] = utils::IteratorType::parallel;
    // Without a reduction each element is written once: no zeros to add to.
    bool reduces = llvm::is_contained(iters, utils::IteratorType::reduction);
    // A reduction over leading loops and later ones (a convolution bias's
    // gradient, over N, H and W) is done in two: first over the leading
    // loops, adding whole rows (vectorizable), then over the others on the
    // smaller tensor, instead of one long scalar chain per element.
    unsigned lead = 0;
    int64_t leadTrips = 1;
    ArrayRef<int64_t> loopSizes =
        cast<RankedTensorType>(gY.getType()).getShape();
    while (lead < numLoops && iters[lead] == utils::IteratorType::reduction)
      leadTrips *= loopSizes[lead++];
    bool twoStage =
        leadTrips > 1 && llvm::is_contained(ArrayRef(iters).drop_front(lead),
                                            utils::IteratorType::reduction);
    RankedTensorType finalType = gradType;
    SmallVector<AffineExpr> finalExprs;
    SmallVector<utils::IteratorType> finalIters;
    if (twoStage) {
      for (unsigned d : *dims)
        finalExprs.push_back(b.getAffineDimExpr(d - lead));
      finalIters.assign(iters.begin() + lead, iters.end());
      gradType = RankedTensorType::get(loopSizes.drop_front(lead),
                                       gradType.getElementType());
      exprs.clear();
      for (unsigned d = lead; d < numLoops; ++d) {
        exprs.push_back(b.getAffineDimExpr(d));
        iters[d] = utils::IteratorType::parallel;
      }
    }
    Value init = reduces ? emitZeros(b, loc, gradType)
                         : tensor::EmptyOp::create(b, loc, gradType.getShape(),
                                                   gradType.getElementType());
    bool passesThrough = false;
    SmallVector<AffineMap> maps{outMap};
    SmallVector<Value> inputs{gY};
    for (unsigned i = 0; i < numInputs; ++i) {
      maps.push_back(generic.getIndexingMapsArray()[i]);
      inputs.push_back(generic.getDpsInputOperand(i)->get());
    }
    maps.push_back(AffineMap::get(numLoops, 0, exprs, b.getContext()));

    Operation *failedOp = nullptr;
    auto grad = linalg::GenericOp::create(
        b, loc, gradType, inputs, init, maps, iters,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          IRMapping mapping;
          for (unsigned i = 0; i < numInputs; ++i)
            mapping.map(body.getArgument(i), args[1 + i]);
          mapping.map(outArg, args.back());
          Tangents tangents(nb, nloc, nb.getF32Type());
          tangents.seed(args[1 + k]);
          for (Operation &bodyOp : body.without_terminator()) {
            Operation *clone = nb.clone(bodyOp, mapping);
            if (failed(tangents.derive(clone)) && !failedOp)
              failedOp = &bodyOp;
          }
          Value yielded = mapping.lookup(body.getTerminator()->getOperand(0));
          Value t = tangents.get(yielded);
          Value term;
          if (!reduces && t && matchPattern(t, m_OneFloat())) {
            term = args[0];
            passesThrough = inMap.isIdentity() && gradType == gY.getType();
          } else if (t) {
            term = arith::MulFOp::create(nb, nloc, args[0], t);
          } else {
            term = arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(0.0));
          }
          linalg::YieldOp::create(
              nb, nloc,
              reduces ? arith::AddFOp::create(nb, nloc, args.back(), term)
                            .getResult()
                      : term);
        });
    if (failedOp)
      return failedOp->emitOpError("has no derivative rule (in the body of an "
                                   "element-wise op being differentiated)");
    Value g;
    if (passesThrough) {
      // ∂f/∂in_k = 1 read in place (a bias add's main input): dY as it is.
      grad.erase();
      init.getDefiningOp()->erase();
      g = gY;
    } else {
      // The forward's ops the gradient does not need go, and with them the
      // inputs only they read (a bias add's gradient reads dY alone).
      SmallVector<Operation *> bodyOps;
      for (Operation &o : grad.getRegion().front().without_terminator())
        bodyOps.push_back(&o);
      for (Operation *o : llvm::reverse(bodyOps))
        if (isOpTriviallyDead(o))
          o->erase();
      IRRewriter rewriter(b);
      rewriter.setInsertionPoint(grad);
      // (It replaces `grad` itself when it changes anything.)
      FailureOr<linalg::GenericOp> slim =
          linalg::deduplicateOperandsAndRemoveDeadResults(rewriter, grad,
                                                          false);
      g = (succeeded(slim) ? *slim : grad).getResult(0);
    }
    if (twoStage) {
      unsigned rank = finalIters.size();
      g = linalg::GenericOp::create(
              b, loc, finalType, g, emitZeros(b, loc, finalType),
              ArrayRef<AffineMap>{
                  b.getMultiDimIdentityMap(rank),
                  AffineMap::get(rank, 0, finalExprs, b.getContext())},
              finalIters,
              [](OpBuilder &nb, Location nloc, ValueRange args) {
                linalg::YieldOp::create(
                    nb, nloc,
                    arith::AddFOp::create(nb, nloc, args[1], args[0])
                        .getResult());
              })
              .getResult(0);
      gradType = finalType;
    }
    if (gradType != inType) {
      // Put the size-1 dims back: each joins the group of the next read dim
      // (trailing ones join the last group).
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices pending;
      for (auto [i, c] : llvm::enumerate(isConstant)) {
        pending.push_back(i);
        if (!c) {
          groups.push_back(pending);
          pending.clear();
        }
      }
      if (!groups.empty())
        groups.back().append(pending.begin(), pending.end());
      g = tensor::ExpandShapeOp::create(b, loc, inType, g, groups);
    }
    ctx.grads.accumulate(b, loc, in, g);
  }
  return success();
}
