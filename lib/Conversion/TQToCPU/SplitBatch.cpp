//===- SplitBatch.cpp - whole images shared among the threads -------------===//
//
// See the description of tq-cpu-split-batch in tq/Conversion/Passes.td.
//
// The ops that follow the batch are cloned into an scf.forall with each
// value's batch dim cut to one share. A value's batch dim is followed op by
// op: (dim, factor) says that dim `dim` has N·factor entries, image n
// owning [n·factor, (n+1)·factor). Ops that do not read the batch stay
// before the forall, ops it cannot take move after it. tensor.empty, and
// the linalg.fill or a slice of one, take their batch dim from the op that
// uses them, so they are cloned on demand.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"

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
  /// `shareIndex`: the index of the share being built (the scf.forall's
  /// induction variable).
  Splitter(int64_t images, int64_t share, Value shareIndex)
      : N(images), share(share), shareIndex(shareIndex) {}

  /// `from` (an image tensor) is `to` on the share.
  void mapImages(Value from, Value to) {
    map.map(from, to);
    batch[from] = BatchDim{0, 1};
  }

  /// `v` does not depend on the batch and is read from above the share.
  void keep(Value v) {
    map.map(v, v);
    batch[v] = std::nullopt;
  }

  /// Whether `op` is a tensor.empty, or a fill or a slice of one: cloned
  /// where a share needs it, with that use's batch dim.
  bool defer(Operation *op) {
    if (isa<tensor::EmptyOp>(op)) {
      deferred.insert(op);
      return true;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op);
        fill && fill.hasPureTensorSemantics() &&
        deferred.contains(fill.getDpsInits()[0].getDefiningOp())) {
      deferred.insert(op);
      return true;
    }
    // A static slice of one, of the same rank (pooling's gradient writes
    // strided slices of an empty tensor).
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
        slice && slice.getOffsets().empty() && slice.getSizes().empty() &&
        slice.getStrides().empty() &&
        slice.getSourceType().getRank() == slice.getResultType().getRank() &&
        deferred.contains(slice.getSource().getDefiningOp())) {
      deferred.insert(op);
      return true;
    }
    return false;
  }

  bool isDeferred(Operation *op) const { return deferred.contains(op); }

  /// The share's clone of `v` and its batch dim.
  Value lookup(Value v) const { return map.lookup(v); }
  MaybeBatch known(Value v) const {
    auto it = batch.find(v);
    return it == batch.end() ? MaybeBatch() : it->second;
  }

private:
  int64_t N, share;
  Value shareIndex;
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
    } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      // The batch dim must be taken whole: the share's slice is the same
      // slice of the share's source.
      SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
      if (want) {
        int64_t d = want->dim;
        if (slice.getStaticOffsets()[d] != 0 ||
            slice.getStaticStrides()[d] != 1 ||
            slice.getStaticSizes()[d] != slice.getSourceType().getDimSize(d))
          return failure();
        sizes[d] = b.getIndexAttr(share * want->factor);
      }
      FailureOr<Value> source = get(slice.getSource(), want, b);
      if (failed(source))
        return failure();
      result = tensor::ExtractSliceOp::create(
          b, def->getLoc(), cast<RankedTensorType>(type), *source,
          slice.getMixedOffsets(), sizes, slice.getMixedStrides());
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

  /// A stochastic rounding of a share draws the noise of its elements'
  /// places in the whole tensor: its seed offset grows by the share's first
  /// element times noiseSeedShift. Only when the dims before the batch dim
  /// are 1, so that a share's elements are contiguous in the whole.
  LogicalResult emitQuantize(QuantizeOp q, OpBuilder &b) {
    BatchDim d = *known(q.getInput());
    if (q.getRounding() != RoundingMode::stochastic)
      return emit(q, mapped(q), {d}, b);
    ArrayRef<int64_t> shape = shapeOf(q.getInput().getType());
    if (llvm::any_of(shape.take_front(d.dim), [](int64_t n) { return n != 1; }))
      return failure();
    int64_t elements = share * d.factor;
    for (int64_t n : shape.drop_front(d.dim + 1))
      elements *= n;
    Location loc = q.getLoc();
    Type i32 = b.getI32Type();
    Value offset = arith::MulIOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, i32, shareIndex),
        arith::ConstantIntOp::create(
            b, loc, i32,
            static_cast<int32_t>(cpu::noiseSeedShift(uint64_t(elements)))));
    if (Value given = q.getSeedOffset())
      offset = arith::AddIOp::create(b, loc, map.lookup(given), offset);
    if (failed(emit(q, mapped(q), {d}, b)))
      return failure();
    cast<QuantizeOp>(map.lookup(q.getResult()).getDefiningOp())
        .getSeedOffsetMutable()
        .assign(offset);
    return success();
  }

public:
  /// Clones `op` into the share at `b`; failure when its batch cannot be
  /// followed (the op is then left to run after the shares).
  LogicalResult visit(Operation *op, OpBuilder &b) {
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
      // Parameters taken from elsewhere tie a tile to more than its own
      // data.
      if (q.getScales() || q.getRefresh() || q.getBits() ||
          q.getType().getBitsKind() != BitsKind::fixed)
        return failure();
      return emitQuantize(q, b);
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

private:
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
    // A body that reads the batch loop's index (a mask by row, as Trilu's)
    // would see a share's index, not the whole batch's.
    WalkResult readsIndex = op->walk([&](linalg::IndexOp index) {
      return index.getDim() == *loop ? WalkResult::interrupt()
                                     : WalkResult::advance();
    });
    if (readsIndex.wasInterrupted())
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
    // The slice's rank: an extract's result, an insert's source.
    Value part = extract ? extract.getResult() : insert.getSource();
    if (!d ||
        cast<RankedTensorType>(part.getType()).getRank() != full.getRank())
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

/// The arguments holding one sample per entry of dim 0, all static tensors
/// of `N` samples (none where they disagree): those marked kBatchArgAttr,
/// or where none is, the tensors of rank 1 or more but the parameters.
SmallVector<BlockArgument> batchArguments(func::FuncOp f, int64_t &N) {
  bool marked = llvm::any_of(f.getArguments(), [&](BlockArgument a) {
    return f.getArgAttr(a.getArgNumber(), kBatchArgAttr) != nullptr;
  });
  SmallVector<BlockArgument> images;
  N = -1;
  for (BlockArgument a : f.getArguments()) {
    unsigned i = a.getArgNumber();
    auto r = dyn_cast<RankedTensorType>(a.getType());
    if (marked ? !f.getArgAttr(i, kBatchArgAttr)
               : (f.getArgAttr(i, kParameterArgAttr) || !r || r.getRank() == 0))
      continue;
    if (!r || !r.hasStaticShape() || r.getRank() == 0 ||
        (N >= 0 && r.getDimSize(0) != N))
      return {};
    N = r.getDimSize(0);
    images.push_back(a);
  }
  return images;
}

/// The offsets, sizes and strides of share `first` / `size` along `dim`
/// of `shape`.
std::tuple<SmallVector<OpFoldResult>, SmallVector<OpFoldResult>,
           SmallVector<OpFoldResult>>
shareSlice(OpBuilder &b, ArrayRef<int64_t> shape, int64_t dim, Value first,
           int64_t size) {
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)), sizes,
      strides(shape.size(), b.getIndexAttr(1));
  for (int64_t n : shape)
    sizes.push_back(b.getIndexAttr(n));
  offsets[dim] = first;
  sizes[dim] = b.getIndexAttr(size);
  return {offsets, sizes, strides};
}

/// A value computed per share and read after the shares: the whole is
/// assembled from the shares' slices along `dim`, each `size` long. A
/// tiled value leaves as its values and its tile-grid steps (the tensors
/// tq-to-cpu lowers it to), each assembled on its own.
struct Leaving {
  Value value;
  BatchDim dim;
  SmallVector<Type> parts;
};

/// The fewest images of a share with `whole`.
constexpr int64_t kMinWholeShare = 32;

/// Splits `f` into `chunks` shares of its batch; false (and `f` unchanged)
/// where it cannot, or with `whole` where an op would be left after the
/// shares, they would hold no product or fewer than kMinWholeShare images. The
/// ops that follow the batch run once per share, in an scf.forall; those that
/// do not read it run before, and those the shares cannot run (a sum over the
/// images, say) and their users after.
bool splitBatch(func::FuncOp f, int64_t chunks, bool whole) {
  if (f.isExternal() || f.isPrivate() || !f.getBody().hasOneBlock() ||
      chunks < 2)
    return false;
  Block &body = f.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  int64_t N;
  SmallVector<BlockArgument> images = batchArguments(f, N);
  if (!ret || images.empty() || N < chunks || N % chunks != 0)
    return false;
  int64_t share = N / chunks;
  // With `whole` (for locality), shares of fewer images gain nothing.
  if (whole && share < kMinWholeShare)
    return false;
  SmallVector<Operation *> ops = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });
  Location loc = f.getLoc();

  // The shares are built in a draft without outputs: which values leave
  // them is known only at the end.
  OpBuilder b(ret);
  auto draft = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(chunks)}, ValueRange(),
      std::nullopt);
  OpBuilder ib(draft.getBody(), draft.getBody()->begin());
  Value index = draft.getInductionVar(0);
  Value first = arith::MulIOp::create(
      ib, loc, index, arith::ConstantIndexOp::create(ib, loc, share));
  Splitter splitter(N, share, index);
  for (BlockArgument a : f.getArguments()) {
    if (!llvm::is_contained(images, a)) {
      splitter.keep(a);
      continue;
    }
    auto [offsets, sizes, strides] = shareSlice(
        ib, cast<RankedTensorType>(a.getType()).getShape(), 0, first, share);
    Value s =
        tensor::ExtractSliceOp::create(ib, loc, a, offsets, sizes, strides);
    // A contiguous copy: the kernels read row-major buffers.
    auto t = cast<RankedTensorType>(s.getType());
    Value e =
        tensor::EmptyOp::create(ib, loc, t.getShape(), t.getElementType());
    splitter.mapImages(a, linalg::CopyOp::create(ib, loc, s, e).getResult(0));
  }

  DenseSet<Operation *> shared, after;
  auto reads = [](Operation *op) {
    llvm::SetVector<Value> values(op->operand_begin(), op->operand_end());
    getUsedValuesDefinedAbove(op->getRegions(), values);
    return values;
  };
  auto definedIn = [](const DenseSet<Operation *> &set, Value v) {
    Operation *def = v.getDefiningOp();
    return def && set.contains(def);
  };
  bool products = false;
  for (Operation *op : ops) {
    llvm::SetVector<Value> values = reads(op);
    if (llvm::any_of(values, [&](Value v) { return definedIn(after, v); })) {
      after.insert(op);
      continue;
    }
    if (splitter.defer(op))
      continue;
    bool perImage = llvm::any_of(values, [&](Value v) {
      return definedIn(shared, v) || llvm::is_contained(images, v);
    });
    // Without the batch: before the shares, read by them from above.
    if (!perImage && isMemoryEffectFree(op)) {
      for (Value r : op->getResults())
        splitter.keep(r);
      continue;
    }
    if (perImage && succeeded(splitter.visit(op, ib))) {
      shared.insert(op);
      // (Poolings implement the convolution interface; they are not
      // products.)
      products |= isa<MatmulOp, Conv2DOp, linalg::ConvolutionOpInterface,
                      linalg::ContractionOpInterface>(op) &&
                  !op->getName().getStringRef().starts_with("linalg.pooling");
      continue;
    }
    LLVM_DEBUG(llvm::dbgs() << "after the shares: " << *op << "\n");
    after.insert(op);
  }

  // A layout op whose results only the ops after the shares read runs
  // after them too: its operand leaves the shares instead of its result,
  // in the producer's layout (a transposed gradient would otherwise be
  // copied twice, and the dW kernel that reads the transpose in place
  // would not see it). Last op first, so that chains follow.
  for (Operation *op : llvm::reverse(ops)) {
    if (!shared.contains(op) ||
        !isa<TransposeOp, linalg::TransposeOp, tensor::PadOp,
             tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp, linalg::CopyOp>(op))
      continue;
    bool onlyAfter =
        !op->use_empty() && llvm::all_of(op->getUsers(), [&](Operation *user) {
          return after.contains(body.findAncestorOpInBlock(*user));
        });
    if (!onlyAfter)
      continue;
    shared.erase(op);
    after.insert(op);
    // Its clone in the shares is left unused.
    Operation *clone = splitter.lookup(op->getResult(0)).getDefiningOp();
    if (clone && clone->use_empty())
      clone->erase();
  }

  // What leaves the shares, in a whole tensor per value or per part.
  SmallVector<Leaving> leaving;
  llvm::SetVector<Value> seen;
  bool ok = true;
  auto leave = [&](Operation *user) {
    for (Value v : reads(user)) {
      if (!definedIn(shared, v) || !seen.insert(v))
        continue;
      MaybeBatch d = splitter.known(v);
      Type t = v.getType();
      SmallVector<Type> parts;
      if (!isa<TiledType>(t))
        parts.push_back(t);
      else if (failed(TiledToTensorsConverter().convertType(t, parts)) ||
               parts.size() != 2)
        parts.clear();
      if (!d || parts.empty() || !isa<RankedTensorType>(parts.front())) {
        ok = false;
        continue;
      }
      leaving.push_back({v, *d, parts});
    }
  };
  for (Operation *op : ops)
    if (after.contains(op))
      leave(op);
  leave(ret);
  // A share must hold a product: other ops alone do not pay for the fork
  // unless the whole function is shared.
  // With `whole`, only for a product, and only the whole function.
  if (!ok || shared.empty() || (whole && (!products || !after.empty())) ||
      (!after.empty() && !products)) {
    draft->erase();
    return false;
  }

  SmallVector<Value> outs;
  for (const Leaving &l : leaving)
    for (Type t : l.parts) {
      auto r = cast<RankedTensorType>(t);
      outs.push_back(
          tensor::EmptyOp::create(b, loc, r.getShape(), r.getElementType()));
    }
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(chunks)}, outs,
      std::nullopt);
  Block *from = draft.getBody(), *to = forall.getBody();
  index.replaceAllUsesWith(forall.getInductionVar(0));
  to->getOperations().splice(to->begin(), from->getOperations(), from->begin(),
                             std::prev(from->end()));
  draft->erase();

  OpBuilder tb = OpBuilder::atBlockEnd(to);
  tb.setInsertionPoint(forall.getTerminator());
  OpBuilder pb(forall.getTerminator().getBody(),
               forall.getTerminator().getBody()->end());
  unsigned next = 0;
  for (const Leaving &l : leaving) {
    Value c = splitter.lookup(l.value);
    SmallVector<Value> pieces{c};
    if (l.parts.size() > 1) {
      SmallVector<Type> shareParts;
      (void)TiledToTensorsConverter().convertType(c.getType(), shareParts);
      pieces = UnrealizedConversionCastOp::create(tb, loc, shareParts, c)
                   .getResults();
    }
    for (auto [piece, part] : llvm::zip_equal(pieces, l.parts)) {
      ArrayRef<int64_t> whole = cast<RankedTensorType>(part).getShape();
      int64_t size =
          cast<RankedTensorType>(piece.getType()).getDimSize(l.dim.dim);
      Value at = size == share
                     ? first
                     : arith::MulIOp::create(
                           tb, loc, forall.getInductionVar(0),
                           arith::ConstantIndexOp::create(tb, loc, size));
      auto [offsets, sizes, strides] =
          shareSlice(pb, whole, l.dim.dim, at, size);
      tensor::ParallelInsertSliceOp::create(pb, loc, piece,
                                            forall.getRegionIterArgs()[next++],
                                            offsets, sizes, strides);
    }
  }

  // The wholes replace the values after the shares; the ops after them
  // move there.
  next = 0;
  for (Leaving &l : leaving) {
    ValueRange results = forall.getResults().slice(next, l.parts.size());
    next += l.parts.size();
    Value whole = results.front();
    if (l.parts.size() > 1)
      whole =
          UnrealizedConversionCastOp::create(b, loc, l.value.getType(), results)
              .getResult(0);
    l.value.replaceUsesWithIf(whole, [&](OpOperand &use) {
      Operation *user = body.findAncestorOpInBlock(*use.getOwner());
      return user && !shared.contains(user);
    });
  }
  for (Operation *op : ops)
    if (after.contains(op))
      op->moveBefore(ret);
  for (Operation *op : llvm::reverse(ops))
    if (shared.contains(op) || (splitter.isDeferred(op) && op->use_empty()))
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
    if (splitBatch(getOperation(), chunks, whole))
      ++numSplit;
  }
};

} // namespace
