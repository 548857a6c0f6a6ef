//===- Elementwise.cpp - Element-wise ops ---------------------------------===//
//
// Unary ops (with their attributes), binary arithmetic with numpy
// broadcasting, and variadic Max / Min, each one linalg.generic.
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
Value Importer::elementwise(
    ValueRange inputs, const onnx::NodeProto &n,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body,
    Type resultElement, bool anyInputElement) {
  if (!anyInputElement)
    for (Value v : inputs)
      if (!cast<RankedTensorType>(v.getType()).getElementType().isF32())
        fail(nodeName(n) + ": boolean inputs are not supported");
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
        fail(nodeName(n) + ": shapes cannot be broadcast together");
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
void Importer::importUnary(const onnx::NodeProto &n) {
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
    float alpha =
        floatAttr(n, "alpha", selu ? 1.67326319217681884765625f : 1.0f);
    float gamma =
        selu ? floatAttr(n, "gamma", 1.05070102214813232421875f) : 1.0f;
    fn = [&, alpha, gamma, selu](OpBuilder &nb, Location l, Value x) {
      Value neg = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE, x,
                                        f(nb, l, 0.0f));
      Value em1 = arith::SubFOp::create(nb, l, math::ExpOp::create(nb, l, x),
                                        f(nb, l, 1.0f));
      Value y = arith::SelectOp::create(
          nb, l, neg, arith::MulFOp::create(nb, l, em1, f(nb, l, alpha)), x);
      return selu ? arith::MulFOp::create(nb, l, y, f(nb, l, gamma)).getResult()
                  : y;
    };
  } else if (op == "ThresholdedRelu") {
    attrs = {"alpha"};
    float alpha = floatAttr(n, "alpha", 1.0f);
    fn = [&, alpha](OpBuilder &nb, Location l, Value x) {
      Value above = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, x,
                                          f(nb, l, alpha));
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
    float alpha = floatAttr(n, "alpha", 0.01f);
    fn = [&, alpha](OpBuilder &nb, Location l, Value x) {
      Value neg = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, x,
                                        f(nb, l, 0.0f));
      return arith::SelectOp::create(
                 nb, l, neg, arith::MulFOp::create(nb, l, x, f(nb, l, alpha)),
                 x)
          .getResult();
    };
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    attrs = {"alpha", "beta"};
    float alpha = op == "HardSwish" ? 1.0f / 6 : floatAttr(n, "alpha", 0.2f);
    float beta = op == "HardSwish" ? 0.5f : floatAttr(n, "beta", 0.5f);
    bool swish = op == "HardSwish";
    fn = [&, alpha, beta, swish](OpBuilder &nb, Location l, Value x) {
      Value y = arith::AddFOp::create(
          nb, l, arith::MulFOp::create(nb, l, x, f(nb, l, alpha)),
          f(nb, l, beta));
      y = arith::MinimumFOp::create(
          nb, l, arith::MaximumFOp::create(nb, l, y, f(nb, l, 0.0f)),
          f(nb, l, 1.0f));
      return swish ? arith::MulFOp::create(nb, l, x, y).getResult() : y;
    };
  } else {
    fail(nodeName(n) + ": not a unary op (an importer bug)");
  }
  onlyAttrs(n, attrs);
  define(n, elementwise({input(n, 0)}, n,
                        [&](OpBuilder &nb, Location l, ValueRange v) {
                          return fn(nb, l, v[0]);
                        }));
}

void Importer::importMinMax(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  onlyAttrs(n, {});
  SmallVector<Value> ins;
  for (int i = 0; i < n.input_size(); ++i)
    ins.push_back(input(n, i));
  bool isMax = op == "Max";
  define(n, elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
           Value r = v[0];
           for (Value x : v.drop_front())
             r = isMax ? arith::MaximumFOp::create(nb, l, r, x).getResult()
                       : arith::MinimumFOp::create(nb, l, r, x).getResult();
           return r;
         }));
}

/// min(max(x, lo), hi). The bounds are attributes (before opset 11) or
/// optional inputs, constant or computed at run time (broadcast like the
/// other element-wise ops); an absent bound is ±inf.
void Importer::importClip(const onnx::NodeProto &n) {
  onlyAttrs(n, {"min", "max"});
  SmallVector<Value> ins = {input(n, 0)};
  float lo = floatAttr(n, "min", -std::numeric_limits<float>::infinity());
  float hi = floatAttr(n, "max", std::numeric_limits<float>::infinity());
  // Input i becomes operand index[i] of the body, or stays a constant.
  int index[3] = {0, -1, -1};
  for (int i = 1; i <= 2; ++i) {
    if (i >= n.input_size() || n.input(i).empty())
      continue;
    Value bound = input(n, i);
    if (!shapeOf(bound).empty() &&
        llvm::any_of(shapeOf(bound), [](int64_t d) { return d != 1; }))
      fail(nodeName(n) + ": " + (i == 1 ? "min" : "max") + " must be a scalar");
    if (auto c = initializers.find(n.input(i)); c != initializers.end()) {
      (i == 1 ? lo : hi) = requiredConstant(n, i).at(0);
      continue;
    }
    index[i] = ins.size();
    ins.push_back(bound);
  }
  define(n, elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
           Value low = index[1] >= 0 ? v[index[1]] : f32Constant(nb, l, lo);
           Value high = index[2] >= 0 ? v[index[2]] : f32Constant(nb, l, hi);
           Value y = arith::MaximumFOp::create(nb, l, v[0], low);
           return arith::MinimumFOp::create(nb, l, y, high).getResult();
         }));
}

/// Binary arithmetic with numpy broadcasting.
void Importer::importBinary(const onnx::NodeProto &n) {
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
    fail(nodeName(n) + ": not a binary op (an importer bug)");
  onlyAttrs(n, {});
  define(n, elementwise({input(n, 0), input(n, 1)}, n,
                        [&](OpBuilder &nb, Location l, ValueRange a) {
                          return make(nb, l, a[0], a[1]);
                        }));
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
  r["Max"] = &Importer::importMinMax;
  r["Min"] = &Importer::importMinMax;
}
