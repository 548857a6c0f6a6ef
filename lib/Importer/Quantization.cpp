//===- Quantization.cpp - QuantizeLinear and DequantizeLinear -------------===//
//
// ONNX's own quantization as the f32 arithmetic it describes.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// QuantizeLinear / DequantizeLinear (ONNX's own quantization, opsets
/// 10-21): per tensor, per axis, or in blocks along `axis` (opset 21's
/// `block_size`). Integer tensors are held as f32 values (exact: at most
/// 16 bits), so that
///   QuantizeLinear:   q = clamp(round_even(x / s) + zp, lo, hi)
///   DequantizeLinear: y = (q - zp) * s
/// are f32 arithmetic: a Q/DQ pair is the quantization it describes, which
/// tq-quantize then replaces by tiles like any float layer. A
/// DequantizeLinear of a constant (a stored integer weight) is evaluated
/// here into a float constant.
LogicalResult Importer::importQuantizeLinear(const onnx::NodeProto &n) {
  bool quantize = n.op_type() == "QuantizeLinear";
  if (failed(onlyAttrs(n, {"axis", "block_size", "saturate", "output_dtype"})))
    return failure();
  // The scale and zero point must be constants (constantInput says so).
  FailureOr<std::vector<float>> scale = requiredConstant(n, 1);
  if (failed(scale))
    return failure();
  std::vector<float> zp(scale->size(), 0.0f);
  const onnx::TensorProto &st = initializers.at(n.input(1));
  int zpType = quantize ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT32;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    FailureOr<std::vector<float>> z = requiredConstant(n, 2);
    if (failed(z))
      return failure();
    zp = std::move(*z);
    zpType = initializers.at(n.input(2)).data_type();
    if (zp.size() != scale->size())
      return fail(nodeName(n) +
                  ": the zero point and the scale differ in shape");
  }
  FailureOr<int64_t> outputType = intAttr(n, "output_dtype", 0);
  if (failed(outputType))
    return failure();
  if (int64_t t = *outputType)
    zpType = int(t);
  float lo, hi;
  switch (zpType) {
  case onnx::TensorProto::INT8:
    lo = -128, hi = 127;
    break;
  case onnx::TensorProto::UINT8:
    lo = 0, hi = 255;
    break;
  case onnx::TensorProto::INT16:
    lo = -32768, hi = 32767;
    break;
  case onnx::TensorProto::UINT16:
    lo = 0, hi = 65535;
    break;
  case onnx::TensorProto::INT32:
    if (quantize)
      return fail(nodeName(n) + ": QuantizeLinear to int32 is not supported");
    lo = -2147483648.0f, hi = 2147483647.0f;
    break;
  default:
    return fail(nodeName(n) + ": quantized type " + std::to_string(zpType) +
                " is not supported (int8, uint8, int16, uint16; int32 to "
                "dequantize)");
  }
  // The input's shape: a constant's dims, or the value's.
  bool constIn = !quantize && initializers.count(n.input(0));
  SmallVector<int64_t> xs;
  if (constIn) {
    const onnx::TensorProto &xt = initializers.at(n.input(0));
    xs.assign(xt.dims().begin(), xt.dims().end());
  } else {
    FailureOr<Value> x = input(n, 0);
    if (failed(x))
      return failure();
    xs.assign(shapeOf(*x).begin(), shapeOf(*x).end());
  }
  int64_t rank = xs.size();
  FailureOr<int64_t> blockAttr = intAttr(n, "block_size", 0);
  if (failed(blockAttr))
    return failure();
  int64_t block = *blockAttr;
  int64_t axis = 0;
  // Which parameter each element uses: scalar, per axis, or per block.
  SmallVector<int64_t> pshape;
  if (st.dims_size() == 0 || scale->size() == 1) {
    pshape.assign(rank, 1);
  } else {
    FailureOr<int64_t> axisV = axisAttr(n, "axis", 1, rank);
    if (failed(axisV))
      return failure();
    axis = *axisV;
    pshape.assign(rank, 1);
    if (block > 0) {
      if (st.dims_size() != rank)
        return fail(nodeName(n) + ": blocked scales need the input's rank");
      for (int64_t d = 0; d < rank; ++d) {
        pshape[d] = st.dims(d);
        int64_t want = d == axis ? (xs[d] + block - 1) / block : xs[d];
        if (pshape[d] != want)
          return fail(nodeName(n) +
                      ": the scale's shape does not match the blocks");
      }
    } else {
      if (st.dims_size() != 1 || st.dims(0) != xs[axis])
        return fail(nodeName(n) +
                    ": a per-axis scale needs one value per index of "
                    "the axis");
      pshape[axis] = xs[axis];
    }
  }
  auto paramIndex = [&](ArrayRef<int64_t> idx) {
    int64_t p = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t i = pshape[d] == 1
                      ? 0
                      : (block > 0 && d == axis ? idx[d] / block : idx[d]);
      p = p * pshape[d] + i;
    }
    return p;
  };
  if (constIn) {
    FailureOr<std::vector<float>> q = requiredConstant(n, 0);
    if (failed(q))
      return failure();
    std::vector<float> y(q->size());
    SmallVector<int64_t> idx(rank, 0);
    for (size_t e = 0; e < q->size(); ++e) {
      int64_t p = paramIndex(idx);
      y[e] = ((*q)[e] - zp[p]) * (*scale)[p];
      for (int64_t d = rank; d-- > 0;)
        if (++idx[d] < xs[d])
          break;
        else
          idx[d] = 0;
    }
    onnx::TensorProto t;
    t.set_name(n.output(0));
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : xs)
      t.add_dims(d);
    for (float v : y)
      t.add_float_data(v);
    initializers[n.output(0)] = t;
    FailureOr<Value> c = constant(t, nodeName(n));
    if (failed(c))
      return failure();
    values[n.output(0)] = *c;
    return success();
  }
  if (block > 0)
    return fail(nodeName(n) + ": blocked quantization of a non-constant "
                              "tensor is not supported");
  auto param = [&](const std::vector<float> &v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(f32Tensor(pshape), ArrayRef<float>(v)));
  };
  auto f = [&](OpBuilder &nb, Location l, float v) {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v));
  };
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> y = elementwise(
      {*x, param(*scale), param(zp)}, n,
      [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
        if (!quantize)
          return arith::MulFOp::create(
              nb, l, arith::SubFOp::create(nb, l, v[0], v[2]), v[1]);
        Value r = math::RoundEvenOp::create(
            nb, l, arith::DivFOp::create(nb, l, v[0], v[1]));
        Value q = arith::AddFOp::create(nb, l, r, v[2]);
        q = arith::MaximumFOp::create(nb, l, q, f(nb, l, lo));
        return arith::MinimumFOp::create(nb, l, q, f(nb, l, hi));
      });
  if (failed(y))
    return failure();
  values[n.output(0)] = *y;
  return success();
}

void mlir::tq::onnx_import::registerQuantizationOps(OpRegistry &r) {
  r["QuantizeLinear"] = &Importer::importQuantizeLinear;
  r["DequantizeLinear"] = &Importer::importQuantizeLinear;
}
