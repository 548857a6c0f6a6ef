//===- ForwardCopies.cpp - a generic's result written where it is copied --===//
//
// See the description of tq-cpu-forward-copies in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUFORWARDCOPIES
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// Whether two subviews are the same elements in the same order (static
/// offsets, sizes and strides of one source).
bool sameView(memref::SubViewOp a, memref::SubViewOp b) {
  auto isStatic = [](ArrayRef<int64_t> v) {
    return llvm::none_of(v, ShapedType::isDynamic);
  };
  return a.getSource() == b.getSource() && a.getType() == b.getType() &&
         isStatic(a.getStaticOffsets()) && isStatic(a.getStaticSizes()) &&
         isStatic(a.getStaticStrides()) &&
         a.getStaticOffsets() == b.getStaticOffsets() &&
         a.getStaticSizes() == b.getStaticSizes() &&
         a.getStaticStrides() == b.getStaticStrides();
}

/// Whether `root` is a fresh allocation whose every alias is a view of it
/// (cpu::keepsBufferLocal, and deallocations): no value made by another op
/// (a select, a call, a loop's result) and no argument can alias it.
bool onlyViewed(Value root) {
  if (!root.getDefiningOp<memref::AllocOp>())
    return false;
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses())
      if (!isa<memref::DeallocOp>(use.getOwner()) &&
          !mlir::tq::cpu::keepsBufferLocal(use.getOwner(), use, worklist))
        return false;
  }
  return true;
}

/// Whether the body of `g` only computes on its block arguments (no loads
/// or stores of its own, which could read the buffer being written).
bool bodyIsPure(linalg::GenericOp g) {
  return llvm::all_of(g.getBody()->without_terminator(),
                      [](Operation &op) { return isMemoryEffectFree(&op); });
}

/// Makes `g` write its output `init` into the target of the copy of it,
/// when that gives the same result (see the pass description).
bool forward(linalg::GenericOp g, OpOperand &init, DominanceInfo &dom) {
  auto alloc = init.get().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != g->getBlock() ||
      g.payloadUsesValueFromOperand(&init) || !bodyIsPure(g))
    return false;
  memref::CopyOp copy;
  SmallVector<memref::DeallocOp> deallocs;
  for (OpOperand &use : alloc->getUses()) {
    Operation *user = use.getOwner();
    if (user == g && &use == &init)
      continue;
    if (auto c = dyn_cast<memref::CopyOp>(user);
        c && !copy && c.getSource() == alloc.getResult()) {
      copy = c;
      continue;
    }
    if (auto d = dyn_cast<memref::DeallocOp>(user)) {
      deallocs.push_back(d);
      continue;
    }
    return false;
  }
  if (!copy || copy->getBlock() != g->getBlock() || !g->isBeforeInBlock(copy))
    return false;
  auto target = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  if (!target || !llvm::all_of(target->getOperands(), [&](Value v) {
        return dom.properlyDominates(v, g);
      }))
    return false;
  Value root = mlir::tq::cpu::rootOf(target.getResult());
  if (!onlyViewed(root) || (target->getBlock() != g->getBlock() &&
                            !dom.properlyDominates(target.getResult(), g)))
    return false;
  // Of the target's buffer, the generic reads and writes only views that
  // do not meet the target, or reads the target itself at the element it
  // writes (in place: each iteration reads it before it writes it).
  AffineMap initMap = g.getMatchingIndexingMap(&init);
  for (OpOperand &operand : g->getOpOperands()) {
    if (&operand == &init || !isa<MemRefType>(operand.get().getType()) ||
        mlir::tq::cpu::rootOf(operand.get()) != root)
      continue;
    auto other = operand.get().getDefiningOp<memref::SubViewOp>();
    if (!other)
      return false;
    if (mlir::tq::cpu::disjointSubviews(other, target))
      continue;
    if (g.isDpsInput(&operand) && sameView(other, target) &&
        g.getNumReductionLoops() == 0 && initMap.isPermutation() &&
        g.getMatchingIndexingMap(&operand) == initMap)
      continue;
    return false;
  }
  // Between the generic and the copy: nothing that touches the target's
  // buffer, but copies of the generic's other results into slices of it
  // that do not meet the target.
  for (Operation *op = g->getNextNode(); op != copy; op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    if (auto d = dyn_cast<memref::DeallocOp>(op);
        d && mlir::tq::cpu::rootOf(d.getMemref()) != root)
      continue;
    if (auto c = dyn_cast<memref::CopyOp>(op)) {
      auto other = c.getTarget().getDefiningOp<memref::SubViewOp>();
      bool fromGeneric = llvm::is_contained(g.getDpsInits(), c.getSource());
      if (fromGeneric && other &&
          mlir::tq::cpu::disjointSubviews(other, target))
        continue;
    }
    return false;
  }
  if (target->getBlock() == g->getBlock() && !target->isBeforeInBlock(g))
    target->moveBefore(g);
  init.set(target.getResult());
  copy->erase();
  for (memref::DeallocOp d : deallocs)
    d->erase();
  alloc->erase();
  return true;
}

/// Whether `op` only writes its outputs, the same values whatever they
/// held: a linalg.fill, or a linalg op with no inputs whose body reads
/// neither its outputs nor memory (the linalg.map a bufferized tensor.pad
/// fills its buffer with).
bool isFiller(Operation *op) {
  auto l = dyn_cast<linalg::LinalgOp>(op);
  if (!l || !l.hasPureBufferSemantics())
    return false;
  if (isa<linalg::FillOp>(op))
    return true;
  if (l.getNumDpsInputs() != 0 || op->getNumRegions() != 1)
    return false;
  for (OpOperand &init : l.getDpsInitsMutable())
    if (l.payloadUsesValueFromOperand(&init))
      return false;
  return llvm::all_of(op->getRegion(0).front().without_terminator(),
                      [](Operation &o) { return isMemoryEffectFree(&o); });
}

/// Makes the linalg ops that write `copy`'s source (a fresh buffer, first
/// filled) write the copy's target instead: a pooling's output copied into
/// the interior of the buffer a bufferized tensor.pad made (see the pass
/// description).
bool forwardIntoSlice(memref::CopyOp copy) {
  Block *block = copy->getBlock();
  auto src = copy.getSource().getDefiningOp<memref::AllocOp>();
  auto target = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  if (!src || !target || src->getBlock() != block ||
      target->getBlock() != block || target->getNumOperands() != 1)
    return false;
  Value root = target.getSource();
  auto rootAlloc = root.getDefiningOp<memref::AllocOp>();
  if (!rootAlloc || rootAlloc->getBlock() != block ||
      rootAlloc->getNumOperands() != 0 || !onlyViewed(root))
    return false;
  // The writers of the source: linalg ops before the copy, which have it
  // as an output only and read nothing of the target's buffer; the first
  // a fill.
  SmallVector<OpOperand *> writes;
  SmallVector<memref::DeallocOp> deallocs;
  for (OpOperand &use : src->getUses()) {
    Operation *user = use.getOwner();
    if (user == copy)
      continue;
    if (auto d = dyn_cast<memref::DeallocOp>(user)) {
      deallocs.push_back(d);
      continue;
    }
    auto l = dyn_cast<linalg::LinalgOp>(user);
    if (!l || user->getBlock() != block || !user->isBeforeInBlock(copy) ||
        !l.hasPureBufferSemantics() || !l.isDpsInit(&use) ||
        llvm::is_contained(l.getDpsInputs(), src.getResult()) ||
        llvm::any_of(user->getOperands(), [&](Value v) {
          return isa<MemRefType>(v.getType()) &&
                 mlir::tq::cpu::rootOf(v) == root;
        }))
      return false;
    writes.push_back(&use);
  }
  if (writes.empty())
    return false;
  Operation *first = writes.front()->getOwner();
  for (OpOperand *w : writes)
    if (w->getOwner()->isBeforeInBlock(first))
      first = w->getOwner();
  if (!isa<linalg::FillOp>(first))
    return false;
  // From the first writer to the copy, the target's buffer is only
  // allocated, filled (by ops writing that buffer alone) and viewed:
  // those ops move before the first writer, as early as their operands
  // allow (before the layer that makes the source, whose kernel may then
  // write it in place).
  SmallVector<Operation *> moved;
  for (Operation *op = first; op != copy; op = op->getNextNode()) {
    bool touches = op == rootAlloc.getOperation() ||
                   llvm::any_of(op->getOperands(), [&](Value v) {
                     return isa<MemRefType>(v.getType()) &&
                            mlir::tq::cpu::rootOf(v) == root;
                   });
    if (!touches)
      continue;
    bool onlyRoot = llvm::all_of(op->getOperands(), [&](Value v) {
      return !isa<MemRefType>(v.getType()) || v == root;
    });
    if (op == rootAlloc.getOperation() || op == target.getOperation() ||
        (isFiller(op) && onlyRoot)) {
      moved.push_back(op);
      continue;
    }
    return false;
  }
  Operation *after =
      rootAlloc->isBeforeInBlock(first) ? rootAlloc.getOperation() : nullptr;
  auto notBefore = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || llvm::is_contained(moved, def))
      return;
    def = block->findAncestorOpInBlock(*def);
    if (def && (!after || after->isBeforeInBlock(def)))
      after = def;
  };
  for (Operation *op : moved) {
    for (Value v : op->getOperands())
      notBefore(v);
    SetVector<Value> above;
    for (Region &r : op->getRegions())
      getUsedValuesDefinedAbove(r, above);
    for (Value v : above)
      notBefore(v);
  }
  if (after && !after->isBeforeInBlock(first))
    return false;
  Operation *at = after ? after->getNextNode() : &block->front();
  for (Operation *op : moved)
    op->moveBefore(at);
  for (OpOperand *w : writes)
    w->set(target.getResult());
  copy->erase();
  for (memref::DeallocOp d : deallocs)
    d->erase();
  src->erase();
  return true;
}

/// Calls `fn` on every use of `v` and, through views, of its aliases.
void forEachAlias(Value v, function_ref<void(OpOperand &)> fn) {
  for (OpOperand &use : v.getUses()) {
    fn(use);
    if (auto view = dyn_cast<ViewLikeOpInterface>(use.getOwner());
        view && view.getViewSource() == v)
      for (Value r : view->getResults())
        forEachAlias(r, fn);
  }
}

/// The bytes under a buffer the shares of a split batch write, once
/// `writeShareInPlace` has made it a view of them.
using SharedBytes = DenseMap<Value, Value>;

/// Makes a share of a split batch (an scf.forall) compute a value it hands
/// out in place: `copy` copies a fresh buffer of the share into the share's
/// slice along dim 0 of a buffer allocated outside the loop. That buffer
/// becomes a memref.view of bytes, and the share's buffer a view of its
/// slice of them, at a byte shift: the same identity-layout type, so every
/// op of the share takes it as it took the fresh buffer.
bool writeShareInPlace(memref::CopyOp copy, SharedBytes &bytesOf,
                       DominanceInfo &dom) {
  auto forall = dyn_cast<scf::ForallOp>(copy->getParentOp());
  auto src = copy.getSource().getDefiningOp<memref::AllocOp>();
  auto target = copy.getTarget().getDefiningOp<memref::SubViewOp>();
  Block *body = copy->getBlock();
  if (!forall || !src || !target || src->getBlock() != body ||
      !target->hasOneUse() || src->getNumOperands() != 0 ||
      !src.getType().getLayout().isIdentity())
    return false;
  MemRefType type = src.getType();
  Type elem = type.getElementType();
  if (!elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() % 8 != 0 ||
      type.getRank() < 1 || type.getDimSize(0) < 1 || type.getMemorySpace() ||
      forall.getRank() != 1)
    return false;
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  Value root = target.getSource();
  auto rootType = cast<MemRefType>(root.getType());
  Value bytes = bytesOf.lookup(root);
  auto rootAlloc = root.getDefiningOp<memref::AllocOp>();
  if (!bytes &&
      (!rootAlloc || rootAlloc->getBlock() != forall->getBlock() ||
       rootAlloc->getNumOperands() != 0 || !rootType.getLayout().isIdentity() ||
       rootType.getMemorySpace() || rootType.getElementType() != elem ||
       !onlyViewed(root)))
    return false;
  // The slice: the same shape, a run of dim 0 of the whole (so contiguous).
  if (target.getType() != MemRefType::get(type.getShape(), elem,
                                          target.getType().getLayout()) ||
      rootType.getRank() != type.getRank() ||
      llvm::any_of(target.getStaticStrides(),
                   [](int64_t s) { return s != 1; }) ||
      llvm::any_of(llvm::drop_begin(target.getStaticOffsets()),
                   [](int64_t o) { return o != 0; }) ||
      type.getShape().drop_front() != rootType.getShape().drop_front())
    return false;
  // Inside the loop, nothing else touches the whole or a view of it; the
  // share's buffer and its views are used before the copy only.
  bool touched = false;
  forEachAlias(root, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    touched |= user != target && user != copy && forall->isAncestor(user);
  });
  forEachAlias(src.getResult(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (user == copy || isa<memref::DeallocOp>(user))
      return;
    Operation *top = body->findAncestorOpInBlock(*user);
    touched |= !top || !top->isBeforeInBlock(copy);
  });
  if (touched)
    return false;
  // Each share its own slice: the offset is the loop's index times the
  // slice's size (an op that may move before the share's buffer).
  auto first = dyn_cast<Value>(target.getMixedOffsets().front());
  if (!first)
    return false;
  Value iv = forall.getInductionVar(0);
  int64_t rows = type.getDimSize(0);
  auto mul = first.getDefiningOp<arith::MulIOp>();
  APInt factor;
  bool isShare = (rows == 1 && first == iv) ||
                 (mul && llvm::is_contained(mul->getOperands(), iv) &&
                  matchPattern(mul.getLhs() == iv ? mul.getRhs() : mul.getLhs(),
                               m_ConstantInt(&factor)) &&
                  factor.getSExtValue() == rows);
  auto movable = [&](Value v) {
    return dom.properlyDominates(v, src) ||
           v.getDefiningOp<arith::ConstantOp>();
  };
  if (!isShare || (mul && !dom.properlyDominates(mul.getResult(), src) &&
                   !llvm::all_of(mul->getOperands(), movable)))
    return false;
  if (mul && !dom.properlyDominates(mul.getResult(), src)) {
    for (Value v : mul->getOperands())
      if (!dom.properlyDominates(v, src))
        v.getDefiningOp()->moveBefore(src);
    mul->moveBefore(src);
  }

  Location loc = copy.getLoc();
  if (!bytes) {
    OpBuilder b(rootAlloc);
    auto bytesType =
        MemRefType::get({rootType.getNumElements() * elemBytes}, b.getI8Type());
    auto alloc = memref::AllocOp::create(b, rootAlloc.getLoc(), bytesType,
                                         rootAlloc.getAlignmentAttr());
    Value whole = memref::ViewOp::create(
        b, rootAlloc.getLoc(), rootType, alloc,
        arith::ConstantIndexOp::create(b, rootAlloc.getLoc(), 0), ValueRange{});
    for (Operation *user : llvm::make_early_inc_range(root.getUsers()))
      if (auto d = dyn_cast<memref::DeallocOp>(user))
        d.getMemrefMutable().assign(alloc);
    root.replaceAllUsesWith(whole);
    rootAlloc->erase();
    bytes = alloc;
    bytesOf[whole] = alloc;
  }
  OpBuilder b(src);
  int64_t rowBytes = type.getNumElements() / type.getDimSize(0) * elemBytes;
  Value shift = arith::MulIOp::create(
      b, loc, first, arith::ConstantIndexOp::create(b, loc, rowBytes));
  Value part = memref::ViewOp::create(b, loc, type, bytes, shift, ValueRange{});
  for (Operation *user : llvm::make_early_inc_range(src->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  copy->erase();
  target->erase();
  src.getResult().replaceAllUsesWith(part);
  src->erase();
  return true;
}

struct TQCPUForwardCopiesPass
    : mlir::tq::impl::TQCPUForwardCopiesBase<TQCPUForwardCopiesPass> {
  void runOnOperation() override {
    DominanceInfo &dom = getAnalysis<DominanceInfo>();
    // What the shares of a split batch hand out, computed in place (first:
    // the share's buffer keeps its type, where a generic forwarded into
    // the slice would get a dynamic offset).
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp c) { copies.push_back(c); });
    SharedBytes bytesOf;
    for (memref::CopyOp c : copies)
      writeShareInPlace(c, bytesOf, dom);
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp g) {
      if (g.hasPureBufferSemantics())
        generics.push_back(g);
    });
    for (linalg::GenericOp g : generics)
      for (OpOperand &init : g.getDpsInitsMutable())
        forward(g, init, dom);
    copies.clear();
    getOperation()->walk([&](memref::CopyOp c) { copies.push_back(c); });
    for (memref::CopyOp c : copies)
      forwardIntoSlice(c);
  }
};

} // namespace

Value mlir::tq::cpu::rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

bool mlir::tq::cpu::disjointSubviews(memref::SubViewOp a, memref::SubViewOp b) {
  // Distinct indices of the source are distinct addresses only with the
  // identity layout.
  if (a.getSource() != b.getSource() ||
      !cast<MemRefType>(a.getSource().getType()).getLayout().isIdentity() ||
      a.getStaticOffsets().size() != b.getStaticOffsets().size())
    return false;
  for (auto [oa, ob, na, nb, sa, sb] : llvm::zip(
           a.getStaticOffsets(), b.getStaticOffsets(), a.getStaticSizes(),
           b.getStaticSizes(), a.getStaticStrides(), b.getStaticStrides())) {
    if (ShapedType::isDynamic(oa) || ShapedType::isDynamic(ob) ||
        ShapedType::isDynamic(na) || ShapedType::isDynamic(nb) ||
        ShapedType::isDynamic(sa) || ShapedType::isDynamic(sb) || na <= 0 ||
        nb <= 0 || sa <= 0 || sb <= 0)
      continue;
    if (oa + sa * (na - 1) < ob || ob + sb * (nb - 1) < oa)
      return true;
    if (sa == sb && sa > 1 && (oa - ob) % sa != 0)
      return true;
  }
  return false;
}
