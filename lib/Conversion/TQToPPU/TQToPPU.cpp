//===- TQToPPU.cpp - tq functions to PPU instruction programs -------------===//
//
// A tq function is a dataflow graph of tiled tensors; a PPU program is a
// straight line of tile instructions over explicit memories. This lowering
// allocates host memory (fmem) for f32 arguments and results and unified-
// buffer slots for tiled values, then emits each op's tile loop nest in
// program order. Ordered: helpers, the emitter, the pass.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Dialect/PPU/IR/PPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tq {
#define GEN_PASS_DEF_CONVERTTQTOPPU
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;
namespace sim = ::tq::ppu;

namespace {

/// Tile grid of a 2-D shape.
struct Grid {
  uint32_t rows, cols;
  uint32_t size() const { return rows * cols; }
};

Grid gridOf(ArrayRef<int64_t> shape, int64_t V) {
  return {uint32_t((shape[0] + V - 1) / V), uint32_t((shape[1] + V - 1) / V)};
}

/// Scale-layout and form flags of a tiled type on this machine, or an
/// error naming `op`.
FailureOr<uint8_t> layoutFlags(TiledType t, Operation *op, int64_t V) {
  if (t.getRank() != 2 || !t.hasStaticShape() || t.getSplitDims()[0] != 0 ||
      t.getSplitDims()[1] != 1)
    return op->emitOpError("tq-to-ppu supports static 2-D tensors split on "
                           "[0, 1], got ")
           << t;
  if (t.getBitsKind() != BitsKind::fixed)
    return op->emitOpError("tq-to-ppu needs fixed bit widths, got ") << t;
  if (t.getHasOffset() || t.getScaleKind() == ScaleKind::pow2_f32)
    return op->emitOpError("tq-to-ppu supports f32 or pow2 scales without "
                           "offset, got ")
           << t;
  uint8_t flags = t.getScaleKind() == ScaleKind::pow2 ? sim::kPow2 : 0;
  ArrayRef<int64_t> tile = t.getTileShape();
  if (tile[0] == V && tile[1] == V)
    return flags;
  if (tile[0] == 1 && tile[1] == V)
    return uint8_t(flags | sim::kRowVectors);
  if (tile[0] == V && tile[1] == 1)
    return uint8_t(flags | sim::kColVectors);
  return op->emitOpError("tiles ")
         << formatDims(tile, "x") << " do not match the machine's V = " << V
         << " (VxV, 1xV or Vx1)";
}

class ProgramEmitter {
public:
  ProgramEmitter(func::FuncOp func, const sim::MachineConfig &m)
      : func(func), m(m), V(m.V) {}

  /// Emits the program before `func`; fails with a diagnostic.
  LogicalResult run();

private:
  LogicalResult allocate(Value v, uint32_t tiles, bool ub, uint32_t &base,
                         Operation *op);
  LogicalResult emitQuantize(QuantizeOp op);
  LogicalResult emitRequantize(RequantizeOp op);
  LogicalResult emitMatmul(MatmulOp op);
  LogicalResult checkPostprocess(PostprocessOp op);

  func::FuncOp func;
  sim::MachineConfig m;
  int64_t V;
  OpBuilder *b = nullptr;
  Location loc = func.getLoc();
  llvm::DenseMap<Value, uint32_t> fmemBase, ubBase;
  uint64_t nextFmem = 0, nextUb = 0, nextRow = 0;
};

LogicalResult ProgramEmitter::allocate(Value v, uint32_t tiles, bool ub,
                                       uint32_t &base, Operation *op) {
  uint64_t &next = ub ? nextUb : nextFmem;
  // 0: as large as the program needs.
  uint64_t capacity = ub ? m.ubTiles : m.fmemTiles;
  if (capacity == 0)
    capacity = uint64_t(1) << 24;
  if (next + tiles > capacity)
    return op->emitOpError("needs more than ")
           << capacity << (ub ? " unified-buffer" : " host-memory")
           << " tiles (option " << (ub ? "ub" : "fmem") << ")";
  base = next;
  next += tiles;
  (ub ? ubBase : fmemBase)[v] = base;
  return success();
}

LogicalResult ProgramEmitter::emitQuantize(QuantizeOp op) {
  if (op.getScales() || op.getBits() ||
      op.getRounding() != RoundingMode::nearest_even)
    return op.emitOpError("tq-to-ppu needs computed scales, a fixed width "
                          "and nearest-even rounding");
  auto src = fmemBase.find(op.getInput());
  if (src == fmemBase.end())
    return op.emitOpError("tq-to-ppu quantizes host tensors (function "
                          "arguments) only");
  TiledType t = op.getResult().getType();
  FailureOr<uint8_t> flags = layoutFlags(t, op, V);
  if (failed(flags))
    return failure();
  Grid g = gridOf(t.getShape(), V);
  uint32_t base;
  if (failed(allocate(op.getResult(), g.size(), /*ub=*/true, base, op)))
    return failure();
  for (uint32_t k = 0; k < g.size(); ++k)
    ppu::QuantOp::create(*b, op.getLoc(), base + k, src->second + k,
                         t.getBits(), *flags & sim::kPow2,
                         *flags & sim::kRowVectors, *flags & sim::kColVectors);
  return success();
}

LogicalResult ProgramEmitter::emitRequantize(RequantizeOp op) {
  if (op.getBits() || op.getPermutation() ||
      op.getRounding() != RoundingMode::nearest_even)
    return op.emitOpError("tq-to-ppu requantizes without permutation, with a "
                          "fixed width and nearest-even rounding");
  auto src = ubBase.find(op.getInput());
  if (src == ubBase.end())
    return op.emitOpError("input is not in the unified buffer");
  TiledType t = op.getResult().getType();
  FailureOr<uint8_t> flags = layoutFlags(t, op, V);
  if (failed(flags))
    return failure();
  Grid g = gridOf(t.getShape(), V);
  uint32_t base;
  if (failed(allocate(op.getResult(), g.size(), /*ub=*/true, base, op)))
    return failure();
  for (uint32_t k = 0; k < g.size(); ++k)
    ppu::ReqOp::create(*b, op.getLoc(), base + k, src->second + k, t.getBits(),
                       *flags & sim::kPow2, *flags & sim::kRowVectors,
                       *flags & sim::kColVectors);
  return success();
}

LogicalResult ProgramEmitter::checkPostprocess(PostprocessOp op) {
  if (op.getLayerScale() || op.getComputeLayerScale() || op.getBits() ||
      op.getRounding() != RoundingMode::nearest_even)
    return op.emitOpError("tq-to-ppu supports post-processing without a "
                          "layer scale, with a fixed width and nearest-even "
                          "rounding");
  if (!op.getAppliedLayerScale().use_empty())
    return op.emitOpError("the applied layer scale is not available on the "
                          "PPU");
  return success();
}

LogicalResult ProgramEmitter::emitMatmul(MatmulOp op) {
  Value operands[2] = {op.getLhs(), op.getRhs()};
  bool transposed[2] = {op.getTransposeA(), op.getTransposeB()};
  uint32_t base[2];
  Grid grid[2];
  for (unsigned i = 0; i < 2; ++i) {
    auto t = dyn_cast<TiledType>(operands[i].getType());
    if (!t)
      return op.emitOpError("tq-to-ppu needs both operands tiled (no mixed "
                            "case)");
    FailureOr<uint8_t> flags = layoutFlags(t, op, V);
    if (failed(flags))
      return failure();
    // MAC needs scales constant along the reduction (docs/PPU.md).
    bool rows = *flags & sim::kRowVectors, cols = *flags & sim::kColVectors;
    bool bad =
        i == 0 ? (transposed[i] ? rows : cols) : (transposed[i] ? cols : rows);
    if (bad)
      return op.emitOpError("operand #")
             << i << " has per-vector scales along the reduction; "
             << "requantize it (tq.requantize) first";
    auto it = ubBase.find(operands[i]);
    if (it == ubBase.end())
      return op.emitOpError("operand #") << i
                                         << " is not in the unified "
                                            "buffer";
    base[i] = it->second;
    grid[i] = gridOf(t.getShape(), V);
  }
  auto result = cast<RankedTensorType>(op.getResult().getType());
  if (result.getRank() != 2)
    return op.emitOpError("tq-to-ppu supports 2-D products");
  Grid out = gridOf(result.getShape(), V);
  uint32_t kTiles = transposed[0] ? grid[0].rows : grid[0].cols;
  // Where each output tile goes: post-processed into the unified buffer,
  // and/or stored to host memory for a returned result.
  SmallVector<std::pair<PostprocessOp, uint8_t>> posts;
  SmallVector<uint32_t> posted;
  bool stored = false;
  for (Operation *user : op.getResult().getUsers()) {
    if (auto post = dyn_cast<PostprocessOp>(user)) {
      if (failed(checkPostprocess(post)))
        return failure();
      FailureOr<uint8_t> flags =
          layoutFlags(post.getResult().getType(), post, V);
      if (failed(flags))
        return failure();
      if (*flags & (sim::kRowVectors | sim::kColVectors))
        return post.emitOpError("tq-to-ppu post-processes into VxV tiles");
      uint32_t pb;
      if (failed(allocate(post.getResult(), out.size(), true, pb, post)))
        return failure();
      posts.push_back(
          {post, uint8_t(*flags |
                         (post.getActivation() == Activation::relu ? sim::kRelu
                                                                   : 0))});
      posted.push_back(pb);
    } else if (isa<func::ReturnOp>(user)) {
      stored = true;
    } else {
      return user->emitOpError("tq-to-ppu cannot consume a tq.matmul result "
                               "here (only tq.postprocess and return)");
    }
  }
  uint32_t storeBase = 0;
  if (stored)
    storeBase = fmemBase.lookup(op.getResult());
  bool bf16 = op.getScaleProduct() == ScaleProduct::bf16;
  for (uint32_t i = 0; i < out.rows; ++i)
    for (uint32_t j = 0; j < out.cols; ++j) {
      for (uint32_t t = 0; t < kTiles; ++t) {
        uint32_t aSlot =
            transposed[0] ? t * grid[0].cols + i : i * grid[0].cols + t;
        uint32_t bSlot =
            transposed[1] ? j * grid[1].cols + t : t * grid[1].cols + j;
        // Alternate data-buffer rows: the next tiles load while these
        // multiply (double buffering when rows >= 2).
        uint32_t row = nextRow++ % m.dataRows;
        ppu::LoadOp::create(*b, op.getLoc(), ppu::Buffer::a, row,
                            base[0] + aSlot, transposed[0]);
        ppu::LoadOp::create(*b, op.getLoc(), ppu::Buffer::b, row,
                            base[1] + bSlot, transposed[1]);
        ppu::MacOp::create(*b, op.getLoc(), 0, row, row, t > 0, bf16);
      }
      uint32_t tile = i * out.cols + j;
      for (auto [post, pb] : llvm::zip(posts, posted)) {
        TiledType t = post.first.getResult().getType();
        ppu::PostOp::create(*b, op.getLoc(), pb + tile, 0, t.getBits(),
                            post.second & sim::kRelu, post.second & sim::kPow2);
      }
      if (stored)
        ppu::StoreOp::create(*b, op.getLoc(), storeBase + tile, 0);
    }
  return success();
}

LogicalResult ProgramEmitter::run() {
  OpBuilder builder(func);
  b = &builder;
  // The machine, then the bindings: arguments first, results after.
  auto program =
      ppu::ProgramOp::create(builder, loc, func.getName(), m.V, m.macUnits,
                             m.ubTiles, m.dataRows, m.accTiles, m.fmemTiles);
  Block *body = new Block();
  program.getBody().push_back(body);
  builder.setInsertionPointToEnd(body);
  auto check2D = [&](Type type, Operation *op,
                     StringRef what) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || t.getRank() != 2 || !t.hasStaticShape() ||
        !t.getElementType().isF32())
      return op->emitOpError("tq-to-ppu needs static 2-D f32 ")
             << what << ", got " << type;
    return success();
  };
  for (BlockArgument arg : func.getArguments()) {
    if (failed(check2D(arg.getType(), func, "arguments")))
      return failure();
    auto t = cast<RankedTensorType>(arg.getType());
    uint32_t base;
    if (failed(
            allocate(arg, gridOf(t.getShape(), V).size(), false, base, func)))
      return failure();
    ppu::BindingOp::create(builder, loc,
                           "arg" + std::to_string(arg.getArgNumber()), false,
                           t.getShape(), base);
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (failed(check2D(v.getType(), ret, "results")))
      return failure();
    if (!v.getDefiningOp<MatmulOp>())
      return ret.emitOpError("tq-to-ppu returns tq.matmul results only");
    if (fmemBase.count(v))
      return ret.emitOpError("a result is returned twice");
    auto t = cast<RankedTensorType>(v.getType());
    uint32_t base;
    if (failed(allocate(v, gridOf(t.getShape(), V).size(), false, base, ret)))
      return failure();
    ppu::BindingOp::create(builder, loc, "result" + std::to_string(i), true,
                           t.getShape(), base);
  }
  for (Operation &op : func.getBody().front()) {
    LogicalResult r =
        TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](QuantizeOp q) { return emitQuantize(q); })
            .Case([&](RequantizeOp q) { return emitRequantize(q); })
            .Case([&](MatmulOp mm) { return emitMatmul(mm); })
            .Case([&](PostprocessOp p) -> LogicalResult {
              // Emitted with its producer.
              if (!ubBase.count(p.getResult()))
                return p.emitOpError("tq-to-ppu post-processes tq.matmul "
                                     "results only");
              return success();
            })
            .Case([&](func::ReturnOp) { return success(); })
            .Default([&](Operation *other) -> LogicalResult {
              if (isOpTriviallyDead(other))
                return success();
              return other->emitOpError("is not supported by tq-to-ppu");
            });
    if (failed(r)) {
      program.erase();
      return failure();
    }
  }
  ppu::HaltOp::create(builder, loc);
  // Memories sized to the program unless the options fixed them.
  if (m.ubTiles == 0)
    program.setUb(std::max<uint64_t>(nextUb, 1));
  if (m.fmemTiles == 0)
    program.setFmem(std::max<uint64_t>(nextFmem, 1));
  std::string why = sim::verifyMachine(ppu::getMachine(program));
  if (!why.empty())
    return program.emitOpError(why);
  return success();
}

struct ConvertTQToPPUPass
    : mlir::tq::impl::ConvertTQToPPUBase<ConvertTQToPPUPass> {
  using Base::Base;
  void runOnOperation() override {
    sim::MachineConfig m;
    m.V = v;
    m.macUnits = mac ? mac : v;
    m.ubTiles = ub;
    m.dataRows = rows;
    m.accTiles = acc;
    m.fmemTiles = fmem;
    sim::MachineConfig probe = m;
    probe.ubTiles = std::max<int64_t>(ub, 1);
    probe.fmemTiles = std::max<int64_t>(fmem, 1);
    if (v < 1 || v > 256 || mac < 0 || mac > 65535 || ub < 0 || rows < 1 ||
        rows > 65535 || acc < 1 || acc > 65535 || fmem < 0 ||
        !sim::verifyMachine(probe).empty()) {
      getOperation().emitError("convert-tq-to-ppu: invalid machine (")
          << m.str() << ")";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp f : funcs) {
      if (f.isExternal())
        continue;
      if (failed(ProgramEmitter(f, m).run()))
        return signalPassFailure();
      f.erase();
    }
  }
};

} // namespace
