//===- Matmul.cpp - MatMul, Gemm and integer matmuls ----------------------===//
//
// MatMul (2-D, N-D by 2-D, batches), Gemm, and MatMulInteger / QLinearMatMul on
// integers held as f32 values.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

FailureOr<Value> Importer::matmul(Value a, Value c, const onnx::NodeProto &n) {
  ArrayRef<int64_t> as = shapeOf(a), cs = shapeOf(c);
  if (as.size() == 2 && cs.size() == 2) {
    if (as[1] != cs[0])
      return fail(nodeName(n) + ": inner dimensions differ (" +
                  std::to_string(as[1]) + " vs " + std::to_string(cs[0]) + ")");
    Value init = zeros({as[0], cs[1]});
    return linalg::MatmulOp::create(b, loc, ValueRange{a, c}, ValueRange{init})
        .getResult(0);
  }
  if (as.size() > 2 && cs.size() == 2) {
    // [..., M, K] x [K, N]: one 2-D product over the flattened rows (a
    // weight applied to every token or image).
    int64_t rows = 1;
    for (int64_t d : as.drop_back())
      rows *= d;
    FailureOr<Value> flat = matmul(reshape(a, {rows, as.back()}), c, n);
    if (failed(flat))
      return failure();
    SmallVector<int64_t> shape(as.drop_back());
    shape.push_back(cs[1]);
    return reshape(*flat, shape);
  }
  if (as.size() == cs.size() && as.size() > 3 &&
      as.drop_back(2) == cs.drop_back(2)) {
    // Equal batch dims: one batch dim.
    int64_t batch = 1;
    for (int64_t d : as.drop_back(2))
      batch *= d;
    FailureOr<Value> flat =
        matmul(reshape(a, {batch, as[as.size() - 2], as.back()}),
               reshape(c, {batch, cs[cs.size() - 2], cs.back()}), n);
    if (failed(flat))
      return failure();
    SmallVector<int64_t> shape(as.drop_back());
    shape.push_back(cs.back());
    return reshape(*flat, shape);
  }
  if (as.size() == 3 && cs.size() == 3 && as[0] == cs[0]) {
    if (as[2] != cs[1])
      return fail(nodeName(n) + ": inner dimensions differ (" +
                  std::to_string(as[2]) + " vs " + std::to_string(cs[1]) + ")");
    Value init = zeros({as[0], as[1], cs[2]});
    return linalg::BatchMatmulOp::create(b, loc, ValueRange{a, c},
                                         ValueRange{init})
        .getResult(0);
  }
  return fail(nodeName(n) + ": operands of rank " + std::to_string(as.size()) +
              " and " + std::to_string(cs.size()) +
              " are not supported (2-D, N-D by 2-D, or N-D with equal batch "
              "dims)");
}

LogicalResult Importer::importMatMul(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  FailureOr<Value> a = input(n, 0);
  if (failed(a))
    return failure();
  FailureOr<Value> c = input(n, 1);
  if (failed(c))
    return failure();
  return define(n, matmul(*a, *c, n));
}

/// Y = alpha op(A) op(B) + beta C.
LogicalResult Importer::importGemm(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"alpha", "beta", "transA", "transB"})))
    return failure();
  FailureOr<Value> a = input(n, 0);
  if (failed(a))
    return failure();
  FailureOr<Value> c = input(n, 1);
  if (failed(c))
    return failure();
  if (shapeOf(*a).size() != 2 || shapeOf(*c).size() != 2)
    return fail(nodeName(n) + ": A and B must be 2-D");
  FailureOr<int64_t> transA = intAttr(n, "transA", 0);
  if (failed(transA))
    return failure();
  if (*transA)
    *a = transpose(*a, {1, 0});
  FailureOr<int64_t> transB = intAttr(n, "transB", 0);
  if (failed(transB))
    return failure();
  if (*transB)
    *c = transpose(*c, {1, 0});
  FailureOr<Value> y = matmul(*a, *c, n);
  if (failed(y))
    return failure();
  FailureOr<float> alpha = floatAttr(n, "alpha", 1.0f);
  if (failed(alpha))
    return failure();
  FailureOr<float> beta = floatAttr(n, "beta", 1.0f);
  if (failed(beta))
    return failure();
  if (*alpha != 1.0f) {
    y = elementwise({*y}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
      Value s = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(*alpha));
      return arith::MulFOp::create(nb, l, v[0], s);
    });
    if (failed(y))
      return failure();
  }
  if (n.input_size() > 2 && !n.input(2).empty()) {
    FailureOr<Value> bias = input(n, 2);
    if (failed(bias))
      return failure();
    y = elementwise(
        {*y, *bias}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
          Value c2 = v[1];
          if (*beta != 1.0f)
            c2 = arith::MulFOp::create(
                nb, l, c2,
                arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(*beta)));
          return arith::AddFOp::create(nb, l, v[0], c2);
        });
  }
  return define(n, y);
}

/// MatMulInteger and QLinearMatMul on integers held as f32 values (exact
/// while the products' sums stay below 2^24):
///   MatMulInteger: Y = (A - a_zp) (B - b_zp)          (a_zp per row of A
///                  or scalar, b_zp per column of B or scalar)
///   QLinearMatMul: Y = sat(round_even(that * (a_s b_s / y_s)) + y_zp),
///                  the multiplier in f32 and the product in f64, as the
///                  ONNX reference computes them.
LogicalResult Importer::importIntegerMatmul(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  bool qlinear = n.op_type() == "QLinearMatMul";
  int ia = 0, iazp = 2, ib = qlinear ? 3 : 1, ibzp = qlinear ? 5 : 3;
  FailureOr<Value> a = input(n, ia);
  if (failed(a))
    return failure();
  FailureOr<Value> c = input(n, ib);
  if (failed(c))
    return failure();
  auto centered = [&](Value v, int zpIndex, bool rows) -> FailureOr<Value> {
    if (zpIndex >= n.input_size() || n.input(zpIndex).empty())
      return v;
    FailureOr<std::vector<float>> zp = requiredConstant(n, zpIndex);
    if (failed(zp))
      return failure();
    ArrayRef<int64_t> vs = shapeOf(v);
    SmallVector<int64_t> zshape;
    if (zp->size() > 1) {
      // Per row of A ([M] -> [M, 1]) or per column of B ([N] -> [1, N]).
      int64_t want = rows ? vs[vs.size() - 2] : vs.back();
      if (int64_t(zp->size()) != want)
        return fail(nodeName(n) + ": a zero point has " +
                    std::to_string(zp->size()) + " values for a dimension of " +
                    std::to_string(want));
      zshape =
          rows ? SmallVector<int64_t>{want, 1} : SmallVector<int64_t>{1, want};
    }
    Value z = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(f32Tensor(zshape), ArrayRef<float>(*zp)));
    return elementwise({v, z}, n, [&](OpBuilder &nb, Location l, ValueRange x) {
      return arith::SubFOp::create(nb, l, x[0], x[1]).getResult();
    });
  };
  FailureOr<Value> ca = centered(*a, iazp, true);
  if (failed(ca))
    return failure();
  FailureOr<Value> cc = centered(*c, ibzp, false);
  if (failed(cc))
    return failure();
  FailureOr<Value> y = matmul(*ca, *cc, n);
  if (failed(y))
    return failure();
  if (!qlinear) {
    values[n.output(0)] = *y;
    return success();
  }
  auto scalar = [&](int i) -> FailureOr<double> {
    FailureOr<std::vector<float>> v = requiredConstant(n, i);
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return fail(nodeName(n) + ": only per-tensor scales and zero points are "
                                "supported for the output");
    return double((*v)[0]);
  };
  // The multiplier in f32 (as the reference computes it), applied in f64.
  FailureOr<double> aScale = scalar(1);
  if (failed(aScale))
    return failure();
  FailureOr<double> bScale = scalar(4);
  if (failed(bScale))
    return failure();
  FailureOr<double> yScale = scalar(6);
  if (failed(yScale))
    return failure();
  float as = float(*aScale), bs = float(*bScale), ys = float(*yScale);
  float prod = as * bs;
  double mult = double(prod / ys);
  FailureOr<double> yzp = n.input_size() > 7 && !n.input(7).empty()
                              ? scalar(7)
                              : FailureOr<double>(0.0);
  if (failed(yzp))
    return failure();
  bool isSigned =
      n.input_size() > 7 && !n.input(7).empty() &&
      initializers.at(n.input(7)).data_type() == onnx::TensorProto::INT8;
  float lo = isSigned ? -128.0f : 0.0f, hi = isSigned ? 127.0f : 255.0f;
  FailureOr<Value> out = elementwise(
      {*y}, n, [&](OpBuilder &nb, Location l, ValueRange x) -> Value {
        Value w = arith::ExtFOp::create(nb, l, nb.getF64Type(), x[0]);
        w = arith::MulFOp::create(
            nb, l, w,
            arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(mult)));
        w = math::RoundEvenOp::create(nb, l, w);
        w = arith::AddFOp::create(
            nb, l, w,
            arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(*yzp)));
        Value q = arith::TruncFOp::create(nb, l, nb.getF32Type(), w);
        q = arith::MaximumFOp::create(
            nb, l, q, arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(lo)));
        return arith::MinimumFOp::create(
            nb, l, q, arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(hi)));
      });
  if (failed(out))
    return failure();
  values[n.output(0)] = *out;
  return success();
}

void mlir::tq::onnx_import::registerMatmulOps(OpRegistry &r) {
  r["MatMul"] = &Importer::importMatMul;
  r["Gemm"] = &Importer::importGemm;
  r["MatMulInteger"] = &Importer::importIntegerMatmul;
  r["QLinearMatMul"] = &Importer::importIntegerMatmul;
}
