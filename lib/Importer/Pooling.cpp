//===- Pooling.cpp - Max, average and global pooling ----------------------===//
//
// MaxPool and AveragePool (2-D, NCHW) as linalg pooling ops, and
// GlobalAveragePool / GlobalMaxPool as one reduction over H and W.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// The NCHW input of a pooling node.
static FailureOr<Value> pooledInput(Importer &im, const onnx::NodeProto &n) {
  FailureOr<Value> x = im.input(n, 0);
  if (succeeded(x) && Importer::shapeOf(*x).size() != 4)
    return im.fail(nodeName(n) +
                   ": only 1-D (NCL) and 2-D (NCHW) inputs are supported");
  return x;
}

LogicalResult Importer::importGlobalPool(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  FailureOr<Value> x = pooledInput(*this, n);
  if (failed(x) || failed(onlyAttrs(n, {})))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  bool avg = op == "GlobalAveragePool";
  SmallVector<int64_t> outShape = {xs[0], xs[1], 1, 1};
  auto id = AffineMap::getMultiDimIdentityMap(4, ctx);
  auto red = AffineMap::get(
      4, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)}, ctx);
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{xs[0], xs[1]},
                                        b.getF32Type());
  Value initV = arith::ConstantOp::create(
      b, loc,
      b.getF32FloatAttr(avg ? 0.0f : -std::numeric_limits<float>::infinity()));
  Value init = linalg::FillOp::create(b, loc, initV, empty).getResult(0);
  SmallVector<utils::IteratorType> iters = {
      utils::IteratorType::parallel, utils::IteratorType::parallel,
      utils::IteratorType::reduction, utils::IteratorType::reduction};
  Value r =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{*x}, ValueRange{init},
          ArrayRef<AffineMap>{id, red}, iters,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value v =
                avg ? arith::AddFOp::create(nb, l, a[1], a[0]).getResult()
                    : arith::MaximumFOp::create(nb, l, a[1], a[0]).getResult();
            linalg::YieldOp::create(nb, l, v);
          })
          .getResult(0);
  if (avg) {
    float count = float(xs[2] * xs[3]);
    FailureOr<Value> mean =
        elementwise({r}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
          return arith::DivFOp::create(nb, l, v[0],
                                       arith::ConstantOp::create(
                                           nb, l, nb.getF32FloatAttr(count)))
              .getResult();
        });
    if (failed(mean))
      return failure();
    r = *mean;
  }
  return define(n, reshape(r, outShape));
}

LogicalResult Importer::importPool(const onnx::NodeProto &n) {
  if (std::optional<LogicalResult> r = importAs2D(n, &Importer::importPool))
    return *r;
  const std::string &op = n.op_type();
  FailureOr<Value> x = pooledInput(*this, n);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  FailureOr<Window> win = windowAttrs(n);
  if (failed(win) ||
      failed(onlyAttrs(n, {"strides", "dilations", "pads", "kernel_shape",
                           "auto_pad", "ceil_mode", "count_include_pad",
                           "storage_order"})))
    return failure();
  FailureOr<int64_t> ceilMode = intAttr(n, "ceil_mode", 0);
  if (failed(ceilMode))
    return failure();
  if (*ceilMode)
    return fail(nodeName(n) + ": ceil_mode is not supported");
  if (n.output_size() > 1 && !n.output(1).empty())
    return fail(nodeName(n) + ": the Indices output is not supported");
  FailureOr<SmallVector<int64_t>> kernel = intsAttr(n, "kernel_shape", {});
  if (failed(kernel))
    return failure();
  if (kernel->size() != 2)
    return fail(nodeName(n) + ": kernel_shape must be 2-D");
  FailureOr<SmallVector<int64_t>> pq = windowOutput(n, *win, xs, *kernel);
  if (failed(pq))
    return failure();
  int64_t P = (*pq)[0], Q = (*pq)[1];
  ArrayRef<int64_t> pads = win->pads;
  auto stridesAttr = b.getI64TensorAttr(win->strides);
  auto dilAttr = b.getI64TensorAttr(win->dilations);
  bool isMax = op == "MaxPool";
  // AveragePool without count_include_pad divides by the taps that fall
  // inside the input: a [P, Q] constant computed here.
  bool excludePad = false;
  if (!isMax) {
    FailureOr<int64_t> countIncludePad = intAttr(n, "count_include_pad", 0);
    if (failed(countIncludePad))
      return failure();
    excludePad = !*countIncludePad &&
                 llvm::any_of(pads, [](int64_t p) { return p != 0; });
  }
  Value window = tensor::EmptyOp::create(b, loc, *kernel, b.getF32Type());
  Value empty = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{xs[0], xs[1], P, Q}, b.getF32Type());
  float initV = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  Value initValue = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(initV));
  Value init = linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
  Value padded = pad(*x, pads, initV);
  Value y;
  if (isMax)
    y = linalg::PoolingNchwMaxOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{padded, window},
                                         ValueRange{init}, stridesAttr, dilAttr)
            .getResult(0);
  else {
    y = linalg::PoolingNchwSumOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{padded, window},
                                         ValueRange{init}, stridesAttr, dilAttr)
            .getResult(0);
    if (excludePad) {
      auto inside = [&](int d, int64_t o) {
        int64_t count = 0;
        for (int64_t k = 0; k < (*kernel)[d]; ++k) {
          int64_t i = o * win->strides[d] + k * win->dilations[d] - pads[d];
          count += i >= 0 && i < xs[2 + d];
        }
        return count;
      };
      std::vector<float> counts;
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q)
          counts.push_back(float(inside(0, p) * inside(1, q)));
      Value c = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(f32Tensor({P, Q}), ArrayRef<float>(counts)));
      return define(
          n,
          elementwise({y, c}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
            return arith::DivFOp::create(nb, l, v[0], v[1]).getResult();
          }));
    }
    float count = float((*kernel)[0] * (*kernel)[1]);
    return define(
        n, elementwise({y}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
          return arith::DivFOp::create(nb, l, v[0], f32Constant(nb, l, count))
              .getResult();
        }));
  }
  return define(n, y);
}

void mlir::tq::onnx_import::registerPoolingOps(OpRegistry &r) {
  r["MaxPool"] = &Importer::importPool;
  r["AveragePool"] = &Importer::importPool;
  r["GlobalAveragePool"] = &Importer::importGlobalPool;
  r["GlobalMaxPool"] = &Importer::importGlobalPool;
}
