//===- InsertQuantization.cpp - float compute ops to tq ops ---------------===//
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Roles.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQINSERTQUANTIZATION
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

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

FailureOr<TiledType> QuantizationOptions::typeFor(MLIRContext *ctx,
                                                  ArrayRef<int64_t> shape,
                                                  Role role,
                                                  ArrayRef<int64_t> dims,
                                                  unsigned contracted) const {
  int64_t bits = bitsFor(role);
  unsigned width = bits <= 4 ? 4 : bits <= 8 ? 8 : 16;
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
  if (c.kind == ComputeOp::Kind::Conv2DNhwcFhwc)
    return 1; // C, for both input and filter
  if (i == 0)
    return c.transposeA ? 0 : 1;
  return c.transposeB ? 1 : 0;
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

static bool keptInFloat(Operation *op, const QuantizationOptions &options) {
  return op->hasAttr(kKeepFloatAttr) ||
         llvm::is_contained(options.keepFloat,
                            op->getName().getStringRef().str());
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

LogicalResult mlir::tq::verifyQuantization(Operation *root,
                                           const QuantizationOptions &o) {
  if (o.tile <= 0)
    return root->emitError("tile must be positive, got ") << o.tile;
  for (auto [name, bits] :
       {std::pair<const char *, int64_t>{"act-bits", o.actBits},
        {"weight-bits", o.weightBits},
        {"grad-bits", o.gradBits}})
    if (bits < 2 || bits > 16)
      return root->emitError() << name << " must be in [2, 16], got " << bits;
  WalkResult result = root->walk([&](Operation *op) {
    FailureOr<ComputeOp> c = matchComputeOp(op);
    if (failed(c) || keptInFloat(op, o))
      return WalkResult::advance();
    Role roles[2];
    SmallVector<int64_t, 2> dims[2];
    readAnnotations(*c, roles, dims);
    for (unsigned i = 0; i < 2; ++i) {
      SmallVector<int64_t, 2> expected = getDefaultSplitDims(*c, i);
      if (dims[i] != expected) {
        op->emitOpError("split dims [")
            << dims[i][0] << ", " << dims[i][1] << "] of operand #" << i
            << " are not supported by "
            << (c->kind == ComputeOp::Kind::Conv2DNhwcFhwc ? "tq.conv2d"
                                                           : "tq.matmul")
            << ", which needs [" << expected[0] << ", " << expected[1] << "]";
        return WalkResult::interrupt();
      }
    }
    Value operands[2] = {c->lhs, c->rhs};
    int64_t kTile[2];
    for (unsigned i = 0; i < 2; ++i) {
      auto shape = cast<RankedTensorType>(operands[i].getType()).getShape();
      unsigned k = contractedSplitDim(*c, i);
      FailureOr<TiledType> type =
          o.typeFor(op->getContext(), shape, roles[i], dims[i], k);
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
    bool both = o.quantizes(roles[0]) && o.quantizes(roles[1]);
    int64_t ba = o.bitsFor(roles[0]), bb = o.bitsFor(roles[1]);
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

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// Whether `init` is a linalg.fill of 0.0 (a fresh accumulator).
bool isZeroInit(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.value(), m_AnyZeroFloat());
}

/// Folds a zero tensor.pad on H and W in front of a conv input into the
/// conv's padding [top, left, bottom, right].
Value foldInputPadding(Value input, SmallVector<int64_t, 4> &padding) {
  padding.assign(4, 0);
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad || pad.getNofold())
    return input;
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue || !matchPattern(padValue, m_AnyZeroFloat()))
    return input;
  SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
  if (llvm::any_of(low, ShapedType::isDynamic) ||
      llvm::any_of(high, ShapedType::isDynamic) || low[0] || high[0] ||
      low[3] || high[3])
    return input;
  padding = {low[1], low[2], high[1], high[2]};
  return pad.getSource();
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
    if (keptInFloat(op, options))
      return rewriter.notifyMatchFailure(op, "kept in float");
    if (!op->hasAttr(kRolesAttr) || !op->hasAttr(kSplitDimsAttr))
      return rewriter.notifyMatchFailure(op, "roles are not annotated");
    Role roles[2];
    SmallVector<int64_t, 2> dims[2];
    readAnnotations(*c, roles, dims);
    bool quantize[2] = {options.quantizes(roles[0]),
                        options.quantizes(roles[1])};
    bool isConv = c->kind == ComputeOp::Kind::Conv2DNhwcFhwc;
    if (!quantize[0] && !quantize[1])
      return rewriter.notifyMatchFailure(op, "no operand to quantize");
    if (isConv && !(quantize[0] && quantize[1]))
      return rewriter.notifyMatchFailure(op,
                                         "tq.conv2d quantizes both operands");

    Location loc = op->getLoc();
    SmallVector<int64_t, 4> padding(4, 0);
    Value inputs[2] = {c->lhs, c->rhs};
    if (isConv)
      inputs[0] = foldInputPadding(inputs[0], padding);
    for (unsigned i = 0; i < 2; ++i) {
      if (!quantize[i])
        continue;
      auto type = cast<RankedTensorType>(inputs[i].getType());
      FailureOr<TiledType> tiled =
          options.typeFor(op->getContext(), type.getShape(), roles[i], dims[i],
                          contractedSplitDim(*c, i));
      if (failed(tiled))
        return rewriter.notifyMatchFailure(op, "no static size");
      inputs[i] = QuantizeOp::create(rewriter, loc, *tiled, inputs[i]);
    }
    Type resultType = op->getResult(0).getType();
    Value result;
    if (isConv) {
      result = Conv2DOp::create(
          rewriter, loc, resultType, inputs[0], inputs[1],
          rewriter.getDenseI64ArrayAttr(c->strides),
          rewriter.getDenseI64ArrayAttr(c->dilations),
          rewriter.getDenseI64ArrayAttr(padding),
          ScaleProductAttr::get(op->getContext(), ScaleProduct::exact));
    } else {
      result = MatmulOp::create(rewriter, loc, resultType, inputs[0], inputs[1],
                                c->transposeA, c->transposeB);
    }
    if (!isZeroInit(c->init))
      result = arith::AddFOp::create(rewriter, loc, result, c->init);
    rewriter.replaceOp(op, result);
    return success();
  }

  QuantizationOptions options;
};

struct TQInsertQuantizationPass
    : mlir::tq::impl::TQInsertQuantizationBase<TQInsertQuantizationPass> {
  using Base::Base;

  void runOnOperation() override {
    QuantizationOptions o;
    o.tile = tile;
    o.actBits = actBits;
    o.weightBits = weightBits;
    o.gradBits = gradBits;
    o.scaleKind = scaleKind;
    o.operands = operands;
    o.granularity = granularity;
    o.keepFloat.assign(keepFloat.begin(), keepFloat.end());
    Operation *root = getOperation();
    if (failed(annotateRolesAndSplitDims(root)) ||
        failed(verifyQuantization(root, o)))
      return signalPassFailure(); // diagnostics name the option or op
    RewritePatternSet patterns(&getContext());
    populateInsertQuantizationPatterns(patterns, o);
    walkAndApplyPatterns(root, std::move(patterns));
  }
};

} // namespace

void mlir::tq::populateInsertQuantizationPatterns(
    RewritePatternSet &patterns, const QuantizationOptions &options) {
  patterns.add<QuantizeComputeOp>(patterns.getContext(), options);
}
