//===- InsertQuantization.cpp - float compute ops to tq ops ---------------===//
#include "tq/Dialect/TQ/Transforms/Calibration.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQINSERTQUANTIZATION
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

/// The narrowest storage container for `bits`.
static int64_t containerWidth(int64_t bits) {
  return bits <= 4 ? 4 : bits <= 8 ? 8 : 16;
}

int64_t QuantizationOptions::bitsFor(Role role) const {
  switch (role) {
  case Role::weight:
    return weightBits;
  case Role::output_grad:
  case Role::activation_grad:
  case Role::weight_grad:
    return gradBits;
  case Role::activation:
  case Role::bias:
    return actBits;
  }
  llvm_unreachable("unknown role");
}

FailureOr<TiledType>
QuantizationOptions::typeFor(MLIRContext *ctx, ArrayRef<int64_t> shape,
                             Role role, ArrayRef<int64_t> dims,
                             unsigned contracted, int64_t tile) const {
  int64_t bits = bitsFor(role);
  unsigned width = containerWidth(bits);
  int64_t sizes[2] = {shape[dims[0]], shape[dims[1]]};
  SmallVector<int64_t, 2> tileShape;
  switch (granularity) {
  case Granularity::tile:
    tileShape = {tile, tile};
    break;
  case Granularity::vector:
    tileShape = {1, 1};
    tileShape[contracted] = tile;
    break;
  case Granularity::channel:
    if (ShapedType::isDynamic(sizes[contracted]))
      return failure();
    tileShape = {1, 1};
    tileShape[contracted] = std::max<int64_t>(sizes[contracted], 1);
    break;
  case Granularity::tensor:
    if (ShapedType::isDynamic(sizes[0]) || ShapedType::isDynamic(sizes[1]))
      return failure();
    int64_t v = std::max<int64_t>({sizes[0], sizes[1], 1});
    tileShape = {v, v};
    break;
  }
  return TiledType::get(ctx, shape, IntegerType::get(ctx, width),
                        BitsKind::fixed, bits, Float32Type::get(ctx), tileShape,
                        dims, scaleKind, /*hasOffset=*/false);
}

/// Which of operand `i`'s split dims (0 or 1) the product contracts.
static unsigned contractedSplitDim(const ComputeOp &c, unsigned i) {
  if (c.isConv())
    return 1; // C, for both input and filter
  if (i == 0)
    return c.transposeA ? 0 : 1;
  return c.transposeB ? 1 : 0;
}

int64_t QuantizationOptions::tileFor(Operation *op) const {
  if (layerTiles)
    if (auto it = layerTiles->find(op); it != layerTiles->end())
      return it->second;
  return tile;
}

bool QuantizationOptions::quantizes(Role role) const {
  switch (operands) {
  case QuantizeOperands::all:
    return true;
  case QuantizeOperands::weights:
    return role == Role::weight;
  case QuantizeOperands::activations:
    return role != Role::weight;
  }
  llvm_unreachable("unknown operand selection");
}

FailureOr<SmallVector<ScheduleEntry>>
mlir::tq::parseSchedule(StringRef text, std::string &error) {
  SmallVector<ScheduleEntry> entries;
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    auto [range, bitsText] = part.trim().split(':');
    auto [firstText, lastText] = range.split('-');
    ScheduleEntry e;
    if (firstText.trim().getAsInteger(10, e.first) ||
        lastText.trim().getAsInteger(10, e.last) ||
        bitsText.trim().getAsInteger(10, e.bits)) {
      error = "expected FIRST-LAST:BITS, got '" + part.str() + "'";
      return failure();
    }
    if (e.first < 0 || e.last < e.first ||
        (!entries.empty() && e.first <= entries.back().last)) {
      error = "epoch ranges must be increasing and not overlap, got '" +
              part.str() + "'";
      return failure();
    }
    if (e.bits < 2 || e.bits > 16) {
      error = "bit widths must be in [2, 16], got '" + part.str() + "'";
      return failure();
    }
    entries.push_back(e);
  }
  return entries;
}

int64_t QuantizationOptions::maxBitsFor(Role role, bool isConstant) const {
  switch (policy) {
  case BitWidthPolicy::fixed:
    return bitsFor(role);
  case BitWidthPolicy::adaptive:
    // Constants get a fixed width (and tq-adaptive-bit-width keeps it safe
    // for their consumers), and so does every tensor without
    // run-time-search; a run-time width goes up to max-bits, which its type
    // records (`?(M)`).
    return isConstant || !runTimeSearch ? bitsFor(role) : maxBits;
  case BitWidthPolicy::schedule: {
    int64_t m = 2;
    for (const ScheduleEntry &e : scheduleEntries)
      m = std::max(m, e.bits);
    return m;
  }
  }
  llvm_unreachable("unknown policy");
}

/// The function argument holding the epoch, or null.
static Value findMarkedArgument(Operation *op, StringRef marker,
                                Type type = Type()) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func || func.isExternal())
    return {};
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), marker) &&
        (type ? arg.getType() == type : arg.getType().isIntOrIndex()))
      return arg;
  return {};
}
static Value findEpoch(Operation *op) {
  return findMarkedArgument(op, kEpochArgAttr);
}

/// Whether `v` is a constant, possibly seen through transposes, reshapes
/// and casts (which later passes fold into the quantization).
static bool isConstant(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (matchPattern(v, m_Constant()))
      return true;
    if (!isa<linalg::TransposeOp, tensor::CastOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// The number of elements a compute op contracts per output element and
/// kernel tap: the input channels of a convolution, K of a matmul.
static int64_t contractedChannels(const ComputeOp &c) {
  ArrayRef<int64_t> shape = cast<ShapedType>(c.lhs.getType()).getShape();
  switch (c.kind) {
  case ComputeOp::Kind::Conv2DNhwcFhwc:
    return shape[3];
  case ComputeOp::Kind::Conv2DNchwFchw:
    return shape[1];
  case ComputeOp::Kind::Matmul:
  case ComputeOp::Kind::BatchMatmul:
    return c.transposeA ? shape[shape.size() - 2] : shape.back();
  }
  return 0;
}

static bool keptInFloat(Operation *op, const QuantizationOptions &options) {
  // A gradient GEMM of a layer left in float.
  if (auto layer = op->getAttrOfType<IntegerAttr>(kGradientOfAttr);
      layer && options.floatLayers &&
      options.floatLayers->contains(
          {op->getParentOfType<FunctionOpInterface>(), layer.getInt()}))
    return true;
  if (op->hasAttr(kKeepFloatAttr) ||
      llvm::is_contained(options.keepFloat, op->getName().getStringRef().str()))
    return true;
  // A grouped convolution left whole by tq-split-grouped-convs: groups
  // narrower than min-channels (depthwise layers) run in float.
  if (auto grouped = dyn_cast<linalg::Conv2DNgchwGfchwOp>(op))
    if (auto t = dyn_cast<ShapedType>(grouped.getInputs()[0].getType());
        t && t.hasRank() && !t.isDynamicDim(2) &&
        t.getDimSize(2) < options.minChannels)
      return true;
  if (options.minChannels > 0)
    if (FailureOr<ComputeOp> c = matchComputeOp(op); succeeded(c)) {
      int64_t k = contractedChannels(*c);
      if (!ShapedType::isDynamic(k) && k < options.minChannels)
        return true;
    }
  if (!options.layerNames)
    return false;
  auto it = options.layerNames->find(op);
  return it != options.layerNames->end() &&
         llvm::is_contained(options.keepFloat, it->second);
}

/// The roles and split dims annotated on a compute op.
static void readAnnotations(const ComputeOp &c, Role (&roles)[2],
                            SmallVector<int64_t, 2> (&dims)[2]) {
  auto r = cast<ArrayAttr>(c.op->getAttr(kRolesAttr));
  auto d = cast<ArrayAttr>(c.op->getAttr(kSplitDimsAttr));
  for (unsigned i = 0; i < 2; ++i) {
    roles[i] = cast<RoleAttr>(r[i]).getValue();
    ArrayRef<int64_t> v = cast<DenseI64ArrayAttr>(d[i]).asArrayRef();
    dims[i].assign(v.begin(), v.end());
  }
}

/// Checks that a calibrated layer's records fit the op they will quantize.
static LogicalResult verifyCalibratedLayer(const ComputeOp &c,
                                           const CalibratedLayer &layer) {
  Operation *op = c.op;
  MLIRContext *ctx = op->getContext();
  Value operands[2] = {c.lhs, c.rhs};
  for (unsigned i = 0; i < 2; ++i) {
    const CalibratedOperand &rec = layer.operands[i];
    auto fail = [&]() {
      return op->emitOpError("calibration layer '")
             << layer.name << "' operand #" << i << ": ";
    };
    if (rec.isFloat) {
      if (c.isConv())
        return fail() << "tq.conv2d cannot take a float operand";
      continue;
    }
    Type parsed =
        parseType(rec.type, ctx, nullptr, /*isKnownNullTerminated=*/false);
    auto type = dyn_cast_or_null<TiledType>(parsed);
    if (!type)
      return fail() << "'" << rec.type << "' is not a !tq.tiled type";
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(operands[i].getType()).getShape();
    if (type.getShape() != shape) {
      auto t = operands[i].getDefiningOp<linalg::TransposeOp>();
      SmallVector<int64_t> swapped(shape);
      if (swapped.size() >= 2)
        std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
      bool swapsInnermost = t && t.getPermutation().size() >= 2 &&
                            type.getShape() == ArrayRef<int64_t>(swapped);
      if (!swapsInnermost || c.isConv())
        return fail() << "type " << type
                      << " does not fit the operand of shape "
                      << formatDims(shape, "x");
    }
    bool dynamic = type.getBitsKind() == BitsKind::dynamic;
    bool perTile = type.getBitsKind() == BitsKind::per_tile;
    if (dynamic && !rec.adaptive)
      return fail() << "a run-time width needs an \"adaptive\" record";
    if (perTile && rec.tileBits.empty() && !rec.adaptive)
      return fail() << "a per-tile width needs \"tile_bits\" or an "
                       "\"adaptive\" record";
    if (!rec.tileBits.empty()) {
      int64_t tiles = 1;
      for (int64_t g : type.getGridShape())
        tiles *= g;
      if (!perTile || static_cast<int64_t>(rec.tileBits.size()) != tiles)
        return fail() << "expected " << tiles
                      << " tile_bits for a per-tile type, got "
                      << rec.tileBits.size();
    }
    if (!rec.record.empty() && !parseAttribute(rec.record, ctx))
      return fail() << "malformed record '" << rec.record << "'";
  }
  return success();
}

LogicalResult mlir::tq::verifyQuantization(Operation *root,
                                           const QuantizationOptions &o) {
  if (o.tile <= 0)
    return mlir::emitError(root->getLoc(), "tile must be positive, got ")
           << o.tile;
  if (o.minChannels < 0)
    return mlir::emitError(root->getLoc(),
                           "min-channels must be 0 or more, got ")
           << o.minChannels;
  for (auto [name, bits] :
       {std::pair<const char *, int64_t>{"act-bits", o.actBits},
        {"weight-bits", o.weightBits},
        {"grad-bits", o.gradBits}})
    if (bits < 2 || bits > 16)
      return mlir::emitError(root->getLoc())
             << name << " must be in [2, 16], got " << bits;
  if (o.policy == BitWidthPolicy::adaptive &&
      (!(o.low >= 0 && o.low < o.high) ||
       !(2 <= o.minBits && o.minBits <= o.maxBits && o.maxBits <= 16)))
    return mlir::emitError(root->getLoc(),
                           "policy=adaptive needs 0 <= low < high and 2 <= "
                           "min-bits <= max-bits <= 16");
  if (o.policy == BitWidthPolicy::schedule && o.scheduleEntries.empty())
    return mlir::emitError(root->getLoc(),
                           "policy=schedule needs a 'schedule' such as "
                           "0-75:4,76-86:8");
  WalkResult result = root->walk([&](Operation *op) {
    if (keptInFloat(op, o))
      return WalkResult::advance();
    std::string why;
    FailureOr<ComputeOp> c = matchComputeOp(op, &why);
    if (failed(c)) {
      // A contraction or convolution that tq cannot quantize is an error,
      // not a silent float fallback. Pooling (max or sum over a window)
      // has no weights to quantize: it stays in float.
      bool pooling =
          op->getName().getStringRef().starts_with("linalg.pooling_");
      if (!pooling &&
          isa<linalg::ContractionOpInterface, linalg::ConvolutionOpInterface>(
              op)) {
        op->emitOpError("cannot be quantized: ")
            << why << "; list it in keep-float or mark it tq.keep_float";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (o.policy == BitWidthPolicy::schedule && !findEpoch(op)) {
      auto func = op->getParentOfType<FunctionOpInterface>();
      op->emitOpError("policy=schedule needs an integer argument marked "
                      "{tq.epoch} in function @")
          << (func ? func.getName() : StringRef("?"));
      return WalkResult::interrupt();
    }
    Role roles[2];
    SmallVector<int64_t, 2> dims[2];
    readAnnotations(*c, roles, dims);
    for (unsigned i = 0; i < 2; ++i) {
      SmallVector<int64_t, 2> expected = getDefaultSplitDims(*c, i);
      if (dims[i] != expected) {
        op->emitOpError("split dims [")
            << dims[i][0] << ", " << dims[i][1] << "] of operand #" << i
            << " are not supported by "
            << (c->isConv() ? "tq.conv2d" : "tq.matmul") << ", which needs ["
            << expected[0] << ", " << expected[1] << "]";
        return WalkResult::interrupt();
      }
    }
    Value operands[2] = {c->lhs, c->rhs};
    int64_t kTile[2];
    for (unsigned i = 0; i < 2; ++i) {
      auto shape = cast<RankedTensorType>(operands[i].getType()).getShape();
      unsigned k = contractedSplitDim(*c, i);
      FailureOr<TiledType> type = o.typeFor(op->getContext(), shape, roles[i],
                                            dims[i], k, o.tileFor(op));
      if (failed(type)) {
        op->emitOpError("operand #")
            << i << " needs static split dims for this granularity";
        return WalkResult::interrupt();
      }
      int64_t size = shape[dims[i][k]];
      kTile[i] = type->getTileShape()[k];
      if (!ShapedType::isDynamic(size))
        kTile[i] = std::min(kTile[i], size);
    }
    if (o.calibrated)
      if (const CalibratedLayer *layer = o.calibrated->lookup(op)) {
        if (failed(verifyCalibratedLayer(*c, *layer)))
          return WalkResult::interrupt();
        return WalkResult::advance(); // the recorded types were verified
      }
    bool both = o.quantizes(roles[0]) && o.quantizes(roles[1]);
    int64_t ba = o.maxBitsFor(roles[0], isConstant(c->lhs)),
            bb = o.maxBitsFor(roles[1], isConstant(c->rhs));
    if (both && kTile[0] > ::tq::ref::maxKTile(ba, bb)) {
      op->emitOpError("a K-tile of ")
          << kTile[0] << " with " << ba << "-bit and " << bb
          << "-bit operands may overflow the int32 partial sum (at most "
          << ::tq::ref::maxKTile(ba, bb) << ")";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The constant behind `v`, seen through transposes, reshapes and casts,
/// or null.
static Value constantData(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (matchPattern(v, m_Constant()))
      return v;
    if (!isa<linalg::TransposeOp, tensor::CastOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp>(def))
      return {};
    v = def->getOperand(0);
  }
  return {};
}

/// policy=adaptive with tile candidates: for each layer with a constant
/// operand, the candidate whose per-tile A4 search on that operand gives the
/// fewest bits per element, counting each tile's 32-bit scale (ties: the
/// larger tile), among those the int32 partial sum allows. Records the
/// choice as `tq.tile_choice = {tile, average_bits}` on the op.
static void chooseLayerTiles(Operation *root, const QuantizationOptions &o,
                             llvm::DenseMap<Operation *, int64_t> &tiles) {
  root->walk([&](Operation *op) {
    FailureOr<ComputeOp> c = matchComputeOp(op);
    if (failed(c) || keptInFloat(op, o) || c->isConv())
      return;
    Role roles[2];
    SmallVector<int64_t, 2> dims[2];
    readAnnotations(*c, roles, dims);
    Value operands[2] = {c->lhs, c->rhs};
    for (unsigned i = 0; i < 2; ++i) {
      Value data = constantData(operands[i]);
      std::optional<std::vector<float>> values;
      if (data)
        values = getConstantF32(data);
      if (!values)
        continue;
      ::tq::ref::FloatTensor x;
      auto shape = cast<ShapedType>(data.getType()).getShape();
      x.shape.assign(shape.begin(), shape.end());
      x.data = std::move(*values);
      ::tq::ref::BitSearchOptions search;
      search.low = o.low;
      search.high = o.high;
      search.min = o.minBits;
      search.max = o.maxBits;
      search.init =
          std::min(std::max(o.bitsFor(roles[i]), o.minBits), o.maxBits);
      int64_t bound =
          ::tq::ref::maxKTile(o.maxBitsFor(roles[0], isConstant(c->lhs)),
                              o.maxBitsFor(roles[1], isConstant(c->rhs)));
      int64_t best = 0;
      double bestBits = 0;
      for (int64_t v : o.tileCandidates) {
        if (v <= 0 || v > bound)
          continue;
        ::tq::ref::TileLayout layout;
        layout.tile[0] = layout.tile[1] = v;
        layout.dims[0] = x.shape.size() - 2;
        layout.dims[1] = x.shape.size() - 1;
        double sum = 0;
        std::vector<::tq::ref::BitSearchResult> results =
            ::tq::ref::searchBitWidthPerTile(
                x, layout, ::tq::ref::QuantForm::Scaled, search);
        for (const ::tq::ref::BitSearchResult &r : results)
          sum += r.bits;
        // Each tile also stores a 32-bit scale: count it per element.
        double average = sum / std::max<size_t>(results.size(), 1) +
                         32.0 / static_cast<double>(v * v);
        if (!best || average < bestBits || (average == bestBits && v > best)) {
          best = v;
          bestBits = average;
        }
      }
      if (!best)
        return;
      tiles[op] = best;
      Builder b(op->getContext());
      op->setAttr(
          "tq.tile_choice",
          b.getDictionaryAttr(
              {b.getNamedAttr("tile", b.getI64IntegerAttr(best)),
               b.getNamedAttr("average_bits", b.getF64FloatAttr(bestBits))}));
      return;
    }
  });
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// Whether `init` is a linalg.fill of 0.0 (a fresh accumulator).
bool isZeroInit(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.value(), m_AnyZeroFloat());
}

/// Folds a zero tensor.pad on H and W in front of a conv input (NHWC, or
/// NCHW with `nchw`) into the conv's padding [top, left, bottom, right].
Value foldInputPadding(Value input, SmallVector<int64_t, 4> &padding,
                       bool nchw) {
  padding.assign(4, 0);
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad || pad.getNofold())
    return input;
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue || !matchPattern(padValue, m_AnyZeroFloat()))
    return input;
  SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
  unsigned h = nchw ? 2 : 1, w = nchw ? 3 : 2, ch = nchw ? 1 : 3;
  if (llvm::any_of(low, ShapedType::isDynamic) ||
      llvm::any_of(high, ShapedType::isDynamic) || low[0] || high[0] ||
      low[ch] || high[ch])
    return input;
  padding = {low[h], low[w], high[h], high[w]};
  return pad.getSource();
}

/// Why compute op `op` stays in float, or null when it is quantized.
static const char *floatReason(Operation *op, const ComputeOp &c,
                               const QuantizationOptions &options) {
  if (keptInFloat(op, options))
    return "kept in float";
  if (!op->hasAttr(kRolesAttr) || !op->hasAttr(kSplitDimsAttr))
    return "roles are not annotated";
  Role roles[2];
  SmallVector<int64_t, 2> dims[2];
  readAnnotations(c, roles, dims);
  bool quantize[2] = {options.quantizes(roles[0]), options.quantizes(roles[1])};
  const CalibratedLayer *layer = nullptr;
  if (options.calibrated)
    layer = options.calibrated->lookup(op);
  if (layer && layer->operands[0].isFloat && layer->operands[1].isFloat)
    return "calibrated as float";
  if (!layer && !quantize[0] && !quantize[1])
    return "no operand to quantize";
  if (!layer && c.isConv() && !(quantize[0] && quantize[1]))
    return "tq.conv2d quantizes both operands";
  return nullptr;
}

struct QuantizeComputeOp : RewritePattern {
  QuantizeComputeOp(MLIRContext *ctx, const QuantizationOptions &options)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        options(options) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<ComputeOp> c = matchComputeOp(op, &why);
    if (failed(c))
      return rewriter.notifyMatchFailure(op, why);
    if (const char *reason = floatReason(op, *c, options))
      return rewriter.notifyMatchFailure(op, reason);
    Role roles[2];
    SmallVector<int64_t, 2> dims[2];
    readAnnotations(*c, roles, dims);
    bool quantize[2] = {options.quantizes(roles[0]),
                        options.quantizes(roles[1])};
    bool isConv = c->isConv();
    bool nchw = c->kind == ComputeOp::Kind::Conv2DNchwFchw;
    const CalibratedLayer *layer = nullptr;
    if (options.calibrated)
      layer = options.calibrated->lookup(op);

    Location loc = op->getLoc();
    SmallVector<int64_t, 4> padding(4, 0);
    Value inputs[2] = {c->lhs, c->rhs};
    bool transposed[2] = {c->transposeA, c->transposeB};
    if (isConv)
      inputs[0] = foldInputPadding(inputs[0], padding, nchw);
    for (unsigned i = 0; i < 2; ++i) {
      if (layer) {
        inputs[i] = quantizeCalibrated(rewriter, op, inputs[i],
                                       layer->operands[i], transposed[i]);
        continue;
      }
      if (!quantize[i])
        continue;
      auto type = cast<RankedTensorType>(inputs[i].getType());
      FailureOr<TiledType> tiled =
          options.typeFor(op->getContext(), type.getShape(), roles[i], dims[i],
                          contractedSplitDim(*c, i), options.tileFor(op));
      if (failed(tiled))
        return rewriter.notifyMatchFailure(op, "no static size");
      inputs[i] = quantizeOperand(rewriter, op, inputs[i], *tiled, roles[i]);
    }
    Type resultType = op->getResult(0).getType();
    Value result;
    if (isConv && nchw) {
      // tq.conv2d computes on NHWC x KRSC: move C innermost with
      // tq.transpose, which keeps the split dims (N, C) / (K, C) in order and
      // so reuses every scale (T4), then move the output back to NCHW.
      for (Value &in : inputs) {
        auto t = cast<TiledType>(in.getType());
        std::string why;
        TiledType moved = *getTransposedType(t, {0, 2, 3, 1}, why);
        in = TransposeOp::create(rewriter, loc, moved, in,
                                 rewriter.getDenseI64ArrayAttr({0, 2, 3, 1}));
      }
      auto nchwType = cast<RankedTensorType>(resultType);
      ArrayRef<int64_t> s = nchwType.getShape();
      auto nhwcType = RankedTensorType::get({s[0], s[2], s[3], s[1]},
                                            nchwType.getElementType());
      Value nhwc = Conv2DOp::create(
          rewriter, loc, nhwcType, inputs[0], inputs[1],
          rewriter.getDenseI64ArrayAttr(c->strides),
          rewriter.getDenseI64ArrayAttr(c->dilations),
          rewriter.getDenseI64ArrayAttr(padding),
          ScaleProductAttr::get(op->getContext(), ScaleProduct::exact));
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, s, nchwType.getElementType());
      result = linalg::TransposeOp::create(rewriter, loc, nhwc, empty,
                                           ArrayRef<int64_t>{0, 3, 1, 2})
                   ->getResult(0);
    } else if (isConv) {
      result = Conv2DOp::create(
          rewriter, loc, resultType, inputs[0], inputs[1],
          rewriter.getDenseI64ArrayAttr(c->strides),
          rewriter.getDenseI64ArrayAttr(c->dilations),
          rewriter.getDenseI64ArrayAttr(padding),
          ScaleProductAttr::get(op->getContext(), ScaleProduct::exact));
    } else {
      result = MatmulOp::create(rewriter, loc, resultType, inputs[0], inputs[1],
                                transposed[0], transposed[1]);
    }
    if (Attribute choice = op->getAttr("tq.tile_choice"))
      if (auto mm = result.getDefiningOp<MatmulOp>())
        mm->setAttr("tq.tile_choice", choice);
    if (!isZeroInit(c->init))
      result = arith::AddFOp::create(rewriter, loc, result, c->init);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Quantizes `input` as a calibration file records it. A recorded type
  /// for the source of a transpose reads that source with `transposed`
  /// flipped (as tq-fold-transposes would).
  Value quantizeCalibrated(PatternRewriter &rewriter, Operation *computeOp,
                           Value input, const CalibratedOperand &c,
                           bool &transposed) const {
    if (c.isFloat)
      return input;
    MLIRContext *ctx = rewriter.getContext();
    Location loc = computeOp->getLoc();
    auto type = cast<TiledType>(parseType(c.type, ctx));
    if (type.getShape() != cast<RankedTensorType>(input.getType()).getShape()) {
      input = input.getDefiningOp<linalg::TransposeOp>().getInput();
      transposed = !transposed;
    }
    Value bits;
    if (!c.tileBits.empty()) {
      auto grid =
          RankedTensorType::get(type.getGridShape(), rewriter.getI32Type());
      SmallVector<int32_t> widths(c.tileBits.begin(), c.tileBits.end());
      bits = arith::ConstantOp::create(
          rewriter, loc,
          DenseIntElementsAttr::get(grid, ArrayRef<int32_t>(widths)));
    } else if (c.adaptive) {
      Type resultType = rewriter.getI32Type();
      if (type.getBitsKind() == BitsKind::per_tile)
        resultType =
            RankedTensorType::get(type.getGridShape(), rewriter.getI32Type());
      bits = AdaptiveBitWidthOp::create(
          rewriter, loc, resultType, input, TypeAttr::get(type),
          rewriter.getF32FloatAttr(c.adaptive->low),
          rewriter.getF32FloatAttr(c.adaptive->high),
          rewriter.getI64IntegerAttr(c.adaptive->init),
          rewriter.getI64IntegerAttr(c.adaptive->min),
          rewriter.getI64IntegerAttr(c.adaptive->max),
          rewriter.getI64IntegerAttr(c.adaptive->step), IntegerAttr(),
          FloatAttr());
    }
    auto q =
        QuantizeOp::create(rewriter, loc, type, input, Value(), Value(), bits,
                           Value(), RoundingMode::nearest_even, IntegerAttr());
    if (!c.record.empty())
      q->setAttr("tq.bit_width", parseAttribute(c.record, ctx));
    return q;
  }

  /// Quantizes `input` into `type` (a fixed width), or with a width chosen
  /// at run time by the policy.
  Value quantizeOperand(PatternRewriter &rewriter, Operation *computeOp,
                        Value input, TiledType type, Role role) const {
    Location loc = computeOp->getLoc();
    bool runTime = options.policy == BitWidthPolicy::schedule ||
                   (options.policy == BitWidthPolicy::adaptive &&
                    !isConstant(input) && options.runTimeSearch);
    // Gradients may be rounded stochastically, each quantization with its
    // own seed, offset by the iteration (an i32 argument marked
    // {tq.iteration}) when the function has one: fresh noise every step.
    RoundingMode rounding = RoundingMode::nearest_even;
    IntegerAttr seed;
    Value seedOffset;
    if (options.gradRounding == RoundingMode::stochastic && isGradient(role)) {
      rounding = RoundingMode::stochastic;
      seed = rewriter.getI64IntegerAttr(
          static_cast<int64_t>(options.seed + stochasticCount++));
      seedOffset = findMarkedArgument(computeOp, kIterationArgAttr,
                                      rewriter.getI32Type());
    }
    if (!runTime)
      return QuantizeOp::create(rewriter, loc, type, input, Value(), Value(),
                                Value(), seedOffset, rounding, seed);
    MLIRContext *ctx = rewriter.getContext();
    int64_t maxBits = options.policy == BitWidthPolicy::adaptive
                          ? options.maxBits
                          : options.maxBitsFor(role, /*isConstant=*/false);
    BitsKind kind =
        options.policy == BitWidthPolicy::adaptive && options.perTile
            ? BitsKind::per_tile
            : BitsKind::dynamic;
    int64_t container = maxBits <= 4 ? 4 : maxBits <= 8 ? 8 : 16;
    // The bound is written only when it is below the container's width.
    TiledType dynType = TiledType::get(
        ctx, type.getShape(), IntegerType::get(ctx, container), kind,
        maxBits < container ? maxBits : 0, type.getExpressedType(),
        type.getTileShape(), type.getSplitDims(), type.getScaleKind(),
        type.getHasOffset());
    Value bits;
    if (options.policy == BitWidthPolicy::adaptive) {
      Type resultType = rewriter.getI32Type();
      if (kind == BitsKind::per_tile)
        resultType = RankedTensorType::get(dynType.getGridShape(),
                                           rewriter.getI32Type());
      int64_t init =
          std::min(std::max(options.bitsFor(role), options.minBits), maxBits);
      bits = AdaptiveBitWidthOp::create(
          rewriter, loc, resultType, input, TypeAttr::get(dynType),
          rewriter.getF32FloatAttr(options.low),
          rewriter.getF32FloatAttr(options.high),
          rewriter.getI64IntegerAttr(init),
          rewriter.getI64IntegerAttr(options.minBits),
          rewriter.getI64IntegerAttr(maxBits), rewriter.getI64IntegerAttr(1),
          IntegerAttr(), FloatAttr());
    } else {
      bits = scheduledBits(rewriter, loc, findEpoch(computeOp));
    }
    return QuantizeOp::create(rewriter, loc, dynType, input, Value(), Value(),
                              bits, seedOffset, rounding, seed);
  }

  /// The i32 width for the epoch: the entry whose range holds it; epochs
  /// past the last range keep its width.
  Value scheduledBits(PatternRewriter &rewriter, Location loc,
                      Value epoch) const {
    Type i32 = rewriter.getI32Type();
    Value e = epoch;
    if (e.getType().isIndex())
      e = arith::IndexCastOp::create(rewriter, loc, i32, e);
    else if (e.getType().getIntOrFloatBitWidth() > 32)
      e = arith::TruncIOp::create(rewriter, loc, i32, e);
    else if (e.getType().getIntOrFloatBitWidth() < 32)
      e = arith::ExtSIOp::create(rewriter, loc, i32, e);
    auto cst = [&](int64_t v) {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getI32IntegerAttr(v));
    };
    Value bits = cst(options.scheduleEntries.back().bits);
    for (const ScheduleEntry &entry :
         llvm::reverse(ArrayRef(options.scheduleEntries).drop_back())) {
      Value inRange = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sle, e, cst(entry.last));
      bits = arith::SelectOp::create(rewriter, loc, inRange, cst(entry.bits),
                                     bits);
    }
    return bits;
  }

  QuantizationOptions options;
  /// Stochastic quantizations made so far: the next one's seed offset.
  mutable uint64_t stochasticCount = 0;
};

struct TQInsertQuantizationPass
    : mlir::tq::impl::TQInsertQuantizationBase<TQInsertQuantizationPass> {
  using Base::Base;
#define GEN_PASS_OPTIONS_GETTER_TQINSERTQUANTIZATION
#include "tq/Dialect/TQ/Transforms/PassOptions.h.inc"

  void runOnOperation() override {
    QuantizationOptions o;
    static_cast<TQInsertQuantizationOptions &>(o) = getOptions();
    if (!schedule.empty()) {
      std::string error;
      FailureOr<SmallVector<ScheduleEntry>> entries =
          parseSchedule(schedule, error);
      if (failed(entries)) {
        mlir::emitError(getOperation()->getLoc(), "invalid schedule '")
            << schedule << "': " << error;
        return signalPassFailure();
      }
      o.scheduleEntries = std::move(*entries);
    }
    Operation *root = getOperation();
    llvm::DenseMap<Operation *, const CalibratedLayer *> calibrated;
    llvm::DenseMap<Operation *, std::string> layerNames = nameLayers(root);
    o.layerNames = &layerNames;
    // Every keep-float entry names an op kind or a layer of the input.
    for (const std::string &keep : o.keepFloat) {
      bool found = llvm::any_of(
          layerNames, [&](const auto &entry) { return entry.second == keep; });
      if (!found)
        root->walk([&](Operation *op) {
          if (op->getName().getStringRef() == keep) {
            found = true;
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
      if (!found) {
        mlir::emitError(root->getLoc(), "keep-float '")
            << keep
            << "' names no op (such as linalg.matmul) or layer (an ONNX node "
               "name, or function#ordinal) of the input";
        return signalPassFailure();
      }
    }
    FailureOr<CalibrationTable> table;
    if (!calibration.empty()) {
      table = readCalibrationFile(calibration, root->getLoc());
      if (failed(table))
        return signalPassFailure();
      llvm::StringSet<> matched;
      for (auto &[op, name] : layerNames)
        if (const CalibratedLayer *layer = table->lookup(name)) {
          calibrated[op] = layer;
          matched.insert(name);
        }
      for (const CalibratedLayer &layer : table->layers)
        if (!matched.contains(layer.name)) {
          mlir::emitError(root->getLoc(), "calibration layer '")
              << layer.name << "' matches no compute op in the input";
          return signalPassFailure();
        }
      o.calibrated = &calibrated;
    }
    if (failed(annotateRolesAndSplitDims(root)))
      return signalPassFailure();
    // The forward layers left in float, whose gradients stay in float too.
    llvm::DenseSet<std::pair<Operation *, int64_t>> floatLayers;
    root->walk([&](Operation *op) {
      auto layer = op->getAttrOfType<IntegerAttr>(kLayerAttr);
      if (!layer)
        return;
      if (FailureOr<ComputeOp> c = matchComputeOp(op);
          succeeded(c) && floatReason(op, *c, o))
        floatLayers.insert(
            {op->getParentOfType<FunctionOpInterface>(), layer.getInt()});
    });
    o.floatLayers = &floatLayers;
    llvm::DenseMap<Operation *, int64_t> layerTiles;
    for (int64_t v : o.tileCandidates)
      if (v <= 0) {
        mlir::emitError(root->getLoc(),
                        "tile-candidates must be positive, got ")
            << v;
        return signalPassFailure();
      }
    if (!o.tileCandidates.empty()) {
      if (o.policy != BitWidthPolicy::adaptive) {
        mlir::emitError(root->getLoc(),
                        "tile-candidates needs policy=adaptive");
        return signalPassFailure();
      }
      chooseLayerTiles(root, o, layerTiles);
      o.layerTiles = &layerTiles;
    }
    if (!o.runTimeSearch && o.policy != BitWidthPolicy::adaptive) {
      mlir::emitError(root->getLoc(),
                      "run-time-search=false needs policy=adaptive");
      return signalPassFailure();
    }
    if (failed(verifyQuantization(root, o)))
      return signalPassFailure(); // diagnostics name the option or op
    RewritePatternSet patterns(&getContext());
    populateInsertQuantizationPatterns(patterns, o);
    walkAndApplyPatterns(root, std::move(patterns));
    // The layer numbers have served: float ops of different layers are
    // alike again (for CSE and shared kernels).
    root->walk([](Operation *op) {
      op->removeAttr(kLayerAttr);
      op->removeAttr(kGradientOfAttr);
    });
  }
};

} // namespace

void mlir::tq::populateInsertQuantizationPatterns(
    RewritePatternSet &patterns, const QuantizationOptions &options) {
  patterns.add<QuantizeComputeOp>(patterns.getContext(), options);
}
