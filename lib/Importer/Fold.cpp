//===- Fold.cpp - Import-time evaluation of constant nodes ----------------===//
//
// The shape arithmetic exporters emit (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape) evaluated while importing.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// Evaluates at import time a node whose inputs are all constants, for
/// the shape arithmetic exporters emit (Shape -> Gather -> Unsqueeze ->
/// Concat -> Reshape): its output becomes a constant too. Shapes are
/// static, so Shape always folds. Returns nullopt to import the node as
/// usual.
std::optional<LogicalResult> Importer::fold(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  static const std::set<std::string> foldable = {"Shape",
                                                 "Size",
                                                 "Range",
                                                 "Gather",
                                                 "Unsqueeze",
                                                 "Squeeze",
                                                 "Concat",
                                                 "Cast",
                                                 "Add",
                                                 "Sub",
                                                 "Mul",
                                                 "Div",
                                                 "Identity",
                                                 "Slice",
                                                 "Equal",
                                                 "Greater",
                                                 "GreaterOrEqual",
                                                 "Less",
                                                 "LessOrEqual",
                                                 "Not",
                                                 "And",
                                                 "Or",
                                                 "Xor",
                                                 "ConstantOfShape"};
  static const std::set<std::string> boolResult = {
      "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Not", "And",
      "Or",    "Xor"};
  if (!foldable.count(op) || n.output_size() != 1)
    return std::nullopt;
  struct Const {
    std::vector<int64_t> dims;
    std::vector<double> v;
    bool isInt;
    bool isBool = false;
  };
  std::vector<Const> in;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      in.push_back({{}, {}, true});
      continue;
    }
    if ((op == "Shape" || op == "Size") && i == 0)
      continue;
    auto it = initializers.find(n.input(i));
    if (it == initializers.end())
      return std::nullopt;
    std::vector<float> f;
    std::string why;
    if (!tensorValues(it->second, f, why))
      return std::nullopt;
    in.push_back({{it->second.dims().begin(), it->second.dims().end()},
                  {f.begin(), f.end()},
                  it->second.data_type() != onnx::TensorProto::FLOAT,
                  it->second.data_type() == onnx::TensorProto::BOOL});
  }
  // Too few inputs: the value path reports the missing one.
  size_t need = op == "Shape" || op == "Size" ? 0 : op == "Gather" ? 2 : 1;
  if (in.size() < need)
    return std::nullopt;
  auto ints = [](const Const &c) {
    std::vector<int64_t> r;
    for (double d : c.v)
      r.push_back(int64_t(d));
    return r;
  };
  Const out;
  if (op == "Shape") {
    FailureOr<Value> x = input(n, 0);
    if (failed(x))
      return failure();
    ArrayRef<int64_t> shape = shapeOf(*x);
    int64_t rank = shape.size();
    FailureOr<int64_t> startAttr = intAttr(n, "start", 0);
    if (failed(startAttr))
      return failure();
    FailureOr<int64_t> endAttr = intAttr(n, "end", rank);
    if (failed(endAttr))
      return failure();
    int64_t start = *startAttr, end = *endAttr;
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    for (int64_t d = start; d < end; ++d)
      out.v.push_back(shape[d]);
    out.dims = {int64_t(out.v.size())};
    out.isInt = true;
  } else if (op == "Range") {
    // start, start + delta, ... while before limit.
    if (in.size() != 3 || in[0].v.size() != 1 || in[1].v.size() != 1 ||
        in[2].v.size() != 1)
      return fail(nodeName(n) + ": start, limit and delta must be scalars");
    double start = in[0].v[0], limit = in[1].v[0], delta = in[2].v[0];
    if (delta == 0)
      return fail(nodeName(n) + ": delta must not be 0");
    double count = std::ceil((limit - start) / delta);
    if (!(count >= 1) || count > double(1 << 24))
      return fail(nodeName(n) + ": the range has " +
                  (count >= 1 ? "more than 2^24 elements" : "no elements"));
    for (int64_t i = 0; i < int64_t(count); ++i)
      out.v.push_back(start + double(i) * delta);
    out.dims = {int64_t(count)};
    out.isInt = in[0].isInt;
  } else if (op == "Size") {
    // A scalar: the element count of the static shape.
    FailureOr<Value> x = input(n, 0);
    if (failed(x))
      return failure();
    int64_t count = 1;
    for (int64_t d : shapeOf(*x))
      count *= d;
    out.v = {double(count)};
    out.isInt = true;
  } else if (op == "Identity") {
    out = in[0];
  } else if (op == "ConstantOfShape") {
    // The `value` attribute (one element; float 0 by default) everywhere.
    double v = 0;
    out.isInt = false;
    FailureOr<const onnx::AttributeProto *> a =
        attr(n, "value", onnx::AttributeProto::TENSOR);
    if (failed(a))
      return failure();
    if (*a) {
      std::vector<float> f;
      std::string why;
      if (!tensorValues((*a)->t(), f, why) || f.size() != 1)
        return fail(nodeName(n) + ": value must be a tensor of one element");
      v = f[0];
      out.isInt = (*a)->t().data_type() != onnx::TensorProto::FLOAT;
      out.isBool = (*a)->t().data_type() == onnx::TensorProto::BOOL;
    }
    int64_t count = 1;
    for (int64_t d : ints(in[0])) {
      if (d < 0 || (d && count > (int64_t(1) << 28) / d))
        return fail(nodeName(n) + ": the shape is negative or too large");
      count *= d;
      out.dims.push_back(d);
    }
    if (count == 0)
      return fail(nodeName(n) + ": empty tensors are not supported");
    out.v.assign(count, v);
  } else if (op == "Not") {
    out = in[0];
    for (double &d : out.v)
      d = d == 0;
  } else if (op == "Cast") {
    FailureOr<int64_t> toAttr = intAttr(n, "to", 0);
    if (failed(toAttr))
      return failure();
    int64_t to = *toAttr;
    if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32 &&
        to != onnx::TensorProto::FLOAT && to != onnx::TensorProto::BOOL)
      return std::nullopt;
    out = in[0];
    out.isInt = to != onnx::TensorProto::FLOAT;
    out.isBool = to == onnx::TensorProto::BOOL;
    if (out.isBool)
      for (double &d : out.v)
        d = d != 0;
    if (out.isInt)
      for (double &d : out.v) {
        if (!std::isfinite(d))
          return std::nullopt; // no integer for it: the value path decides
        d = std::trunc(d);
      }
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    FailureOr<const onnx::AttributeProto *> axesAttr =
        attr(n, "axes", onnx::AttributeProto::INTS);
    if (failed(axesAttr))
      return failure();
    std::vector<int64_t> axes;
    if (*axesAttr)
      axes.assign((*axesAttr)->ints().begin(), (*axesAttr)->ints().end());
    else if (in.size() > 1)
      axes = ints(in[1]);
    out = in[0];
    int64_t rank = in[0].dims.size();
    if (op == "Unsqueeze") {
      int64_t outRank = rank + axes.size();
      for (int64_t &a : axes)
        a = a < 0 ? a + outRank : a;
      llvm::sort(axes);
      for (int64_t a : axes) {
        if (a < 0 || a > int64_t(out.dims.size()))
          return std::nullopt;
        out.dims.insert(out.dims.begin() + a, 1);
      }
    } else {
      out.dims.clear();
      for (int64_t d = 0; d < rank; ++d) {
        bool listed = axes.empty() ? in[0].dims[d] == 1
                                   : llvm::is_contained(axes, d) ||
                                         llvm::is_contained(axes, d - rank);
        if (!listed)
          out.dims.push_back(in[0].dims[d]);
        else if (in[0].dims[d] != 1)
          return std::nullopt;
      }
    }
  } else if (op == "Gather") {
    if (in[0].dims.size() != 1)
      return std::nullopt;
    FailureOr<int64_t> axis = intAttr(n, "axis", 0);
    if (failed(axis))
      return failure();
    if (*axis != 0)
      return std::nullopt;
    int64_t size = in[0].dims[0];
    for (int64_t i : ints(in[1])) {
      if (i < -size || i >= size)
        return std::nullopt; // the value path reports it
      out.v.push_back(in[0].v[i < 0 ? i + size : i]);
    }
    out.dims = in[1].dims;
    out.isInt = in[0].isInt;
  } else if (op == "Concat") {
    for (const Const &c : in) {
      if (c.dims.size() != 1)
        return std::nullopt;
      out.v.insert(out.v.end(), c.v.begin(), c.v.end());
    }
    out.dims = {int64_t(out.v.size())};
    out.isInt = in[0].isInt;
  } else if (op == "Slice") {
    if (in.size() < 3 || in[0].dims.size() != 1 ||
        (in.size() > 3 && !in[3].v.empty() && ints(in[3])[0] != 0))
      return std::nullopt;
    int64_t size = in[0].dims[0];
    int64_t step = in.size() > 4 && !in[4].v.empty() ? ints(in[4])[0] : 1;
    if (step <= 0 || in[1].v.size() != 1 || in[2].v.size() != 1)
      return std::nullopt;
    auto clampIndex = [&](double d) {
      int64_t i = d >= 9e18 ? size : int64_t(d);
      return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size);
    };
    for (int64_t i = clampIndex(in[1].v[0]), e = clampIndex(in[2].v[0]); i < e;
         i += step)
      out.v.push_back(in[0].v[i]);
    out.dims = {int64_t(out.v.size())};
    out.isInt = in[0].isInt;
  } else {
    // Elementwise arithmetic on equal shapes or with a scalar.
    if (in.size() != 2)
      return std::nullopt;
    const Const &a = in[0], &c = in[1];
    if (a.v.size() != c.v.size() && a.v.size() != 1 && c.v.size() != 1)
      return std::nullopt;
    out.dims = a.v.size() >= c.v.size() ? a.dims : c.dims;
    out.isInt = a.isInt && c.isInt;
    for (size_t i = 0, e = std::max(a.v.size(), c.v.size()); i < e; ++i) {
      double x = a.v[a.v.size() == 1 ? 0 : i], y = c.v[c.v.size() == 1 ? 0 : i];
      double r = op == "Add"              ? x + y
                 : op == "Sub"            ? x - y
                 : op == "Mul"            ? x * y
                 : op == "Div"            ? x / y
                 : op == "Equal"          ? double(x == y)
                 : op == "Greater"        ? double(x > y)
                 : op == "GreaterOrEqual" ? double(x >= y)
                 : op == "Less"           ? double(x < y)
                 : op == "LessOrEqual"    ? double(x <= y)
                 : op == "And"            ? double(x != 0 && y != 0)
                 : op == "Or"             ? double(x != 0 || y != 0)
                                          : double((x != 0) != (y != 0));
      if (op == "Div" && out.isInt) {
        if (y == 0)
          return std::nullopt; // integer division by zero is not folded
        r = std::trunc(r);     // integer division truncates
      }
      out.v.push_back(r);
    }
  }
  if (boolResult.count(op))
    out.isInt = out.isBool = true;
  onnx::TensorProto t;
  t.set_name(n.output(0));
  for (int64_t d : out.dims)
    t.add_dims(d);
  if (out.isBool) {
    t.set_data_type(onnx::TensorProto::BOOL);
    for (double d : out.v)
      t.add_int32_data(d != 0);
  } else if (out.isInt) {
    t.set_data_type(onnx::TensorProto::INT64);
    for (double d : out.v)
      t.add_int64_data(int64_t(d));
  } else {
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (double d : out.v)
      t.add_float_data(float(d));
  }
  initializers[n.output(0)] = t;
  FailureOr<Value> c = constant(t, nodeName(n));
  if (failed(c))
    return failure();
  values[n.output(0)] = *c;
  return success();
}
