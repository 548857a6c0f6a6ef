//===- ChannelsLast.cpp - float layers between the convolutions in NHWC ---===//
//
// See the description of tq-cpu-channels-last in tq/Conversion/Passes.td.
//
// Each pattern moves a linalg.transpose from NHWC to NCHW past one op, so
// that the op reads the NHWC value itself: an elementwise or reduction
// generic, a tensor.pad, a depthwise convolution, a pooling. At a
// tq.quantize it becomes a tq.transpose, which folds with the one back to
// NHWC in front of the next quantized convolution.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUCHANNELSLAST
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {

/// NHWC to NCHW: result dim i is input dim kToNCHW[i].
constexpr int64_t kToNCHW[] = {0, 3, 1, 2};

/// The NHWC value `v` is a transpose to NCHW of, or null.
Value nhwcSource(Value v) {
  auto t = v.getDefiningOp<linalg::TransposeOp>();
  if (!t || t.getPermutation() != ArrayRef<int64_t>(kToNCHW) ||
      !cast<ShapedType>(t.getInput().getType()).hasStaticShape())
    return Value();
  return t.getInput();
}

/// `shape` (NCHW) in NHWC order.
SmallVector<int64_t> toNHWC(ArrayRef<int64_t> shape) {
  return {shape[0], shape[2], shape[3], shape[1]};
}

/// The NCHW transpose of the NHWC tensor `v`.
Value transposeToNCHW(PatternRewriter &rw, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> s = type.getShape();
  Value init = tensor::EmptyOp::create(rw, loc, {s[0], s[3], s[1], s[2]},
                                       type.getElementType());
  return linalg::TransposeOp::create(rw, loc, v, init, kToNCHW)->getResult(0);
}

/// `v` read through `map` without the unit dims it reads at index 0 (a
/// bias (C, 1, 1) read at (c, 0, 0) becomes (C) read at (c)), so that the
/// kernels see the channel as its contiguous trailing dim.
std::pair<Value, AffineMap> dropUnitDims(PatternRewriter &rw, Location loc,
                                         Value v, AffineMap map) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return {v, map};
  SmallVector<ReassociationIndices> groups;
  SmallVector<AffineExpr> kept;
  ReassociationIndices leading;
  for (auto [k, e] : llvm::enumerate(map.getResults())) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (c && c.getValue() == 0 && type.getDimSize(k) == 1) {
      if (groups.empty())
        leading.push_back(k);
      else
        groups.back().push_back(k);
      continue;
    }
    ReassociationIndices g = leading;
    leading.clear();
    g.push_back(k);
    groups.push_back(g);
    kept.push_back(e);
  }
  if (groups.empty() || kept.size() == map.getNumResults())
    return {v, map};
  Value collapsed = tensor::CollapseShapeOp::create(rw, loc, v, groups);
  return {collapsed, AffineMap::get(map.getNumDims(), map.getNumSymbols(), kept,
                                    map.getContext())};
}

/// A generic over NCHW loops that reads a transposed NHWC value through
/// the identity map: the same generic over NHWC loops, reading the NHWC
/// value, every other map composed with the change of loops. An output
/// written through the identity map is then NHWC, and transposed back
/// after the op (its init must not be read); one written through another
/// map (a reduction's) keeps its layout. The reduction loops must keep
/// their order, so that each sum adds in the same order: the same bits.
struct SinkIntoGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
        op.getNumLoops() != 4)
      return failure();
    auto transposed = [&](OpOperand *in) {
      return nhwcSource(in->get()) &&
             op.getMatchingIndexingMap(in).isIdentity();
    };
    if (llvm::none_of(op.getDpsInputOperands(), transposed))
      return rw.notifyMatchFailure(op, "no input is an NHWC transpose");
    // Loop i over NCHW is loop kToNCHW[i] over NHWC.
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray(),
                                     newIters(4);
    for (int64_t i = 0; i < 4; ++i)
      newIters[kToNCHW[i]] = iters[i];
    int64_t lastReduction = -1;
    for (int64_t j = 0; j < 4; ++j) {
      if (newIters[j] != utils::IteratorType::reduction)
        continue;
      int64_t i = llvm::find(kToNCHW, j) - std::begin(kToNCHW);
      if (i < lastReduction)
        return rw.notifyMatchFailure(op, "the reductions would reorder");
      lastReduction = i;
    }
    for (OpOperand &out : op.getDpsInitsMutable())
      if (op.getMatchingIndexingMap(&out).isIdentity() &&
          op.payloadUsesValueFromOperand(&out))
        return rw.notifyMatchFailure(op, "an NCHW output's init is read");

    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    AffineMap toOld = AffineMap::getPermutationMap(kToNCHW, ctx);
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    SmallVector<Value> inputs, inits;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (transposed(in)) {
        inputs.push_back(nhwcSource(in->get()));
        maps.push_back(id);
      } else {
        auto [v, m] = dropUnitDims(
            rw, loc, in->get(), op.getMatchingIndexingMap(in).compose(toOld));
        inputs.push_back(v);
        maps.push_back(m);
      }
    }
    SmallVector<Type> types;
    SmallVector<bool> nhwcResult;
    for (OpOperand &out : op.getDpsInitsMutable()) {
      auto type = cast<RankedTensorType>(out.get().getType());
      bool nhwc = op.getMatchingIndexingMap(&out).isIdentity();
      nhwcResult.push_back(nhwc);
      if (nhwc) {
        inits.push_back(tensor::EmptyOp::create(
            rw, loc, toNHWC(type.getShape()), type.getElementType()));
        maps.push_back(id);
      } else {
        inits.push_back(out.get());
        maps.push_back(op.getMatchingIndexingMap(&out).compose(toOld));
      }
      types.push_back(inits.back().getType());
    }
    auto moved = linalg::GenericOp::create(rw, loc, types, inputs, inits, maps,
                                           newIters);
    moved->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rw.inlineRegionBefore(op.getRegion(), moved.getRegion(),
                          moved.getRegion().end());
    SmallVector<Value> results;
    for (auto [r, nhwc] : llvm::zip(moved.getResults(), nhwcResult))
      results.push_back(nhwc ? transposeToNCHW(rw, loc, r) : r);
    rw.replaceOp(op, results);
    return success();
  }
};

/// A generic reading a transposed NHWC value through another map than the
/// identity (one already moved to NHWC loops, such as a residual add whose
/// other operand was moved first): it reads the NHWC value itself, the
/// map's results permuted.
struct FoldTransposedRead : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    SmallVector<std::pair<OpOperand *, Value>> reads;
    for (OpOperand *in : op.getDpsInputOperands()) {
      Value y = nhwcSource(in->get());
      AffineMap &m = maps[in->getOperandNumber()];
      if (!y || m.isIdentity())
        continue;
      SmallVector<AffineExpr> results(4);
      for (int64_t i = 0; i < 4; ++i)
        results[kToNCHW[i]] = m.getResult(i);
      m = AffineMap::get(m.getNumDims(), m.getNumSymbols(), results,
                         op.getContext());
      reads.push_back({in, y});
      changed = true;
    }
    if (!changed)
      return failure();
    rw.modifyOpInPlace(op, [&] {
      for (auto [operand, y] : reads)
        operand->set(y);
      op.setIndexingMapsAttr(rw.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

/// Whether `conv` is a depthwise linalg.conv_2d_ngchw_gfchw (C groups of
/// one channel and one filter) whose padded NHWC image, its channels
/// rounded up to whole vectors of 16, fits the scratch buffer of the NHWC
/// depthwise kernel of tq-cpu-float-kernels (256 KiB): the convolutions
/// this pass moves to NHWC. Larger ones stay with the NCHW kernels.
bool isMovableDepthwise(linalg::Conv2DNgchwGfchwOp conv) {
  auto x = cast<ShapedType>(conv.getDpsInputs()[0].getType());
  auto w = cast<ShapedType>(conv.getDpsInputs()[1].getType());
  if (!x.hasStaticShape() || !w.hasStaticShape() || x.getRank() != 5 ||
      x.getDimSize(2) != 1 || w.getDimSize(1) != 1 || w.getDimSize(2) != 1)
    return false;
  return x.getDimSize(3) * x.getDimSize(4) *
             llvm::alignTo(x.getDimSize(1), 16) * 4 <=
         256 * 1024;
}

/// The depthwise convolution `v` feeds through the expand_shape that adds
/// its unit group dim, if `v`'s only use is that and isMovableDepthwise.
linalg::Conv2DNgchwGfchwOp movableDepthwiseOf(Value v) {
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}, {4}};
  if (!v.hasOneUse())
    return {};
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*v.getUsers().begin());
  if (!expand || expand.getReassociationIndices() != groups ||
      !expand->hasOneUse())
    return {};
  auto conv = dyn_cast<linalg::Conv2DNgchwGfchwOp>(*expand->getUsers().begin());
  if (!conv || conv.getDpsInputs()[0] != expand.getResult() ||
      !isMovableDepthwise(conv))
    return {};
  return conv;
}

/// The NCHW pad `pad` (static, with a constant) applied to the NHWC value
/// `src`: its low and high pads permuted to NHWC.
Value padNHWC(PatternRewriter &rw, tensor::PadOp pad, Value src) {
  ArrayRef<int64_t> lo = pad.getStaticLow(), hi = pad.getStaticHigh();
  SmallVector<OpFoldResult> low, high;
  for (int64_t d : {0, 2, 3, 1}) {
    low.push_back(rw.getIndexAttr(lo[d]));
    high.push_back(rw.getIndexAttr(hi[d]));
  }
  auto type = pad.getResultType();
  return tensor::PadOp::create(
      rw, pad.getLoc(),
      RankedTensorType::get(toNHWC(type.getShape()), type.getElementType()),
      src, low, high, pad.getConstantPaddingValue(), pad.getNofold());
}

/// tensor.pad of a transposed NHWC value with a constant: the transpose
/// of the NHWC value padded.
struct SinkIntoPad : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rw) const override {
    Value src = nhwcSource(op.getSource());
    Value padValue = op.getConstantPaddingValue();
    if (!src || !padValue || !op.getLow().empty() || !op.getHigh().empty())
      return failure();
    // Only the input of a depthwise convolution this pass moves: else the
    // NCHW kernels would read a transposed copy of the pad.
    if (!movableDepthwiseOf(op.getResult()))
      return rw.notifyMatchFailure(op, "not a movable depthwise input");
    rw.replaceOp(op, transposeToNCHW(rw, op.getLoc(), padNHWC(rw, op, src)));
    return success();
  }
};

/// A depthwise linalg.conv_2d_ngchw_gfchw (C groups of one channel and one
/// filter) on a transposed NHWC value, between the expand_shape and the
/// collapse_shape of the C dim into (G, 1): a linalg.depthwise_conv_2d_nhwc_hwc
/// on the NHWC value, from the same fill, with the filter as (R, S, C).
struct DepthwiseChannelsLast : OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::CollapseShapeOp collapse,
                                PatternRewriter &rw) const override {
    SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}, {4}};
    auto conv = collapse.getSrc().getDefiningOp<linalg::Conv2DNgchwGfchwOp>();
    if (!conv || !conv->hasOneUse() || !conv.hasPureTensorSemantics() ||
        collapse.getReassociationIndices() != groups)
      return failure();
    auto expand = conv.getDpsInputs()[0].getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || expand.getReassociationIndices() != groups)
      return failure();
    Value x = nhwcSource(expand.getSrc());
    auto fill = conv.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    Value w = conv.getDpsInputs()[1];
    auto wType = cast<RankedTensorType>(w.getType());
    ArrayRef<int64_t> ws = wType.getShape();
    if (!x || !fill || !isMovableDepthwise(conv))
      return rw.notifyMatchFailure(conv, "not depthwise on an NHWC value");
    Location loc = conv.getLoc();
    // The filter (C, 1, 1, R, S) as (R, S, C): a constant's values moved
    // now, else a transpose.
    Value hwc;
    auto hwcType =
        RankedTensorType::get({ws[3], ws[4], ws[0]}, wType.getElementType());
    if (std::optional<std::vector<float>> all = getConstantF32(w)) {
      SmallVector<float> moved;
      for (int64_t r = 0; r < ws[3]; ++r)
        for (int64_t s = 0; s < ws[4]; ++s)
          for (int64_t c = 0; c < ws[0]; ++c)
            moved.push_back((*all)[(c * ws[3] + r) * ws[4] + s]);
      hwc = arith::ConstantOp::create(
          rw, loc, hwcType,
          DenseElementsAttr::get(hwcType, ArrayRef<float>(moved)));
    } else {
      Value w3 = tensor::CollapseShapeOp::create(
          rw, loc, w, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}, {4}});
      Value wInit = tensor::EmptyOp::create(rw, loc, hwcType.getShape(),
                                            wType.getElementType());
      hwc = linalg::TransposeOp::create(rw, loc, w3, wInit, {1, 2, 0})
                ->getResult(0);
    }
    auto outType = cast<RankedTensorType>(collapse.getResultType());
    Value empty = tensor::EmptyOp::create(rw, loc, toNHWC(outType.getShape()),
                                          outType.getElementType());
    Value init =
        linalg::FillOp::create(rw, fill.getLoc(), fill.getInputs()[0], empty)
            .getResult(0);
    auto dw = linalg::DepthwiseConv2DNhwcHwcOp::create(
        rw, loc, TypeRange{init.getType()}, ValueRange{x, hwc},
        ValueRange{init}, conv.getStrides(), conv.getDilations());
    rw.replaceOp(collapse, transposeToNCHW(rw, loc, dw.getResult(0)));
    return success();
  }
};

/// The most taps (R·S) of a single-channel convolution this pass moves to
/// NHWC: the kernel of tq-cpu-float-kernels unrolls them.
constexpr int64_t kMaxFirstConvTaps = 49;

/// A network's first convolution, linalg.conv_2d_nchw_fchw on an image of
/// one channel (whose NCHW and NHWC layouts are the same bytes) with a
/// constant filter, from a fill: linalg.conv_2d_nhwc_hwcf on the image
/// reshaped, the filter reordered to (R, S, 1, F), its output transposed
/// to NCHW, which the patterns above move on. Its output is then NHWC from
/// the start: the activations after it, its pooling and the next
/// quantization need no transpose.
struct FirstConvChannelsLast : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (!xType.hasStaticShape() || !wType.hasStaticShape() ||
        xType.getDimSize(1) != 1 || !fill || !xType.getElementType().isF32())
      return rw.notifyMatchFailure(op, "not on one static channel from a fill");
    ArrayRef<int64_t> ws = wType.getShape();
    int64_t F = ws[0], R = ws[2], S = ws[3];
    if (R * S > kMaxFirstConvTaps)
      return rw.notifyMatchFailure(op, "too many taps");
    std::optional<std::vector<float>> all = getConstantF32(w);
    if (!all)
      return rw.notifyMatchFailure(op, "filter not constant");
    Location loc = op.getLoc();
    // (N, 1, H, W) -> (N, H, W) -> (N, H, W, 1): the same bytes.
    auto toNHWCImage = [&](Value v) -> Value {
      ArrayRef<int64_t> vs = cast<RankedTensorType>(v.getType()).getShape();
      Value flat = tensor::CollapseShapeOp::create(
          rw, loc, v, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
      return tensor::ExpandShapeOp::create(
          rw, loc,
          RankedTensorType::get({vs[0], vs[2], vs[3], 1},
                                xType.getElementType()),
          flat, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    };
    // A constant pad of H and W stays in front of the convolution, in
    // NHWC: the kernel then pads each image in cache.
    Value nhwc;
    auto pad = x.getDefiningOp<tensor::PadOp>();
    if (pad && pad.getConstantPaddingValue() && pad.getLow().empty() &&
        pad.getHigh().empty() && pad.getStaticLow()[0] == 0 &&
        pad.getStaticLow()[1] == 0 && pad.getStaticHigh()[0] == 0 &&
        pad.getStaticHigh()[1] == 0 &&
        cast<RankedTensorType>(pad.getSource().getType()).hasStaticShape()) {
      nhwc = padNHWC(rw, pad, toNHWCImage(pad.getSource()));
    } else {
      nhwc = toNHWCImage(x);
    }
    // The filter (F, 1, R, S) as (R, S, 1, F).
    SmallVector<float> moved;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t f = 0; f < F; ++f)
          moved.push_back((*all)[(f * R + r) * S + s]);
    auto hwcfType = RankedTensorType::get({R, S, 1, F}, wType.getElementType());
    Value hwcf = arith::ConstantOp::create(
        rw, loc, hwcfType,
        DenseElementsAttr::get(hwcfType, ArrayRef<float>(moved)));
    auto outType = cast<RankedTensorType>(op.getResult(0).getType());
    Value empty = tensor::EmptyOp::create(rw, loc, toNHWC(outType.getShape()),
                                          outType.getElementType());
    Value init =
        linalg::FillOp::create(rw, fill.getLoc(), fill.getInputs()[0], empty)
            .getResult(0);
    auto conv = linalg::Conv2DNhwcHwcfOp::create(
        rw, loc, TypeRange{init.getType()}, ValueRange{nhwc, hwcf},
        ValueRange{init}, op.getStrides(), op.getDilations());
    rw.replaceOp(op, transposeToNCHW(rw, loc, conv.getResult(0)));
    return success();
  }
};

/// A max or sum pooling of a transposed NHWC value from a fill: the NHWC
/// pooling of the NHWC value (the same window, strides and dilations, each
/// output combining its window in the same order), transposed.
template <typename NchwOp, typename NhwcOp>
struct PoolingChannelsLast : OpRewritePattern<NchwOp> {
  using OpRewritePattern<NchwOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(NchwOp op, PatternRewriter &rw) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Value x = nhwcSource(op.getDpsInputs()[0]);
    auto fill = op.getDpsInits()[0].template getDefiningOp<linalg::FillOp>();
    if (!x || !fill)
      return rw.notifyMatchFailure(op, "not from a fill on an NHWC value");
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult(0).getType());
    Value empty = tensor::EmptyOp::create(rw, loc, toNHWC(type.getShape()),
                                          type.getElementType());
    Value init =
        linalg::FillOp::create(rw, fill.getLoc(), fill.getInputs()[0], empty)
            .getResult(0);
    auto pool = NhwcOp::create(
        rw, loc, TypeRange{init.getType()}, ValueRange{x, op.getDpsInputs()[1]},
        ValueRange{init}, op.getStrides(), op.getDilations());
    rw.replaceOp(op, transposeToNCHW(rw, loc, pool->getResult(0)));
    return success();
  }
};

/// tq.quantize of a transposed NHWC value: the NHWC value quantized with
/// the same tiles (the split dims moved with their data), then a
/// tq.transpose. Each element's tile is the same, so are its max|x| and
/// its step: the same bits. Not with given scales (laid out as the grid),
/// stochastic rounding (its noise follows the element's place), widths
/// per tile (laid out as the grid), or non-square tiles whose split dims
/// would swap (no tq.transpose then).
struct SinkIntoQuantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rw) const override {
    Value x = nhwcSource(op.getInput());
    if (!x || op.getScales() || op.getRefresh() ||
        op.getRounding() == RoundingMode::stochastic ||
        (op.getBits() && isa<ShapedType>(op.getBits().getType())))
      return failure();
    TiledType type = op.getResult().getType();
    ArrayRef<int64_t> dims = type.getSplitDims(), tile = type.getTileShape();
    // NCHW dim i is NHWC dim kToNCHW[i].
    SmallVector<int64_t> newDims = {kToNCHW[dims[0]], kToNCHW[dims[1]]};
    SmallVector<int64_t> newTile(tile);
    if (newDims[0] > newDims[1]) {
      // A tq.transpose swaps the split dims only of square tiles.
      if (tile[0] != tile[1])
        return rw.notifyMatchFailure(op, "non-square tiles would swap");
      std::swap(newDims[0], newDims[1]);
      std::swap(newTile[0], newTile[1]);
    }
    TiledType nhwc = type.cloneWith(toNHWC(type.getShape()), newTile, newDims);
    rw.setInsertionPointAfter(op);
    auto back = TransposeOp::create(rw, op.getLoc(), type, op.getResult(),
                                    rw.getDenseI64ArrayAttr(kToNCHW));
    rw.replaceAllUsesExcept(op.getResult(), back.getResult(), back);
    rw.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(x);
      op.getResult().setType(nhwc);
    });
    return success();
  }
};

struct TQCPUChannelsLastPass
    : mlir::tq::impl::TQCPUChannelsLastBase<TQCPUChannelsLastPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<
        SinkIntoGeneric, FoldTransposedRead, SinkIntoPad, DepthwiseChannelsLast,
        FirstConvChannelsLast,
        PoolingChannelsLast<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp>,
        PoolingChannelsLast<linalg::PoolingNchwSumOp, linalg::PoolingNhwcSumOp>,
        SinkIntoQuantize>(ctx);
    TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Not a training step (its samples marked tq.batch): its backward
    // pass's reductions and routings are NCHW kernels.
    SmallVector<func::FuncOp> funcs;
    getOperation()->walk([&](func::FuncOp f) {
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        if (f.getArgAttr(i, kBatchArgAttr))
          return;
      funcs.push_back(f);
    });
    for (func::FuncOp f : funcs)
      if (failed(applyPatternsGreedily(f, frozen)))
        return signalPassFailure();
  }
};

} // namespace
