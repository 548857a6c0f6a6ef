//===- Autodiff.cpp - the reverse pass and the shape-op adjoints ----------===//
//
// Walks a body backwards from its output, dispatching each op on the path to
// its adjoint rule. The rules of reshapes, pads, slices and transposes are
// here; the others are in AdjointElementwise.cpp and AdjointStructured.cpp.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/Transforms/Autodiff.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tq;

void GradientMap::accumulate(OpBuilder &b, Location loc, Value v, Value grad) {
  Value &slot = grads[v];
  slot = slot ? emitAdd(b, loc, slot, grad) : grad;
}

Value mlir::tq::emitZeros(OpBuilder &b, Location loc, RankedTensorType type) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

Value mlir::tq::emitAdd(OpBuilder &b, Location loc, Value x, Value y) {
  auto type = cast<RankedTensorType>(x.getType());
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{x, y}, init,
             ArrayRef<AffineMap>{id, id, id}, iters,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               Value s = arith::AddFOp::create(nb, nloc, args[0], args[1]);
               linalg::YieldOp::create(nb, nloc, s);
             })
      .getResult(0);
}

Value mlir::tq::emitTranspose(OpBuilder &b, Location loc, Value x,
                              ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
}

Value mlir::tq::emitMatmul(OpBuilder &b, Location loc, Value a, Value bm,
                           Role aRole, Role bRole) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(bm.getType());
  auto type = RankedTensorType::get({at.getDimSize(0), bt.getDimSize(1)},
                                    at.getElementType());
  Value init = emitZeros(b, loc, type);
  auto mm = linalg::MatmulOp::create(b, loc, TypeRange{type}, ValueRange{a, bm},
                                     ValueRange{init});
  MLIRContext *ctx = b.getContext();
  mm->setAttr(kRolesAttr, b.getArrayAttr({RoleAttr::get(ctx, aRole),
                                          RoleAttr::get(ctx, bRole)}));
  return mm.getResult(0);
}

Value mlir::tq::emitConv(OpBuilder &b, Location loc, Value input, Value filter,
                         Role inputRole, Role filterRole) {
  auto it = cast<RankedTensorType>(input.getType());
  auto ft = cast<RankedTensorType>(filter.getType());
  auto type = RankedTensorType::get({it.getDimSize(0), ft.getDimSize(0),
                                     it.getDimSize(2) - ft.getDimSize(2) + 1,
                                     it.getDimSize(3) - ft.getDimSize(3) + 1},
                                    it.getElementType());
  auto ones = DenseIntElementsAttr::get(
      RankedTensorType::get({2}, b.getI64Type()), ArrayRef<int64_t>{1, 1});
  auto conv = linalg::Conv2DNchwFchwOp::create(
      b, loc, TypeRange{type}, ValueRange{input, filter},
      ValueRange{emitZeros(b, loc, type)}, ones, ones);
  MLIRContext *ctx = b.getContext();
  conv->setAttr(kRolesAttr, b.getArrayAttr({RoleAttr::get(ctx, inputRole),
                                            RoleAttr::get(ctx, filterRole)}));
  return conv.getResult(0);
}

Value mlir::tq::emitStridedAccumulate(OpBuilder &b, Location loc, Value acc,
                                      Value tap, ArrayRef<int64_t> offsets,
                                      ArrayRef<int64_t> strides) {
  auto tapType = cast<RankedTensorType>(tap.getType());
  SmallVector<OpFoldResult> off, sizes, str;
  for (int64_t d = 0; d < tapType.getRank(); ++d) {
    off.push_back(b.getIndexAttr(offsets[d]));
    sizes.push_back(b.getIndexAttr(tapType.getDimSize(d)));
    str.push_back(b.getIndexAttr(strides[d]));
  }
  Value window =
      tensor::ExtractSliceOp::create(b, loc, tapType, acc, off, sizes, str);
  Value sum = emitAdd(b, loc, window, tap);
  return tensor::InsertSliceOp::create(b, loc, sum, acc, off, sizes, str);
}

namespace {

/// Reshapes, pads, slices and transposes: the gradient is moved back to the
/// source's layout.
LogicalResult emitShapeAdjoint(AdjointContext &ctx, Operation *op) {
  OpBuilder &b = ctx.builder;
  Location loc = op->getLoc();
  Value src = op->getOperand(0);
  Value g = ctx.grads.lookup(op->getResult(0));
  if (!ctx.isActive(src))
    return success();
  auto srcType = cast<RankedTensorType>(src.getType());
  Value back;
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op)) {
    back = tensor::CollapseShapeOp::create(b, loc, srcType, g,
                                           e.getReassociationIndices());
  } else if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
    back = tensor::ExpandShapeOp::create(b, loc, srcType, g,
                                         c.getReassociationIndices());
  } else if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    ArrayRef<int64_t> perm = t.getPermutation();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    back = emitTranspose(b, loc, g, inverse);
  } else if (auto p = dyn_cast<tensor::PadOp>(op)) {
    if (!p.getLow().empty() || !p.getHigh().empty() ||
        !srcType.hasStaticShape())
      return op->emitOpError("has dynamic padding: no gradient rule");
    SmallVector<OpFoldResult> off, sizes,
        strides(srcType.getRank(), b.getIndexAttr(1));
    for (auto [lo, size] : llvm::zip(p.getStaticLow(), srcType.getShape())) {
      off.push_back(b.getIndexAttr(lo));
      sizes.push_back(b.getIndexAttr(size));
    }
    back =
        tensor::ExtractSliceOp::create(b, loc, srcType, g, off, sizes, strides);
  } else if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
    // Strided and rank-reducing slices alike: the gradient is inserted
    // back where the slice was read.
    if (!srcType.hasStaticShape())
      return op->emitOpError("slices a dynamic shape: no gradient rule");
    back = tensor::InsertSliceOp::create(b, loc, g, emitZeros(b, loc, srcType),
                                         s.getMixedOffsets(), s.getMixedSizes(),
                                         s.getMixedStrides());
  }
  ctx.grads.accumulate(b, loc, src, back);
  return success();
}

LogicalResult emitAdjoint(AdjointContext &ctx, Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<tensor::ExpandShapeOp, tensor::CollapseShapeOp, linalg::TransposeOp,
            tensor::PadOp, tensor::ExtractSliceOp>(
          [&](Operation *o) { return emitShapeAdjoint(ctx, o); })
      .Case<linalg::GenericOp>(
          [&](Operation *o) { return emitElementwiseAdjoint(ctx, o); })
      .Case<linalg::MatmulOp>(
          [&](Operation *o) { return emitMatmulAdjoint(ctx, o); })
      .Case<linalg::Conv2DNchwFchwOp>(
          [&](Operation *o) { return emitConvAdjoint(ctx, o); })
      .Case<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(
          [&](Operation *o) { return emitPoolAdjoint(ctx, o); })
      .Default([](Operation *o) {
        return o->emitOpError("has no gradient rule (tq-training-step "
                              "differentiates linalg.matmul, "
                              "linalg.conv_2d_nchw_fchw, NCHW max and sum "
                              "pooling, element-wise linalg.generic, "
                              "reshapes, pads, slices and transposes)");
      });
}

} // namespace

FailureOr<SmallVector<Value>> mlir::tq::emitGradients(OpBuilder &b, Block &body,
                                                      Value output, Value seed,
                                                      ArrayRef<Value> wrt) {
  // Forward activity: the values that depend on a differentiated one.
  llvm::DenseSet<Value> active(wrt.begin(), wrt.end());
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.result_begin(), op.result_end());

  // The rules build static shapes: every value on the path must have one.
  for (Value v : active) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape()) {
      Operation *where = v.getDefiningOp();
      InFlightDiagnostic diag =
          where ? where->emitOpError("has a result of type ")
                : mlir::emitError(v.getLoc(), "a value of type ");
      diag << v.getType()
           << " on the path to the loss: tq-training-step needs statically "
              "shaped tensors";
      return failure();
    }
  }
  GradientMap grads;
  RoleAnalysis roles;
  AdjointContext ctx{b, active, grads, roles};
  grads.accumulate(b, output.getLoc(), output, seed);
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  // Each forward GEMM is numbered, and its gradient GEMMs name it.
  int64_t layers = 0;
  for (Operation *op : ops)
    if (succeeded(matchComputeOp(op)))
      op->setAttr(kLayerAttr, b.getI64IntegerAttr(layers++));
  for (Operation *op : llvm::reverse(ops)) {
    if (op->hasTrait<OpTrait::IsTerminator>())
      continue;
    bool hasGrad = llvm::any_of(op->getResults(),
                                [&](Value r) { return grads.lookup(r); });
    bool hasActiveOperand = llvm::any_of(
        op->getOperands(), [&](Value v) { return active.contains(v); });
    if (!hasGrad || !hasActiveOperand)
      continue;
    OpBuilder::InsertionGuard guard(b);
    Block *block = b.getInsertionBlock();
    Block::iterator at = b.getInsertionPoint();
    Operation *before = at == block->begin() ? nullptr : &*std::prev(at);
    if (failed(emitAdjoint(ctx, op)))
      return failure();
    if (auto layer = op->getAttrOfType<IntegerAttr>(kLayerAttr))
      for (Block::iterator it = before ? std::next(before->getIterator())
                                       : block->begin();
           it != at; ++it)
        if (succeeded(matchComputeOp(&*it)))
          it->setAttr(kGradientOfAttr, layer);
  }
  SmallVector<Value> result;
  for (Value v : wrt) {
    Value g = grads.lookup(v);
    result.push_back(
        g ? g : emitZeros(b, v.getLoc(), cast<RankedTensorType>(v.getType())));
  }
  return result;
}
