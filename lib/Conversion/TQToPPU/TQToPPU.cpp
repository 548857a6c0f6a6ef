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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

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
/// error naming `op`. 2-D tensors split on [0, 1]; with `conv`, 4-D NHWC /
/// KRSC tensors split on [0, 3] with square tiles.
FailureOr<uint8_t> layoutFlags(TiledType t, Operation *op, int64_t V,
                               bool conv = false, bool perTile = false) {
  bool ok2D =
      t.getRank() == 2 && t.getSplitDims()[0] == 0 && t.getSplitDims()[1] == 1;
  bool ok4D = conv && t.getRank() == 4 && t.getSplitDims()[0] == 0 &&
              t.getSplitDims()[1] == 3;
  if (!t.hasStaticShape() || !(ok2D || ok4D))
    return op->emitOpError("tq-to-ppu supports static 2-D tensors split on "
                           "[0, 1] (and 4-D ones split on [0, 3] for "
                           "convolutions), got ")
           << t;
  // A run-time width (`?`) lives in a width register (see emitQuantize).
  if (t.getBitsKind() == BitsKind::per_tile && !perTile)
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

/// Where a width input is used: the layer (tq.matmul / tq.conv2d) reading
/// the first tensor quantized at that width, for reports per layer.
Location widthLocation(BlockArgument arg) {
  for (Operation *e : arg.getUsers())
    for (Operation *q : e->getUsers())
      if (auto quantize = dyn_cast<QuantizeOp>(q)) {
        for (Operation *layer : quantize->getUsers())
          if (isa<MatmulOp, Conv2DOp>(layer))
            return layer->getLoc();
        return quantize.getLoc();
      }
  return arg.getLoc();
}

/// Number of V x V blocks of a shape split on its first and last dims: the
/// host-memory tiles and unified-buffer slots it takes (a per-vector tile
/// slot holds a V x V block with a scale per row or column).
uint32_t blockCount(ArrayRef<int64_t> shape, int64_t V) {
  uint64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    n *= (d == 0 || d + 1 == shape.size()) ? (shape[d] + V - 1) / V : shape[d];
  return uint32_t(n);
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
  /// The `bits` field for a quantization into `t` with run-time width
  /// `bits` (if any): t's width, a constant, or the width register a width
  /// input was given.
  FailureOr<uint16_t> bitsField(TiledType t, Value bits, Operation *op);
  LogicalResult emitConstant(ConstantOp op);
  LogicalResult emitRequantize(RequantizeOp op);
  LogicalResult emitMatmul(MatmulOp op);
  LogicalResult emitConv(Conv2DOp op);
  LogicalResult checkPostprocess(PostprocessOp op);
  LogicalResult checkWeightUpdate(WeightUpdateOp op, Operation *producer);

  /// Where the accumulated tiles of a tq.matmul / tq.conv2d result go:
  /// POSTed into the unified buffer for each tq.postprocess user, STOREd to
  /// host memory when returned.
  struct Sinks {
    // base, flags, bits, layer scale (if any)
    SmallVector<std::tuple<uint32_t, uint8_t, uint16_t, std::optional<float>>>
        posts;
    bool stored = false;
    uint32_t storeBase = 0;
    // Weight updates W <- W - lr * this (in place in W's slots): base,
    // lr, pow2.
    SmallVector<std::tuple<uint32_t, float, bool>> updates;
  };
  FailureOr<Sinks> collectSinks(Operation *op, Value result, uint32_t tiles,
                                bool conv);
  void emitSinks(const Sinks &sinks, Location loc, uint32_t tile,
                 uint32_t accTile);

  func::FuncOp func;
  sim::MachineConfig m;
  int64_t V;
  OpBuilder *b = nullptr;
  Location loc = func.getLoc();
  /// Frees the unified-buffer slots of values whose last use is `op`.
  void release(Operation *op);
  /// Returns a range of slots to the free list.
  void freeRange(uint32_t start, uint32_t len);
  /// Whether `tiles` more unified-buffer slots fit.
  bool fits(uint32_t tiles) const;

  /// A quantized lhs too large for the unified buffer, streamed into its
  /// matmul one row panel at a time (tiling to the buffer's capacity):
  /// each of its tiles is still quantized exactly once.
  struct Streamed {
    uint32_t fmemBase;
    uint8_t flags;
    uint16_t bits;
  };
  llvm::DenseMap<Value, Streamed> streamed;

  llvm::DenseMap<Value, uint32_t> fmemBase, ubBase;
  /// Width inputs (tensor<i32> arguments) and their extracted values: the
  /// width register holding them.
  llvm::DenseMap<Value, uint16_t> widthReg;
  llvm::DenseMap<Value, uint32_t> ubSize;
  /// Free unified-buffer ranges (start -> length), reused first-fit: a
  /// tiled value's slots are released after its last use, so the buffer
  /// holds the live values only.
  std::map<uint32_t, uint32_t> ubFree;
  uint64_t nextFmem = 0, nextUb = 0, nextRow = 0;
};

LogicalResult ProgramEmitter::allocate(Value v, uint32_t tiles, bool ub,
                                       uint32_t &base, Operation *op) {
  if (ub) {
    for (auto it = ubFree.begin(); it != ubFree.end(); ++it) {
      if (it->second < tiles)
        continue;
      base = it->first;
      uint32_t rest = it->second - tiles;
      ubFree.erase(it);
      if (rest)
        ubFree[base + tiles] = rest;
      ubBase[v] = base;
      ubSize[v] = tiles;
      return success();
    }
  }
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
  if (ub)
    ubSize[v] = tiles;
  return success();
}

void ProgramEmitter::release(Operation *op) {
  for (Value v : op->getOperands()) {
    auto it = ubBase.find(v);
    if (it == ubBase.end() || !ubSize.count(v))
      continue;
    // Still needed by a later op in the block?
    bool live = llvm::any_of(v.getUsers(), [&](Operation *user) {
      return user != op && op->isBeforeInBlock(user);
    });
    if (live)
      continue;
    freeRange(it->second, ubSize[v]);
    ubSize.erase(v);
  }
}

void ProgramEmitter::freeRange(uint32_t start, uint32_t len) {
  // Insert and merge with neighbours.
  auto next = ubFree.lower_bound(start);
  if (next != ubFree.end() && start + len == next->first) {
    len += next->second;
    ubFree.erase(next);
  }
  auto prev = ubFree.lower_bound(start);
  if (prev != ubFree.begin()) {
    --prev;
    if (prev->first + prev->second == start) {
      prev->second += len;
      return;
    }
  }
  ubFree[start] = len;
}

bool ProgramEmitter::fits(uint32_t tiles) const {
  for (const auto &[start, len] : ubFree)
    if (len >= tiles)
      return true;
  uint64_t capacity = m.ubTiles ? m.ubTiles : uint64_t(1) << 24;
  return nextUb + tiles <= capacity;
}

FailureOr<uint16_t> ProgramEmitter::bitsField(TiledType t, Value bits,
                                              Operation *op) {
  if (!bits)
    return uint16_t(t.getBits());
  IntegerAttr c;
  if (matchPattern(bits, m_Constant(&c)) && c.getType().isInteger(32)) {
    if (c.getInt() < 2 || c.getInt() > 16)
      return op->emitOpError("bit width ") << c.getInt() << " not in [2, 16]";
    return uint16_t(c.getInt());
  }
  auto reg = widthReg.find(bits);
  if (reg == widthReg.end())
    return op->emitOpError("tq-to-ppu takes a run-time width from a kernel "
                           "argument (tensor<i32>, a width input) or a "
                           "constant; per-tile widths are not supported");
  return uint16_t(sim::kBitsRegister | reg->second);
}

LogicalResult ProgramEmitter::emitQuantize(QuantizeOp op) {
  if (op.getScales() || op.getRounding() != RoundingMode::nearest_even)
    return op.emitOpError("tq-to-ppu needs computed scales and nearest-even "
                          "rounding");
  FailureOr<uint16_t> bits =
      bitsField(op.getResult().getType(), op.getBits(), op);
  if (failed(bits))
    return failure();
  auto src = fmemBase.find(op.getInput());
  if (src == fmemBase.end())
    return op.emitOpError("tq-to-ppu quantizes host tensors (function "
                          "arguments) only");
  TiledType t = op.getResult().getType();
  FailureOr<uint8_t> flags = layoutFlags(t, op, V, /*conv=*/true);
  if (failed(flags))
    return failure();
  uint32_t tiles = blockCount(t.getShape(), V);
  // Too large, and the non-transposed lhs of its only user, a matmul:
  // quantize it there, one row panel at a time.
  auto mm = op.getResult().hasOneUse()
                ? dyn_cast<MatmulOp>(*op.getResult().getUsers().begin())
                : MatmulOp();
  if (!fits(tiles) && t.getRank() == 2 && mm && mm.getLhs() == op.getResult() &&
      mm.getRhs() != op.getResult() && !mm.getTransposeA()) {
    streamed[op.getResult()] = {src->second, *flags, *bits};
    return success();
  }
  uint32_t base;
  if (failed(allocate(op.getResult(), tiles, /*ub=*/true, base, op)))
    return failure();
  for (uint32_t k = 0; k < tiles; ++k)
    ppu::QuantOp::create(*b, op.getLoc(), base + k, src->second + k, *bits,
                         *flags & sim::kPow2, *flags & sim::kRowVectors,
                         *flags & sim::kColVectors);
  return success();
}

LogicalResult ProgramEmitter::emitConstant(ConstantOp op) {
  TiledType t = op.getResult().getType();
  FailureOr<uint8_t> flags =
      layoutFlags(t, op, V, /*conv=*/true, /*perTile=*/true);
  if (failed(flags))
    return failure();
  uint8_t vectors = *flags & (sim::kRowVectors | sim::kColVectors);
  std::optional<DenseIntElementsAttr> tileBits = op.getTileBits();
  if (vectors && tileBits)
    return op.emitOpError("tq-to-ppu places per-vector constants at one "
                          "width (a slot has one), not a width per vector");
  uint32_t tiles = blockCount(t.getShape(), V);
  uint32_t base;
  if (failed(allocate(op.getResult(), tiles, /*ub=*/true, base, op)))
    return failure();
  // Constants are loaded before the program starts: their slots are never
  // released for reuse.
  ubSize.erase(op.getResult());
  std::vector<int64_t> values = getConstantValues(op);
  SmallVector<float> scales(op.getScales().getValues<float>());
  SmallVector<int64_t> widths;
  if (tileBits)
    for (const APInt &v : tileBits->getValues<APInt>())
      widths.push_back(v.getSExtValue());
  ArrayRef<int64_t> shape = t.getShape(), tile = t.getTileShape();
  int64_t rank = shape.size(), d0 = t.getSplitDims()[0],
          d1 = t.getSplitDims()[1];
  // The V x V blocks (a slot each) and the tiles (a scale each): the same
  // grid for V x V tiles, V vectors per block for 1 x V or V x 1.
  SmallVector<int64_t> blocks(shape), grid = t.getGridShape();
  blocks[d0] = llvm::divideCeil(shape[d0], V);
  blocks[d1] = llvm::divideCeil(shape[d1], V);
  auto linear = [&](ArrayRef<int64_t> index, ArrayRef<int64_t> dims) {
    int64_t l = 0;
    for (int64_t d = 0; d < rank; ++d)
      l = l * dims[d] + index[d];
    return l;
  };
  SmallVector<int64_t> idx(rank), at(rank);
  // Element (r, c) of the current block, in `at`; false in its padding.
  auto locate = [&](int64_t r, int64_t c) {
    at = idx;
    at[d0] = idx[d0] * V + r;
    at[d1] = idx[d1] * V + c;
    return at[d0] < shape[d0] && at[d1] < shape[d1];
  };
  // The scale of the tile holding element `at`.
  auto scaleAt = [&]() {
    SmallVector<int64_t> g(at);
    g[d0] /= tile[0];
    g[d1] /= tile[1];
    return scales[linear(g, grid)];
  };
  for (uint32_t k = 0; k < tiles; ++k) {
    // The block coordinates of slot k (row-major), then its V x V values.
    for (int64_t d = rank - 1, rest = k; d >= 0; --d) {
      idx[d] = rest % blocks[d];
      rest /= blocks[d];
    }
    SmallVector<int32_t> block(V * V, 0);
    for (int64_t r = 0; r < V; ++r)
      for (int64_t c = 0; c < V; ++c)
        if (locate(r, c)) // else zero padding of an edge tile
          block[r * V + c] = int32_t(values[linear(at, shape)]);
    int64_t bits = widths.empty() ? t.getBits() : widths[k];
    if (!vectors) {
      ppu::ConstOp::create(*b, op.getLoc(), base + k, bits,
                           b->getF32FloatAttr(scales[k]), /*rows=*/false,
                           /*cols=*/false, DenseFPElementsAttr(), block);
      continue;
    }
    // A step per row (1 x V) or column (V x 1); 0 for a padding vector.
    SmallVector<float> steps(V, 0.0f);
    bool rows = vectors == sim::kRowVectors;
    for (int64_t v = 0; v < V; ++v)
      if (rows ? locate(v, 0) : locate(0, v))
        steps[v] = scaleAt();
    auto stepsAttr = DenseFPElementsAttr::get(
        RankedTensorType::get({V}, b->getF32Type()), ArrayRef<float>(steps));
    ppu::ConstOp::create(*b, op.getLoc(), base + k, bits, FloatAttr(), rows,
                         !rows, stepsAttr, block);
  }
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
  FloatAttr scale;
  if ((op.getLayerScale() &&
       !matchPattern(op.getLayerScale(), m_Constant(&scale))) ||
      op.getComputeLayerScale() || op.getBits() ||
      op.getRounding() != RoundingMode::nearest_even)
    return op.emitOpError("tq-to-ppu supports post-processing with a "
                          "constant layer scale (not a computed one), a "
                          "fixed width and nearest-even rounding");
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
    FailureOr<uint8_t> flags = layoutFlags(t, op, V, /*conv=*/false,
                                           /*perTile=*/true);
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
    grid[i] = gridOf(t.getShape(), V);
    if (i == 0 && streamed.count(operands[i]))
      continue; // quantized below, a row panel at a time
    auto it = ubBase.find(operands[i]);
    if (it == ubBase.end())
      return op.emitOpError("operand #") << i
                                         << " is not in the unified "
                                            "buffer";
    base[i] = it->second;
  }
  auto result = cast<RankedTensorType>(op.getResult().getType());
  if (result.getRank() != 2)
    return op.emitOpError("tq-to-ppu supports 2-D products");
  Grid out = gridOf(result.getShape(), V);
  uint32_t kTiles = transposed[0] ? grid[0].rows : grid[0].cols;
  FailureOr<Sinks> sinks =
      collectSinks(op, op.getResult(), out.size(), /*conv=*/false);
  if (failed(sinks))
    return failure();
  bool bf16 = op.getScaleProduct() == ScaleProduct::bf16;
  auto panel = streamed.find(operands[0]);
  bool streaming = panel != streamed.end();
  if (streaming) {
    // One row of lhs tiles at a time.
    if (!fits(kTiles))
      return op.emitOpError("the lhs row panel (")
             << kTiles << " tiles) does not fit the unified buffer "
             << "(option ub)";
    if (failed(allocate(op.getLhs(), kTiles, /*ub=*/true, base[0], op)))
      return failure();
  }
  for (uint32_t i = 0; i < out.rows; ++i) {
    if (streaming)
      for (uint32_t t = 0; t < kTiles; ++t) {
        const Streamed &p = panel->second;
        ppu::QuantOp::create(*b, op.getLoc(), base[0] + t,
                             p.fmemBase + i * grid[0].cols + t, p.bits,
                             p.flags & sim::kPow2, p.flags & sim::kRowVectors,
                             p.flags & sim::kColVectors);
      }
    for (uint32_t j = 0; j < out.cols; ++j) {
      for (uint32_t t = 0; t < kTiles; ++t) {
        uint32_t aSlot = streaming       ? t
                         : transposed[0] ? t * grid[0].cols + i
                                         : i * grid[0].cols + t;
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
      emitSinks(*sinks, op.getLoc(), i * out.cols + j, 0);
    }
  }
  return success();
}

FailureOr<ProgramEmitter::Sinks> ProgramEmitter::collectSinks(Operation *op,
                                                              Value result,
                                                              uint32_t tiles,
                                                              bool conv) {
  Sinks sinks;
  for (Operation *user : result.getUsers()) {
    if (auto post = dyn_cast<PostprocessOp>(user)) {
      if (failed(checkPostprocess(post)))
        return failure();
      TiledType t = post.getResult().getType();
      FailureOr<uint8_t> flags = layoutFlags(t, post, V, conv);
      if (failed(flags))
        return failure();
      if (*flags & (sim::kRowVectors | sim::kColVectors))
        return post.emitOpError("tq-to-ppu post-processes into VxV tiles");
      uint32_t base;
      if (failed(allocate(post.getResult(), tiles, true, base, post)))
        return failure();
      uint8_t relu = post.getActivation() == Activation::relu ? sim::kRelu : 0;
      std::optional<float> scale;
      FloatAttr attr;
      if (post.getLayerScale() &&
          matchPattern(post.getLayerScale(), m_Constant(&attr)))
        scale = float(attr.getValueAsDouble());
      sinks.posts.push_back(
          {base, uint8_t(*flags | relu), uint16_t(t.getBits()), scale});
    } else if (isa<func::ReturnOp>(user)) {
      sinks.stored = true;
      sinks.storeBase = fmemBase.lookup(result);
    } else if (auto upd = dyn_cast<WeightUpdateOp>(user)) {
      if (failed(checkWeightUpdate(upd, op)))
        return failure();
      Value w = upd.getWeight();
      TiledType wt = upd.getWeight().getType();
      FloatAttr lr;
      matchPattern(upd.getLr(), m_Constant(&lr));
      sinks.updates.push_back({ubBase.lookup(w), float(lr.getValueAsDouble()),
                               wt.getScaleKind() == ScaleKind::pow2});
      // The update happens in place: the result owns W's slots.
      ubBase[upd.getResult()] = ubBase.lookup(w);
      ubSize[upd.getResult()] = ubSize.lookup(w);
      ubSize.erase(w);
    } else {
      return user->emitOpError("tq-to-ppu cannot consume a ")
             << op->getName() << " result here (only tq.postprocess, "
             << "tq.weight_update and return)";
    }
  }
  return sinks;
}

void ProgramEmitter::emitSinks(const Sinks &sinks, Location loc, uint32_t tile,
                               uint32_t accTile) {
  for (auto [base, flags, bits, scale] : sinks.posts)
    ppu::PostOp::create(*b, loc, base + tile, accTile, bits, flags & sim::kRelu,
                        flags & sim::kPow2,
                        scale ? b->getF32FloatAttr(*scale) : FloatAttr());
  if (sinks.stored)
    ppu::StoreOp::create(*b, loc, sinks.storeBase + tile, accTile);
  for (auto [base, lr, pow2] : sinks.updates)
    ppu::WUpdOp::create(*b, loc, base + tile, accTile, llvm::APFloat(lr), pow2);
}

LogicalResult ProgramEmitter::checkWeightUpdate(WeightUpdateOp upd,
                                                Operation *producer) {
  FloatAttr lr;
  if (!matchPattern(upd.getLr(), m_Constant(&lr)))
    return upd.emitOpError("tq-to-ppu needs a constant learning rate");
  if (upd.getGrad().getDefiningOp() != producer || upd.getSeed() ||
      upd.getRounding() != RoundingMode::nearest_even)
    return upd.emitOpError("tq-to-ppu updates weights from a tq.matmul "
                           "gradient with nearest-even rounding");
  TiledType wt = upd.getWeight().getType();
  FailureOr<uint8_t> flags = layoutFlags(wt, upd, V);
  if (failed(flags))
    return failure();
  if (*flags & (sim::kRowVectors | sim::kColVectors))
    return upd.emitOpError("tq-to-ppu updates VxV-tiled weights");
  if (!ubSize.count(upd.getWeight()))
    return upd.emitOpError("the weight is not in the unified buffer");
  // In place: no other use of W may come after the gradient is computed.
  for (Operation *user : upd.getWeight().getUsers())
    if (user != upd.getOperation() && producer->isBeforeInBlock(user))
      return upd.emitOpError("the weight is used after its gradient is "
                             "computed; the PPU updates it in place");
  return success();
}

LogicalResult ProgramEmitter::emitConv(Conv2DOp op) {
  TiledType x = op.getInput().getType(), w = op.getFilter().getType();
  for (auto [i, t, v] :
       {std::tuple<unsigned, TiledType, Value>{0, x, op.getInput()},
        {1, w, op.getFilter()}}) {
    FailureOr<uint8_t> flags =
        layoutFlags(t, op, V, /*conv=*/true, /*perTile=*/true);
    if (failed(flags))
      return failure();
    // Both reduce over C, their last dim: per-vector scales must run along
    // it (the filter tile is read transposed, its rows becoming columns).
    if (*flags & sim::kColVectors)
      return op.emitOpError("operand #")
             << i << " has per-vector scales along the reduction; "
             << "requantize it (tq.requantize) first";
    if (!ubBase.count(v))
      return op.emitOpError("operand is not in the unified buffer");
  }
  if (m.accTiles < 2)
    return op.emitOpError("tq-to-ppu needs 2 accumulator tiles for "
                          "convolutions (option acc)");
  uint32_t xb = ubBase.lookup(op.getInput()),
           wb = ubBase.lookup(op.getFilter());
  ArrayRef<int64_t> xs = x.getShape(), ws = w.getShape();
  auto res = cast<RankedTensorType>(op.getResult().getType());
  ArrayRef<int64_t> ys = res.getShape();
  // Slots hold V x V blocks (of one tile, or of V vectors; blockCount).
  auto blocks = [&](int64_t n) { return (n + V - 1) / V; };
  int64_t gN = blocks(xs[0]), gK = blocks(ws[0]), gC = blocks(xs[3]), H = xs[1],
          W = xs[2];
  int64_t R = ws[1], S = ws[2], P = ys[1], Q = ys[2];
  ArrayRef<int64_t> stride = op.getStrides(), dil = op.getDilations(),
                    pad = op.getPadding();
  uint32_t outTiles = uint32_t(gN * P * Q * gK);
  FailureOr<Sinks> sinks =
      collectSinks(op, op.getResult(), outTiles, /*conv=*/true);
  if (failed(sinks))
    return failure();
  bool bf16 = op.getScaleProduct() == ScaleProduct::bf16;
  // An output whose window lies in the padding reads a never-written
  // (zero) accumulator tile.
  uint32_t zeroAcc = m.accTiles - 1;
  for (int64_t n = 0; n < gN; ++n)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q)
        for (int64_t k = 0; k < gK; ++k) {
          bool first = true;
          // The reference's order: r, then s, then C-tiles.
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              int64_t h = p * stride[0] - pad[0] + r * dil[0];
              int64_t ww = q * stride[1] - pad[1] + s * dil[1];
              if (h < 0 || h >= H || ww < 0 || ww >= W)
                continue;
              for (int64_t t = 0; t < gC; ++t) {
                uint32_t row = nextRow++ % m.dataRows;
                ppu::LoadOp::create(*b, op.getLoc(), ppu::Buffer::a, row,
                                    xb + ((n * H + h) * W + ww) * gC + t,
                                    false);
                // KRSC filter tile (k, c), transposed to (c, k).
                ppu::LoadOp::create(*b, op.getLoc(), ppu::Buffer::b, row,
                                    wb + ((k * R + r) * S + s) * gC + t, true);
                ppu::MacOp::create(*b, op.getLoc(), 0, row, row, !first, bf16);
                first = false;
              }
            }
          emitSinks(*sinks, op.getLoc(),
                    uint32_t(((n * P + p) * Q + q) * gK + k),
                    first ? zeroAcc : 0);
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
    if (isa<TiledType>(type))
      return success(); // checked with its layout below
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || (t.getRank() != 2 && t.getRank() != 4) || !t.hasStaticShape() ||
        !t.getElementType().isF32())
      return op->emitOpError("tq-to-ppu needs static 2-D or 4-D f32 ")
             << what << " (or tensor<i32> run-time widths), got " << type;
    return success();
  };
  for (BlockArgument arg : func.getArguments()) {
    // A run-time width: a width input in the next width register.
    auto scalar = dyn_cast<RankedTensorType>(arg.getType());
    if (scalar && scalar.getRank() == 0 &&
        scalar.getElementType().isInteger(32)) {
      if (widthReg.size() >= sim::kWidthRegisters)
        return func.emitOpError("needs more than ")
               << sim::kWidthRegisters << " run-time widths (width registers)";
      uint16_t reg = widthReg.size();
      widthReg[arg] = reg;
      ppu::WidthInputOp::create(builder, widthLocation(arg),
                                "arg" + std::to_string(arg.getArgNumber()),
                                reg);
      continue;
    }
    if (failed(check2D(arg.getType(), func, "arguments")))
      return failure();
    auto t = cast<RankedTensorType>(arg.getType());
    uint32_t base;
    if (failed(allocate(arg, blockCount(t.getShape(), V), false, base, func)))
      return failure();
    ppu::BindingOp::create(builder, loc,
                           "arg" + std::to_string(arg.getArgNumber()), false,
                           t.getShape(), base);
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (failed(check2D(v.getType(), ret, "results")))
      return failure();
    if (auto tiled = dyn_cast<TiledType>(v.getType())) {
      // A tiled result goes back to the host dequantized (DEQ).
      FailureOr<uint8_t> flags = layoutFlags(tiled, ret, V);
      if (failed(flags))
        return failure();
      uint32_t base;
      if (failed(
              allocate(v, blockCount(tiled.getShape(), V), false, base, ret)))
        return failure();
      ppu::BindingOp::create(builder, loc, "result" + std::to_string(i), true,
                             tiled.getShape(), base);
      continue;
    }
    if (!v.getDefiningOp<MatmulOp>() && !v.getDefiningOp<Conv2DOp>())
      return ret.emitOpError("tq-to-ppu returns tq.matmul and tq.conv2d "
                             "results only");
    if (fmemBase.count(v))
      return ret.emitOpError("a result is returned twice");
    auto t = cast<RankedTensorType>(v.getType());
    uint32_t base;
    if (failed(allocate(v, blockCount(t.getShape(), V), false, base, ret)))
      return failure();
    ppu::BindingOp::create(builder, loc, "result" + std::to_string(i), true,
                           t.getShape(), base);
  }
  // Constant tiles first, in slots nothing else uses.
  for (ConstantOp c : func.getBody().front().getOps<ConstantOp>())
    if (failed(emitConstant(c))) {
      program.erase();
      return failure();
    }
  for (Operation &op : func.getBody().front()) {
    LogicalResult r =
        TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](QuantizeOp q) { return emitQuantize(q); })
            // Placed before the program runs (see below).
            .Case([&](ConstantOp) { return success(); })
            .Case([&](RequantizeOp q) { return emitRequantize(q); })
            .Case([&](MatmulOp mm) { return emitMatmul(mm); })
            .Case([&](Conv2DOp c) { return emitConv(c); })
            .Case([&](PostprocessOp p) -> LogicalResult {
              // Emitted with its producer.
              if (!ubBase.count(p.getResult()))
                return p.emitOpError("tq-to-ppu post-processes tq.matmul "
                                     "results only");
              return success();
            })
            // Scalar constants become instruction immediates (the
            // learning rate of WUPD).
            .Case([&](arith::ConstantOp) { return success(); })
            // Reading a width input: its register.
            .Case([&](tensor::ExtractOp e) -> LogicalResult {
              auto reg = widthReg.find(e.getTensor());
              if (reg == widthReg.end())
                return e.emitOpError("tq-to-ppu reads run-time widths "
                                     "(tensor<i32> arguments) only");
              widthReg[e.getResult()] = reg->second;
              return success();
            })
            .Case([&](WeightUpdateOp u) -> LogicalResult {
              // Emitted with the gradient's producer.
              if (!ubBase.count(u.getResult()))
                return u.emitOpError("tq-to-ppu updates weights from a "
                                     "tq.matmul gradient only");
              return success();
            })
            .Case([&](func::ReturnOp r) -> LogicalResult {
              for (Value v : r.getOperands())
                if (isa<TiledType>(v.getType())) {
                  auto src = ubBase.find(v);
                  if (src == ubBase.end())
                    return r.emitOpError("a returned tiled value is not in "
                                         "the unified buffer");
                  uint32_t tiles =
                      blockCount(cast<TiledType>(v.getType()).getShape(), V);
                  for (uint32_t k = 0; k < tiles; ++k)
                    ppu::DeqOp::create(*b, r.getLoc(), fmemBase.lookup(v) + k,
                                       src->second + k);
                }
              return success();
            })
            .Case([&](AdaptiveBitWidthOp a) -> LogicalResult {
              return a.emitOpError(
                  "is a bit-width search, which runs on the host: partition "
                  "the module first (tq-partition-ppu, as tq-run "
                  "--target=ppu does) to pass its result to the kernel as a "
                  "width input");
            })
            .Default([&](Operation *other) -> LogicalResult {
              if (isOpTriviallyDead(other))
                return success();
              return other->emitOpError("is not supported by tq-to-ppu");
            });
    if (failed(r)) {
      program.erase();
      return failure();
    }
    release(&op);
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
      if (f.isExternal() || f->hasAttr("tq.schedule"))
        continue;
      if (auto device = f->getAttrOfType<StringAttr>("tq.device");
          device && device.getValue() != "ppu")
        continue;
      if (failed(ProgramEmitter(f, m).run()))
        return signalPassFailure();
      // Host code calling the kernel launches its program instead.
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(f, getOperation())) {
        for (SymbolTable::SymbolUse use : *uses) {
          auto call = dyn_cast<func::CallOp>(use.getUser());
          if (!call) {
            use.getUser()->emitOpError("refers to PPU kernel ")
                << f.getName() << ", which only func.call can launch";
            return signalPassFailure();
          }
          OpBuilder b(call);
          auto launch =
              ppu::LaunchOp::create(b, call.getLoc(), call.getResultTypes(),
                                    call.getCalleeAttr(), call.getOperands());
          call.replaceAllUsesWith(launch.getResults());
          call.erase();
        }
      }
      f.erase();
    }
  }
};

} // namespace
