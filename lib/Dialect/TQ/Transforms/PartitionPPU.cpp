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
/// same steps and values, and the permutation moves to the host. A
/// quantization shared by several transposes (the forward's and the
/// backward's layouts of one activation) becomes one per layout.
struct HoistLayoutTranspose : OpRewritePattern<TransposeOp> {
  HoistLayoutTranspose(MLIRContext *ctx, int64_t *count)
      : OpRewritePattern(ctx), count(count) {}

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto q = op.getInput().getDefiningOp<QuantizeOp>();
    if (!q || q.getScales() || q.getRounding() == RoundingMode::stochastic)
      return rewriter.notifyMatchFailure(op, "not a plain quantize");
    auto type = cast<TiledType>(op.getType());
    if (type.getBitsKind() == BitsKind::per_tile)
      return rewriter.notifyMatchFailure(op, "per-tile widths");
    auto in = cast<RankedTensorType>(q.getInput().getType());
    Location loc = op.getLoc();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         in.getElementType());
    Value moved = linalg::TransposeOp::create(rewriter, loc, q.getInput(), init,
                                              op.getPermutation())
                      ->getResult(0);
    auto nq = rewriter.replaceOpWithNewOp<QuantizeOp>(op, type, moved);
    nq.setRounding(q.getRounding());
    if (q.getBits()) // one run-time width for the tensor: layout-free
      nq.getBitsMutable().assign(q.getBits());
    if (q->use_empty())
      rewriter.eraseOp(q);
    if (count)
      ++*count;
    return success();
  }

  int64_t *count;
};

enum class Device { host, ppu };

StringRef deviceName(Device d) { return d == Device::ppu ? "ppu" : "cpu"; }

/// Whether tq-to-ppu can hold a value of this type: static 2-D or 4-D,
/// a fixed width or one run-time width (a width register), no offset, f32
/// or pow2 scales.
bool ppuType(Type t) {
  auto tiled = dyn_cast<TiledType>(t);
  if (!tiled)
    return true;
  return tiled.hasStaticShape() &&
         (tiled.getRank() == 2 || tiled.getRank() == 4) &&
         tiled.getBitsKind() != BitsKind::per_tile && !tiled.getHasOffset() &&
         tiled.getScaleKind() != ScaleKind::pow2_f32;
}

/// Whether the PPU can run this tq op (tq-to-ppu diagnoses the finer
/// limits): no run-time width search (the host runs it and passes the
/// width), 2-D products of tiled operands, plain quantization at a fixed or
/// given width, types it holds.
bool ppuCapable(Operation *op) {
  if (isa<AdaptiveBitWidthOp>(op))
    return false;
  if (auto mm = dyn_cast<MatmulOp>(op))
    if (!isa<TiledType>(mm.getLhs().getType()) ||
        !isa<TiledType>(mm.getRhs().getType()) ||
        cast<TiledType>(mm.getLhs().getType()).getRank() != 2)
      return false;
  if (auto q = dyn_cast<QuantizeOp>(op))
    if (q.getScales() ||
        (q.getBits() && !q.getBits().getType().isInteger(32)) ||
        q.getRounding() != RoundingMode::nearest_even)
      return false;
  return llvm::all_of(op->getOperandTypes(), ppuType) &&
         llvm::all_of(op->getResultTypes(), ppuType);
}

struct Segment {
  Device device;
  SmallVector<Operation *> ops;
};

/// A run-time bit width (an i32 scalar); it crosses between devices as a
/// tensor<i32>, which a kernel reads as a width input.
bool isWidth(Value v) { return v.getType().isInteger(32); }
Type crossingType(Value v) {
  return isWidth(v) ? RankedTensorType::get({}, v.getType()) : v.getType();
}

/// Values `op` reads, including those its regions capture.
SmallVector<Value> operandsOf(Operation *op) {
  SmallVector<Value> vals(op->getOperands());
  SetVector<Value> captured;
  for (Region &r : op->getRegions())
    getUsedValuesDefinedAbove(r, captured);
  vals.append(captured.begin(), captured.end());
  return vals;
}

/// Splits one function (see the pass description).
class Partitioner {
public:
  Partitioner(func::FuncOp func) : func(func), block(func.getBody().front()) {}

  /// Fails with a diagnostic; `kernels` / `host` count what was outlined.
  LogicalResult run(SymbolTable &symbols, int64_t &kernels, int64_t &host,
                    int64_t &onHost);

private:
  func::FuncOp func;
  Block &block;
  /// Ops cloned into each segment that uses them instead of being
  /// scheduled: constants, tensor.empty and side-effect free host ops on
  /// such values only (a linalg.fill of a constant).
  DenseSet<Operation *> free;
  DenseMap<Operation *, Device> device;
  SmallVector<Segment> segments;
  DenseMap<Operation *, unsigned> segmentOf;

  bool isFree(Value v) const {
    return v.getDefiningOp() && free.contains(v.getDefiningOp());
  }
  /// A tiled value made in another segment is made again where it is used
  /// (its producers back to tensors are cloned): tiled values never cross.
  bool isRemade(Value v, unsigned segment) const {
    Operation *def = v.getDefiningOp();
    return def && isa<TiledType>(v.getType()) && segmentOf.count(def) &&
           segmentOf.lookup(def) != segment;
  }
  void classify(int64_t &onHost);
  void schedule();
  void inputsOf(Value v, unsigned segment, SetVector<Value> &ins,
                SetVector<Operation *> &remade);
  Value clone(Value v, OpBuilder &b, IRMapping &map);
};

void Partitioner::classify(int64_t &onHost) {
  for (Operation &op : block.without_terminator()) {
    bool constant = op.hasTrait<OpTrait::ConstantLike>() ||
                    isa<tensor::EmptyOp, ConstantOp>(op);
    bool derived =
        !isa<TQDialect>(op.getDialect()) && isMemoryEffectFree(&op) &&
        llvm::all_of(operandsOf(&op), [&](Value v) { return isFree(v); });
    if (constant || derived) {
      free.insert(&op);
      continue;
    }
    // A tq op the PPU cannot run, and every tq op reading its tiled
    // results, runs on the host.
    Device d = Device::host;
    if (isa<TQDialect>(op.getDialect())) {
      d = Device::ppu;
      if (!ppuCapable(&op))
        d = Device::host;
      for (Value v : op.getOperands())
        if (Operation *def = v.getDefiningOp();
            def && isa<TiledType>(v.getType()) && device.count(def) &&
            device.lookup(def) == Device::host)
          d = Device::host;
      onHost += d == Device::host;
    }
    device[&op] = d;
  }
  // Host computations on constants are cloned into host functions only: one
  // that a PPU op reads is computed on the host like any other (users are
  // visited first, so a chain of them is handled from its end).
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (!free.contains(&op) || isa<TQDialect>(op.getDialect()) ||
        op.hasTrait<OpTrait::ConstantLike>() || isa<tensor::EmptyOp>(op))
      continue;
    if (llvm::any_of(op.getUsers(), [&](Operation *user) {
          return !free.contains(user) && device.count(user) &&
                 device.lookup(user) == Device::ppu;
        })) {
      free.erase(&op);
      device[&op] = Device::host;
    }
  }
}

/// List scheduling in program order that stays on one device while it has
/// ready ops: a topological order with few device switches.
void Partitioner::schedule() {
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
      if (Operation *def = v.getDefiningOp(); def && index.count(def))
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
      ready[unsigned(device[op])].insert(index[op]);
  while (!ready[0].empty() || !ready[1].empty()) {
    Device d;
    if (!segments.empty() && !ready[unsigned(segments.back().device)].empty())
      d = segments.back().device;
    else if (ready[0].empty() || ready[1].empty())
      d = ready[0].empty() ? Device::ppu : Device::host;
    else // whatever comes first in the program
      d = *ready[0].begin() < *ready[1].begin() ? Device::host : Device::ppu;
    if (segments.empty() || segments.back().device != d)
      segments.push_back({d, {}});
    unsigned i = *ready[unsigned(d)].begin();
    ready[unsigned(d)].erase(ready[unsigned(d)].begin());
    segments.back().ops.push_back(ops[i]);
    segmentOf[ops[i]] = segments.size() - 1;
    for (Operation *u : users[ops[i]])
      if (--pending[u] == 0)
        ready[unsigned(device[u])].insert(index[u]);
  }
}

/// Adds what reading `v` in `segment` needs from outside: `v` itself, or
/// for a remade tiled value the inputs of its producers (collected in
/// `remade`, producers first).
void Partitioner::inputsOf(Value v, unsigned segment, SetVector<Value> &ins,
                           SetVector<Operation *> &remade) {
  if (isFree(v))
    return;
  Operation *def = v.getDefiningOp();
  if (def && def->getBlock() != &block)
    return; // defined inside the reading op's own regions
  if (def && segmentOf.lookup(def) == segment)
    return;
  if (!isRemade(v, segment)) {
    ins.insert(v);
    return;
  }
  if (remade.contains(def))
    return;
  for (Value operand : operandsOf(def))
    inputsOf(operand, segment, ins, remade);
  remade.insert(def);
}

/// The clone of `v` in the function being built: mapped already, or a
/// free op cloned now.
Value Partitioner::clone(Value v, OpBuilder &b, IRMapping &map) {
  if (Value m = map.lookupOrNull(v))
    return m;
  if (!isFree(v))
    return v;
  Operation *def = v.getDefiningOp();
  for (Value operand : operandsOf(def))
    clone(operand, b, map);
  b.clone(*def, map);
  return map.lookup(v);
}

LogicalResult Partitioner::run(SymbolTable &symbols, int64_t &kernels,
                               int64_t &host, int64_t &onHost) {
  classify(onHost);
  schedule();
  if (llvm::none_of(segments,
                    [](const Segment &s) { return s.device == Device::ppu; })) {
    // Nothing for the PPU (or nothing but constants): the function runs on
    // the host as it is.
    func->setAttr("tq.device", StringAttr::get(func.getContext(), "cpu"));
    return success();
  }
  Operation *ret = block.getTerminator();

  // The inputs of each segment, the producers it makes again, its outputs.
  unsigned n = segments.size();
  SmallVector<SetVector<Value>> ins(n), outs(n);
  SmallVector<SetVector<Operation *>> remade(n);
  for (auto [i, s] : llvm::enumerate(segments))
    for (Operation *op : s.ops)
      for (Value v : operandsOf(op))
        inputsOf(v, i, ins[i], remade[i]);
  for (unsigned i = 0; i < n; ++i)
    for (Value v : ins[i])
      if (Operation *def = v.getDefiningOp())
        outs[segmentOf.lookup(def)].insert(v);
  for (Value v : ret->getOperands()) {
    if (!isa<RankedTensorType>(v.getType()))
      return ret->emitOpError("returns ")
             << v.getType()
             << "; only tensors cross between the PPU and the host "
                "(tq-partition-ppu)";
    if (Operation *def = v.getDefiningOp(); def && segmentOf.count(def))
      outs[segmentOf.lookup(def)].insert(v);
  }
  for (unsigned i = 0; i < n; ++i)
    for (Value v : ins[i])
      if (!isa<RankedTensorType>(v.getType()) && !isWidth(v))
        return v.getUsers().begin()->emitOpError("reads ")
               << v.getType()
               << " from another device; only tensors cross between the PPU "
                  "and the host (tq-partition-ppu)";

  // Outline each segment.
  OpBuilder b(func.getContext());
  SmallVector<func::FuncOp> outlined;
  for (auto [i, s] : llvm::enumerate(segments)) {
    b.setInsertionPointAfter(outlined.empty() ? func.getOperation()
                                              : outlined.back().getOperation());
    SmallVector<Type> argTypes, resTypes;
    for (Value v : ins[i])
      argTypes.push_back(crossingType(v));
    for (Value v : outs[i])
      resTypes.push_back(crossingType(v));
    auto fn = func::FuncOp::create(
        b, func.getLoc(),
        (func.getName() + "_" + deviceName(s.device) + Twine(i)).str(),
        b.getFunctionType(argTypes, resTypes));
    fn->setAttr("tq.device", b.getStringAttr(deviceName(s.device)));
    fn->setAttr("tq.outlined", b.getUnitAttr());
    symbols.insert(fn);
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(ins[i], body->getArguments()))
      map.map(v, isWidth(v) ? tensor::ExtractOp::create(b, v.getLoc(), arg,
                                                        ValueRange())
                                  .getResult()
                            : Value(arg));
    auto cloneOp = [&](Operation *op) {
      for (Value v : operandsOf(op))
        clone(v, b, map);
      b.clone(*op, map);
    };
    for (Operation *op : remade[i])
      cloneOp(op);
    for (Operation *op : s.ops)
      cloneOp(op);
    SmallVector<Value> results;
    for (Value v : outs[i])
      results.push_back(isWidth(v)
                            ? tensor::FromElementsOp::create(
                                  b, v.getLoc(), crossingType(v), map.lookup(v))
                                  .getResult()
                            : map.lookup(v));
    func::ReturnOp::create(b, func.getLoc(), results);
    // Values only other segments read (made again there) are dead here.
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(body->getOperations())))
      if (isOpTriviallyDead(&op))
        op.erase();
    outlined.push_back(fn);
    ++(s.device == Device::ppu ? kernels : host);
  }

  // The schedule: one call per segment, then the return.
  SmallVector<Operation *> old;
  for (Operation &op : block.without_terminator())
    old.push_back(&op);
  b.setInsertionPoint(ret);
  IRMapping map;
  for (auto [i, s] : llvm::enumerate(segments)) {
    SmallVector<Value> args;
    for (Value v : ins[i]) {
      // An i32 from the function itself (an argument, such as a training
      // step's iteration, or made here) crosses as a 0-d tensor, as one
      // from another segment does.
      Value arg = clone(v, b, map);
      if (isWidth(v) && !isa<RankedTensorType>(arg.getType()))
        arg =
            tensor::FromElementsOp::create(b, v.getLoc(), crossingType(v), arg);
      args.push_back(arg);
    }
    auto call = func::CallOp::create(b, func.getLoc(), outlined[i], args);
    for (auto [v, r] : llvm::zip(outs[i], call.getResults()))
      map.map(v, r);
  }
  for (OpOperand &use : ret->getOpOperands())
    use.set(clone(use.get(), b, map));
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
    int64_t kernels = 0, host = 0, onHost = 0;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp f : funcs) {
      if (f.isExternal() || f->hasAttr("tq.device") ||
          f->hasAttr("tq.schedule"))
        continue;
      if (!f.getBody().hasOneBlock())
        continue; // no tq op in multi-block functions reaches the PPU
      if (failed(Partitioner(f).run(symbols, kernels, host, onHost)))
        return signalPassFailure();
    }
    numKernels += kernels;
    numHost += host;
    numOnHost += onHost;
  }
};

} // namespace
