//===- Elementwise.cpp - Element-wise ops ---------------------------------===//
//
// Unary ops (with their attributes), binary arithmetic with numpy
// broadcasting (integer Div truncating), Mod, PRelu, Shrink, IsNaN /
// IsInf, and variadic Max / Min / Sum / Mean, each one linalg.generic.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// numpy broadcasting of the inputs into one linalg.generic.
FailureOr<Value> Importer::elementwise(
    ValueRange inputs, const onnx::NodeProto &n,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body,
    Type resultElement, bool anyInputElement) {
  if (!anyInputElement)
    for (Value v : inputs)
      if (!cast<RankedTensorType>(v.getType()).getElementType().isF32())
        return fail(nodeName(n) + ": boolean inputs are not supported");
  if (!resultElement)
    resultElement = b.getF32Type();
  size_t rank = 0;
  for (Value v : inputs)
    rank = std::max(rank, shapeOf(v).size());
  SmallVector<int64_t> shape(rank, 1);
  for (Value v : inputs) {
    ArrayRef<int64_t> s = shapeOf(v);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &d = shape[rank - s.size() + i];
      if (d == 1)
        d = s[i];
      else if (s[i] != 1 && s[i] != d)
        return fail(nodeName(n) + ": shapes cannot be broadcast together");
    }
  }
  SmallVector<AffineMap> maps;
  for (Value v : inputs) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<AffineExpr> exprs;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t d = rank - s.size() + i;
      exprs.push_back(s[i] == 1 && shape[d] != 1 ? getAffineConstantExpr(0, ctx)
                                                 : getAffineDimExpr(d, ctx));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = tensor::EmptyOp::create(b, loc, shape, resultElement);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
      });
  return op.getResult(0);
}

/// Element-wise ops of one input (and their attributes).
LogicalResult Importer::importUnary(const onnx::NodeProto &n) {
  using Fn = std::function<Value(OpBuilder &, Location, Value)>;
  const std::string &op = n.op_type();
  auto f = [&](OpBuilder &nb, Location l, float v) {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v)).getResult();
  };
  Fn fn;
  SmallVector<const char *> attrs;
  // Ops that are one MLIR op of the element.
  static const llvm::StringMap<Fn> simple = {
      {"Abs", oneOp<math::AbsFOp>},        {"Neg", oneOp<arith::NegFOp>},
      {"Exp", oneOp<math::ExpOp>},         {"Log", oneOp<math::LogOp>},
      {"Sqrt", oneOp<math::SqrtOp>},       {"Tanh", oneOp<math::TanhOp>},
      {"Floor", oneOp<math::FloorOp>},     {"Ceil", oneOp<math::CeilOp>},
      {"Round", oneOp<math::RoundEvenOp>}, // halves to even, as ONNX
      {"Sin", oneOp<math::SinOp>},         {"Cos", oneOp<math::CosOp>},
      {"Tan", oneOp<math::TanOp>},         {"Asin", oneOp<math::AsinOp>},
      {"Acos", oneOp<math::AcosOp>},       {"Atan", oneOp<math::AtanOp>},
      {"Sinh", oneOp<math::SinhOp>},       {"Cosh", oneOp<math::CoshOp>},
      {"Asinh", oneOp<math::AsinhOp>},     {"Acosh", oneOp<math::AcoshOp>},
      {"Atanh", oneOp<math::AtanhOp>},     {"Erf", oneOp<math::ErfOp>},
  };
  if (auto it = simple.find(op); it != simple.end())
    fn = it->second;
  else if (op == "Relu")
    fn = [&](OpBuilder &nb, Location l, Value x) {
      return arith::MaximumFOp::create(nb, l, x, f(nb, l, 0.0f)).getResult();
    };
  else if (op == "Reciprocal")
    fn = [&](OpBuilder &nb, Location l, Value x) {
      return arith::DivFOp::create(nb, l, f(nb, l, 1.0f), x).getResult();
    };
  else if (op == "Softsign") // x / (1 + |x|)
    fn = [&](OpBuilder &nb, Location l, Value x) {
      Value d = arith::AddFOp::create(nb, l, f(nb, l, 1.0f),
                                      math::AbsFOp::create(nb, l, x));
      return arith::DivFOp::create(nb, l, x, d).getResult();
    };
  else if (op == "Softplus") // log(exp(x) + 1)
    fn = [&](OpBuilder &nb, Location l, Value x) {
      Value e = math::ExpOp::create(nb, l, x);
      return math::LogOp::create(
                 nb, l, arith::AddFOp::create(nb, l, e, f(nb, l, 1.0f)))
          .getResult();
    };
  else if (op == "Elu" || op == "Selu") {
    // Elu: x < 0 ? alpha (e^x - 1) : x; Selu: gamma (x <= 0 ? alpha (e^x -
    // 1) : x).
    bool selu = op == "Selu";
    attrs = selu ? SmallVector<const char *>{"alpha", "gamma"}
                 : SmallVector<const char *>{"alpha"};
    FailureOr<float> alpha =
        floatAttr(n, "alpha", selu ? 1.67326319217681884765625f : 1.0f);
    if (failed(alpha))
      return failure();
    FailureOr<float> gamma =
        selu ? floatAttr(n, "gamma", 1.05070102214813232421875f) : 1.0f;
    if (failed(gamma))
      return failure();
    fn = [&, alpha, gamma, selu](OpBuilder &nb, Location l, Value x) {
      Value neg = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE, x,
                                        f(nb, l, 0.0f));
      Value em1 = arith::SubFOp::create(nb, l, math::ExpOp::create(nb, l, x),
                                        f(nb, l, 1.0f));
      Value y = arith::SelectOp::create(
          nb, l, neg, arith::MulFOp::create(nb, l, em1, f(nb, l, *alpha)), x);
      return selu
                 ? arith::MulFOp::create(nb, l, y, f(nb, l, *gamma)).getResult()
                 : y;
    };
  } else if (op == "ThresholdedRelu") {
    attrs = {"alpha"};
    FailureOr<float> alpha = floatAttr(n, "alpha", 1.0f);
    if (failed(alpha))
      return failure();
    fn = [&, alpha](OpBuilder &nb, Location l, Value x) {
      Value above = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, x,
                                          f(nb, l, *alpha));
      return arith::SelectOp::create(nb, l, above, x, f(nb, l, 0.0f))
          .getResult();
    };
  } else if (op == "Sigmoid")
    fn = [&](OpBuilder &nb, Location l, Value x) {
      Value e = math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, x));
      return arith::DivFOp::create(
                 nb, l, f(nb, l, 1.0f),
                 arith::AddFOp::create(nb, l, f(nb, l, 1.0f), e))
          .getResult();
    };
  else if (op == "LeakyRelu") {
    attrs = {"alpha"};
    FailureOr<float> alpha = floatAttr(n, "alpha", 0.01f);
    if (failed(alpha))
      return failure();
    fn = [&, alpha](OpBuilder &nb, Location l, Value x) {
      Value neg = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, x,
                                        f(nb, l, 0.0f));
      return arith::SelectOp::create(
                 nb, l, neg, arith::MulFOp::create(nb, l, x, f(nb, l, *alpha)),
                 x)
          .getResult();
    };
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    attrs = {"alpha", "beta"};
    FailureOr<float> alpha =
        op == "HardSwish" ? 1.0f / 6 : floatAttr(n, "alpha", 0.2f);
    if (failed(alpha))
      return failure();
    FailureOr<float> beta =
        op == "HardSwish" ? 0.5f : floatAttr(n, "beta", 0.5f);
    if (failed(beta))
      return failure();
    bool swish = op == "HardSwish";
    fn = [&, alpha, beta, swish](OpBuilder &nb, Location l, Value x) {
      Value y = arith::AddFOp::create(
          nb, l, arith::MulFOp::create(nb, l, x, f(nb, l, *alpha)),
          f(nb, l, *beta));
      y = arith::MinimumFOp::create(
          nb, l, arith::MaximumFOp::create(nb, l, y, f(nb, l, 0.0f)),
          f(nb, l, 1.0f));
      return swish ? arith::MulFOp::create(nb, l, x, y).getResult() : y;
    };
  } else {
    return fail(nodeName(n) + ": not a unary op (an importer bug)");
  }
  if (failed(onlyAttrs(n, attrs)))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  return define(
      n, elementwise({*x}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return fn(nb, l, v[0]);
      }));
}

/// Max, Min, Sum and Mean of any number of broadcast inputs.
LogicalResult Importer::importVariadic(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  if (failed(onlyAttrs(n, {})))
    return failure();
  SmallVector<Value> ins;
  for (int i = 0; i < n.input_size(); ++i) {
    FailureOr<Value> x = input(n, i);
    if (failed(x))
      return failure();
    ins.push_back(*x);
  }
  if (ins.empty())
    return fail(nodeName(n) + ": needs at least one input");
  return define(
      n, elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value r = v[0];
        for (Value x : v.drop_front()) {
          if (op == "Max")
            r = arith::MaximumFOp::create(nb, l, r, x);
          else if (op == "Min")
            r = arith::MinimumFOp::create(nb, l, r, x);
          else
            r = arith::AddFOp::create(nb, l, r, x);
        }
        if (op == "Mean")
          r = arith::DivFOp::create(nb, l, r,
                                    f32Constant(nb, l, float(v.size())));
        return r;
      }));
}

/// min(max(x, lo), hi). The bounds are attributes (before opset 11) or
/// optional inputs, constant or computed at run time (broadcast like the
/// other element-wise ops); an absent bound is ±inf.
LogicalResult Importer::importClip(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"min", "max"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  SmallVector<Value> ins = {*x};
  FailureOr<float> lo =
      floatAttr(n, "min", -std::numeric_limits<float>::infinity());
  if (failed(lo))
    return failure();
  FailureOr<float> hi =
      floatAttr(n, "max", std::numeric_limits<float>::infinity());
  if (failed(hi))
    return failure();
  // Input i becomes operand index[i] of the body, or stays a constant.
  int index[3] = {0, -1, -1};
  for (int i = 1; i <= 2; ++i) {
    if (i >= n.input_size() || n.input(i).empty())
      continue;
    FailureOr<Value> bound = input(n, i);
    if (failed(bound))
      return failure();
    if (!shapeOf(*bound).empty() &&
        llvm::any_of(shapeOf(*bound), [](int64_t d) { return d != 1; }))
      return fail(nodeName(n) + ": " + (i == 1 ? "min" : "max") +
                  " must be a scalar");
    if (auto c = initializers.find(n.input(i)); c != initializers.end()) {
      FailureOr<std::vector<float>> boundValues = requiredConstant(n, i);
      if (failed(boundValues))
        return failure();
      (i == 1 ? *lo : *hi) = boundValues->at(0);
      continue;
    }
    index[i] = ins.size();
    ins.push_back(*bound);
  }
  return define(
      n, elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value low = index[1] >= 0 ? v[index[1]] : f32Constant(nb, l, *lo);
        Value high = index[2] >= 0 ? v[index[2]] : f32Constant(nb, l, *hi);
        Value y = arith::MaximumFOp::create(nb, l, v[0], low);
        return arith::MinimumFOp::create(nb, l, y, high).getResult();
      }));
}

/// Binary arithmetic with numpy broadcasting.
LogicalResult Importer::importBinary(const onnx::NodeProto &n) {
  using Fn = Value (*)(OpBuilder &, Location, Value, Value);
  static const llvm::StringMap<Fn> ops = {
      {"Add",
       [](OpBuilder &nb, Location l, Value x, Value y) {
         return arith::AddFOp::create(nb, l, x, y).getResult();
       }},
      {"Sub",
       [](OpBuilder &nb, Location l, Value x, Value y) {
         return arith::SubFOp::create(nb, l, x, y).getResult();
       }},
      {"Mul",
       [](OpBuilder &nb, Location l, Value x, Value y) {
         return arith::MulFOp::create(nb, l, x, y).getResult();
       }},
      {"Div",
       [](OpBuilder &nb, Location l, Value x, Value y) {
         return arith::DivFOp::create(nb, l, x, y).getResult();
       }},
      {"Pow",
       [](OpBuilder &nb, Location l, Value x, Value y) {
         return math::PowFOp::create(nb, l, x, y).getResult();
       }},
  };
  Fn make = ops.lookup(n.op_type());
  if (!make)
    return fail(nodeName(n) + ": not a binary op (an importer bug)");
  if (failed(onlyAttrs(n, {})))
    return failure();
  // Integer division truncates toward zero.
  bool truncate = n.op_type() == "Div" && isInteger(n.output(0));
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> y = input(n, 1);
  if (failed(y))
    return failure();
  return define(
      n, elementwise({*x, *y}, n, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value r = make(nb, l, a[0], a[1]);
        if (truncate)
          r = math::TruncOp::create(nb, l, r);
        return r;
      }));
}

/// PRelu: x where x >= 0, slope·x below (the slope broadcast to x).
LogicalResult Importer::importPRelu(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> slope = input(n, 1);
  if (failed(slope))
    return failure();
  if (failed(define(
          n, elementwise(
                 {*x, *slope}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
                   Value neg =
                       arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT,
                                             v[0], f32Constant(nb, l, 0));
                   return arith::SelectOp::create(
                              nb, l, neg,
                              arith::MulFOp::create(nb, l, v[0], v[1]), v[0])
                       .getResult();
                 }))))
    return failure();
  if (shapeOf(values.at(n.output(0))) != shapeOf(*x))
    return fail(nodeName(n) +
                ": the slope must broadcast to the input's shape");
  return success();
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
LogicalResult Importer::importShrink(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"bias", "lambd"})))
    return failure();
  FailureOr<float> bias = floatAttr(n, "bias", 0.0f);
  if (failed(bias))
    return failure();
  FailureOr<float> lambd = floatAttr(n, "lambd", 0.5f);
  if (failed(lambd))
    return failure();
  FailureOr<Value> in = input(n, 0);
  if (failed(in))
    return failure();
  return define(
      n, elementwise({*in}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value x = v[0];
        Value below = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, x,
                                            f32Constant(nb, l, -*lambd));
        Value above = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, x,
                                            f32Constant(nb, l, *lambd));
        Value r = arith::SelectOp::create(
            nb, l, above,
            arith::SubFOp::create(nb, l, x, f32Constant(nb, l, *bias)),
            f32Constant(nb, l, 0));
        return arith::SelectOp::create(
                   nb, l, below,
                   arith::AddFOp::create(nb, l, x, f32Constant(nb, l, *bias)),
                   r)
            .getResult();
      }));
}

/// Mod: with fmod = 1 the remainder has the dividend's sign (C fmod);
/// with fmod = 0 (integers only) the divisor's, as in Python. Both are
/// exact in f32.
LogicalResult Importer::importMod(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"fmod"})))
    return failure();
  FailureOr<int64_t> fmod = intAttr(n, "fmod", 0);
  if (failed(fmod))
    return failure();
  if (*fmod != 0 && *fmod != 1)
    return fail(nodeName(n) + ": fmod must be 0 or 1");
  if (!*fmod && !isInteger(n.output(0)))
    return fail(nodeName(n) + ": fmod = 0 needs integer inputs (ONNX requires "
                              "fmod = 1 for floats)");
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> y = input(n, 1);
  if (failed(y))
    return failure();
  return define(
      n, elementwise({*x, *y}, n, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value r = arith::RemFOp::create(nb, l, a[0], a[1]);
        if (*fmod)
          return r;
        // r + y when r is not zero and its sign differs from y's.
        Value zero = f32Constant(nb, l, 0);
        Value nonzero =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::ONE, r, zero);
        Value rNeg =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, r, zero);
        Value yNeg =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, a[1], zero);
        Value differ = arith::XOrIOp::create(nb, l, rNeg, yNeg);
        Value fix = arith::AndIOp::create(nb, l, nonzero, differ);
        return arith::SelectOp::create(nb, l, fix,
                                       arith::AddFOp::create(nb, l, r, a[1]), r)
            .getResult();
      }));
}

/// IsNaN, and IsInf with detect_negative and detect_positive: booleans.
LogicalResult Importer::importIsInfNaN(const onnx::NodeProto &n) {
  bool isNaN = n.op_type() == "IsNaN";
  if (failed(onlyAttrs(n, isNaN ? ArrayRef<const char *>{}
                                : ArrayRef<const char *>{"detect_negative",
                                                         "detect_positive"})))
    return failure();
  bool negative = isNaN, positive = isNaN;
  if (!isNaN) {
    FailureOr<int64_t> detectNegative = intAttr(n, "detect_negative", 1);
    if (failed(detectNegative))
      return failure();
    FailureOr<int64_t> detectPositive = intAttr(n, "detect_positive", 1);
    if (failed(detectPositive))
      return failure();
    negative = *detectNegative;
    positive = *detectPositive;
  }
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  return define(
      n, elementwise(
             {*x}, n,
             [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
               if (isNaN)
                 return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO,
                                              v[0], v[0]);
               float inf = std::numeric_limits<float>::infinity();
               Value r = arith::ConstantIntOp::create(nb, l, 0, 1);
               if (positive)
                 r = arith::OrIOp::create(
                     nb, l, r,
                     arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                           v[0], f32Constant(nb, l, inf)));
               if (negative)
                 r = arith::OrIOp::create(
                     nb, l, r,
                     arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                           v[0], f32Constant(nb, l, -inf)));
               return r;
             },
             b.getI1Type()));
}

void mlir::tq::onnx_import::registerElementwiseOps(OpRegistry &r) {
  for (const char *op :
       {"Abs",      "Neg",       "Exp",         "Log",
        "Sqrt",     "Tanh",      "Floor",       "Ceil",
        "Round",    "Sin",       "Cos",         "Tan",
        "Asin",     "Acos",      "Atan",        "Sinh",
        "Cosh",     "Asinh",     "Acosh",       "Atanh",
        "Erf",      "Relu",      "Reciprocal",  "Softsign",
        "Softplus", "Elu",       "Selu",        "ThresholdedRelu",
        "Sigmoid",  "LeakyRelu", "HardSigmoid", "HardSwish"})
    r[op] = &Importer::importUnary;
  r["Clip"] = &Importer::importClip;
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Pow"})
    r[op] = &Importer::importBinary;
  for (const char *op : {"Max", "Min", "Sum", "Mean"})
    r[op] = &Importer::importVariadic;
  r["Mod"] = &Importer::importMod;
  r["PRelu"] = &Importer::importPRelu;
  r["Shrink"] = &Importer::importShrink;
  r["IsNaN"] = &Importer::importIsInfNaN;
  r["IsInf"] = &Importer::importIsInfNaN;
}
