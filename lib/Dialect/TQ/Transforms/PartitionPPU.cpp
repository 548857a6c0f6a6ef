//===- PartitionPPU.cpp - split functions into PPU kernels and host code --===//
//
// List scheduling over a function's ops, each labelled with the device that
// runs it (tq ops: the PPU; the rest: the host CPU), gives a topological
// order with few device switches; each run of one device is outlined into a
// function and the original becomes the schedule of calls.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include <set>

namespace mlir::tq {
#define GEN_PASS_DEF_TQPARTITIONPPU
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {

/// tq.transpose(tq.quantize(x)) -> tq.quantize(linalg.transpose(x)): the
/// transposed tensor split on the permuted dims has the same tiles, so the
/// same steps and values, and the permutation moves to the host.
struct HoistLayoutTranspose : OpRewritePattern<TransposeOp> {
  HoistLayoutTranspose(MLIRContext *ctx, int64_t *count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto q = op.getInput().getDefiningOp<QuantizeOp>();
    if (!q || !q->hasOneUse() || q.getScales() || q.getBits() ||
        q.getRounding() == RoundingMode::stochastic)
      return rewriter.notifyMatchFailure(op, "not a plain quantize");
    auto type = cast<TiledType>(op.getType());
    if (type.getBitsKind() != BitsKind::fixed)
      return rewriter.notifyMatchFailure(op, "width not fixed");
    auto in = cast<RankedTensorType>(q.getInput().getType());
    Location loc = op.getLoc();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         in.getElementType());
    Value moved = linalg::TransposeOp::create(rewriter, loc, q.getInput(), init,
                                              op.getPermutation())
                      ->getResult(0);
    auto nq = rewriter.replaceOpWithNewOp<QuantizeOp>(op, type, moved);
    nq.setRounding(q.getRounding());
    rewriter.eraseOp(q);
    if (count)
      ++*count;
    return success();
  }

  int64_t *count;
};

enum class Device { host, ppu };

StringRef deviceName(Device d) { return d == Device::ppu ? "ppu" : "cpu"; }

/// Values defined by ops that are cloned into each segment that uses them
/// instead of being scheduled: constants, tensor.empty and side-effect free
/// host ops on such values only (a linalg.fill of a constant).
using FreeSet = DenseSet<Operation *>;

Device deviceOf(Operation *op) {
  return isa<TQDialect>(op->getDialect()) ? Device::ppu : Device::host;
}

struct Segment {
  Device device;
  SmallVector<Operation *> ops;
};

/// Values `op` reads, including those its regions capture.
SmallVector<Value> operandsOf(Operation *op) {
  SmallVector<Value> vals(op->getOperands());
  SetVector<Value> captured;
  for (Region &r : op->getRegions())
    getUsedValuesDefinedAbove(r, captured);
  vals.append(captured.begin(), captured.end());
  return vals;
}

FreeSet freeOps(Block &block) {
  FreeSet free;
  for (Operation &op : block.without_terminator()) {
    bool constant = op.hasTrait<OpTrait::ConstantLike>() ||
                    isa<tensor::EmptyOp, ConstantOp>(op);
    bool derived =
        deviceOf(&op) == Device::host && isMemoryEffectFree(&op) &&
        llvm::all_of(operandsOf(&op), [&](Value v) {
          return v.getDefiningOp() && free.contains(v.getDefiningOp());
        });
    if (constant || derived)
      free.insert(&op);
  }
  return free;
}

/// Orders the scheduled ops of `block` into device segments.
SmallVector<Segment> schedule(Block &block, const FreeSet &free) {
  DenseMap<Operation *, unsigned> index, pending;
  DenseMap<Operation *, SmallVector<Operation *>> users;
  SmallVector<Operation *> ops;
  Operation *lastEffect = nullptr;
  for (Operation &op : block.without_terminator()) {
    if (free.contains(&op))
      continue;
    index[&op] = ops.size();
    ops.push_back(&op);
    SmallPtrSet<Operation *, 4> deps;
    for (Value v : operandsOf(&op))
      if (Operation *def = v.getDefiningOp();
          def && def->getBlock() == &block && index.count(def))
        deps.insert(def);
    // Ops with side effects keep their order.
    if (!isMemoryEffectFree(&op)) {
      if (lastEffect)
        deps.insert(lastEffect);
      lastEffect = &op;
    }
    pending[&op] = deps.size();
    for (Operation *d : deps)
      users[d].push_back(&op);
  }
  // Ready ops of each device, by program order.
  std::set<unsigned> ready[2];
  for (Operation *op : ops)
    if (pending[op] == 0)
      ready[unsigned(deviceOf(op))].insert(index[op]);
  SmallVector<Segment> segments;
  while (!ready[0].empty() || !ready[1].empty()) {
    Device d;
    if (!segments.empty() && !ready[unsigned(segments.back().device)].empty())
      d = segments.back().device;
    else if (ready[0].empty() || ready[1].empty())
      d = ready[0].empty() ? Device::ppu : Device::host;
    else // start with whatever comes first in the program
      d = *ready[0].begin() < *ready[1].begin() ? Device::host : Device::ppu;
    if (segments.empty() || segments.back().device != d)
      segments.push_back({d, {}});
    unsigned i = *ready[unsigned(d)].begin();
    ready[unsigned(d)].erase(ready[unsigned(d)].begin());
    segments.back().ops.push_back(ops[i]);
    for (Operation *u : users[ops[i]])
      if (--pending[u] == 0)
        ready[unsigned(deviceOf(u))].insert(index[u]);
  }
  return segments;
}

/// Clones `v`'s free defining op (and its free operands) before `b`'s
/// insertion point, once per mapping.
Value cloneFree(Value v, OpBuilder &b, IRMapping &map) {
  if (Value m = map.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  for (Value operand : operandsOf(def))
    if (!map.contains(operand))
      cloneFree(operand, b, map);
  b.clone(*def, map);
  return map.lookup(v);
}

LogicalResult partition(func::FuncOp func, SymbolTable &symbols,
                        int64_t &numKernels, int64_t &numHost) {
  Block &block = func.getBody().front();
  FreeSet free = freeOps(block);
  SmallVector<Segment> segments = schedule(block, free);
  if (llvm::none_of(segments,
                    [](const Segment &s) { return s.device == Device::ppu; }))
    return success();
  Operation *ret = block.getTerminator();

  // Where each scheduled op went.
  DenseMap<Operation *, unsigned> segmentOf;
  for (auto [i, s] : llvm::enumerate(segments))
    for (Operation *op : s.ops)
      segmentOf[op] = i;
  auto isFreeValue = [&](Value v) {
    return v.getDefiningOp() && free.contains(v.getDefiningOp());
  };

  // The inputs and outputs of each segment.
  SmallVector<SetVector<Value>> ins(segments.size()), outs(segments.size());
  for (auto [i, s] : llvm::enumerate(segments))
    for (Operation *op : s.ops)
      for (Value v : operandsOf(op)) {
        if (isFreeValue(v))
          continue;
        Operation *def = v.getDefiningOp();
        if (def && def->getBlock() != &block)
          continue; // defined inside op's own regions
        if (def && segmentOf.lookup(def) == i)
          continue;
        ins[i].insert(v);
        if (def)
          outs[segmentOf.lookup(def)].insert(v);
      }
  for (Value v : ret->getOperands())
    if (Operation *def = v.getDefiningOp(); def && segmentOf.count(def))
      outs[segmentOf.lookup(def)].insert(v);
  for (auto [i, s] : llvm::enumerate(segments))
    for (Value v : outs[i])
      if (!isa<RankedTensorType>(v.getType()))
        for (Operation *user : v.getUsers())
          if (user == ret || segmentOf.lookup(user) != i)
            return user->emitOpError("uses ")
                   << v.getType()
                   << " from another device; only tensors cross between the "
                      "PPU and the host (tq-partition-ppu)";

  // Outline each segment.
  OpBuilder b(func.getContext());
  SmallVector<func::FuncOp> outlined;
  for (auto [i, s] : llvm::enumerate(segments)) {
    b.setInsertionPointAfter(outlined.empty() ? func.getOperation()
                                              : outlined.back().getOperation());
    SmallVector<Type> argTypes, resTypes;
    for (Value v : ins[i])
      argTypes.push_back(v.getType());
    for (Value v : outs[i])
      resTypes.push_back(v.getType());
    auto fn = func::FuncOp::create(
        b, func.getLoc(),
        (func.getName() + "_" + deviceName(s.device) + Twine(i)).str(),
        b.getFunctionType(argTypes, resTypes));
    fn->setAttr("tq.device", b.getStringAttr(deviceName(s.device)));
    symbols.insert(fn);
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(ins[i], body->getArguments()))
      map.map(v, arg);
    for (Operation *op : s.ops) {
      for (Value v : operandsOf(op))
        if (isFreeValue(v))
          cloneFree(v, b, map);
      b.clone(*op, map);
    }
    SmallVector<Value> results;
    for (Value v : outs[i])
      results.push_back(map.lookup(v));
    func::ReturnOp::create(b, func.getLoc(), results);
    outlined.push_back(fn);
    ++(s.device == Device::ppu ? numKernels : numHost);
  }

  // The schedule: one call per segment, then the return.
  SmallVector<Operation *> old;
  for (Operation &op : block.without_terminator())
    old.push_back(&op);
  b.setInsertionPoint(ret);
  IRMapping map;
  for (auto [i, s] : llvm::enumerate(segments)) {
    SmallVector<Value> args;
    for (Value v : ins[i])
      args.push_back(isFreeValue(v) ? cloneFree(v, b, map)
                                    : map.lookupOrDefault(v));
    auto call = func::CallOp::create(b, func.getLoc(), outlined[i], args);
    for (auto [v, r] : llvm::zip(outs[i], call.getResults()))
      map.map(v, r);
  }
  for (OpOperand &use : ret->getOpOperands()) {
    Value v = use.get();
    if (isa<BlockArgument>(v))
      continue;
    use.set(isFreeValue(v) ? cloneFree(v, b, map) : map.lookup(v));
  }
  // Drop the original ops, users first.
  for (Operation *op : llvm::reverse(old))
    op->erase();
  func->setAttr("tq.schedule", b.getUnitAttr());
  return success();
}

struct TQPartitionPPUPass
    : mlir::tq::impl::TQPartitionPPUBase<TQPartitionPPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t hoisted = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<HoistLayoutTranspose>(&getContext(), &hoisted);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    numHoisted += hoisted;
    SymbolTable symbols(module);
    int64_t kernels = 0, host = 0;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp f : funcs) {
      if (f.isExternal() || f->hasAttr("tq.device") ||
          f->hasAttr("tq.schedule"))
        continue;
      if (!f.getBody().hasOneBlock())
        continue; // no tq op in multi-block functions reaches the PPU
      if (failed(partition(f, symbols, kernels, host)))
        return signalPassFailure();
    }
    numKernels += kernels;
    numHost += host;
  }
};

} // namespace
