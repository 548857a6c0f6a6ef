//===- AdjointStructured.cpp - gradients of matmul, conv and pooling ------===//
//
// The gradient GEMMs are emitted as linalg.matmul on transposed operands,
// marked with their roles (SPEC T2, T7):
//
//   Y = A·B          dA = dY·Bᵀ,        dB = Aᵀ·dY
//   Y = conv(X, W)   dX = col2im(dY·W), dW = dYᵀ·im2col(X)
//
// so that tq-quantize quantizes each of them on V×V tiles and
// tq-fold-transposes reads a stored tensor's tiles transposed. A
// convolution with unit strides and dilations gets two convolutions
// instead, which read X and dY as they are stored (no im2col in f32):
//
//   dW = (Xᵀ ⋆ dYᵀ)ᵀ         the batch is the contraction: [C, N] ⋆ [F, N]
//   dX = pad(dY, K − 1) ⋆ flip(W)ᵀ
//
// Pooling routes dY to the taps of each window: all of them for a sum,
// the first maximum in window order for a max (as torch does), in one
// generic over the windows when they do not overlap.
//
//===----------------------------------------------------------------------===//
#include "tq/Dialect/TQ/Transforms/Autodiff.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq;

namespace {

/// The forward role of `v` for the gradient GEMMs: a weight stays a weight,
/// anything else is an activation.
Role forwardRole(AdjointContext &ctx, Value v) {
  return ctx.roles.getRole(v) == Role::weight ? Role::weight : Role::activation;
}

SmallVector<int64_t> shapeOf(Value v) {
  return llvm::to_vector(cast<RankedTensorType>(v.getType()).getShape());
}

/// `x` reshaped by `groups` into `shape` (collapse when it has fewer dims).
Value reshape(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape,
              ArrayRef<ReassociationIndices> groups) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(x.getType()).getElementType());
  if (shape.size() < shapeOf(x).size())
    return tensor::CollapseShapeOp::create(b, loc, type, x, groups);
  return tensor::ExpandShapeOp::create(b, loc, type, x, groups);
}

/// The rank-reduced slice `x[..., i, j]` of the two trailing dims.
Value trailingSlice(OpBuilder &b, Location loc, Value x, int64_t i, int64_t j) {
  SmallVector<int64_t> shape = shapeOf(x);
  size_t rank = shape.size();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  offsets[rank - 2] = b.getIndexAttr(i);
  offsets[rank - 1] = b.getIndexAttr(j);
  for (auto [d, s] : llvm::enumerate(shape))
    sizes.push_back(b.getIndexAttr(d + 2 >= rank ? 1 : s));
  auto type =
      RankedTensorType::get(ArrayRef(shape).drop_back(2), b.getF32Type());
  return tensor::ExtractSliceOp::create(b, loc, type, x, offsets, sizes,
                                        strides);
}

/// The strided view of an NCHW input that window tap (kh, kw) meets: the
/// [N, C, OH, OW] elements `x[n, c, oh·sh + kh·dh, ow·sw + kw·dw]`.
struct TapView {
  SmallVector<OpFoldResult> offsets, sizes, strides;

  TapView(OpBuilder &b, ArrayRef<int64_t> yShape, int64_t kh, int64_t kw,
          ArrayRef<int64_t> windowStrides, ArrayRef<int64_t> dilations)
      : offsets{b.getIndexAttr(0), b.getIndexAttr(0),
                b.getIndexAttr(kh * dilations[0]),
                b.getIndexAttr(kw * dilations[1])},
        strides{b.getIndexAttr(1), b.getIndexAttr(1),
                b.getIndexAttr(windowStrides[0]),
                b.getIndexAttr(windowStrides[1])} {
    for (int64_t s : yShape)
      sizes.push_back(b.getIndexAttr(s));
  }
};

/// The elements of `x` that window tap (kh, kw) meets.
Value windowTap(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> yShape,
                int64_t kh, int64_t kw, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> dilations) {
  TapView v(b, yShape, kh, kw, strides, dilations);
  auto type = RankedTensorType::get(yShape, b.getF32Type());
  return tensor::ExtractSliceOp::create(b, loc, type, x, v.offsets, v.sizes,
                                        v.strides);
}

/// The gradient of a max pool whose windows do not overlap: one
/// linalg.generic over the windows routes dY to the first tap equal to the
/// maximum (in window order) and writes one tensor per tap, each placed
/// into its strided view of dX (no view meets another). With `reluMask`
/// (X is a ReLU's output and the pool its only reader), each tap also takes
/// the ReLU's gradient rule, 0 unless X > 0 (`ugt`), so that the result is
/// the gradient of the ReLU's input, bit for bit what the two rules give.
Value emitDisjointMaxPoolAdjoint(OpBuilder &b, Location loc, Value x, Value y,
                                 Value gY, ArrayRef<int64_t> window,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations, bool reluMask) {
  SmallVector<int64_t> ys = shapeOf(y), xs = shapeOf(x);
  int64_t taps = window[0] * window[1];
  // Windows that tile X exactly write every element of dX: no zeros.
  bool tiles = true;
  for (int d = 0; d < 2; ++d)
    tiles &= dilations[d] == 1 && strides[d] == window[d] &&
             xs[2 + d] == ys[2 + d] * strides[d];
  auto xType = cast<RankedTensorType>(x.getType());
  Value gX =
      tiles ? tensor::EmptyOp::create(b, loc, xs, b.getF32Type()).getResult()
            : emitZeros(b, loc, xType);
  // Each tap's result is written where it goes in dX (its strided view),
  // so that bufferization puts it there in place.
  auto yType = cast<RankedTensorType>(y.getType());
  SmallVector<Value> ins, outs;
  for (int64_t i = 0; i < window[0]; ++i)
    for (int64_t j = 0; j < window[1]; ++j) {
      ins.push_back(windowTap(b, loc, x, ys, i, j, strides, dilations));
      TapView v(b, ys, i, j, strides, dilations);
      outs.push_back(tensor::ExtractSliceOp::create(
          b, loc, yType, gX, v.offsets, v.sizes, v.strides));
    }
  ins.append({y, gY});
  SmallVector<AffineMap> maps(ins.size() + outs.size(),
                              b.getMultiDimIdentityMap(4));
  auto routed = linalg::GenericOp::create(
      b, loc, SmallVector<Type>(taps, y.getType()), ins, outs, maps,
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value zero =
            arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(0.0));
        Value yes = arith::ConstantOp::create(nb, nloc, nb.getBoolAttr(true));
        Value max = args[taps], g = args[taps + 1], found;
        SmallVector<Value> routedTaps;
        for (int64_t t = 0; t < taps; ++t) {
          Value eq = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                           args[t], max);
          Value take = found ? arith::AndIOp::create(
                                   nb, nloc, eq,
                                   arith::XOrIOp::create(nb, nloc, found, yes))
                                   .getResult()
                             : eq;
          found = found ? arith::OrIOp::create(nb, nloc, found, eq).getResult()
                        : eq;
          if (reluMask)
            take = arith::AndIOp::create(
                nb, nloc, take,
                arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::UGT,
                                      args[t], zero));
          routedTaps.push_back(
              arith::SelectOp::create(nb, nloc, take, g, zero));
        }
        linalg::YieldOp::create(nb, nloc, routedTaps);
      });
  for (int64_t t = 0; t < taps; ++t) {
    TapView v(b, ys, t / window[1], t % window[1], strides, dilations);
    gX = tensor::InsertSliceOp::create(b, loc, routed.getResult(t), gX,
                                       v.offsets, v.sizes, v.strides);
  }
  return gX;
}

SmallVector<int64_t> i64s(DenseIntElementsAttr attr) {
  return llvm::to_vector(attr.getValues<int64_t>());
}

/// `x` padded with `value`, `low[d]` and `high[d]` elements on each dim d.
Value padWith(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
              ArrayRef<int64_t> high, Value value) {
  SmallVector<int64_t> shape = shapeOf(x);
  SmallVector<OpFoldResult> lo, hi;
  for (auto [d, size] : llvm::enumerate(shape)) {
    size += low[d] + high[d];
    lo.push_back(b.getIndexAttr(low[d]));
    hi.push_back(b.getIndexAttr(high[d]));
  }
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, b.getF32Type()), x, lo, hi, value);
}

/// flip(W)ᵀ[c, f, i, j] = W[f, c, KH − 1 − i, KW − 1 − j].
Value flipFilter(OpBuilder &b, Location loc, Value w) {
  SmallVector<int64_t> ws = shapeOf(w);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  AffineMap read =
      AffineMap::get(4, 0, {d1, d0, ws[2] - 1 - d2, ws[3] - 1 - d3}, ctx);
  Value init = tensor::EmptyOp::create(b, loc, {ws[1], ws[0], ws[2], ws[3]},
                                       b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, init.getType(), w, init,
             ArrayRef<AffineMap>{read, b.getMultiDimIdentityMap(4)},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, args[0]);
             })
      .getResult(0);
}

/// The gradients of a convolution with unit strides and dilations, as
/// convolutions. When X is a padding of a source tensor by a constant on H
/// and W, Xᵀ is the transposed source padded again (tq-quantize then reads
/// the source's tiles, as the forward does), and dX is computed for the
/// source directly, without the border the padding's gradient would drop.
void emitUnitConvAdjoint(AdjointContext &ctx, linalg::Conv2DNchwFchwOp conv) {
  OpBuilder &b = ctx.builder;
  Location loc = conv.getLoc();
  Value x = conv.getInputs()[0], w = conv.getInputs()[1];
  Value gY = ctx.grads.lookup(conv.getResult(0));
  SmallVector<int64_t> ws = shapeOf(w);
  Value src = x, padValue;
  SmallVector<int64_t> low(4, 0), high(4, 0);
  if (auto p = x.getDefiningOp<tensor::PadOp>()) {
    ArrayRef<int64_t> lo = p.getStaticLow(), hi = p.getStaticHigh();
    padValue = p.getConstantPaddingValue();
    if (p.getLow().empty() && p.getHigh().empty() && padValue && !lo[0] &&
        !lo[1] && !hi[0] && !hi[1]) {
      src = p.getSource();
      low.assign(lo.begin(), lo.end());
      high.assign(hi.begin(), hi.end());
    }
  }
  if (ctx.isActive(w)) {
    Value xT = emitTranspose(b, loc, src, {1, 0, 2, 3});
    if (src != x)
      xT = padWith(b, loc, xT, low, high, padValue);
    Value gWT = emitConv(b, loc, xT, emitTranspose(b, loc, gY, {1, 0, 2, 3}),
                         forwardRole(ctx, x), Role::output_grad);
    ctx.grads.accumulate(b, loc, w, emitTranspose(b, loc, gWT, {1, 0, 2, 3}));
  }
  if (ctx.isActive(x)) {
    SmallVector<int64_t> gLow{0, 0, ws[2] - 1, ws[3] - 1}, gHigh = gLow;
    bool viaSource = src != x;
    for (int d = 2; d < 4; ++d)
      viaSource = viaSource && low[d] <= gLow[d] && high[d] <= gHigh[d];
    if (viaSource)
      for (int d = 2; d < 4; ++d) {
        gLow[d] -= low[d];
        gHigh[d] -= high[d];
      }
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    Value gX =
        emitConv(b, loc, padWith(b, loc, gY, gLow, gHigh, zero),
                 flipFilter(b, loc, w), Role::output_grad, forwardRole(ctx, w));
    ctx.grads.accumulate(b, loc, viaSource ? src : x, gX);
  }
}

} // namespace

LogicalResult mlir::tq::emitMatmulAdjoint(AdjointContext &ctx, Operation *op) {
  FailureOr<ComputeOp> mm = matchComputeOp(op);
  if (failed(mm) || mm->transposeA || mm->transposeB)
    return op->emitOpError("is not a plain f32 matmul: no gradient rule");
  OpBuilder &b = ctx.builder;
  Location loc = op->getLoc();
  Value gY = ctx.grads.lookup(op->getResult(0));
  if (ctx.isActive(mm->lhs)) // dA = dY·Bᵀ
    ctx.grads.accumulate(
        b, loc, mm->lhs,
        emitMatmul(b, loc, gY, emitTranspose(b, loc, mm->rhs, {1, 0}),
                   Role::output_grad, forwardRole(ctx, mm->rhs)));
  // B = Wᵀ (a Gemm's transB): dW = dYᵀ·A in W's layout, the same sums as
  // (Aᵀ·dY)ᵀ without the transpose of the result.
  auto transposed = mm->rhs.getDefiningOp<linalg::TransposeOp>();
  if (transposed && ctx.isActive(transposed.getInput()) &&
      transposed.getPermutation() == ArrayRef<int64_t>{1, 0})
    ctx.grads.accumulate(b, loc, transposed.getInput(),
                         emitMatmul(b, loc, emitTranspose(b, loc, gY, {1, 0}),
                                    mm->lhs, Role::output_grad,
                                    forwardRole(ctx, mm->lhs)));
  else if (ctx.isActive(mm->rhs)) // dB = Aᵀ·dY
    ctx.grads.accumulate(
        b, loc, mm->rhs,
        emitMatmul(b, loc, emitTranspose(b, loc, mm->lhs, {1, 0}), gY,
                   forwardRole(ctx, mm->lhs), Role::output_grad));
  if (ctx.isActive(mm->init))
    ctx.grads.accumulate(b, loc, mm->init, gY);
  return success();
}

LogicalResult mlir::tq::emitConvAdjoint(AdjointContext &ctx, Operation *op) {
  auto conv = cast<linalg::Conv2DNchwFchwOp>(op);
  OpBuilder &b = ctx.builder;
  Location loc = op->getLoc();
  Value x = conv.getInputs()[0], w = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  Value gY = ctx.grads.lookup(op->getResult(0));
  SmallVector<int64_t> ws = shapeOf(w), ys = shapeOf(gY);
  SmallVector<int64_t> strides = i64s(conv.getStrides()),
                       dilations = i64s(conv.getDilations());
  int64_t n = ys[0], f = ys[1], oh = ys[2], ow = ys[3];
  int64_t c = ws[1], kh = ws[2], kw = ws[3];
  int64_t rows = n * oh * ow, cols = c * kh * kw;
  // Unit strides and dilations on an input the windows use exactly (as
  // the importer's convolutions are): the convolution form.
  SmallVector<int64_t> xs = shapeOf(x);
  if (llvm::all_of(strides, [](int64_t s) { return s == 1; }) &&
      llvm::all_of(dilations, [](int64_t d) { return d == 1; }) &&
      xs[2] == oh + kh - 1 && xs[3] == ow + kw - 1) {
    emitUnitConvAdjoint(ctx, conv);
    if (ctx.isActive(init))
      ctx.grads.accumulate(b, loc, init, gY);
    return success();
  }

  // dY as the [N·OH·OW, F] matrix of the GEMM form.
  Value gYMat = reshape(b, loc, emitTranspose(b, loc, gY, {0, 2, 3, 1}),
                        {rows, f}, {{0, 1, 2}, {3}});
  if (ctx.isActive(w)) {
    // im2col(X)[n·oh·ow, c·kh·kw] = X[n, c, oh·sh + kh·dh, ow·sw + kw·dw]
    auto colType =
        RankedTensorType::get({n, oh, ow, c, kh, kw}, b.getF32Type());
    MLIRContext *mctx = b.getContext();
    AffineExpr d[6];
    bindDims(mctx, d[0], d[1], d[2], d[3], d[4], d[5]);
    AffineMap xMap =
        AffineMap::get(6, 0,
                       {d[0], d[3], d[1] * strides[0] + d[4] * dilations[0],
                        d[2] * strides[1] + d[5] * dilations[1]},
                       mctx);
    Value colInit =
        tensor::EmptyOp::create(b, loc, colType.getShape(), b.getF32Type());
    Value col =
        linalg::GenericOp::create(
            b, loc, colType, x, colInit,
            ArrayRef<AffineMap>{xMap, b.getMultiDimIdentityMap(6)},
            SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location nloc, ValueRange args) {
              linalg::YieldOp::create(nb, nloc, args[0]);
            })
            .getResult(0);
    Value colMat = reshape(b, loc, col, {rows, cols}, {{0, 1, 2}, {3, 4, 5}});
    Value gWMat = emitMatmul(b, loc, emitTranspose(b, loc, gYMat, {1, 0}),
                             colMat, Role::output_grad, forwardRole(ctx, x));
    ctx.grads.accumulate(b, loc, w,
                         reshape(b, loc, gWMat, ws, {{0}, {1, 2, 3}}));
  }
  if (ctx.isActive(x)) {
    // col2im(dY·W): each tap (kh, kw) of dXcol, an [N, OH, OW, C] slice,
    // adds into a strided window of dX, accumulated in NHWC (the layout of
    // dXcol's rows) and transposed to NCHW once.
    Value wMat = reshape(b, loc, w, {f, cols}, {{0}, {1, 2, 3}});
    Value gCol =
        emitMatmul(b, loc, gYMat, wMat, Role::output_grad, forwardRole(ctx, w));
    Value gCol6 =
        reshape(b, loc, gCol, {n, oh, ow, c, kh, kw}, {{0, 1, 2}, {3, 4, 5}});
    Value gX = emitZeros(
        b, loc,
        RankedTensorType::get({xs[0], xs[2], xs[3], xs[1]}, b.getF32Type()));
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j)
        gX = emitStridedAccumulate(b, loc, gX,
                                   trailingSlice(b, loc, gCol6, i, j),
                                   {0, i * dilations[0], j * dilations[1], 0},
                                   {1, strides[0], strides[1], 1});
    ctx.grads.accumulate(b, loc, x, emitTranspose(b, loc, gX, {0, 3, 1, 2}));
  }
  if (ctx.isActive(init))
    ctx.grads.accumulate(b, loc, init, gY);
  return success();
}

LogicalResult mlir::tq::emitPoolAdjoint(AdjointContext &ctx, Operation *op) {
  auto pool = cast<linalg::LinalgOp>(op);
  OpBuilder &b = ctx.builder;
  Location loc = op->getLoc();
  Value x = pool.getDpsInputOperand(0)->get();
  Value y = op->getResult(0);
  Value gY = ctx.grads.lookup(y);
  SmallVector<int64_t> window = shapeOf(pool.getDpsInputOperand(1)->get());
  SmallVector<int64_t> ys = shapeOf(y), strides, dilations;
  if (auto m = dyn_cast<linalg::PoolingNchwMaxOp>(op)) {
    strides = i64s(m.getStrides());
    dilations = i64s(m.getDilations());
  } else {
    auto s = cast<linalg::PoolingNchwSumOp>(op);
    strides = i64s(s.getStrides());
    dilations = i64s(s.getDilations());
  }
  if (!ctx.isActive(x))
    return success();
  bool isMax = isa<linalg::PoolingNchwMaxOp>(op);
  bool disjoint = true;
  for (int d = 0; d < 2; ++d)
    disjoint &= strides[d] >= (window[d] - 1) * dilations[d] + 1;
  if (isMax && disjoint) {
    // A ReLU read by this pool alone: its rule is folded into the routing,
    // and its own rule is then skipped (its output gets no gradient).
    Operation *relu = x.getDefiningOp();
    bool fuseRelu = relu && isRelu(relu) && x.hasOneUse() &&
                    ctx.isActive(relu->getOperand(0));
    Value gX = emitDisjointMaxPoolAdjoint(b, loc, x, y, gY, window, strides,
                                          dilations, fuseRelu);
    ctx.grads.accumulate(b, loc, fuseRelu ? relu->getOperand(0) : x, gX);
    return success();
  }
  auto i1Type = RankedTensorType::get(ys, b.getI1Type());
  Value found;
  if (isMax) {
    Value empty = tensor::EmptyOp::create(b, loc, ys, b.getI1Type());
    Value no = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    found = linalg::FillOp::create(b, loc, no, empty).getResult(0);
  }
  auto yType = cast<RankedTensorType>(y.getType());
  AffineMap id = b.getMultiDimIdentityMap(4);
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  Value gX = emitZeros(b, loc, cast<RankedTensorType>(x.getType()));
  for (int64_t i = 0; i < window[0]; ++i) {
    for (int64_t j = 0; j < window[1]; ++j) {
      Value contrib = gY;
      if (isMax) {
        // The first tap equal to the maximum takes the gradient.
        Value tap = windowTap(b, loc, x, ys, i, j, strides, dilations);
        auto routed = linalg::GenericOp::create(
            b, loc, TypeRange{yType, i1Type}, ValueRange{tap, y, gY, found},
            ValueRange{emitZeros(b, loc, yType), found},
            ArrayRef<AffineMap>{id, id, id, id, id, id}, iters,
            [](OpBuilder &nb, Location nloc, ValueRange args) {
              Value eq = arith::CmpFOp::create(
                  nb, nloc, arith::CmpFPredicate::OEQ, args[0], args[1]);
              Value yes =
                  arith::ConstantOp::create(nb, nloc, nb.getBoolAttr(true));
              Value notFound = arith::XOrIOp::create(nb, nloc, args[3], yes);
              Value take = arith::AndIOp::create(nb, nloc, eq, notFound);
              Value zero =
                  arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(0.0));
              Value g = arith::SelectOp::create(nb, nloc, take, args[2], zero);
              Value now = arith::OrIOp::create(nb, nloc, args[3], eq);
              linalg::YieldOp::create(nb, nloc, ValueRange{g, now});
            });
        contrib = routed.getResult(0);
        found = routed.getResult(1);
      }
      gX = emitStridedAccumulate(b, loc, gX, contrib,
                                 {0, 0, i * dilations[0], j * dilations[1]},
                                 {1, 1, strides[0], strides[1]});
    }
  }
  ctx.grads.accumulate(b, loc, x, gX);
  return success();
}
