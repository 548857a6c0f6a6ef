//===- Normalization.cpp - BatchNormalization and LayerNormalization ------===//
//
// Inference BatchNormalization (when it does not fold into a Conv) and
// LayerNormalization.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

static constexpr auto f = f32Constant;

void Importer::importBatchNormalization(const onnx::NodeProto &n) {
  onlyAttrs(n, {"epsilon", "momentum", "training_mode", "spatial"});
  // Opsets 7 and 8: spatial = 0 normalizes each activation on its own.
  if (!intAttr(n, "spatial", 1))
    fail(nodeName(n) + ": spatial = 0 is not supported");
  if (intAttr(n, "training_mode", 0) ||
      (n.output_size() > 1 && !n.output(1).empty()))
    fail(nodeName(n) + ": only inference mode is supported");
  Value x = input(n, 0);
  int64_t rank = shapeOf(x).size();
  if (rank < 2)
    fail(nodeName(n) + ": the input needs a channel dimension");
  // [C] parameters broadcast along dim 1.
  auto channel = [&](int i) {
    SmallVector<int64_t> shape = {shapeOf(x)[1]};
    for (int64_t d = 2; d < rank; ++d)
      shape.push_back(1);
    return reshape(input(n, i), shape);
  };
  float eps = floatAttr(n, "epsilon", 1e-5f);
  define(n, elementwise(
                {x, channel(1), channel(2), channel(3), channel(4)}, n,
                [&](OpBuilder &nb, Location l, ValueRange v) {
                  Value d = arith::SubFOp::create(nb, l, v[0], v[3]);
                  Value s = math::SqrtOp::create(
                      nb, l, arith::AddFOp::create(nb, l, v[4], f(nb, l, eps)));
                  Value y = arith::DivFOp::create(nb, l, d, s);
                  return arith::AddFOp::create(
                             nb, l, arith::MulFOp::create(nb, l, y, v[1]), v[2])
                      .getResult();
                }));
}

void Importer::importLayerNormalization(const onnx::NodeProto &n) {
  onlyAttrs(n, {"axis", "epsilon", "stash_type"});
  Value x = input(n, 0);
  int64_t rank = shapeOf(x).size();
  int64_t axis = axisAttr(n, "axis", -1, rank);
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  float eps = floatAttr(n, "epsilon", 1e-5f);
  Value mean = reduce(x, axes, true, "mean");
  Value centered =
      elementwise({x, mean}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return arith::SubFOp::create(nb, l, v[0], v[1]).getResult();
      });
  Value sq =
      elementwise({centered}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return arith::MulFOp::create(nb, l, v[0], v[0]).getResult();
      });
  Value var = reduce(sq, axes, true, "mean");
  SmallVector<Value> ins = {centered, var, input(n, 1)};
  bool bias = n.input_size() > 2 && !n.input(2).empty();
  if (bias)
    ins.push_back(input(n, 2));
  define(n, elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
           Value s = math::SqrtOp::create(
               nb, l, arith::AddFOp::create(nb, l, v[1], f(nb, l, eps)));
           Value y = arith::MulFOp::create(
               nb, l, arith::DivFOp::create(nb, l, v[0], s), v[2]);
           return bias ? arith::AddFOp::create(nb, l, y, v[3]).getResult() : y;
         }));
  // Optional outputs: the mean and 1 / sqrt(var + epsilon).
  if (n.output_size() > 1 && !n.output(1).empty())
    define(n, mean, 1);
  if (n.output_size() > 2 && !n.output(2).empty())
    define(n,
           elementwise({var}, n,
                       [&](OpBuilder &nb, Location l, ValueRange v) {
                         Value s = math::SqrtOp::create(
                             nb, l,
                             arith::AddFOp::create(nb, l, v[0], f(nb, l, eps)));
                         return arith::DivFOp::create(nb, l, f(nb, l, 1.0f), s)
                             .getResult();
                       }),
           2);
}

void mlir::tq::onnx_import::registerNormalizationOps(OpRegistry &r) {
  r["BatchNormalization"] = &Importer::importBatchNormalization;
  r["LayerNormalization"] = &Importer::importLayerNormalization;
}
