//===- ForwardCopies.cpp - a generic's result written where it is copied --===//
//
// See the description of tq-cpu-forward-copies in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUFORWARDCOPIES
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// The buffer `v` is a view of (through any chain of views).
Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

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
  Value root = rootOf(target.getResult());
  if (!onlyViewed(root) || (target->getBlock() != g->getBlock() &&
                            !dom.properlyDominates(target.getResult(), g)))
    return false;
  // Of the target's buffer, the generic reads and writes only views that
  // do not meet the target, or reads the target itself at the element it
  // writes (in place: each iteration reads it before it writes it).
  AffineMap initMap = g.getMatchingIndexingMap(&init);
  for (OpOperand &operand : g->getOpOperands()) {
    if (&operand == &init || !isa<MemRefType>(operand.get().getType()) ||
        rootOf(operand.get()) != root)
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
        d && rootOf(d.getMemref()) != root)
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

struct TQCPUForwardCopiesPass
    : mlir::tq::impl::TQCPUForwardCopiesBase<TQCPUForwardCopiesPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp g) {
      if (g.hasPureBufferSemantics())
        generics.push_back(g);
    });
    DominanceInfo &dom = getAnalysis<DominanceInfo>();
    for (linalg::GenericOp g : generics)
      for (OpOperand &init : g.getDpsInitsMutable())
        forward(g, init, dom);
  }
};

} // namespace

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
