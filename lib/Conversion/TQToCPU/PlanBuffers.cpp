//===- PlanBuffers.cpp - a function's short-lived buffers in one arena ----===//
//
// See the description of tq-cpu-plan-buffers in tq/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUPLANBUFFERS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;

namespace {

/// Every buffer of the arena starts at a multiple of this many bytes (the
/// alignment the lowering gives its own buffers).
constexpr int64_t kAlignment = 64;

/// One buffer to place: its lifetime, from its allocation to its
/// deallocation (positions in the block, both ends included), its size and
/// the offset chosen for it (-1 until it is placed).
struct Buffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  unsigned first, last;
  int64_t bytes;
  int64_t offset = -1;

  bool overlapsInTime(const Buffer &o) const {
    return first <= o.last && o.first <= last;
  }
};

/// The size in bytes of `type` when the arena can hold it: a static shape,
/// the identity layout and an integer or float element type of 1, 2, 4 or
/// 8 bytes (LLVM rounds other widths up, which the size would miss).
std::optional<int64_t> arenaBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return std::nullopt;
  Type elem = type.getElementType();
  if (!elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() < 8 ||
      elem.getIntOrFloatBitWidth() > 64 ||
      !llvm::isPowerOf2_32(elem.getIntOrFloatBitWidth()))
    return std::nullopt;
  return type.getNumElements() * (elem.getIntOrFloatBitWidth() / 8);
}

/// The one `memref.dealloc` of `alloc` in its block, after it, or null.
memref::DeallocOp localDealloc(memref::AllocOp alloc) {
  memref::DeallocOp found;
  for (Operation *user : alloc->getUsers()) {
    auto dealloc = dyn_cast<memref::DeallocOp>(user);
    if (!dealloc)
      continue;
    if (found || dealloc->getBlock() != alloc->getBlock())
      return {};
    found = dealloc;
  }
  return found;
}

/// Greedy by size: the largest buffer first, each at the lowest aligned
/// offset where it meets no placed buffer that is alive at the same time.
/// A buffer that would end past `maxArena` is not placed (its offset stays
/// -1). Returns the arena's size.
int64_t placeBySize(MutableArrayRef<Buffer> buffers, int64_t maxArena) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  // Ties in the order of the block, so that the plan is deterministic.
  llvm::sort(order, [](const Buffer *x, const Buffer *y) {
    return std::make_pair(-x->bytes, x->first) <
           std::make_pair(-y->bytes, y->first);
  });
  SmallVector<Buffer *> placed;
  int64_t arena = 0;
  for (Buffer *b : order) {
    // The placed buffers alive with b, by offset: b goes into the first
    // gap between them that is wide enough.
    SmallVector<Buffer *> alive;
    for (Buffer *p : placed)
      if (p->overlapsInTime(*b))
        alive.push_back(p);
    llvm::sort(alive, [](const Buffer *x, const Buffer *y) {
      return x->offset < y->offset;
    });
    int64_t offset = 0;
    for (Buffer *p : alive) {
      if (offset + b->bytes <= p->offset)
        break;
      offset = std::max<int64_t>(
          offset, llvm::alignTo(p->offset + p->bytes, kAlignment));
    }
    if (offset + b->bytes > maxArena)
      continue;
    b->offset = offset;
    arena = std::max(arena, offset + b->bytes);
    placed.push_back(b);
  }
  return arena;
}

struct TQCPUPlanBuffersPass
    : mlir::tq::impl::TQCPUPlanBuffersBase<TQCPUPlanBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (maxBufferBytes < 0 || maxArenaBytes < 0) {
      mlir::emitError(func.getLoc(), "tq-cpu-plan-buffers: max-buffer-bytes "
                                     "and max-arena-bytes must be at least 0, "
                                     "got ")
          << int64_t(maxBufferBytes) << " and " << int64_t(maxArenaBytes);
      return signalPassFailure();
    }
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    planBlock(func.getBody().front(), func.getLoc());
    // Each share of tq-cpu-split-batch: one arena per share and call.
    func.walk([&](scf::ForallOp forall) {
      planBlock(*forall.getBody(), forall.getLoc());
    });
  }

  /// Places the buffers allocated and freed in `block` in one arena, made
  /// at its start and freed before its terminator.
  void planBlock(Block &block, Location loc) {
    DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(block))
      position[&op] = i;

    SmallVector<Buffer> buffers;
    for (auto alloc : block.getOps<memref::AllocOp>()) {
      std::optional<int64_t> bytes = arenaBytes(alloc.getType());
      if (!bytes || *bytes == 0 || *bytes > maxBufferBytes ||
          alloc.getAlignment().value_or(0) > kAlignment)
        continue;
      memref::DeallocOp dealloc = localDealloc(alloc);
      if (!dealloc)
        continue;
      buffers.push_back(
          {alloc, dealloc, position[alloc], position[dealloc], *bytes});
    }
    int64_t size = placeBySize(buffers, maxArenaBytes);
    llvm::erase_if(buffers, [](const Buffer &b) { return b.offset < 0; });
    // One buffer gains nothing from an arena.
    if (buffers.size() < 2)
      return;

    OpBuilder b(&getContext());
    b.setInsertionPointToStart(&block);
    auto arenaType = MemRefType::get({size}, b.getI8Type());
    Value arena = memref::AllocOp::create(b, loc, arenaType,
                                          b.getI64IntegerAttr(kAlignment));
    for (Buffer &buf : buffers) {
      b.setInsertionPoint(buf.alloc);
      Location at = buf.alloc.getLoc();
      Value offset = arith::ConstantIndexOp::create(b, at, buf.offset);
      Value view = memref::ViewOp::create(b, at, buf.alloc.getType(), arena,
                                          offset, ValueRange{});
      buf.dealloc.erase();
      buf.alloc.replaceAllUsesWith(view);
      buf.alloc.erase();
    }
    b.setInsertionPoint(block.getTerminator());
    memref::DeallocOp::create(b, loc, arena);
    numPlanned += buffers.size();
  }
};

} // namespace
