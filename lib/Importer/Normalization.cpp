//===- Normalization.cpp - Batch, layer, instance and local normalization ===//
//
// Inference BatchNormalization (when it does not fold into a Conv),
// LayerNormalization, InstanceNormalization and LRN.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

static constexpr auto f = f32Constant;

LogicalResult Importer::importBatchNormalization(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"epsilon", "momentum", "training_mode", "spatial"})))
    return failure();
  // Opsets 7 and 8: spatial = 0 normalizes each activation on its own.
  FailureOr<int64_t> spatial = intAttr(n, "spatial", 1);
  if (failed(spatial))
    return failure();
  if (!*spatial)
    return fail(nodeName(n) + ": spatial = 0 is not supported");
  FailureOr<int64_t> trainingMode = intAttr(n, "training_mode", 0);
  if (failed(trainingMode))
    return failure();
  if (*trainingMode || (n.output_size() > 1 && !n.output(1).empty()))
    return fail(nodeName(n) + ": only inference mode is supported");
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size();
  if (rank < 2)
    return fail(nodeName(n) + ": the input needs a channel dimension");
  // [C] parameters broadcast along dim 1.
  auto channel = [&](int i) -> FailureOr<Value> {
    SmallVector<int64_t> shape = {shapeOf(*x)[1]};
    for (int64_t d = 2; d < rank; ++d)
      shape.push_back(1);
    FailureOr<Value> p = input(n, i);
    if (failed(p))
      return failure();
    return reshape(*p, shape);
  };
  FailureOr<float> eps = floatAttr(n, "epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  SmallVector<Value> ins = {*x};
  for (int i = 1; i <= 4; ++i) {
    FailureOr<Value> c = channel(i);
    if (failed(c))
      return failure();
    ins.push_back(*c);
  }
  return define(
      n, elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value d = arith::SubFOp::create(nb, l, v[0], v[3]);
        Value s = math::SqrtOp::create(
            nb, l, arith::AddFOp::create(nb, l, v[4], f(nb, l, *eps)));
        Value y = arith::DivFOp::create(nb, l, d, s);
        return arith::AddFOp::create(
                   nb, l, arith::MulFOp::create(nb, l, y, v[1]), v[2])
            .getResult();
      }));
}

/// The mean of `x` over `axes` (kept as 1s), and `x` minus it with the
/// variance: the statistics of layer and instance normalization.
static FailureOr<std::tuple<Value, Value, Value>>
moments(Importer &im, const onnx::NodeProto &n, Value x,
        ArrayRef<int64_t> axes) {
  FailureOr<Value> mean = im.reduce(x, axes, true, "mean");
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = im.elementwise(
      {x, *mean}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return arith::SubFOp::create(nb, l, v[0], v[1]).getResult();
      });
  if (failed(centered))
    return failure();
  FailureOr<Value> sq = im.elementwise(
      {*centered}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return arith::MulFOp::create(nb, l, v[0], v[0]).getResult();
      });
  if (failed(sq))
    return failure();
  FailureOr<Value> var = im.reduce(*sq, axes, true, "mean");
  if (failed(var))
    return failure();
  return std::make_tuple(*mean, *centered, *var);
}

/// (x - mean) / sqrt(var + eps) · scale + B per sample and channel, over
/// the spatial dims.
LogicalResult Importer::importInstanceNormalization(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"epsilon"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size();
  if (rank < 3)
    return fail(nodeName(n) + ": the input must be [N, C, D1, ...]");
  SmallVector<int64_t> axes, channel = {shapeOf(*x)[1]};
  for (int64_t d = 2; d < rank; ++d) {
    axes.push_back(d);
    channel.push_back(1);
  }
  FailureOr<float> eps = floatAttr(n, "epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  FailureOr<std::tuple<Value, Value, Value>> m = moments(*this, n, *x, axes);
  if (failed(m))
    return failure();
  auto [mean, centered, var] = *m;
  FailureOr<Value> scale = input(n, 1);
  if (failed(scale))
    return failure();
  FailureOr<Value> bias = input(n, 2);
  if (failed(bias))
    return failure();
  return define(
      n, elementwise(
             {centered, var, reshape(*scale, channel), reshape(*bias, channel)},
             n, [&](OpBuilder &nb, Location l, ValueRange v) {
               Value s = math::SqrtOp::create(
                   nb, l, arith::AddFOp::create(nb, l, v[1], f(nb, l, *eps)));
               Value y = arith::MulFOp::create(
                   nb, l, arith::DivFOp::create(nb, l, v[0], s), v[2]);
               return arith::AddFOp::create(nb, l, y, v[3]).getResult();
             }));
}

/// LRN: x / (bias + α/size · Σ x²)^β, the sum over the channels from
/// c - ⌊(size-1)/2⌋ to c + ⌈(size-1)/2⌉: the squares padded along C and
/// summed by a linalg.generic with the window as a reduction dim.
LogicalResult Importer::importLRN(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"alpha", "beta", "bias", "size"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  FailureOr<int64_t> sizeAttr = intAttr(n, "size", 0);
  if (failed(sizeAttr))
    return failure();
  int64_t rank = xs.size(), size = *sizeAttr;
  if (rank < 3 || size < 1 || size > kMaxDim)
    return fail(nodeName(n) +
                ": needs an [N, C, D1, ...] input and a size from 1 "
                "to 2^31-1");
  FailureOr<float> alphaAttr = floatAttr(n, "alpha", 1e-4f);
  if (failed(alphaAttr))
    return failure();
  FailureOr<float> betaAttr = floatAttr(n, "beta", 0.75f);
  if (failed(betaAttr))
    return failure();
  FailureOr<float> biasAttr = floatAttr(n, "bias", 1.0f);
  if (failed(biasAttr))
    return failure();
  float alpha = *alphaAttr, beta = *betaAttr, bias = *biasAttr;
  FailureOr<Value> sq =
      elementwise({*x}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return arith::MulFOp::create(nb, l, v[0], v[0]).getResult();
      });
  if (failed(sq))
    return failure();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (size - 1) / 2;
  high[1] = size - 1 - low[1];
  Value padded = padConstant(*sq, low, high, 0.0f);
  // Dims: the output's, then the window k; padded[n, c + k, ...].
  SmallVector<AffineExpr> in, out;
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr e = getAffineDimExpr(d, ctx);
    out.push_back(e);
    in.push_back(d == 1 ? e + getAffineDimExpr(rank, ctx) : e);
  }
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value window =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{size}, b.getF32Type());
  Value zero =
      linalg::FillOp::create(
          b, loc, ValueRange{f(b, loc, 0.0f)},
          ValueRange{tensor::EmptyOp::create(b, loc, xs, b.getF32Type())})
          .getResult(0);
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{zero.getType()}, ValueRange{padded, window},
          ValueRange{zero},
          SmallVector<AffineMap>{
              AffineMap::get(rank + 1, 0, in, ctx),
              AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
              AffineMap::get(rank + 1, 0, out, ctx)},
          iters,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::AddFOp::create(nb, l, a[2], a[0])});
          })
          .getResult(0);
  return define(
      n,
      elementwise({*x, sum}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value d = arith::AddFOp::create(
            nb, l, f(nb, l, bias),
            arith::MulFOp::create(nb, l, f(nb, l, alpha / float(size)), v[1]));
        return arith::DivFOp::create(
                   nb, l, v[0], math::PowFOp::create(nb, l, d, f(nb, l, beta)))
            .getResult();
      }));
}

LogicalResult Importer::importLayerNormalization(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"axis", "epsilon", "stash_type"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size();
  FailureOr<int64_t> axis = axisAttr(n, "axis", -1, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  FailureOr<float> eps = floatAttr(n, "epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  FailureOr<std::tuple<Value, Value, Value>> m = moments(*this, n, *x, axes);
  if (failed(m))
    return failure();
  auto [mean, centered, var] = *m;
  FailureOr<Value> scale = input(n, 1);
  if (failed(scale))
    return failure();
  SmallVector<Value> ins = {centered, var, *scale};
  bool bias = n.input_size() > 2 && !n.input(2).empty();
  if (bias) {
    FailureOr<Value> biasInput = input(n, 2);
    if (failed(biasInput))
      return failure();
    ins.push_back(*biasInput);
  }
  if (failed(define(
          n, elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
            Value s = math::SqrtOp::create(
                nb, l, arith::AddFOp::create(nb, l, v[1], f(nb, l, *eps)));
            Value y = arith::MulFOp::create(
                nb, l, arith::DivFOp::create(nb, l, v[0], s), v[2]);
            return bias ? arith::AddFOp::create(nb, l, y, v[3]).getResult() : y;
          }))))
    return failure();
  // Optional outputs: the mean and 1 / sqrt(var + epsilon).
  if (n.output_size() > 1 && !n.output(1).empty() && failed(define(n, mean, 1)))
    return failure();
  if (n.output_size() > 2 && !n.output(2).empty())
    return define(
        n,
        elementwise({var}, n,
                    [&](OpBuilder &nb, Location l, ValueRange v) {
                      Value s = math::SqrtOp::create(
                          nb, l,
                          arith::AddFOp::create(nb, l, v[0], f(nb, l, *eps)));
                      return arith::DivFOp::create(nb, l, f(nb, l, 1.0f), s)
                          .getResult();
                    }),
        2);
  return success();
}

void mlir::tq::onnx_import::registerNormalizationOps(OpRegistry &r) {
  r["BatchNormalization"] = &Importer::importBatchNormalization;
  r["LayerNormalization"] = &Importer::importLayerNormalization;
  r["InstanceNormalization"] = &Importer::importInstanceNormalization;
  r["LRN"] = &Importer::importLRN;
}
