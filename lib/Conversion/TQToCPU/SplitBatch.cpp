//===- SplitBatch.cpp - whole images shared among the threads -------------===//
//
// See the description of tq-cpu-split-batch in tq/Conversion/Passes.td.
//
// The body is cloned into an scf.forall with each value's batch dim cut to
// one share. A value's batch dim is followed op by op: (dim, factor) says
// that dim `dim` has N·factor entries, image n owning [n·factor,
// (n+1)·factor). Values without one do not depend on the batch and are
// cloned as they are. tensor.empty and the linalg.fill of one take their
// batch dim from the op that uses them, so they are cloned on demand.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tq-cpu-split-batch"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUSPLITBATCH
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {

/// Where a value's images are: dim `dim` holds N·factor entries.
struct BatchDim {
  int64_t dim;
  int64_t factor;
  bool operator==(const BatchDim &o) const {
    return dim == o.dim && factor == o.factor;
  }
  bool operator!=(const BatchDim &o) const { return !(*this == o); }
};
using MaybeBatch = std::optional<BatchDim>;

ArrayRef<int64_t> shapeOf(Type t) {
  if (auto r = dyn_cast<RankedTensorType>(t))
    return r.getShape();
  if (auto q = dyn_cast<TiledType>(t))
    return q.getShape();
  return {};
}

class Splitter {
public:
  Splitter(int64_t images, int64_t share) : N(images), share(share) {}

  /// Clones `body` (up to its return) at `b` on one share whose arguments
  /// are `args`; the share's results, or failure (the IR built so far is
  /// left for the caller to erase).
  FailureOr<SmallVector<Value>> clone(Block &body, ArrayRef<Operation *> ops,
                                      ValueRange args, OpBuilder &b) {
    for (auto [from, to] : llvm::zip(body.getArguments(), args)) {
      map.map(from, to);
      batch[from] = BatchDim{0, 1};
    }
    for (Operation *op : ops)
      if (failed(visit(op, b))) {
        LLVM_DEBUG(llvm::dbgs() << "not split at: " << *op << "\n");
        return failure();
      }
    SmallVector<Value> results;
    for (Value v : body.getTerminator()->getOperands()) {
      FailureOr<Value> r = get(v, BatchDim{0, 1}, b);
      if (failed(r))
        return failure();
      results.push_back(*r);
    }
    return results;
  }

private:
  int64_t N, share;
  IRMapping map;
  DenseMap<Value, MaybeBatch> batch;
  /// tensor.empty and fills of one, cloned on demand per batch dim.
  DenseSet<Operation *> deferred;
  DenseMap<std::pair<Value, int64_t>, Value> demanded;

  /// `t` with its batch dim cut to one share; null if a tile would straddle
  /// two shares.
  Type cut(Type t, BatchDim d) const {
    SmallVector<int64_t> shape(shapeOf(t));
    if (d.dim >= int64_t(shape.size()) || shape[d.dim] != N * d.factor)
      return Type();
    shape[d.dim] = share * d.factor;
    if (auto r = dyn_cast<RankedTensorType>(t))
      return r.clone(shape);
    auto q = cast<TiledType>(t);
    if (shape[d.dim] % q.getTileExtent(d.dim) != 0)
      return Type();
    return q.cloneWith(shape, q.getTileShape(), q.getSplitDims());
  }

  MaybeBatch known(Value v) const {
    auto it = batch.find(v);
    return it == batch.end() ? MaybeBatch() : it->second;
  }

  /// The clone of `v` with batch dim `want` (none: whole); deferred values
  /// are cloned here, others must already have that batch dim.
  FailureOr<Value> get(Value v, MaybeBatch want, OpBuilder &b) {
    Operation *def = v.getDefiningOp();
    if (!def || !deferred.contains(def)) {
      if (known(v) != want)
        return failure();
      return map.lookup(v);
    }
    int64_t key = want ? want->dim : -1;
    if (Value c = demanded.lookup({v, key}))
      return c;
    Type type = want ? cut(v.getType(), *want) : v.getType();
    if (!type)
      return failure();
    Value result;
    if (auto empty = dyn_cast<tensor::EmptyOp>(def)) {
      if (!empty.getDynamicSizes().empty())
        return failure();
      result = tensor::EmptyOp::create(b, def->getLoc(),
                                       cast<RankedTensorType>(type).getShape(),
                                       getElementTypeOrSelf(type));
    } else {
      auto fill = cast<linalg::FillOp>(def);
      FailureOr<Value> init = get(fill.getDpsInits()[0], want, b);
      if (failed(init))
        return failure();
      result = linalg::FillOp::create(b, def->getLoc(),
                                      map.lookupOrDefault(fill.value()), *init)
                   .getResult(0);
    }
    demanded[{v, key}] = result;
    return result;
  }

  /// Clones `op` with its operands as `operands` and its results typed for
  /// their batch dims `dims`.
  LogicalResult emit(Operation *op, ArrayRef<Value> operands,
                     ArrayRef<MaybeBatch> dims, OpBuilder &b) {
    // A deferred operand's entry is this use's clone; its other uses ask
    // get() again.
    for (auto [from, to] : llvm::zip(op->getOperands(), operands))
      map.map(from, to);
    Operation *c = b.clone(*op, map);
    for (auto [r, d] : llvm::zip(c->getResults(), dims)) {
      if (d) {
        Type t = cut(r.getType(), *d);
        if (!t) {
          c->erase();
          return failure();
        }
        r.setType(t);
      }
    }
    for (auto [from, to, d] :
         llvm::zip(op->getResults(), c->getResults(), dims)) {
      map.map(from, to);
      batch[from] = d;
    }
    return success();
  }

  /// The clones of `op`'s operands, all with the batch dims they have.
  SmallVector<Value> mapped(Operation *op) {
    return llvm::map_to_vector(op->getOperands(),
                               [&](Value v) { return map.lookup(v); });
  }

  LogicalResult visit(Operation *op, OpBuilder &b) {
    if (isa<tensor::EmptyOp>(op)) {
      deferred.insert(op);
      return success();
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op);
        fill && fill.hasPureTensorSemantics() &&
        deferred.contains(fill.getDpsInits()[0].getDefiningOp())) {
      deferred.insert(op);
      return success();
    }
    // A region that reads a value from above must see it whole: refused
    // when that value has a batch dim (or is not cloned yet).
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    for (Value v : above) {
      Operation *def = v.getDefiningOp();
      if (known(v) || (def && deferred.contains(def)))
        return failure();
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return visitLinalg(linalgOp, b);
    // Every other op needs its operands cloned first (deferred ones whole).
    bool anyBatch = false;
    for (Value v : op->getOperands()) {
      if (Operation *def = v.getDefiningOp(); def && deferred.contains(def)) {
        if (failed(get(v, std::nullopt, b)))
          return failure();
        map.map(v, demanded.lookup({v, -1}));
        batch[v] = std::nullopt;
      }
      anyBatch |= known(v).has_value();
    }
    // Without the batch, the op runs once per share: only if it has no
    // effects to repeat.
    if (!anyBatch)
      return isMemoryEffectFree(op)
                 ? emit(op, mapped(op),
                        SmallVector<MaybeBatch>(op->getNumResults()), b)
                 : failure();
    if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      BatchDim d = *known(pad.getSource());
      if (pad.getStaticLow()[d.dim] != 0 || pad.getStaticHigh()[d.dim] != 0)
        return failure();
      return emit(op, mapped(op), {d}, b);
    }
    if (auto slice = dyn_cast<OffsetSizeAndStrideOpInterface>(op))
      return visitSlice(slice, b);
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      return visitCollapse(collapse, b);
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      return visitExpand(expand, b);
    if (auto q = dyn_cast<QuantizeOp>(op)) {
      // Parameters taken from elsewhere or a seeded random rounding tie a
      // tile to more than its own data or position.
      if (q.getScales() || q.getRefresh() || q.getBits() ||
          q.getRounding() != RoundingMode::nearest_even ||
          q.getType().getBitsKind() != BitsKind::fixed)
        return failure();
      return emit(op, mapped(op), {known(q.getInput())}, b);
    }
    if (isa<DequantizeOp>(op))
      return emit(op, mapped(op), {known(op->getOperand(0))}, b);
    if (auto t = dyn_cast<TransposeOp>(op)) {
      BatchDim d = *known(t.getInput());
      ArrayRef<int64_t> perm = t.getPermutation();
      auto it = llvm::find(perm, d.dim);
      return emit(op, mapped(op),
                  {BatchDim{int64_t(it - perm.begin()), d.factor}}, b);
    }
    if (auto conv = dyn_cast<Conv2DOp>(op)) {
      MaybeBatch d = known(conv.getInput());
      if (!d || d->dim != 0 || known(conv.getFilter()))
        return failure();
      return emit(op, mapped(op), {d}, b);
    }
    if (auto mm = dyn_cast<MatmulOp>(op)) {
      MaybeBatch a = known(mm.getLhs()), w = known(mm.getRhs());
      int64_t rank = shapeOf(mm.getLhs().getType()).size();
      if (!a || a->dim != 0 || (rank == 2 && (w || mm.getTransposeA())) ||
          (rank == 3 && w && !(*w == *a)))
        return failure();
      return emit(op, mapped(op), {a}, b);
    }
    return failure();
  }

  /// A linalg op whose batch loop is parallel and reaches every operand
  /// with a batch dim as that dim, and no other operand.
  LogicalResult visitLinalg(linalg::LinalgOp op, OpBuilder &b) {
    if (!op.hasPureTensorSemantics() || op->getNumRegions() != 1)
      return failure();
    std::optional<unsigned> loop;
    int64_t factor = 1;
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (Operation *def = v.getDefiningOp(); def && deferred.contains(def))
        continue;
      MaybeBatch d = known(v);
      if (!d)
        continue;
      auto dimExpr = dyn_cast<AffineDimExpr>(
          op.getMatchingIndexingMap(&operand).getResult(d->dim));
      if (!dimExpr || (loop && *loop != dimExpr.getPosition()) ||
          (loop && factor != d->factor))
        return failure();
      loop = dimExpr.getPosition();
      factor = d->factor;
    }
    SmallVector<Value> operands;
    SmallVector<MaybeBatch> results;
    if (!loop) {
      for (Value v : op->getOperands()) {
        FailureOr<Value> c = get(v, std::nullopt, b);
        if (failed(c))
          return failure();
        operands.push_back(*c);
      }
      return emit(op, operands, SmallVector<MaybeBatch>(op->getNumResults()),
                  b);
    }
    if (op.getIteratorTypesArray()[*loop] != utils::IteratorType::parallel)
      return failure();
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap m = op.getMatchingIndexingMap(&operand);
      MaybeBatch want;
      for (auto [i, e] : llvm::enumerate(m.getResults())) {
        if (!e.isFunctionOfDim(*loop))
          continue;
        auto dimExpr = dyn_cast<AffineDimExpr>(e);
        if (!dimExpr || want)
          return failure();
        want = BatchDim{int64_t(i), factor};
      }
      FailureOr<Value> c = get(operand.get(), want, b);
      if (failed(c))
        return failure();
      operands.push_back(*c);
      if (op.isDpsInit(&operand))
        results.push_back(want);
    }
    return emit(op, operands, results, b);
  }

  /// tensor.extract_slice and tensor.insert_slice that take all of the
  /// batch dim, without dropping dims.
  LogicalResult visitSlice(OffsetSizeAndStrideOpInterface op, OpBuilder &b) {
    auto extract = dyn_cast<tensor::ExtractSliceOp>(op.getOperation());
    auto insert = dyn_cast<tensor::InsertSliceOp>(op.getOperation());
    if (!extract && !insert)
      return failure();
    Value src = extract ? extract.getSource() : insert.getSource();
    Value whole = extract ? extract.getSource() : insert.getDest();
    MaybeBatch d = known(src);
    auto full = cast<RankedTensorType>(whole.getType());
    if (!d || cast<RankedTensorType>(src.getType()).getRank() != full.getRank())
      return failure();
    if (op.getStaticOffsets()[d->dim] != 0 ||
        op.getStaticSizes()[d->dim] != full.getDimSize(d->dim) ||
        op.getStaticStrides()[d->dim] != 1)
      return failure();
    SmallVector<OpFoldResult> offsets = op.getMixedOffsets(),
                              sizes = op.getMixedSizes(),
                              strides = op.getMixedStrides();
    sizes[d->dim] = b.getIndexAttr(share * d->factor);
    Value c;
    if (extract) {
      c = tensor::ExtractSliceOp::create(b, op.getLoc(), map.lookup(src),
                                         offsets, sizes, strides);
    } else {
      FailureOr<Value> dest = get(insert.getDest(), d, b);
      if (failed(dest))
        return failure();
      c = tensor::InsertSliceOp::create(b, op.getLoc(), map.lookup(src), *dest,
                                        offsets, sizes, strides);
    }
    map.map(op->getResult(0), c);
    batch[op->getResult(0)] = d;
    return success();
  }

  /// The batch dim must lead its group: the images stay contiguous.
  LogicalResult visitCollapse(tensor::CollapseShapeOp op, OpBuilder &b) {
    BatchDim d = *known(op.getSrc());
    ArrayRef<int64_t> src = op.getSrcType().getShape();
    for (auto [g, group] : llvm::enumerate(op.getReassociationIndices())) {
      if (!llvm::is_contained(group, d.dim))
        continue;
      if (group.front() != d.dim)
        return failure();
      int64_t inner = d.factor;
      for (int64_t i : ArrayRef<int64_t>(group).drop_front())
        inner *= src[i];
      Value c = tensor::CollapseShapeOp::create(b, op.getLoc(),
                                                map.lookup(op.getSrc()),
                                                op.getReassociationIndices());
      map.map(op.getResult(), c);
      batch[op.getResult()] = BatchDim{int64_t(g), inner};
      return success();
    }
    return failure();
  }

  /// The batch dim's group must start with a dim of N·f' entries, whose
  /// f' with the group's later dims make the factor.
  LogicalResult visitExpand(tensor::ExpandShapeOp op, OpBuilder &b) {
    BatchDim d = *known(op.getSrc());
    ArrayRef<int64_t> out = op.getResultType().getShape();
    ReassociationIndices group = op.getReassociationIndices()[d.dim];
    int64_t first = group.front();
    if (out[first] % N != 0)
      return failure();
    int64_t inner = out[first] / N, later = 1;
    for (int64_t i : ArrayRef<int64_t>(group).drop_front())
      later *= out[i];
    if (inner * later != d.factor)
      return failure();
    BatchDim r{first, inner};
    Type t = cut(op.getResultType(), r);
    if (!t)
      return failure();
    Value c = tensor::ExpandShapeOp::create(b, op.getLoc(), t,
                                            map.lookup(op.getSrc()),
                                            op.getReassociationIndices());
    map.map(op.getResult(), c);
    batch[op.getResult()] = r;
    return success();
  }
};

/// Splits `f` into `chunks` shares of its batch; false (and `f` unchanged)
/// where it cannot.
bool splitBatch(func::FuncOp f, int64_t chunks) {
  if (f.isExternal() || f.isPrivate() || !f.getBody().hasOneBlock() ||
      chunks < 2)
    return false;
  Block &body = f.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret || f.getNumArguments() == 0 || ret.getNumOperands() == 0)
    return false;
  // Every argument and result: a static tensor of N images on dim 0.
  int64_t N = -1;
  for (Type t :
       llvm::concat<const Type>(f.getArgumentTypes(), f.getResultTypes())) {
    auto r = dyn_cast<RankedTensorType>(t);
    if (!r || !r.hasStaticShape() || r.getRank() == 0 ||
        (N >= 0 && r.getDimSize(0) != N))
      return false;
    N = r.getDimSize(0);
  }
  if (N < chunks || N % chunks != 0)
    return false;
  int64_t share = N / chunks;

  SmallVector<Operation *> ops = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });
  OpBuilder b(&body, body.begin());
  Location loc = f.getLoc();
  SmallVector<Value> outs;
  for (Type t : f.getResultTypes()) {
    auto r = cast<RankedTensorType>(t);
    outs.push_back(
        tensor::EmptyOp::create(b, loc, r.getShape(), r.getElementType()));
  }
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(chunks)}, outs,
      std::nullopt);
  OpBuilder ib(forall.getBody(), forall.getBody()->begin());
  // This share's first image.
  Value first =
      arith::MulIOp::create(ib, loc, forall.getInductionVar(0),
                            arith::ConstantIndexOp::create(ib, loc, share));
  auto slice = [&](RankedTensorType full) {
    SmallVector<OpFoldResult> offsets(full.getRank(), ib.getIndexAttr(0)),
        sizes, strides(full.getRank(), ib.getIndexAttr(1));
    offsets[0] = first;
    for (int64_t d : full.getShape())
      sizes.push_back(ib.getIndexAttr(d));
    sizes[0] = ib.getIndexAttr(share);
    return std::make_tuple(offsets, sizes, strides);
  };
  SmallVector<Value> args;
  for (BlockArgument a : body.getArguments()) {
    auto full = cast<RankedTensorType>(a.getType());
    auto [offsets, sizes, strides] = slice(full);
    Value s =
        tensor::ExtractSliceOp::create(ib, loc, a, offsets, sizes, strides);
    // A contiguous copy: the kernels read row-major buffers.
    auto t = cast<RankedTensorType>(s.getType());
    Value e =
        tensor::EmptyOp::create(ib, loc, t.getShape(), t.getElementType());
    args.push_back(linalg::CopyOp::create(ib, loc, s, e).getResult(0));
  }
  Splitter splitter(N, share);
  FailureOr<SmallVector<Value>> results = splitter.clone(body, ops, args, ib);
  if (failed(results)) {
    forall->erase();
    for (Value o : outs)
      o.getDefiningOp()->erase();
    return false;
  }
  OpBuilder tb = OpBuilder::atBlockEnd(forall.getBody());
  tb.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [r, out] : llvm::zip(*results, forall.getRegionIterArgs())) {
    auto full = cast<RankedTensorType>(out.getType());
    auto [offsets, sizes, strides] = slice(full);
    tensor::ParallelInsertSliceOp::create(tb, loc, r, out, offsets, sizes,
                                          strides);
  }
  ret->setOperands(forall.getResults());
  // The original body, last op first.
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return true;
}

struct TQCPUSplitBatchPass
    : mlir::tq::impl::TQCPUSplitBatchBase<TQCPUSplitBatchPass> {
  using TQCPUSplitBatchBase::TQCPUSplitBatchBase;
  void runOnOperation() override {
    if (chunks < 1) {
      mlir::emitError(getOperation()->getLoc(),
                      "tq-cpu-split-batch: chunks must be at least 1, got ")
          << int64_t(chunks);
      return signalPassFailure();
    }
    if (splitBatch(getOperation(), chunks))
      ++numSplit;
  }
};

} // namespace
