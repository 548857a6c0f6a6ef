//===- Epilogue.cpp - elementwise ops applied as a kernel stores ----------===//
#include "Epilogue.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::tq;

Operation *mlir::tq::nextPastAllocations(Operation *op) {
  Operation *next = op->getNextNode();
  while (isa_and_nonnull<memref::DeallocOp, memref::AllocOp>(next))
    next = next->getNextNode();
  return next;
}

Operation *mlir::tq::previousPastAllocations(Operation *op) {
  Operation *prev = op->getPrevNode();
  while (isa_and_nonnull<memref::DeallocOp, memref::AllocOp>(prev))
    prev = prev->getPrevNode();
  return prev;
}

std::optional<VectorEpilogue>
VectorEpilogue::match(Operation *kernel, Value out, int64_t vectorDims) {
  // Views of values from outside the kernel's block (the importer reshapes
  // a bias argument where the generic reads it) may come between, if they
  // are not of the kernel's output.
  auto fromOutside = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return (!def || def->getBlock() != kernel->getBlock()) &&
           cpu::rootOf(v) != cpu::rootOf(out);
  };
  SmallVector<Operation *> between;
  Operation *next = nextPastAllocations(kernel);
  while (isa_and_nonnull<ViewLikeOpInterface>(next) &&
         isMemoryEffectFree(next) &&
         llvm::all_of(next->getOperands(), fromOutside)) {
    between.push_back(next);
    next = nextPastAllocations(next);
  }
  auto g = dyn_cast_or_null<linalg::GenericOp>(next);
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!g || !outType || !g.hasPureBufferSemantics() ||
      g.getNumDpsInits() != 1 || g.getNumParallelLoops() != g.getNumLoops() ||
      g.getNumLoops() != outType.getRank() || vectorDims > outType.getRank() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
      !outType.getElementType().isF32())
    return std::nullopt;
  int64_t rank = outType.getRank();
  Value target = g.getDpsInits()[0];
  if (target != out) {
    // `out` is a buffer only the kernel, the generic and its dealloc use,
    // the target one as large that the kernel does not read, and the body
    // does not read the target's old values.
    // `out` may also be a collapse_shape view (of an allocation only the
    // view, its writer before it and deallocs use), `kernel` then the view.
    auto targetType = dyn_cast<MemRefType>(target.getType());
    Value base = out;
    if (auto view = out.getDefiningOp<memref::CollapseShapeOp>();
        view && view == kernel) {
      base = view.getSrc();
      int64_t writers = 0;
      for (Operation *user : base.getUsers())
        if (user != kernel && !isa<memref::DeallocOp>(user) &&
            (++writers > 1 || user->getBlock() != kernel->getBlock() ||
             !user->isBeforeInBlock(kernel)))
          return std::nullopt;
    }
    if (!base.getDefiningOp<memref::AllocOp>() || !targetType ||
        targetType.getShape() != outType.getShape() ||
        targetType.getElementType() != outType.getElementType() ||
        !targetType.getLayout().isIdentity() ||
        !g.getBody()->getArgument(g.getNumDpsInputs()).use_empty() ||
        llvm::is_contained(kernel->getOperands(), target) ||
        llvm::is_contained(g.getDpsInputs(), target))
      return std::nullopt;
    for (Operation *user : out.getUsers())
      if (user != kernel && user != g.getOperation() &&
          !isa<memref::DeallocOp>(user))
        return std::nullopt;
  }
  std::optional<VectorEpilogue> e =
      classify(g, out, AffineMap::getMultiDimIdentityMap(rank, g.getContext()),
               vectorDims);
  if (!e)
    return std::nullopt;
  // A target allocated between the kernel and the generic is allocated
  // before the kernel instead (prepare), if its sizes are known there.
  if (auto alloc = target.getDefiningOp<memref::AllocOp>();
      alloc && alloc->getBlock() == kernel->getBlock() &&
      kernel->isBeforeInBlock(alloc)) {
    for (Value size : alloc->getOperands())
      if (Operation *def = size.getDefiningOp();
          def && def->getBlock() == kernel->getBlock() &&
          !def->isBeforeInBlock(kernel))
        return std::nullopt;
    e->targetAlloc = alloc;
  }
  e->viewsBetween = std::move(between);
  return e;
}

std::optional<VectorEpilogue> VectorEpilogue::classify(linalg::GenericOp g,
                                                       Value out,
                                                       AffineMap outMap,
                                                       int64_t vectorDims) {
  auto targetType = cast<MemRefType>(g.getDpsInits()[0].getType());
  ArrayRef<int64_t> domain = targetType.getShape();
  int64_t rank = targetType.getRank(), firstVector = rank - vectorDims;
  VectorEpilogue e;
  e.generic = g;
  e.vectorDims = vectorDims;
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(in);
    if (in->get() == out) {
      if (m != outMap)
        return std::nullopt;
      e.kinds.push_back(Kind::output);
      continue;
    }
    auto t = dyn_cast<MemRefType>(in->get().getType());
    if (!t) {
      if (!in->get().getType().isIntOrIndexOrFloat())
        return std::nullopt;
      e.kinds.push_back(Kind::scalar);
      continue;
    }
    // Results: dims or constant 0s; the vector dims, if any, last and in
    // order with out's sizes.
    int64_t results = m.getNumResults(), vectorAt = -1;
    for (int64_t r = 0; r < results; ++r) {
      AffineExpr x = m.getResult(r);
      if (auto c = dyn_cast<AffineConstantExpr>(x)) {
        if (c.getValue() != 0)
          return std::nullopt;
        continue;
      }
      auto d = dyn_cast<AffineDimExpr>(x);
      if (!d)
        return std::nullopt;
      if (int64_t(d.getPosition()) < firstVector)
        continue;
      if (vectorAt < 0)
        vectorAt = r;
      if (r != vectorAt + int64_t(d.getPosition()) - firstVector)
        return std::nullopt;
    }
    if (vectorAt < 0) {
      e.kinds.push_back(Kind::scalar);
      continue;
    }
    // A vector of i1 would read packed bits, where memrefs hold bytes.
    if (results - vectorAt != vectorDims ||
        m.getDimPosition(vectorAt) != unsigned(firstVector) ||
        !t.hasStaticShape() || !t.getLayout().isIdentity() ||
        !t.getElementType().isIntOrFloat() ||
        t.getElementType().getIntOrFloatBitWidth() % 8 != 0)
      return std::nullopt;
    for (int64_t k = 0; k < vectorDims; ++k)
      if (t.getShape()[vectorAt + k] != domain[firstVector + k])
        return std::nullopt;
    e.kinds.push_back(Kind::vector);
  }
  if (!isVectorizableBody(g.getBody()))
    return std::nullopt;
  return e;
}

bool mlir::tq::isElementwiseBody(Block *body) {
  for (Operation &op : body->without_terminator())
    // Integer division: the lanes past the data (masked loads give zeros)
    // would divide by zero, which traps, where the scalar loops never
    // compute them.
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp, arith::CeilDivUIOp>(op) ||
        op.getNumRegions() != 0 ||
        !(isa<arith::ConstantOp>(op) ||
          OpTrait::hasElementwiseMappableTraits(&op)) ||
        op.getNumResults() != 1 ||
        !op.getResult(0).getType().isIntOrIndexOrFloat())
      return false;
  return llvm::all_of(body->getTerminator()->getOperandTypes(),
                      [](Type t) { return t.isF32(); });
}

bool mlir::tq::isVectorizableBody(Block *body) {
  return isElementwiseBody(body) &&
         body->getTerminator()->getNumOperands() == 1;
}

std::optional<VectorEpilogue>
VectorEpilogue::matchTransposed(linalg::GenericOp g, AffineMap sourceMap,
                                int64_t vectorDims) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  // The source: the one input read through `sourceMap`.
  Value source;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (g.getMatchingIndexingMap(in) != sourceMap)
      continue;
    if (source)
      return std::nullopt;
    source = in->get();
  }
  auto target = dyn_cast<MemRefType>(g.getDpsInits()[0].getType());
  if (!target || !target.hasStaticShape() || !target.getLayout().isIdentity() ||
      !target.getElementType().isF32() ||
      !g.getBody()->getArgument(g.getNumDpsInputs()).use_empty() || !source ||
      source == g.getDpsInits()[0] || !isa<MemRefType>(source.getType()))
    return std::nullopt;
  // An input that is the target is read element for element (an in-place
  // residual add): each vector is loaded just before it is stored.
  for (OpOperand *in : g.getDpsInputOperands())
    if (in->get() == g.getDpsInits()[0] &&
        !g.getMatchingIndexingMap(in).isIdentity())
      return std::nullopt;
  return classify(g, source, sourceMap, vectorDims);
}

std::optional<VectorEpilogue>
VectorEpilogue::matchElementwise(linalg::GenericOp g, int64_t vectorDims) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  auto target = dyn_cast<MemRefType>(g.getDpsInits()[0].getType());
  if (!target || !target.hasStaticShape() || !target.getLayout().isIdentity() ||
      !target.getElementType().isF32() || vectorDims < 1 ||
      vectorDims > target.getRank())
    return std::nullopt;
  return classify(g, Value(), AffineMap(), vectorDims);
}

std::optional<VectorEpilogue> VectorEpilogue::matchReading(linalg::GenericOp g,
                                                           Value out,
                                                           int64_t vectorDims) {
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 || !outType ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      g.getNumLoops() != outType.getRank() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
      !g.getBody()->getArgument(g.getNumDpsInputs()).use_empty())
    return std::nullopt;
  return classify(
      g, out,
      AffineMap::getMultiDimIdentityMap(outType.getRank(), g.getContext()),
      vectorDims);
}

void VectorEpilogue::prepare(ImplicitLocOpBuilder &b) {
  if (targetAlloc)
    targetAlloc->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
  for (Operation *view : viewsBetween)
    view->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
  views.clear();
  for (auto [in, kind] : llvm::zip(generic.getDpsInputs(), kinds)) {
    if (kind != Kind::vector || vectorDims == 1) {
      views.push_back(in);
      continue;
    }
    int64_t rank = cast<MemRefType>(in.getType()).getRank();
    views.push_back(memref::CollapseShapeOp::create(
        b, in, cpu::mergeTrailingDims(rank, rank - vectorDims)));
  }
}

/// The indices of `generic`'s input `in` at the outer indices `outer`: its
/// map's results up to the first vector dim (a constant is index 0).
static SmallVector<Value> outerIndices(ImplicitLocOpBuilder &b,
                                       linalg::GenericOp generic, OpOperand *in,
                                       ValueRange outer) {
  SmallVector<Value> at;
  for (AffineExpr x : generic.getMatchingIndexingMap(in).getResults()) {
    if (isa<AffineConstantExpr>(x)) {
      at.push_back(arith::ConstantIndexOp::create(b, 0));
      continue;
    }
    int64_t d = cast<AffineDimExpr>(x).getPosition();
    if (d >= int64_t(outer.size()))
      break;
    at.push_back(outer[d]);
  }
  return at;
}

SmallVector<Value> VectorEpilogue::loadScalars(ImplicitLocOpBuilder &b,
                                               ValueRange outer) const {
  linalg::GenericOp generic = this->generic;
  SmallVector<Value> scalars;
  for (auto [i, in] : llvm::enumerate(generic.getDpsInputOperands())) {
    Value v = in->get();
    if (kinds[i] != Kind::scalar || !isa<MemRefType>(v.getType())) {
      scalars.push_back(Value());
      continue;
    }
    scalars.push_back(
        memref::LoadOp::create(b, v, outerIndices(b, generic, in, outer)));
  }
  return scalars;
}

Value VectorEpilogue::apply(ImplicitLocOpBuilder &b, Value acc,
                            ValueRange outer, Value col, Value mask,
                            ArrayRef<Value> scalars) const {
  linalg::GenericOp generic = this->generic;
  assert((scalars.empty() || scalars.size() == kinds.size()) &&
         "one value (or null) per input");
  auto accType = cast<VectorType>(acc.getType());
  auto vectorOf = [&](Type t) {
    return VectorType::get(accType.getShape(), t);
  };
  IRMapping map;
  Block *body = generic.getBody();
  for (auto [i, in] : llvm::enumerate(generic.getDpsInputOperands())) {
    Value arg = body->getArgument(i);
    if (kinds[i] == Kind::output) {
      map.map(arg, acc);
      continue;
    }
    Value v = in->get();
    if (!isa<MemRefType>(v.getType())) {
      map.map(arg, vector::BroadcastOp::create(b, vectorOf(v.getType()), v));
      continue;
    }
    auto et = cast<MemRefType>(v.getType()).getElementType();
    if (kinds[i] == Kind::scalar) {
      Value s = !scalars.empty() && scalars[i]
                    ? scalars[i]
                    : memref::LoadOp::create(
                          b, v, outerIndices(b, generic, in, outer))
                          .getResult();
      map.map(arg, vector::BroadcastOp::create(b, vectorOf(et), s));
      continue;
    }
    SmallVector<Value> at = outerIndices(b, generic, in, outer);
    at.push_back(col);
    if (mask) {
      Value zero = arith::ConstantOp::create(b, vectorOf(et),
                                             b.getZeroAttr(vectorOf(et)));
      map.map(arg, vector::MaskedLoadOp::create(b, vectorOf(et), views[i], at,
                                                mask, zero));
    } else {
      map.map(arg, vector::LoadOp::create(b, vectorOf(et), views[i], at));
    }
  }
  // The output's own block argument is the value before the body: acc.
  map.map(body->getArgument(generic.getNumDpsInputs()), acc);
  return applyBodyToVectors(b, body, map, accType);
}

SmallVector<Value> mlir::tq::applyBodyToVectorResults(ImplicitLocOpBuilder &b,
                                                      Block *body,
                                                      IRMapping &map,
                                                      VectorType shape) {
  auto vectorOf = [&](Type t) { return VectorType::get(shape.getShape(), t); };
  for (Operation &op : body->without_terminator()) {
    if (isa<arith::ConstantOp>(op)) {
      Value c = b.clone(op)->getResult(0);
      map.map(op.getResult(0),
              vector::BroadcastOp::create(b, vectorOf(c.getType()), c));
      continue;
    }
    OperationState state(op.getLoc(), op.getName());
    state.addAttributes(op.getAttrs());
    for (Value operand : op.getOperands()) {
      if (Value mapped = map.lookupOrNull(operand)) {
        state.addOperands(mapped);
        continue;
      }
      // A value from outside the body, the same in every lane.
      state.addOperands(
          vector::BroadcastOp::create(b, vectorOf(operand.getType()), operand)
              .getResult());
    }
    state.addTypes(vectorOf(op.getResult(0).getType()));
    map.map(op.getResult(0), b.create(state)->getResult(0));
  }
  SmallVector<Value> results;
  for (Value result : body->getTerminator()->getOperands()) {
    if (Value mapped = map.lookupOrNull(result))
      results.push_back(mapped);
    else // A value from outside the body (a fill folded into the generic).
      results.push_back(
          vector::BroadcastOp::create(b, vectorOf(result.getType()), result));
  }
  return results;
}

Value mlir::tq::applyBodyToVectors(ImplicitLocOpBuilder &b, Block *body,
                                   IRMapping &map, VectorType shape) {
  return applyBodyToVectorResults(b, body, map, shape).front();
}

Location VectorEpilogue::fusedLoc(Operation *kernel) const {
  MLIRContext *ctx = kernel->getContext();
  return FusedLoc::get(ctx, {kernel->getLoc(), generic->getLoc()},
                       StringAttr::get(ctx, kFusedLayersLoc));
}
