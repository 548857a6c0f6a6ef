//===- TQOps.cpp - tile-quant operations ----------------------------------===//
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Runtime/Quant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tq;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static std::string shapeStr(ArrayRef<int64_t> shape) {
  return formatDims(shape, "x");
}

static bool isPermutation(ArrayRef<int64_t> perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank)
    return false;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

static bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (static_cast<int64_t>(i) != p)
      return false;
  return true;
}

static SmallVector<int64_t> permuteShape(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return out;
}

DenseI64ArrayAttr mlir::tq::composePermutations(Builder &b,
                                                DenseI64ArrayAttr inner,
                                                DenseI64ArrayAttr outer) {
  SmallVector<int64_t> perm;
  for (int64_t p : outer.asArrayRef())
    perm.push_back(inner.asArrayRef()[p]);
  return b.getDenseI64ArrayAttr(perm);
}

FailureOr<TiledType> mlir::tq::getTransposedType(TiledType type,
                                                 ArrayRef<int64_t> perm,
                                                 std::string &why) {
  if (!isPermutation(perm, type.getRank())) {
    why = "permutation must be a permutation of [0, " +
          std::to_string(type.getRank()) + ")";
    return failure();
  }
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  int64_t p0 = inverse[type.getSplitDims()[0]];
  int64_t p1 = inverse[type.getSplitDims()[1]];
  ArrayRef<int64_t> tile = type.getTileShape();
  SmallVector<int64_t> newShape = permuteShape(type.getShape(), perm);
  if (p0 < p1)
    return type.cloneWith(newShape, tile, {p0, p1});
  if (!type.isSquare()) {
    why = "transposing non-square tiles (" + shapeStr(tile) +
          ") swaps the split dims and cannot reuse the scales; use "
          "'tq.requantize' with a permutation";
    return failure();
  }
  return type.cloneWith(newShape, tile, {p1, p0});
}

static LogicalResult verifyRounding(Operation *op, RoundingMode mode,
                                    std::optional<int64_t> seed) {
  if (mode == RoundingMode::stochastic && !seed)
    return op->emitOpError("stochastic rounding requires a 'seed' attribute");
  if (mode != RoundingMode::stochastic && seed)
    return op->emitOpError(
        "'seed' is only meaningful with stochastic rounding");
  return success();
}

/// Checks the optional run-time bit-width operand against `type`.
static LogicalResult verifyBitsOperand(Operation *op, TiledType type,
                                       Value bits) {
  switch (type.getBitsKind()) {
  case BitsKind::fixed:
    if (bits)
      return op->emitOpError("'bits' operand given but the result type has a "
                             "fixed bit width");
    return success();
  case BitsKind::dynamic:
  case BitsKind::per_tile: {
    if (type.getBitsKind() == BitsKind::dynamic) {
      if (!bits || !bits.getType().isInteger(32))
        return op->emitOpError(
            "a dynamic bit width requires a 'bits' operand of type i32");
    } else {
      auto t = bits ? dyn_cast<RankedTensorType>(bits.getType()) : nullptr;
      SmallVector<int64_t> grid = type.getGridShape();
      if (!t || failed(verifyCompatibleShape(t.getShape(), grid)))
        return op->emitOpError("a per-tile bit width requires a 'bits' "
                               "operand of type tensor<")
               << shapeStr(grid) << "xi32>";
    }
    // Constant widths must respect the type's bound, which the int32
    // partial-sum checks rely on.
    Attribute value;
    if (matchPattern(bits, m_Constant(&value))) {
      SmallVector<int64_t> widths;
      if (auto i = dyn_cast<IntegerAttr>(value))
        widths.push_back(i.getInt());
      else if (auto d = dyn_cast<DenseIntElementsAttr>(value))
        for (const APInt &w : d.getValues<APInt>())
          widths.push_back(w.getSExtValue());
      for (int64_t w : widths)
        if (w < 2 || w > type.getMaxBits())
          return op->emitOpError("bit width ")
                 << w << " is out of range [2, " << type.getMaxBits() << "] of "
                 << type;
    }
    return success();
  }
  }
  llvm_unreachable("unknown bits kind");
}

static LogicalResult verifyShapeMatch(Operation *op, StringRef what,
                                      ArrayRef<int64_t> got,
                                      ArrayRef<int64_t> expected) {
  if (failed(verifyCompatibleShape(got, expected)))
    return op->emitOpError()
           << what << " shape " << shapeStr(got)
           << " does not match the tiled shape " << shapeStr(expected);
  return success();
}

/// Checks a compute op's result shape against the one its operands imply.
static LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> got,
                                       ArrayRef<int64_t> expected) {
  if (failed(verifyCompatibleShape(got, expected)))
    return op->emitOpError("result shape ")
           << shapeStr(got) << " does not match the expected "
           << shapeStr(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  RankedTensorType in = getInput().getType();
  TiledType res = getResult().getType();
  if (failed(verifyShapeMatch(*this, "input", in.getShape(), res.getShape())))
    return failure();
  if (in.getElementType() != res.getExpressedType())
    return emitOpError("input element type ")
           << in.getElementType() << " does not match the expressed type "
           << res.getExpressedType();
  if (Value scales = getScales()) {
    if (res.getHasOffset())
      return emitOpError("given scales cannot be used with an offset (the "
                         "offsets would be undefined)");
    SmallVector<int64_t> grid = res.getGridShape();
    auto st = cast<RankedTensorType>(scales.getType());
    if (failed(verifyCompatibleShape(st.getShape(), grid)))
      return emitOpError("scales must have the tile-grid shape ")
             << shapeStr(grid) << ", got " << shapeStr(st.getShape());
  }
  if (getRefresh() && !getScales())
    return emitOpError("refresh needs scales (the steps kept when it is "
                       "false)");
  if (failed(verifyBitsOperand(*this, res, getBits())))
    return failure();
  if (getSeedOffset() && getRounding() != RoundingMode::stochastic)
    return emitOpError(
        "'seed_offset' is only meaningful with stochastic rounding");
  return verifyRounding(*this, getRounding(), getSeed());
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  TiledType in = getInput().getType();
  RankedTensorType res = getResult().getType();
  if (failed(verifyShapeMatch(*this, "result", res.getShape(), in.getShape())))
    return failure();
  if (res.getElementType() != in.getExpressedType())
    return emitOpError("result element type ")
           << res.getElementType() << " does not match the expressed type "
           << in.getExpressedType();
  return success();
}

//===----------------------------------------------------------------------===//
// StepsOp
//===----------------------------------------------------------------------===//

LogicalResult StepsOp::verify() {
  SmallVector<int64_t> grid = getInput().getType().getGridShape();
  ArrayRef<int64_t> shape = getResult().getType().getShape();
  if (failed(verifyCompatibleShape(shape, grid)))
    return emitOpError("result must have the tile-grid shape ")
           << shapeStr(grid) << ", got " << shapeStr(shape);
  return success();
}

std::optional<std::vector<float>> mlir::tq::getConstantF32(Value v) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (!dense.getElementType().isF32())
      return std::nullopt;
    auto values = dense.getValues<float>();
    return std::vector<float>(values.begin(), values.end());
  }
  if (auto blob = dyn_cast<DenseF32ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<float>> data = blob.tryGetAsArrayRef())
      return std::vector<float>(data->begin(), data->end());
  return std::nullopt;
}

FailureOr<::tq::ref::TiledTensor>
mlir::tq::evaluateQuantize(QuantizeOp op, ArrayRef<float> input,
                           int64_t maxElements) {
  TiledType type = op.getResult().getType();
  if (op.getScales() || op.getSeedOffset() || !type.hasStaticShape() ||
      type.getBitsKind() == BitsKind::dynamic ||
      int64_t(input.size()) != ShapedType::getNumElements(type.getShape()) ||
      int64_t(input.size()) > maxElements)
    return failure();
  ::tq::ref::BitsSpec bits;
  bits.uniform = type.getBits();
  if (type.getBitsKind() == BitsKind::per_tile) {
    // Per-tile widths must be known too.
    DenseIntElementsAttr tileBits;
    if (!op.getBits() || !matchPattern(op.getBits(), m_Constant(&tileBits)))
      return failure();
    for (const APInt &b : tileBits.getValues<APInt>()) {
      int64_t n = b.getSExtValue();
      if (n < 2 || n > type.getMaxBits())
        return failure();
      bits.perTile.push_back(static_cast<int>(n));
    }
  }
  ::tq::ref::FloatTensor x;
  x.shape.assign(type.getShape().begin(), type.getShape().end());
  x.data.assign(input.begin(), input.end());
  return ::tq::ref::quantizeTiled(x, getRefLayout(type), bits, getRefForm(type),
                                  getRefRounding(op.getRounding()),
                                  op.getSeed().value_or(0));
}

/// dequantize(quantize(%c)) -> %c when the round trip reproduces every
/// element of the constant bit for bit (e.g. small integers, zeros).
OpFoldResult DequantizeOp::fold(FoldAdaptor) {
  auto quant = getInput().getDefiningOp<QuantizeOp>();
  if (!quant || quant.getInput().getType() != getResult().getType())
    return {};
  std::optional<std::vector<float>> cst = getConstantF32(quant.getInput());
  if (!cst)
    return {};
  FailureOr<::tq::ref::TiledTensor> q = evaluateQuantize(quant, *cst);
  if (failed(q) || q->nonFinite)
    return {};
  ::tq::ref::FloatTensor back = ::tq::ref::dequantizeTiled(*q);
  const std::vector<float> &orig = *cst;
  if (std::memcmp(back.data.data(), orig.data(), orig.size() * sizeof(float)) !=
      0)
    return {};
  return quant.getInput();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  TiledType type = getResult().getType();
  if (!type.hasStaticShape())
    return emitOpError("a constant must have a static shape");
  if (type.getBitsKind() == BitsKind::dynamic)
    return emitOpError("a constant cannot have a dynamic bit width");
  auto values = cast<ShapedType>(getValues().getType());
  if (values.getShape() != type.getShape() ||
      values.getElementType() != type.getStorageType())
    return emitOpError("values must be a ")
           << RankedTensorType::get(type.getShape(), type.getStorageType())
           << ", got " << values;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(getValues())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    uint64_t bytes = values.getNumElements() *
                     (values.getElementType().getIntOrFloatBitWidth() / 8);
    if (!blob)
      return emitOpError("values: dense resource '")
             << resource.getRawHandle().getKey() << "' has no data";
    if (blob->getData().size() != bytes)
      return emitOpError("values: dense resource '")
             << resource.getRawHandle().getKey() << "' holds "
             << blob->getData().size() << " bytes, " << values << " needs "
             << bytes;
  }
  SmallVector<int64_t> grid = type.getGridShape();
  auto checkGrid = [&](StringRef name, ShapedType t,
                       Type elementType) -> LogicalResult {
    if (t.getShape() != ArrayRef<int64_t>(grid) ||
        t.getElementType() != elementType)
      return emitOpError() << name << " must be a "
                           << RankedTensorType::get(grid, elementType)
                           << ", got " << t;
    return success();
  };
  Builder b(getContext());
  if (failed(checkGrid("scales", getScales().getType(), b.getF32Type())))
    return failure();
  if (type.getHasOffset() != getOffsets().has_value())
    return emitOpError(type.getHasOffset()
                           ? "an offset scale kind requires 'offsets'"
                           : "'offsets' given but the type has no offset");
  if (getOffsets() &&
      failed(checkGrid("offsets", getOffsets()->getType(), b.getF32Type())))
    return failure();
  bool perTile = type.getBitsKind() == BitsKind::per_tile;
  if (perTile != getTileBits().has_value())
    return emitOpError(perTile ? "a per-tile bit width requires 'tile_bits'"
                               : "'tile_bits' given but the bit width is not "
                                 "per-tile");
  if (getTileBits() && failed(checkGrid("tile_bits", getTileBits()->getType(),
                                        b.getIntegerType(8))))
    return failure();
  // Every value must fit its tile's bit width.
  ::tq::ref::Shape shape(type.getShape().begin(), type.getShape().end());
  ::tq::ref::TileLayout layout = getRefLayout(type);
  SmallVector<int64_t> tileBits;
  if (getTileBits())
    for (const APInt &v : getTileBits()->getValues<APInt>()) {
      int64_t n = v.getSExtValue();
      if (n < 2 || n > type.getMaxBits())
        return emitOpError("tile bit width ")
               << n << " is out of range [2, " << type.getMaxBits() << "]";
      tileBits.push_back(n);
    }
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t q : getConstantValues(*this)) {
    int64_t bits =
        perTile ? tileBits[::tq::ref::tileOf(shape, layout, index.data())]
                : type.getBits();
    int64_t m = ::tq::ref::qmax(bits);
    if (q < -m || q > m)
      return emitOpError("value ")
             << q << " at [" << formatDims(index, ", ") << "] is outside the "
             << bits << "-bit range [" << -m << ", " << m << "]";
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return success();
}

std::vector<int64_t> mlir::tq::getConstantValues(ConstantOp op) {
  ElementsAttr attr = op.getValues();
  std::vector<int64_t> v;
  v.reserve(attr.getNumElements());
  if (auto blob = dyn_cast<DenseI8ResourceElementsAttr>(attr)) {
    if (std::optional<ArrayRef<int8_t>> data = blob.tryGetAsArrayRef())
      llvm::append_range(v, *data);
    return v;
  }
  if (auto blob = dyn_cast<DenseI16ResourceElementsAttr>(attr)) {
    if (std::optional<ArrayRef<int16_t>> data = blob.tryGetAsArrayRef())
      llvm::append_range(v, *data);
    return v;
  }
  auto dense = cast<DenseIntElementsAttr>(attr);
  Type storage = dense.getElementType();
  if (storage.isInteger(8))
    llvm::append_range(v, dense.getValues<int8_t>());
  else if (storage.isInteger(16))
    llvm::append_range(v, dense.getValues<int16_t>());
  else
    for (const APInt &x : dense.getValues<APInt>())
      v.push_back(x.getSExtValue());
  return v;
}

ElementsAttr mlir::tq::getIntElements(RankedTensorType type,
                                      ArrayRef<int64_t> values, StringRef key) {
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  bool splat = llvm::all_equal(values);
  if (!splat && values.size() >= 256 && (width == 8 || width == 16)) {
    auto blob = [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> narrow(values.begin(), values.end());
      return HeapAsmResourceBlob::allocateAndCopyInferAlign(
          ArrayRef<T>(narrow));
    };
    return DenseResourceElementsAttr::get(
        type, key, width == 8 ? blob(int8_t()) : blob(int16_t()));
  }
  SmallVector<APInt> data;
  data.reserve(values.size());
  for (int64_t v : values)
    data.push_back(APInt(width, v, /*isSigned=*/true));
  return DenseIntElementsAttr::get(type, data);
}

::tq::ref::TiledTensor mlir::tq::toRefTensor(ConstantOp op) {
  TiledType type = op.getResult().getType();
  ::tq::ref::TiledTensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.layout = getRefLayout(type);
  t.form = getRefForm(type);
  for (int64_t v : getConstantValues(op))
    t.q.push_back(static_cast<int32_t>(v));
  for (float step : op.getScales().getValues<float>()) {
    ::tq::ref::TileParams p;
    p.factor = step;
    p.bits = type.getMaxBits();
    t.params.push_back(p);
  }
  if (std::optional<DenseElementsAttr> offsets = op.getOffsets())
    for (auto [p, o] : llvm::zip(t.params, offsets->getValues<float>()))
      p.offset = o;
  if (std::optional<DenseIntElementsAttr> bits = op.getTileBits())
    for (auto [p, b] : llvm::zip(t.params, bits->getValues<APInt>()))
      p.bits = b.getSExtValue();
  return t;
}

ConstantOp mlir::tq::buildConstant(OpBuilder &b, Location loc, TiledType type,
                                   const ::tq::ref::TiledTensor &value) {
  auto gridType = [&](Type element) {
    return RankedTensorType::get(type.getGridShape(), element);
  };
  SmallVector<float> scales, offsets;
  SmallVector<int8_t> bits;
  for (const ::tq::ref::TileParams &p : value.params) {
    scales.push_back(p.step());
    offsets.push_back(p.offset);
    bits.push_back(static_cast<int8_t>(p.bits));
  }
  // The blob is named after the layer, when the location names one.
  std::string key = "tq_constant";
  if (auto name = dyn_cast<NameLoc>(loc))
    key = name.getName().str() + ".q";
  ElementsAttr valuesAttr = getIntElements(
      RankedTensorType::get(type.getShape(), type.getStorageType()),
      std::vector<int64_t>(value.q.begin(), value.q.end()), key);
  auto scalesAttr = DenseFPElementsAttr::get(gridType(b.getF32Type()), scales);
  DenseFPElementsAttr offsetsAttr;
  if (type.getHasOffset())
    offsetsAttr = DenseFPElementsAttr::get(gridType(b.getF32Type()), offsets);
  DenseIntElementsAttr bitsAttr;
  if (type.getBitsKind() == BitsKind::per_tile)
    bitsAttr = DenseIntElementsAttr::get(gridType(b.getIntegerType(8)),
                                         ArrayRef<int8_t>(bits));
  return ConstantOp::create(b, loc, type, valuesAttr, scalesAttr, offsetsAttr,
                            bitsAttr);
}

//===----------------------------------------------------------------------===//
// RequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult RequantizeOp::verify() {
  TiledType in = getInput().getType();
  TiledType res = getResult().getType();
  SmallVector<int64_t> expected(in.getShape());
  if (std::optional<ArrayRef<int64_t>> perm = getPermutation()) {
    if (!isPermutation(*perm, in.getRank()))
      return emitOpError("permutation must be a permutation of [0, ")
             << in.getRank() << ")";
    expected = permuteShape(in.getShape(), *perm);
  }
  if (failed(verifyCompatibleShape(res.getShape(), expected)))
    return emitOpError("result shape ")
           << shapeStr(res.getShape()) << " does not match the "
           << (getPermutation() ? "permuted " : "") << "input shape "
           << shapeStr(expected);
  if (in.getExpressedType() != res.getExpressedType())
    return emitOpError("expressed types differ: ")
           << in.getExpressedType() << " vs " << res.getExpressedType();
  if (failed(verifyBitsOperand(*this, res, getBits())))
    return failure();
  return verifyRounding(*this, getRounding(), getSeed());
}

OpFoldResult RequantizeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType() && !getBits() &&
      (!getPermutation() || isIdentity(*getPermutation())))
    return getInput();
  return {};
}

namespace {
/// requantize(tq.constant) -> tq.constant, by the reference numerics.
struct RequantizeConstant : OpRewritePattern<RequantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RequantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto cst = op.getInput().getDefiningOp<ConstantOp>();
    TiledType type = op.getResult().getType();
    if (!cst || op.getBits() || type.getBitsKind() != BitsKind::fixed ||
        !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a fixed-width constant");
    std::vector<int64_t> perm;
    if (std::optional<ArrayRef<int64_t>> p = op.getPermutation())
      perm.assign(p->begin(), p->end());
    ::tq::ref::BitsSpec bits;
    bits.uniform = type.getBits();
    ::tq::ref::TiledTensor t = ::tq::ref::requantizeTiled(
        toRefTensor(cst), getRefLayout(type), bits, getRefForm(type),
        getRefRounding(op.getRounding()), op.getSeed().value_or(0),
        perm.empty() ? nullptr : &perm);
    rewriter.replaceOp(op, buildConstant(rewriter, op.getLoc(), type, t));
    return success();
  }
};
} // namespace

void RequantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<RequantizeConstant>(context);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  std::string why;
  FailureOr<TiledType> expected =
      getTransposedType(getInput().getType(), getPermutation(), why);
  if (failed(expected))
    return emitOpError(why);
  if (*expected != getResult().getType())
    return emitOpError("result type ")
           << getResult().getType() << " does not match the expected "
           << *expected;
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (isIdentity(getPermutation()))
    return getInput();
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    Builder b(getContext());
    if (isIdentity(composePermutations(b, inner.getPermutationAttr(),
                                       getPermutationAttr())
                       .asArrayRef()))
      return inner.getInput();
  }
  return {};
}

namespace {
#include "tq/Dialect/TQ/IR/TQCanonicalize.inc"

/// transpose(tq.constant) -> tq.constant: the data is permuted and every
/// tile's scale is carried over unchanged (T4), by the reference numerics.
struct TransposeConstant : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto cst = op.getInput().getDefiningOp<ConstantOp>();
    if (!cst)
      return rewriter.notifyMatchFailure(op, "input is not a tq.constant");
    ArrayRef<int64_t> perm = op.getPermutation();
    ::tq::ref::TiledTensor t = ::tq::ref::transposeTiled(
        toRefTensor(cst), std::vector<int64_t>(perm.begin(), perm.end()));
    Value moved =
        buildConstant(rewriter, op.getLoc(), op.getResult().getType(), t);
    // Records on the constant (its searched width and error, tq.bit_width)
    // hold for the same tiles moved.
    moved.getDefiningOp()->setDiscardableAttrs(
        cst->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, moved);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<MergeTransposes, TransposeConstant>(context);
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

namespace {
/// A matmul operand seen as [batch..., rows, cols] after its transpose flag.
struct Operand {
  TiledType tiled;            // null for a float operand
  SmallVector<int64_t> shape; // logical, transpose applied
  int64_t kTile = 0;          // tile extent along the contracting dim
};
} // namespace

static FailureOr<Operand> getMatmulOperand(Operation *op, Value v,
                                           bool transposed, bool isLhs,
                                           StringRef name) {
  Operand o;
  ArrayRef<int64_t> shape;
  o.tiled = dyn_cast<TiledType>(v.getType());
  if (o.tiled) {
    shape = o.tiled.getShape();
    int64_t r = o.tiled.getRank();
    if (o.tiled.getSplitDims()[0] != r - 2 ||
        o.tiled.getSplitDims()[1] != r - 1)
      return op->emitOpError()
             << name << " must be split on its two innermost dims [" << r - 2
             << ", " << r - 1 << "], got [" << o.tiled.getSplitDims()[0] << ", "
             << o.tiled.getSplitDims()[1] << "]";
    if (o.tiled.getHasOffset())
      return op->emitOpError()
             << name
             << " has an offset; asymmetric operands are not supported, "
                "requantize without offset first";
    // The contracting dim of lhs is its cols; of rhs, its rows.
    bool kIsCols = isLhs != transposed;
    o.kTile = o.tiled.getTileShape()[kIsCols ? 1 : 0];
  } else {
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.getElementType().isF32())
      return op->emitOpError() << "float " << name << " must have f32 elements";
    shape = t.getShape();
  }
  if (shape.size() < 2)
    return op->emitOpError() << name << " must have rank >= 2";
  o.shape.assign(shape.begin(), shape.end());
  if (transposed)
    std::swap(o.shape[o.shape.size() - 1], o.shape[o.shape.size() - 2]);
  return o;
}

static bool dimsDiffer(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// Rejects a K-tile whose int32 partial sum could overflow.
static LogicalResult verifyAccumulator(Operation *op, TiledType a, TiledType b,
                                       int64_t kTile) {
  int64_t bound = ::tq::ref::maxKTile(a.getMaxBits(), b.getMaxBits());
  if (kTile > bound)
    return op->emitOpError("int32 partial sum may overflow: a K-tile of ")
           << kTile << " with " << a.getMaxBits() << "-bit and "
           << b.getMaxBits() << "-bit operands exceeds 2^31 - 1 (at most "
           << bound << ")";
  return success();
}

LogicalResult MatmulOp::verify() {
  FailureOr<Operand> a =
      getMatmulOperand(*this, getLhs(), getTransposeA(), /*isLhs=*/true, "lhs");
  if (failed(a))
    return failure();
  FailureOr<Operand> b = getMatmulOperand(*this, getRhs(), getTransposeB(),
                                          /*isLhs=*/false, "rhs");
  if (failed(b))
    return failure();
  if (!a->tiled && !b->tiled)
    return emitOpError("at least one operand must be a tiled tensor; use "
                       "linalg.matmul for float operands");
  if (a->shape.size() != b->shape.size())
    return emitOpError("operands must have the same rank, got ")
           << a->shape.size() << " and " << b->shape.size();
  size_t r = a->shape.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (dimsDiffer(a->shape[i], b->shape[i]))
      return emitOpError("batch dimension ")
             << i << " differs: " << a->shape[i] << " vs " << b->shape[i];
  int64_t k = a->shape[r - 1], k2 = b->shape[r - 2];
  if (dimsDiffer(k, k2))
    return emitOpError("contracting dimensions differ: ") << k << " vs " << k2;
  if (a->tiled && b->tiled) {
    // A tile larger than the contracting dim covers all of it: compare the
    // extents that take effect.
    if (!ShapedType::isDynamic(k)) {
      a->kTile = std::min(a->kTile, k);
      b->kTile = std::min(b->kTile, k);
    }
    if (a->kTile != b->kTile)
      return emitOpError("K-tile extents differ: lhs ")
             << a->kTile << " vs rhs " << b->kTile;
    if (failed(verifyAccumulator(*this, a->tiled, b->tiled, a->kTile)))
      return failure();
  }
  SmallVector<int64_t> expected(a->shape.begin(), a->shape.end() - 1);
  expected.push_back(b->shape[r - 1]);
  return verifyResultShape(*this, getResult().getType().getShape(), expected);
}

//===----------------------------------------------------------------------===//
// Conv2DOp
//===----------------------------------------------------------------------===//

LogicalResult Conv2DOp::verify() {
  TiledType x = getInput().getType(), w = getFilter().getType();
  if (x.getRank() != 4 || w.getRank() != 4)
    return emitOpError("input and filter must have rank 4 (NHWC, KRSC)");
  if (x.getSplitDims()[0] != 0 || x.getSplitDims()[1] != 3)
    return emitOpError("input must be split on (N, C) = [0, 3]");
  if (w.getSplitDims()[0] != 0 || w.getSplitDims()[1] != 3)
    return emitOpError("filter must be split on (K, C) = [0, 3]");
  if (x.getHasOffset() || w.getHasOffset())
    return emitOpError("asymmetric (offset) operands are not supported");
  ArrayRef<int64_t> xs = x.getShape(), ws = w.getShape();
  if (dimsDiffer(xs[3], ws[3]))
    return emitOpError("channel dimensions differ: input ")
           << xs[3] << " vs filter " << ws[3];
  // A tile larger than C covers all of it (a per-tensor scale): compare the
  // extents that take effect, as tq.matmul does.
  int64_t xTile = x.getTileShape()[1], wTile = w.getTileShape()[1];
  if (!ShapedType::isDynamic(xs[3])) {
    xTile = std::min(xTile, xs[3]);
    wTile = std::min(wTile, xs[3]);
  }
  if (xTile != wTile)
    return emitOpError("C-tile extents differ: input ")
           << xTile << " vs filter " << wTile;
  if (failed(verifyAccumulator(*this, x, w, xTile)))
    return failure();
  ArrayRef<int64_t> strides = getStrides(), dil = getDilations(),
                    pad = getPadding();
  if (strides.size() != 2 || dil.size() != 2 || pad.size() != 4)
    return emitOpError("expected 2 strides, 2 dilations and 4 paddings");
  if (llvm::any_of(strides, [](int64_t v) { return v <= 0; }) ||
      llvm::any_of(dil, [](int64_t v) { return v <= 0; }))
    return emitOpError("strides and dilations must be positive");
  if (llvm::any_of(pad, [](int64_t v) { return v < 0; }))
    return emitOpError("padding must be non-negative");
  SmallVector<int64_t> expected = {xs[0], ShapedType::kDynamic,
                                   ShapedType::kDynamic, ws[0]};
  for (int i = 0; i < 2; ++i) {
    int64_t in = xs[1 + i], k = ws[1 + i];
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k))
      continue;
    int64_t span = in + pad[i] + pad[i + 2] - dil[i] * (k - 1) - 1;
    if (span < 0)
      return emitOpError("the filter window is larger than the padded input");
    expected[1 + i] = span / strides[i] + 1;
  }
  return verifyResultShape(*this, getResult().getType().getShape(), expected);
}

//===----------------------------------------------------------------------===//
// PostprocessOp
//===----------------------------------------------------------------------===//

LogicalResult PostprocessOp::verify() {
  TiledType res = getResult().getType();
  if (failed(verifyShapeMatch(*this, "input", getInput().getType().getShape(),
                              res.getShape())))
    return failure();
  if (!res.getExpressedType().isF32())
    return emitOpError("result must have an f32 expressed type");
  if (getLayerScale() && getComputeLayerScale())
    return emitOpError("the layer scale is either given or computed, not both");
  if (getComputeLayerScale() && res.getBitsKind() != BitsKind::fixed)
    return emitOpError("computing the layer scale needs a fixed bit width in "
                       "the result type");
  if (failed(verifyBitsOperand(*this, res, getBits())))
    return failure();
  return verifyRounding(*this, getRounding(), getSeed());
}

//===----------------------------------------------------------------------===//
// WeightUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult WeightUpdateOp::verify() {
  TiledType w = getWeight().getType();
  ArrayRef<int64_t> gs;
  if (auto t = dyn_cast<TiledType>(getGrad().getType()))
    gs = t.getShape();
  else
    gs = cast<RankedTensorType>(getGrad().getType()).getShape();
  if (failed(verifyCompatibleShape(gs, w.getShape())))
    return emitOpError("gradient shape ")
           << shapeStr(gs) << " does not match the weight shape "
           << shapeStr(w.getShape());
  if (w.getBitsKind() == BitsKind::dynamic)
    return emitOpError("the weight's bit width must be fixed or per-tile, "
                       "not dynamic");
  return verifyRounding(*this, getRounding(), getSeed());
}

//===----------------------------------------------------------------------===//
// AdaptiveBitWidthOp
//===----------------------------------------------------------------------===//

LogicalResult AdaptiveBitWidthOp::verify() {
  auto target = cast<TiledType>(getTarget());
  if (target.getBitsKind() == BitsKind::fixed)
    return emitOpError("target type must have a dynamic ('?') or 'per_tile' "
                       "bit width");
  if (failed(verifyShapeMatch(*this, "input", getInput().getType().getShape(),
                              target.getShape())))
    return failure();
  float low = getLow().convertToFloat(), high = getHigh().convertToFloat();
  if (!(low >= 0.0f && low < high))
    return emitOpError("thresholds must satisfy 0 <= low < high, got low = ")
           << low << ", high = " << high;
  int64_t maxWidth = target.getMaxBits();
  // I64Attr getters return uint64_t: read them as signed.
  int64_t lo = static_cast<int64_t>(getMin()),
          init = static_cast<int64_t>(getInit()),
          hi = static_cast<int64_t>(getMax()),
          step = static_cast<int64_t>(getStep());
  if (!(2 <= lo && lo <= init && init <= hi && hi <= maxWidth))
    return emitOpError("bit widths must satisfy 2 <= min <= init <= max <= ")
           << maxWidth << " (the target type's largest width), got min = " << lo
           << ", init = " << init << ", max = " << hi;
  if (step < 1)
    return emitOpError("step must be at least 1");
  if (getFarStep().has_value() != getFarMargin().has_value())
    return emitOpError("'far_step' and 'far_margin' must be given together");
  if (getFarStep() && static_cast<int64_t>(*getFarStep()) < step)
    return emitOpError("far_step must be at least step");
  Type res = getResult().getType();
  if (target.getBitsKind() == BitsKind::dynamic) {
    if (!res.isInteger(32))
      return emitOpError("result must be i32 for a dynamic bit width");
  } else {
    auto t = dyn_cast<RankedTensorType>(res);
    SmallVector<int64_t> grid = target.getGridShape();
    if (!t || failed(verifyCompatibleShape(t.getShape(), grid)))
      return emitOpError("result must be tensor<")
             << shapeStr(grid) << "xi32> for a per-tile bit width";
  }
  return success();
}

#define GET_OP_CLASSES
#include "tq/Dialect/TQ/IR/TQOps.cpp.inc"

//===----------------------------------------------------------------------===//
// DotU8S8Op, DotU8S8PairsOp
//===----------------------------------------------------------------------===//

/// 8 or 16 int32 lanes of `acc`, 4 bytes of `lhs` per lane; `instruction`
/// names the x86 instruction in the message.
static LogicalResult verifyByteDot(Operation *op, VectorType acc,
                                   VectorType lhs, StringRef instruction) {
  int64_t lanes = acc.getNumElements();
  if (lanes != 8 && lanes != 16)
    return op->emitOpError("expects 8 or 16 int32 lanes (")
           << instruction << " on ymm or zmm), got " << lanes;
  if (lhs.getNumElements() != 4 * lanes)
    return op->emitOpError("expects 4 bytes per lane: ")
           << 4 * lanes << " i8 operands for " << lanes << " lanes";
  return success();
}

LogicalResult DotU8S8Op::verify() {
  return verifyByteDot(*this, getAcc().getType(), getLhs().getType(),
                       "vpdpbusd");
}

LogicalResult DotU8S8PairsOp::verify() {
  return verifyByteDot(*this, getAcc().getType(), getLhs().getType(),
                       "vpmaddubsw");
}

//===----------------------------------------------------------------------===//
// DotI16Op
//===----------------------------------------------------------------------===//

LogicalResult DotI16Op::verify() {
  int64_t lanes = getAcc().getType().getNumElements();
  if (lanes != 8 && lanes != 16)
    return emitOpError("expects 8 or 16 int32 lanes (vpmaddwd on ymm or "
                       "zmm), got ")
           << lanes;
  if (getLhs().getType().getNumElements() != 2 * lanes)
    return emitOpError("expects 2 int16 values per lane: ")
           << 2 * lanes << " i16 operands for " << lanes << " lanes";
  return success();
}
