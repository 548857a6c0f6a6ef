//===- Losses.cpp - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss -===//
//
// The losses, with constant targets.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// NegativeLogLikelihoodLoss of `logProb` [N, C, d...] against the
/// constant targets of input `targetInput` [N, d...]: the class each
/// target selects becomes a constant one-hot mask at import, so the loss
/// is -Σ_c logProb · mask (· weight[c]), then reduced as `reduction`
/// says ("mean" divides by the selected weights, or the count).
FailureOr<Value> Importer::nllLoss(const onnx::NodeProto &n, Value logProb,
                                   int targetInput, int weightInput) {
  SmallVector<int64_t> shape(shapeOf(logProb));
  int64_t rank = shape.size();
  if (rank < 2)
    return fail(nodeName(n) + ": the input needs a class dimension");
  std::string reduction = "mean";
  FailureOr<const onnx::AttributeProto *> reductionAttr =
      attr(n, "reduction", onnx::AttributeProto::STRING);
  if (failed(reductionAttr))
    return failure();
  if (*reductionAttr)
    reduction = (*reductionAttr)->s();
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return fail(nodeName(n) + ": reduction '" + reduction +
                "' is not supported");
  std::optional<int64_t> ignore;
  FailureOr<const onnx::AttributeProto *> ignoreAttr =
      attr(n, "ignore_index", onnx::AttributeProto::INT);
  if (failed(ignoreAttr))
    return failure();
  if (*ignoreAttr) {
    FailureOr<int64_t> i = intAttr(n, "ignore_index", 0);
    if (failed(i))
      return failure();
    ignore = *i;
  }
  FailureOr<std::vector<float>> target = requiredConstant(n, targetInput);
  if (failed(target))
    return failure();
  int64_t C = shape[1], inner = 1;
  for (int64_t d = 2; d < rank; ++d)
    inner *= shape[d];
  if (int64_t(target->size()) != shape[0] * inner)
    return fail(nodeName(n) + ": the target does not match the input's shape");
  std::vector<float> mask(shape[0] * C * inner, 0.0f);
  int64_t selected = 0;
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < inner; ++j) {
      int64_t t = int64_t((*target)[i * inner + j]);
      if (ignore && t == *ignore)
        continue;
      if (t < 0 || t >= C)
        return fail(nodeName(n) + ": target " + std::to_string(t) +
                    " is not a class in [0, " + std::to_string(C) + ")");
      mask[(i * C + t) * inner + j] = 1.0f;
      ++selected;
    }
  Value m = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(f32Tensor(shape), ArrayRef<float>(mask)));
  if (weightInput < n.input_size() && !n.input(weightInput).empty()) {
    FailureOr<Value> w = input(n, weightInput);
    if (failed(w))
      return failure();
    if (shapeOf(*w) != ArrayRef<int64_t>{C})
      return fail(nodeName(n) + ": the weight must have one value per class");
    SmallVector<int64_t> along(rank, 1);
    along[1] = C;
    FailureOr<Value> weighted = elementwise(
        {m, reshape(*w, along)}, n,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return arith::MulFOp::create(nb, l, a[0], a[1]).getResult();
        });
    if (failed(weighted))
      return failure();
    m = *weighted;
  }
  FailureOr<Value> picked = elementwise(
      {logProb, m}, n, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value p = arith::MulFOp::create(nb, l, a[0], a[1]);
        return arith::NegFOp::create(nb, l, p).getResult();
      });
  if (failed(picked))
    return failure();
  FailureOr<Value> loss = reduce(*picked, {1}, /*keepdims=*/false, "sum");
  if (failed(loss))
    return failure();
  if (reduction == "none")
    return *loss;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank - 1; ++d)
    all.push_back(d);
  FailureOr<Value> total = reduce(*loss, all, /*keepdims=*/false, "sum");
  if (failed(total))
    return failure();
  if (reduction == "sum")
    return *total;
  // The mean over the selected targets, weighted when weights are given.
  SmallVector<int64_t> every;
  for (int64_t d = 0; d < rank; ++d)
    every.push_back(d);
  Value count;
  if (weightInput < n.input_size() && !n.input(weightInput).empty()) {
    FailureOr<Value> weights = reduce(m, every, /*keepdims=*/false, "sum");
    if (failed(weights))
      return failure();
    count = *weights;
  } else {
    count = arith::ConstantOp::create(
                b, loc,
                DenseElementsAttr::get(f32Tensor({}),
                                       ArrayRef<float>{float(selected)}))
                .getResult();
  }
  return elementwise(
      {*total, count}, n, [&](OpBuilder &nb, Location l, ValueRange a) {
        return arith::DivFOp::create(nb, l, a[0], a[1]).getResult();
      });
}

LogicalResult Importer::importNLLLoss(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"reduction", "ignore_index"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  return define(n, nllLoss(n, *x, 1, 2));
}

LogicalResult
Importer::importSoftmaxCrossEntropyLoss(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"reduction", "ignore_index"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  Value logProb = softmax(*x, 1, /*log=*/true);
  if (failed(define(n, nllLoss(n, logProb, 1, 2))))
    return failure();
  if (n.output_size() > 1 && !n.output(1).empty())
    return define(n, logProb, 1);
  return success();
}

void mlir::tq::onnx_import::registerLossOps(OpRegistry &r) {
  r["NegativeLogLikelihoodLoss"] = &Importer::importNLLLoss;
  r["SoftmaxCrossEntropyLoss"] = &Importer::importSoftmaxCrossEntropyLoss;
}
