//===- Logical.cpp - Comparisons, logical ops and Where -------------------===//
//
// Booleans are i1 tensors: comparisons of f32 tensors produce them; Not,
// And, Or and Xor combine them; Where selects with them; Cast turns them
// into f32 (0 or 1) and f32 into them (x != 0). Each is one
// linalg.generic with numpy broadcasting.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

static bool isBool(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isInteger(1);
}

LogicalResult Importer::importCompare(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  static const llvm::StringMap<arith::CmpFPredicate> predicates = {
      {"Equal", arith::CmpFPredicate::OEQ},
      {"Greater", arith::CmpFPredicate::OGT},
      {"GreaterOrEqual", arith::CmpFPredicate::OGE},
      {"Less", arith::CmpFPredicate::OLT},
      {"LessOrEqual", arith::CmpFPredicate::OLE}};
  auto it = predicates.find(n.op_type());
  if (it == predicates.end())
    return fail(nodeName(n) + ": not a comparison (an importer bug)");
  FailureOr<Value> a = input(n, 0);
  if (failed(a))
    return failure();
  FailureOr<Value> c = input(n, 1);
  if (failed(c))
    return failure();
  arith::CmpFPredicate predicate = it->second;
  if (isBool(*a) || isBool(*c)) {
    if (n.op_type() != "Equal" || !isBool(*a) || !isBool(*c))
      return fail(nodeName(n) +
                  ": boolean inputs are only supported by Equal of "
                  "two booleans");
    return define(n, elementwise(
                         {*a, *c}, n,
                         [](OpBuilder &nb, Location l, ValueRange v) {
                           return arith::CmpIOp::create(
                                      nb, l, arith::CmpIPredicate::eq, v[0],
                                      v[1])
                               .getResult();
                         },
                         b.getI1Type(), /*anyInputElement=*/true));
  }
  return define(n, elementwise(
                       {*a, *c}, n,
                       [&](OpBuilder &nb, Location l, ValueRange v) {
                         return arith::CmpFOp::create(nb, l, predicate, v[0],
                                                      v[1])
                             .getResult();
                       },
                       b.getI1Type()));
}

LogicalResult Importer::importLogical(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  const std::string &op = n.op_type();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  SmallVector<Value> ins = {*x};
  if (op != "Not") {
    FailureOr<Value> y = input(n, 1);
    if (failed(y))
      return failure();
    ins.push_back(*y);
  }
  for (Value v : ins)
    if (!isBool(v))
      return fail(nodeName(n) + ": the inputs must be booleans");
  return define(n, elementwise(
                       ins, n,
                       [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
                         if (op == "Not") {
                           Value one = arith::ConstantOp::create(
                               nb, l, nb.getBoolAttr(true));
                           return arith::XOrIOp::create(nb, l, v[0], one);
                         }
                         if (op == "And")
                           return arith::AndIOp::create(nb, l, v[0], v[1]);
                         if (op == "Or")
                           return arith::OrIOp::create(nb, l, v[0], v[1]);
                         return arith::XOrIOp::create(nb, l, v[0], v[1]);
                       },
                       b.getI1Type(), /*anyInputElement=*/true));
}

LogicalResult Importer::importWhere(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  FailureOr<Value> cond = input(n, 0);
  if (failed(cond))
    return failure();
  FailureOr<Value> x = input(n, 1);
  if (failed(x))
    return failure();
  FailureOr<Value> y = input(n, 2);
  if (failed(y))
    return failure();
  if (!isBool(*cond))
    return fail(nodeName(n) + ": the condition must be a boolean");
  if (isBool(*x) != isBool(*y))
    return fail(nodeName(n) + ": X and Y must have the same element type");
  Type element = cast<RankedTensorType>(x->getType()).getElementType();
  return define(
      n,
      elementwise(
          {*cond, *x, *y}, n,
          [](OpBuilder &nb, Location l, ValueRange v) {
            return arith::SelectOp::create(nb, l, v[0], v[1], v[2]).getResult();
          },
          element, /*anyInputElement=*/true));
}

void mlir::tq::onnx_import::registerLogicalOps(OpRegistry &r) {
  for (const char *op :
       {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"})
    r[op] = &Importer::importCompare;
  for (const char *op : {"Not", "And", "Or", "Xor"})
    r[op] = &Importer::importLogical;
  r["Where"] = &Importer::importWhere;
}
