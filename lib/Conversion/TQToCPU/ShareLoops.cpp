//===- ShareLoops.cpp - the float loop nests shared among threads ---------===//
//
// See the description of tq-cpu-share-loops in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUSHARELOOPS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// A nest that executes fewer ops than this runs on one thread: sharing it
/// costs more than it saves.
constexpr int64_t kMinSharedOps = 16384;

/// The most `ub - lb` can be: from what the ops computing them tell
/// (ValueBoundsOpInterface), and for a minimum, the least of that of its
/// operands (a tile's loop `i to min(i + 32, n)`: 32).
FailureOr<int64_t> mostExtent(Value lb, Value ub) {
  if (Operation *min = ub.getDefiningOp();
      min && isa<arith::MinSIOp, arith::MinUIOp>(min)) {
    FailureOr<int64_t> lhs = mostExtent(lb, min->getOperand(0)),
                       rhs = mostExtent(lb, min->getOperand(1));
    if (succeeded(lhs) && succeeded(rhs))
      return std::min(*lhs, *rhs);
    return succeeded(lhs) ? lhs : rhs;
  }
  MLIRContext *ctx = lb.getContext();
  AffineMap extent =
      AffineMap::get(2, 0, getAffineDimExpr(0, ctx) - getAffineDimExpr(1, ctx));
  return ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB,
      ValueBoundsConstraintSet::Variable(extent, ValueRange{ub, lb}),
      /*stopCondition=*/nullptr, /*closedUB=*/true);
}

/// The most iterations a loop makes (exact with constant bounds).
std::optional<int64_t> tripCount(Value lb, Value ub, Value step) {
  APInt s;
  FailureOr<int64_t> most = mostExtent(lb, ub);
  if (!matchPattern(step, m_ConstantInt(&s)) || s.getSExtValue() <= 0 ||
      failed(most))
    return std::nullopt;
  return llvm::divideCeil(std::max<int64_t>(0, *most), s.getSExtValue());
}

/// About how many ops one iteration of `block` executes: its ops, those of
/// nested loops times their most iterations (1 when unknown).
int64_t opsPerIteration(Block &block) {
  int64_t n = 0;
  for (Operation &op : block) {
    int64_t inner = 0;
    for (Region &r : op.getRegions())
      for (Block &b : r)
        inner += opsPerIteration(b);
    if (auto loop = dyn_cast<scf::ForOp>(op))
      inner *=
          tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())
              .value_or(1);
    n = std::min<int64_t>(n + 1 + inner, int64_t(1) << 40);
  }
  return n;
}

/// How many leading dims of `op` stay parallel: enough for `threads`
/// shares of several iterations each; 0 when the nest is small or nested
/// in another parallel loop.
unsigned sharedDims(scf::ParallelOp op, int64_t threads) {
  if (op->getParentOfType<scf::ParallelOp>())
    return 0;
  SmallVector<int64_t> trips;
  int64_t total = 1;
  for (auto [lb, ub, step] :
       llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep())) {
    std::optional<int64_t> t = tripCount(lb, ub, step);
    if (!t)
      return 1;
    trips.push_back(*t);
    total =
        std::min<int64_t>(total * std::max<int64_t>(*t, 1), int64_t(1) << 40);
  }
  if (total * opsPerIteration(*op.getBody()) < kMinSharedOps)
    return 0;
  unsigned keep = 0;
  for (int64_t product = 1; keep < trips.size() && product < 4 * threads;
       ++keep)
    product *= trips[keep];
  return std::max(keep, 1u);
}

/// Keeps the leading shared dims of a multi-dim scf.parallel (the loops of
/// a linalg op) and turns the others into an scf.for nest inside it, so
/// that the innermost loop stays a plain loop that LLVM vectorizes.
void split(scf::ParallelOp op, unsigned keep, RewriterBase &rw) {
  unsigned dims = op.getNumLoops();
  Location loc = op.getLoc();
  SmallVector<Value> ivs;
  rw.setInsertionPoint(op);
  if (keep > 0) {
    auto outer = scf::ParallelOp::create(
        rw, loc, op.getLowerBound().take_front(keep),
        op.getUpperBound().take_front(keep), op.getStep().take_front(keep));
    llvm::append_range(ivs, outer.getInductionVars());
    rw.setInsertionPoint(outer.getBody()->getTerminator());
  }
  for (unsigned d = keep; d < dims; ++d) {
    auto loop = scf::ForOp::create(rw, loc, op.getLowerBound()[d],
                                   op.getUpperBound()[d], op.getStep()[d]);
    ivs.push_back(loop.getInductionVar());
    rw.setInsertionPoint(loop.getBody()->getTerminator());
  }
  // The body moves (nested loops in it keep their identity), without its
  // scf.reduce terminator.
  Block *body = op.getBody();
  Operation *oldTerminator = body->getTerminator();
  Operation *newTerminator = &*rw.getInsertionPoint();
  rw.inlineBlockBefore(body, newTerminator, ivs);
  rw.eraseOp(oldTerminator);
  rw.eraseOp(op);
}

struct TQCPUShareLoopsPass
    : mlir::tq::impl::TQCPUShareLoopsBase<TQCPUShareLoopsPass> {
  using TQCPUShareLoopsBase::TQCPUShareLoopsBase;
  void runOnOperation() override {
    if (threads < 1) {
      mlir::emitError(getOperation()->getLoc(),
                      "tq-cpu-share-loops: threads must be at least 1, got ")
          << int64_t(threads);
      return signalPassFailure();
    }
    IRRewriter rw(&getContext());
    // The shares of a split batch (tq-cpu-split-batch) are the threads'
    // work: their loop stays parallel, and the kernels called from it
    // (and from nowhere else) run on the thread that calls them.
    SmallVector<scf::ForallOp> shares;
    getOperation()->walk([&](scf::ForallOp op) { shares.push_back(op); });
    DenseSet<Operation *> sharedLoops;
    for (scf::ForallOp op : shares) {
      scf::ParallelOp par;
      rw.setInsertionPoint(op);
      if (failed(scf::forallToParallelLoop(rw, op, &par))) {
        op.emitError("tq-cpu-share-loops: cannot lower this scf.forall");
        return signalPassFailure();
      }
      sharedLoops.insert(par);
    }
    DenseMap<StringAttr, bool> onlyInShares;
    getOperation()->walk([&](func::CallOp call) {
      bool inShare = false;
      for (Operation *p = call->getParentOp(); p && !inShare;
           p = p->getParentOp())
        inShare = sharedLoops.contains(p);
      auto [it, first] =
          onlyInShares.try_emplace(call.getCalleeAttr().getAttr(), inShare);
      if (!first)
        it->second &= inShare;
    });
    auto inShareOnly = [&](Operation *op) {
      auto f = op->getParentOfType<func::FuncOp>();
      return f && onlyInShares.lookup(f.getSymNameAttr());
    };
    // Each loop is decided once, outer loops first (a loop nested in a
    // parallel one is sequential).
    SmallVector<std::pair<scf::ParallelOp, unsigned>> plan;
    getOperation()->walk<WalkOrder::PreOrder>([&](scf::ParallelOp op) {
      if (sharedLoops.contains(op))
        return;
      unsigned keep = inShareOnly(op)              ? 0
                      : op.getNumReductions() != 0 ? op.getNumLoops()
                                                   : sharedDims(op, threads);
      if (keep < op.getNumLoops())
        plan.push_back({op, keep});
    });
    for (auto [op, keep] : plan)
      split(op, keep, rw);
  }
};

} // namespace
