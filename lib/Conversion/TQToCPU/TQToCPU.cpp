//===- TQToCPU.cpp - tq to upstream dialects for the CPU ------------------===//
//
// The type conversion (a tiled value is its data and its steps), the
// element-wise ops (quantize, dequantize, constant), function boundaries and
// the pass. The loops of tile quantization are in QuantizeTiles.cpp. The matmul
// and conv2d patterns are in Matmul.cpp and Conv2D.cpp, their kernel in
// MatmulKernel.cpp, the intrinsics pass in Intrinsics.cpp.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "FloatKernels.h"
#include "QuantizeTiles.h"
#include "tq/Conversion/Passes.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::tq {
#define GEN_PASS_DEF_CONVERTTQTOCPU
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;
using cpu::forEachIndex;
using cpu::index;
using cpu::maxFiniteAbs;
using cpu::qmaxOf;
using cpu::seedValue;

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

bool mlir::tq::hostSupportsCPUTarget(CPUTarget t) {
  llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
  switch (t) {
  case CPUTarget::avx512:
    return f.lookup("avx512vnni") && f.lookup("avx512bw");
  case CPUTarget::avxvnni:
    return f.lookup("avxvnni") ||
           (f.lookup("avx512vnni") && f.lookup("avx512vl"));
  case CPUTarget::avx2:
    return f.lookup("avx2");
  case CPUTarget::generic:
    return true;
  }
  return false;
}

CPUTarget mlir::tq::detectHostCPUTarget() {
  for (CPUTarget t : {CPUTarget::avx512, CPUTarget::avxvnni, CPUTarget::avx2})
    if (hostSupportsCPUTarget(t))
      return t;
  return CPUTarget::generic;
}

GreedyRewriteConfig mlir::tq::loopNestRewriteConfig() {
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(false);
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return config;
}

std::optional<CPUTarget> mlir::tq::parseCPUTarget(StringRef name) {
  if (name == "native")
    return detectHostCPUTarget();
  return llvm::StringSwitch<std::optional<CPUTarget>>(name)
      .Case("avx512", CPUTarget::avx512)
      .Case("avxvnni", CPUTarget::avxvnni)
      .Case("avx2", CPUTarget::avx2)
      .Case("generic", CPUTarget::generic)
      .Default(std::nullopt);
}

StringRef mlir::tq::cpuTargetNames() {
  return "native, avx512, avxvnni, avx2 or generic";
}

StringRef mlir::tq::stringifyCPUTarget(CPUTarget t) {
  switch (t) {
  case CPUTarget::avx512:
    return "avx512";
  case CPUTarget::avxvnni:
    return "avxvnni";
  case CPUTarget::avx2:
    return "avx2";
  case CPUTarget::generic:
    return "generic";
  }
  return "generic";
}

//===----------------------------------------------------------------------===//
// Types and buffers
//===----------------------------------------------------------------------===//

IntegerType TiledToTensorsConverter::containerType(TiledType t) {
  return IntegerType::get(t.getContext(), t.getMaxBits() <= 8 ? 8 : 16);
}

TiledToTensorsConverter::TiledToTensorsConverter() {
  addConversion([](Type t) { return t; });
  addConversion([](TiledType t,
                   SmallVectorImpl<Type> &out) -> std::optional<LogicalResult> {
    // A per-tile width needs nothing at run time: the values are already
    // quantized, and each tile's step is beside them.
    if (!t.hasStaticShape() || t.getHasOffset())
      return failure();
    out.push_back(RankedTensorType::get(t.getShape(), containerType(t)));
    out.push_back(RankedTensorType::get(t.getGridShape(),
                                        Float32Type::get(t.getContext())));
    return success();
  });
}

Value cpu::allocBuffer(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                       Type elementType) {
  return memref::AllocOp::create(b, loc, MemRefType::get(shape, elementType),
                                 /*alignment=*/b.getI64IntegerAttr(64));
}

Value cpu::toBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto t = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(t.getShape(), t.getElementType()), tensor,
      /*read_only=*/true);
}

Value cpu::toTensor(OpBuilder &b, Location loc, Value buffer) {
  auto t = cast<MemRefType>(buffer.getType());
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(t.getShape(), t.getElementType()), buffer,
      /*restrict=*/true, /*writable=*/true);
}

int64_t cpu::rankOf(Type t) {
  if (auto tiled = dyn_cast<TiledType>(t))
    return tiled.getRank();
  return cast<RankedTensorType>(t).getRank();
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

bool mlir::tq::quantizeFusesIntoTranspose(QuantizeOp q) {
  if (!q->hasOneUse() || q.getScales() || q.getRefresh())
    return false;
  auto t = dyn_cast<TransposeOp>(*q->getUsers().begin());
  auto type = cast<TiledType>(q.getType());
  // With one pixel (H = W = 1) the transpose moves unit dims only: a
  // reshape after a plain quantization.
  return t && type.getRank() == 4 && type.hasStaticShape() &&
         type.getShape()[2] * type.getShape()[3] > 1 &&
         type.getSplitDims()[0] == 0 && type.getSplitDims()[1] == 1 &&
         t.getPermutation() == ArrayRef<int64_t>{0, 2, 3, 1};
}

namespace {

/// The bit width of a tiled result as an i32 value: the `bits` operand for a
/// dynamic width, else the type's.
Value bitsValue(ImplicitLocOpBuilder &b, TiledType t, Value bitsOperand) {
  assert(t.getBitsKind() != BitsKind::per_tile &&
         "checkSupported refuses per-tile widths computed at run time");
  if (t.getBitsKind() == BitsKind::dynamic)
    return bitsOperand;
  return arith::ConstantIntOp::create(b, b.getI32Type(), t.getBits());
}

/// A lowering whose loops are shared among `threads` where their
/// iterations are independent.
template <typename OpT> struct ThreadedPattern : OpConversionPattern<OpT> {
  ThreadedPattern(TypeConverter &tc, MLIRContext *ctx,
                  const CPUCodegenOptions &options)
      : OpConversionPattern<OpT>(tc, ctx), threads(options.threads) {}
  int64_t threads;
};

struct QuantizeLowering : OpConversionPattern<QuantizeOp> {
  QuantizeLowering(TypeConverter &tc, MLIRContext *ctx,
                   const CPUCodegenOptions &options)
      : OpConversionPattern(tc, ctx), options(options) {}
  CPUCodegenOptions options;

  LogicalResult matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    auto type = cast<TiledType>(op.getType());
    if (quantizeFusesIntoMatmul(op, options) ||
        quantizeFusesIntoTranspose(op)) {
      // The matmul or the transpose quantizes the input itself; it finds it
      // behind this cast, which then has no use left.
      SmallVector<Type> types;
      (void)getTypeConverter()->convertType(type, types);
      auto cast = UnrealizedConversionCastOp::create(
          b, types, adaptor.getInput().front());
      rw.replaceOpWithMultiple(op, {cast.getResults()});
      return success();
    }
    Value x = cpu::toBuffer(b, b.getLoc(), adaptor.getInput().front());
    Value q = cpu::allocBuffer(b, b.getLoc(), type.getShape(),
                               TiledToTensorsConverter::containerType(type));
    Value steps =
        cpu::allocBuffer(b, b.getLoc(), type.getGridShape(), b.getF32Type());
    Value bits =
        adaptor.getBits().empty() ? Value() : adaptor.getBits().front();
    Value given =
        adaptor.getScales().empty()
            ? Value()
            : cpu::toBuffer(b, b.getLoc(), adaptor.getScales().front());
    Value refresh =
        adaptor.getRefresh().empty() ? Value() : adaptor.getRefresh().front();
    cpu::emitQuantizeTiles(b, b.getLoc(), type, x, q, steps,
                           bitsValue(b, type, bits), op.getRounding(), Value(),
                           Value(), given, refresh,
                           seedValue(b, op.getSeed(),
                                     adaptor.getSeedOffset().empty()
                                         ? Value()
                                         : adaptor.getSeedOffset().front()),
                           options.threads);
    rw.replaceOpWithMultiple(op, {{cpu::toTensor(b, b.getLoc(), q),
                                   cpu::toTensor(b, b.getLoc(), steps)}});
    return success();
  }
};

/// x = q · step per element, into a new f32 buffer; `tiled` is the
/// converted (data, steps) pair of a value of `type`.
Value emitDequantize(ImplicitLocOpBuilder &b, TiledType type, ValueRange tiled,
                     int64_t threads = 1) {
  Value q = cpu::toBuffer(b, b.getLoc(), tiled[0]);
  Value steps = cpu::toBuffer(b, b.getLoc(), tiled[1]);
  Value out = cpu::allocBuffer(b, b.getLoc(), type.getShape(), b.getF32Type());
  int64_t d0 = type.getSplitDims()[0], d1 = type.getSplitDims()[1];
  forEachIndex(
      b, type.getShape(),
      [&](ImplicitLocOpBuilder &b, ValueRange idx) {
        SmallVector<Value> g(idx.begin(), idx.end());
        g[d0] = arith::DivUIOp::create(b, idx[d0],
                                       index(b, type.getTileShape()[0]));
        g[d1] = arith::DivUIOp::create(b, idx[d1],
                                       index(b, type.getTileShape()[1]));
        Value v = arith::SIToFPOp::create(b, b.getF32Type(),
                                          memref::LoadOp::create(b, q, idx));
        Value s = memref::LoadOp::create(b, steps, g);
        memref::StoreOp::create(b, arith::MulFOp::create(b, v, s), out, idx);
      },
      threads);
  return out;
}

/// Quantizes the f32 buffer `x` into `type`; returns (data, steps) tensors.
SmallVector<Value> quantizeInto(ImplicitLocOpBuilder &b, TiledType type,
                                Value x, Value bits, RoundingMode rounding,
                                Value seed = Value(), int64_t threads = 1) {
  Value q = cpu::allocBuffer(b, b.getLoc(), type.getShape(),
                             TiledToTensorsConverter::containerType(type));
  Value steps =
      cpu::allocBuffer(b, b.getLoc(), type.getGridShape(), b.getF32Type());
  cpu::emitQuantizeTiles(b, b.getLoc(), type, x, q, steps, bits, rounding,
                         Value(), Value(), Value(), Value(), seed, threads);
  return {cpu::toTensor(b, b.getLoc(), q), cpu::toTensor(b, b.getLoc(), steps)};
}

Value optionalBits(ImplicitLocOpBuilder &b, TiledType type, ValueRange bits) {
  return bitsValue(b, type, bits.empty() ? Value() : bits.front());
}

/// A tiled value taken apart into the tensors it lowers to, or put
/// together from them (tq-cpu-split-batch passes tiled values out of its
/// shares this way): the cast disappears.
struct TiledPartsCastLowering
    : OpConversionPattern<UnrealizedConversionCastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnrealizedConversionCastOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> parts;
    for (ValueRange r : adaptor.getOperands())
      llvm::append_range(parts, r);
    // checkTiledCast made sure that the types match.
    if (op->getNumResults() == 1 && isa<TiledType>(op.getType(0)))
      rewriter.replaceOpWithMultiple(op, {parts});
    else
      rewriter.replaceOp(op, parts);
    return success();
  }
};

/// Whether `op` is a cast from or to a tiled value.
bool castsTiled(UnrealizedConversionCastOp op) {
  return llvm::any_of(
      llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()),
      [](Type t) { return isa<TiledType>(t); });
}

/// A cast from or to a tiled value must take exactly one tiled value apart
/// into the tensors it lowers to, or put one together from them.
LogicalResult checkTiledCast(UnrealizedConversionCastOp op) {
  TypeRange whole = op.getOperandTypes(), parts = op.getResultTypes();
  if (op->getNumResults() == 1 && isa<TiledType>(op.getType(0)))
    std::swap(whole, parts);
  SmallVector<Type> expected;
  if (whole.size() == 1 && isa<TiledType>(whole[0]) &&
      succeeded(TiledToTensorsConverter().convertType(whole[0], expected)) &&
      TypeRange(expected) == parts)
    return success();
  return op.emitError("tq-to-cpu: a cast from or to a tiled value must take "
                      "it apart into its values and tile steps, or put it "
                      "together from them");
}

/// The steps are the second tensor of the converted (data, steps) pair.
struct StepsLowering : OpConversionPattern<StepsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(StepsOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, adaptor.getInput()[1]);
    return success();
  }
};

struct DequantizeLowering : ThreadedPattern<DequantizeOp> {
  using ThreadedPattern::ThreadedPattern;
  LogicalResult matchAndRewrite(DequantizeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value out = emitDequantize(b, cast<TiledType>(op.getInput().getType()),
                               adaptor.getInput(), threads);
    rw.replaceOp(op, cpu::toTensor(b, b.getLoc(), out));
    return success();
  }
};

/// The static tensor `v` permuted by `perm` as a reshape, when the
/// permutation keeps the order of the dims larger than one (it moves unit
/// dims only, as NCHW to NHWC of one pixel): the same bytes. Else null.
Value reshapeForUnitPermutation(ImplicitLocOpBuilder &b, Value v,
                                ArrayRef<int64_t> perm) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return {};
  SmallVector<int64_t> kept, shape, inner;
  for (int64_t d : perm) {
    shape.push_back(type.getDimSize(d));
    if (type.getDimSize(d) != 1)
      kept.push_back(d);
  }
  if (!llvm::is_sorted(kept))
    return {};
  for (int64_t d : kept)
    inner.push_back(type.getDimSize(d));
  auto innerType = RankedTensorType::get(inner, type.getElementType());
  auto outType = RankedTensorType::get(shape, type.getElementType());
  std::optional<SmallVector<ReassociationIndices>> in =
      getReassociationIndicesForReshape(type, innerType);
  std::optional<SmallVector<ReassociationIndices>> out =
      getReassociationIndicesForReshape(outType, innerType);
  if (!in || !out)
    return {};
  if (innerType.getRank() < type.getRank())
    v = tensor::CollapseShapeOp::create(b, innerType, v, *in);
  if (innerType.getRank() < outType.getRank())
    v = tensor::ExpandShapeOp::create(b, outType, v, *out);
  return v;
}

/// T4: the data transposed, each step moved to its transposed tile.
struct TransposeLowering : ThreadedPattern<TransposeOp> {
  using ThreadedPattern::ThreadedPattern;
  LogicalResult matchAndRewrite(TransposeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    if (auto quantize = op.getInput().getDefiningOp<QuantizeOp>();
        quantize && quantizeFusesIntoTranspose(quantize)) {
      auto input =
          adaptor.getInput()[0].getDefiningOp<UnrealizedConversionCastOp>();
      auto type = cast<TiledType>(quantize.getType());
      Value x = cpu::toBuffer(b, b.getLoc(), input.getInputs()[0]);
      Value bits = quantize.getBits() ? rw.getRemappedValue(quantize.getBits())
                                      : Value();
      auto resultType = cast<TiledType>(op.getType());
      Value q =
          cpu::allocBuffer(b, b.getLoc(), resultType.getShape(),
                           TiledToTensorsConverter::containerType(resultType));
      Value steps = cpu::emitQuantizeChannelsLast(
          b, type, x, q, qmaxOf(b, bitsValue(b, type, bits)),
          quantize.getRounding(),
          seedValue(b, quantize.getSeed(),
                    quantize.getSeedOffset()
                        ? rw.getRemappedValue(quantize.getSeedOffset())
                        : Value()),
          threads);
      rw.replaceOpWithMultiple(op, {{cpu::toTensor(b, b.getLoc(), q),
                                     cpu::toTensor(b, b.getLoc(), steps)}});
      return success();
    }
    ArrayRef<int64_t> perm = op.getPermutation();
    if (Value q = reshapeForUnitPermutation(b, adaptor.getInput()[0], perm)) {
      Value s = reshapeForUnitPermutation(b, adaptor.getInput()[1], perm);
      assert(s && "the steps' grid keeps the data's unit dims");
      rw.replaceOpWithMultiple(op, {{q, s}});
      return success();
    }
    Value q = cpu::emitPermute(
        b, cpu::toBuffer(b, b.getLoc(), adaptor.getInput()[0]), perm, threads);
    Value s = cpu::emitPermute(
        b, cpu::toBuffer(b, b.getLoc(), adaptor.getInput()[1]), perm, threads);
    rw.replaceOpWithMultiple(op, {{cpu::toTensor(b, b.getLoc(), q),
                                   cpu::toTensor(b, b.getLoc(), s)}});
    return success();
  }
};

/// Dequantize, permute if asked, quantize into the result type.
struct RequantizeLowering : ThreadedPattern<RequantizeOp> {
  using ThreadedPattern::ThreadedPattern;
  LogicalResult matchAndRewrite(RequantizeOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    auto type = cast<TiledType>(op.getType());
    Value x = emitDequantize(b, cast<TiledType>(op.getInput().getType()),
                             adaptor.getInput(), threads);
    if (std::optional<ArrayRef<int64_t>> perm = op.getPermutation())
      x = cpu::emitPermute(b, x, *perm, threads);
    rw.replaceOpWithMultiple(
        op, {quantizeInto(b, type, x, optionalBits(b, type, adaptor.getBits()),
                          op.getRounding(), /*seed=*/Value(), threads)});
    return success();
  }
};

/// T6: per-layer scale, nonlinearity, quantization into tiles.
struct PostprocessLowering : OpConversionPattern<PostprocessOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(PostprocessOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    auto type = cast<TiledType>(op.getResult().getType());
    Type f32 = b.getF32Type();
    Value in = cpu::toBuffer(b, b.getLoc(), adaptor.getInput().front());
    Value bits = optionalBits(b, type, adaptor.getBits());
    Value zero =
        arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));
    Value layer;
    if (!adaptor.getLayerScale().empty()) {
      layer = adaptor.getLayerScale().front();
    } else if (op.getComputeLayerScale()) {
      // max |L| over the finite elements / qmax.
      Value mx = memref::AllocaOp::create(b, MemRefType::get({}, f32));
      memref::StoreOp::create(b, zero, mx, ValueRange{});
      forEachIndex(
          b, type.getShape(), [&](ImplicitLocOpBuilder &b, ValueRange idx) {
            Value v = memref::LoadOp::create(b, in, idx);
            Value m = memref::LoadOp::create(b, mx, ValueRange{});
            memref::StoreOp::create(b, maxFiniteAbs(b, m, v), mx, ValueRange{});
          });
      layer = arith::DivFOp::create(
          b, memref::LoadOp::create(b, mx, ValueRange{}), qmaxOf(b, bits));
    } else {
      layer = arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(1.0f));
    }
    Value y = cpu::allocBuffer(b, b.getLoc(), type.getShape(), f32);
    Value layerZero =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, layer, zero);
    bool relu = op.getActivation() == Activation::relu;
    forEachIndex(
        b, type.getShape(), [&](ImplicitLocOpBuilder &b, ValueRange idx) {
          Value v = arith::DivFOp::create(b, memref::LoadOp::create(b, in, idx),
                                          layer);
          v = arith::SelectOp::create(b, layerZero, zero, v);
          if (relu) // v < 0 -> 0; NaN stays NaN (quantized to 0 later)
            v = arith::SelectOp::create(
                b, arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, v, zero),
                zero, v);
          memref::StoreOp::create(b, v, y, idx);
        });
    SmallVector<Value> tiled =
        quantizeInto(b, type, y, bits, op.getRounding(),
                     seedValue(b, op.getSeed(), Value()));
    rw.replaceOpWithMultiple(op, {tiled, {layer}});
    return success();
  }
};

/// T7: W <- quantize(dequantize(W) - lr · dW) in W's type.
struct WeightUpdateLowering : OpConversionPattern<WeightUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(WeightUpdateOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    auto type = cast<TiledType>(op.getType());
    Value w = emitDequantize(b, type, adaptor.getWeight());
    Value dw;
    if (auto gt = dyn_cast<TiledType>(op.getGrad().getType()))
      dw = emitDequantize(b, gt, adaptor.getGrad());
    else
      dw = cpu::toBuffer(b, b.getLoc(), adaptor.getGrad().front());
    Value lr = adaptor.getLr().front();
    forEachIndex(
        b, type.getShape(), [&](ImplicitLocOpBuilder &b, ValueRange idx) {
          Value step =
              arith::MulFOp::create(b, lr, memref::LoadOp::create(b, dw, idx));
          Value v =
              arith::SubFOp::create(b, memref::LoadOp::create(b, w, idx), step);
          memref::StoreOp::create(b, v, w, idx);
        });
    rw.replaceOpWithMultiple(
        op, {quantizeInto(b, type, w, bitsValue(b, type, Value()),
                          op.getRounding())});
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ConstantOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto type = cast<TiledType>(op.getType());
    IntegerType container = TiledToTensorsConverter::containerType(type);
    auto dataType = RankedTensorType::get(type.getShape(), container);
    // Sign-extended from the storage type (i4 values live in i8).
    auto stepsType =
        RankedTensorType::get(type.getGridShape(), rw.getF32Type());
    Value d = arith::ConstantOp::create(
        rw, op.getLoc(),
        cast<TypedAttr>(
            getIntElements(dataType, getConstantValues(op), "tq_data")));
    Value s = arith::ConstantOp::create(
        rw, op.getLoc(),
        cast<DenseElementsAttr>(op.getScales()).reshape(stepsType));
    rw.replaceOpWithMultiple(op, {{d, s}});
    return success();
  }
};

/// A4 at run time: the bit-width search over the whole tensor, each
/// candidate measured with the A3 error of quantizing `input` into the
/// target's tiles (as tq::ref::searchBitWidthTiled; the sums in f64 in
/// element order).
struct AdaptiveBitWidthLowering : OpConversionPattern<AdaptiveBitWidthOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AdaptiveBitWidthOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    auto type = cast<TiledType>(op.getTarget());
    Type i32 = b.getI32Type(), f64 = b.getF64Type(), i1 = b.getI1Type();
    Value x = cpu::toBuffer(b, b.getLoc(), adaptor.getInput().front());
    Value q = cpu::allocBuffer(b, b.getLoc(), type.getShape(),
                               TiledToTensorsConverter::containerType(type));
    Value steps =
        cpu::allocBuffer(b, b.getLoc(), type.getGridShape(), b.getF32Type());
    Value sums = memref::AllocaOp::create(b, MemRefType::get({2}, f64));
    auto cI = [&](ImplicitLocOpBuilder &b, int64_t v) {
      return arith::ConstantIntOp::create(b, i32, v).getResult();
    };
    auto cF = [&](ImplicitLocOpBuilder &b, double v) {
      return arith::ConstantFloatOp::create(b, b.getF64Type(), APFloat(v))
          .getResult();
    };
    // diff_bit of quantizing x at `bits`.
    auto errorAt = [&](ImplicitLocOpBuilder &b, Value bits) {
      cpu::emitQuantizeTiles(b, b.getLoc(), type, x, q, steps, bits,
                             RoundingMode::nearest_even);
      Value zero = cF(b, 0.0);
      Value i0 = index(b, 0), i1v = index(b, 1);
      memref::StoreOp::create(b, zero, sums, ValueRange{i0});
      memref::StoreOp::create(b, zero, sums, ValueRange{i1v});
      int64_t d0 = type.getSplitDims()[0], d1 = type.getSplitDims()[1];
      forEachIndex(
          b, type.getShape(), [&](ImplicitLocOpBuilder &b, ValueRange idx) {
            SmallVector<Value> g(idx.begin(), idx.end());
            g[d0] = arith::DivUIOp::create(b, idx[d0],
                                           index(b, type.getTileShape()[0]));
            g[d1] = arith::DivUIOp::create(b, idx[d1],
                                           index(b, type.getTileShape()[1]));
            Value v = memref::LoadOp::create(b, x, idx);
            Value back = arith::MulFOp::create(
                b,
                arith::SIToFPOp::create(b, b.getF32Type(),
                                        memref::LoadOp::create(b, q, idx)),
                memref::LoadOp::create(b, steps, g));
            Value vd = arith::ExtFOp::create(b, f64, v);
            Value diff = math::AbsFOp::create(
                b, arith::SubFOp::create(b, arith::ExtFOp::create(b, f64, back),
                                         vd));
            Value finite = arith::CmpFOp::create(
                b, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, v),
                arith::ConstantFloatOp::create(
                    b, b.getF32Type(), APFloat::getInf(APFloat::IEEEsingle())));
            Value s0 = memref::LoadOp::create(b, sums, ValueRange{index(b, 0)});
            Value s1 = memref::LoadOp::create(b, sums, ValueRange{index(b, 1)});
            memref::StoreOp::create(
                b,
                arith::SelectOp::create(b, finite,
                                        arith::AddFOp::create(b, s0, diff), s0),
                sums, ValueRange{index(b, 0)});
            memref::StoreOp::create(
                b,
                arith::SelectOp::create(
                    b, finite,
                    arith::AddFOp::create(b, s1, math::AbsFOp::create(b, vd)),
                    s1),
                sums, ValueRange{index(b, 1)});
          });
      Value diff = memref::LoadOp::create(b, sums, ValueRange{i0});
      Value total = memref::LoadOp::create(b, sums, ValueRange{i1v});
      Value err = math::Log2Op::create(
          b, arith::AddFOp::create(b, arith::DivFOp::create(b, diff, total),
                                   cF(b, 1.0)));
      Value noTotal =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, total, zero);
      return arith::SelectOp::create(b, noTotal, zero, err).getResult();
    };
    int64_t lo = op.getMin(), hi = op.getMax();
    int64_t init = std::min(std::max<int64_t>(op.getInit(), lo), hi);
    double low = op.getLow().convertToDouble(),
           high = op.getHigh().convertToDouble();
    int64_t farStep = op.getFarStep().value_or(0);
    double farMargin =
        op.getFarMargin() ? op.getFarMargin()->convertToDouble() : 0.0;
    // State: bits, previous bits, last direction, result, done.
    SmallVector<Type> state = {i32, i32, i32, i32, i1};
    SmallVector<Value> start = {cI(b, init), cI(b, init), cI(b, 0), cI(b, init),
                                arith::ConstantIntOp::create(b, i1, 0)};
    auto loop = scf::WhileOp::create(
        b, state, start,
        [&](OpBuilder &nb, Location loc, ValueRange st) {
          ImplicitLocOpBuilder wb(loc, nb);
          Value more = arith::XOrIOp::create(
              wb, st[4], arith::ConstantIntOp::create(wb, i1, 1));
          scf::ConditionOp::create(wb, more, st);
        },
        [&](OpBuilder &nb, Location loc, ValueRange st) {
          ImplicitLocOpBuilder wb(loc, nb);
          Value bits = st[0], prev = st[1], lastDir = st[2];
          Value err = errorAt(wb, bits);
          auto cmpF = [&](arith::CmpFPredicate p, Value a, double v) {
            return arith::CmpFOp::create(wb, p, a, cF(wb, v)).getResult();
          };
          auto cmpI = [&](arith::CmpIPredicate p, Value a, int64_t v) {
            return arith::CmpIOp::create(wb, p, a, cI(wb, v)).getResult();
          };
          Value up = arith::AndIOp::create(
              wb, cmpF(arith::CmpFPredicate::OGT, err, high),
              cmpI(arith::CmpIPredicate::slt, bits, hi));
          Value down = arith::AndIOp::create(
              wb,
              arith::XOrIOp::create(wb, up,
                                    arith::ConstantIntOp::create(wb, i1, 1)),
              arith::AndIOp::create(wb,
                                    cmpF(arith::CmpFPredicate::OLT, err, low),
                                    cmpI(arith::CmpIPredicate::sgt, bits, lo)));
          Value dir = arith::SelectOp::create(
              wb, up, cI(wb, 1),
              arith::SelectOp::create(wb, down, cI(wb, -1), cI(wb, 0)));
          Value excess = arith::SelectOp::create(
              wb, up, arith::SubFOp::create(wb, err, cF(wb, high)),
              arith::SubFOp::create(wb, cF(wb, low), err));
          // Stop: in the band; or crossing it downwards (keep bits); or
          // crossing it upwards (keep the previous, larger width).
          Value still = cmpI(arith::CmpIPredicate::eq, dir, 0);
          Value crossDown = arith::AndIOp::create(
              wb, cmpI(arith::CmpIPredicate::eq, lastDir, 1),
              cmpI(arith::CmpIPredicate::eq, dir, -1));
          Value crossUp = arith::AndIOp::create(
              wb, cmpI(arith::CmpIPredicate::eq, lastDir, -1),
              cmpI(arith::CmpIPredicate::eq, dir, 1));
          Value done = arith::OrIOp::create(
              wb, arith::OrIOp::create(wb, still, crossDown), crossUp);
          Value result = arith::SelectOp::create(wb, crossUp, prev, bits);
          Value stepSize = cI(wb, op.getStep());
          if (farStep > 0)
            stepSize = arith::SelectOp::create(
                wb, cmpF(arith::CmpFPredicate::OGT, excess, farMargin),
                cI(wb, farStep), stepSize);
          Value next = arith::AddIOp::create(
              wb, bits, arith::MulIOp::create(wb, dir, stepSize));
          next = arith::MinSIOp::create(
              wb, arith::MaxSIOp::create(wb, next, cI(wb, lo)), cI(wb, hi));
          scf::YieldOp::create(wb, ValueRange{next, bits, dir, result, done});
        });
    rw.replaceOp(op, loop.getResult(3));
    return success();
  }
};

/// Why the CPU lowering cannot take `op` yet, or success.
LogicalResult checkSupported(Operation *op) {
  auto fail = [&](const Twine &why) {
    return op->emitOpError("is not supported by tq-to-cpu: ") << why;
  };
  for (Type t :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tiled = dyn_cast<TiledType>(t);
    if (!tiled)
      continue;
    if (!tiled.hasStaticShape())
      return fail("dynamic shapes are not lowered yet");
    if (tiled.getHasOffset())
      return fail("scales with offsets are not lowered yet");
  }
  // Per-tile widths are read, as any tiled value is; only constants (and
  // their transposes) are made with them.
  if (!isa<ConstantOp, TransposeOp>(op))
    for (Type t : op->getResultTypes())
      if (auto tiled = dyn_cast<TiledType>(t);
          tiled && tiled.getBitsKind() == BitsKind::per_tile)
        return fail("per-tile bit widths computed at run time are not "
                    "lowered yet (constants may have them)");
  if (auto m = dyn_cast<MatmulOp>(op)) {
    auto ta = dyn_cast<TiledType>(m.getLhs().getType());
    auto tb = dyn_cast<TiledType>(m.getRhs().getType());
    if ((!ta || !tb) && cpu::rankOf(m.getLhs().getType()) != 2)
      return fail("batched mixed tiled x float matmuls are not lowered yet");
  }
  if (auto r = dyn_cast<RequantizeOp>(op)) {
    if (r.getRounding() == RoundingMode::stochastic)
      return fail("stochastic rounding is not lowered yet");
  }
  if (auto w = dyn_cast<WeightUpdateOp>(op))
    if (w.getRounding() == RoundingMode::stochastic)
      return fail("stochastic rounding is not lowered yet");
  if (auto a = dyn_cast<AdaptiveBitWidthOp>(op))
    if (!a.getType().isInteger(32))
      return fail("per-tile bit-width searches are not lowered yet");
  if (isa<QuantizeOp, DequantizeOp, StepsOp, ConstantOp, MatmulOp, Conv2DOp,
          AdaptiveBitWidthOp, TransposeOp, RequantizeOp, PostprocessOp,
          WeightUpdateOp>(op))
    return success();
  return fail("no CPU lowering for this op yet");
}

struct ConvertTQToCPU : mlir::tq::impl::ConvertTQToCPUBase<ConvertTQToCPU> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<CPUTarget> t = parseCPUTarget(target);
    if (!t) {
      module.emitError("tq-to-cpu: unknown target '")
          << target << "' (expected " << cpuTargetNames() << ")";
      return signalPassFailure();
    }
    WalkResult checked = module.walk([](Operation *op) {
      if (isa<TQDialect>(op->getDialect()) &&
          !isa<DotU8S8Op, DotU8S8PairsOp, DotI16Op>(op) &&
          failed(checkSupported(op)))
        return WalkResult::interrupt();
      if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
          cast && castsTiled(cast) && failed(checkTiledCast(cast)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    TiledToTensorsConverter converter;
    ConversionTarget legal(*ctx);
    legal.addIllegalDialect<TQDialect>();
    legal.addLegalOp<DotU8S8Op, DotU8S8PairsOp, DotI16Op>();
    legal.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    legal.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType()) &&
             converter.isLegal(&f.getBody());
    });
    legal.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    legal.addDynamicallyLegalOp<UnrealizedConversionCastOp>(
        [](UnrealizedConversionCastOp op) { return !castsTiled(op); });
    RewritePatternSet patterns(ctx);
    if (threads < 1) {
      module.emitError("tq-to-cpu: threads must be at least 1, got ")
          << static_cast<int64_t>(threads);
      return signalPassFailure();
    }
    CPUCodegenOptions options;
    options.target = *t;
    options.threads = threads;
    populateTQToCPUPatterns(converter, patterns, options);
    if (failed(applyPartialConversion(module, legal, std::move(patterns))))
      return signalPassFailure();
    module->setAttr("tq.cpu_target",
                    StringAttr::get(ctx, stringifyCPUTarget(*t)));
  }
};

} // namespace

void mlir::tq::populateTQToCPUPatterns(TypeConverter &converter,
                                       RewritePatternSet &patterns,
                                       const CPUCodegenOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<QuantizeLowering>(converter, ctx, options);
  patterns.add<DequantizeLowering, TransposeLowering, RequantizeLowering>(
      converter, ctx, options);
  patterns.add<TiledPartsCastLowering>(converter, ctx);
  patterns.add<StepsLowering, ConstantLowering, PostprocessLowering,
               WeightUpdateLowering, AdaptiveBitWidthLowering>(converter, ctx);
  populateTQMatmulToCPUPatterns(converter, patterns, options);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
}
