//===- ONNX.cpp - ONNX models to float MLIR -------------------------------===//
//
// Walks the graph in order, keeping an SSA value per ONNX tensor name.
// Shapes are static: graph inputs take theirs from the model or from
// ONNXImportOptions::inputShapes, and every node computes its result shape.
// Ordered: tensor data, the importer class (types, helpers, one method per
// op family), the entry point.
//
//===----------------------------------------------------------------------===//
#include "tq/Importer/ONNX.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <cstring>

using namespace mlir;

namespace {

/// An error with its message; the importer stops at the first.
struct ImportError {
  std::string message;
};

std::string nodeName(const onnx::NodeProto &n) {
  std::string s = "node '" + n.name() + "' (" + n.op_type() + ")";
  return s;
}

/// The float values of a tensor (FLOAT, or INT64 / INT32 converted).
bool tensorValues(const onnx::TensorProto &t, std::vector<float> &out,
                  std::string &why) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  out.clear();
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    why = "external tensor data is not supported";
    return false;
  }
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (!t.raw_data().empty()) {
      if (int64_t(t.raw_data().size()) != n * 4) {
        why = "raw data size does not match the shape";
        return false;
      }
      out.resize(n);
      std::memcpy(out.data(), t.raw_data().data(), n * 4);
    } else {
      out.assign(t.float_data().begin(), t.float_data().end());
    }
    break;
  case onnx::TensorProto::INT64:
    if (!t.raw_data().empty()) {
      if (int64_t(t.raw_data().size()) != n * 8) {
        why = "raw data size does not match the shape";
        return false;
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t v;
        std::memcpy(&v, t.raw_data().data() + 8 * i, 8);
        out.push_back(float(v));
      }
    } else {
      for (int64_t v : t.int64_data())
        out.push_back(float(v));
    }
    break;
  default:
    why = "tensors of data type " + std::to_string(t.data_type()) +
          " are not supported (float and int64 are)";
    return false;
  }
  if (int64_t(out.size()) != n) {
    why = "tensor has " + std::to_string(out.size()) + " values for " +
          std::to_string(n) + " elements";
    return false;
  }
  return true;
}

class Importer {
public:
  Importer(MLIRContext *ctx, const tq::ONNXImportOptions &options)
      : ctx(ctx), b(ctx), options(options) {}

  OwningOpRef<ModuleOp> run(const onnx::ModelProto &model);

private:
  MLIRContext *ctx;
  OpBuilder b;
  const tq::ONNXImportOptions &options;
  Location loc = UnknownLoc::get(ctx);
  std::map<std::string, Value> values;
  std::map<std::string, onnx::TensorProto> initializers;

  [[noreturn]] void fail(const std::string &message) {
    throw ImportError{message};
  }
  RankedTensorType f32Tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  Value input(const onnx::NodeProto &n, int i) {
    if (i >= n.input_size() || n.input(i).empty())
      fail(nodeName(n) + ": missing input " + std::to_string(i));
    auto it = values.find(n.input(i));
    if (it == values.end())
      fail(nodeName(n) + ": input '" + n.input(i) + "' is not defined");
    return it->second;
  }
  const onnx::AttributeProto *attr(const onnx::NodeProto &n,
                                   const std::string &name) {
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(const onnx::NodeProto &n, const std::string &name,
                  int64_t dflt) {
    const onnx::AttributeProto *a = attr(n, name);
    return a ? a->i() : dflt;
  }
  float floatAttr(const onnx::NodeProto &n, const std::string &name,
                  float dflt) {
    const onnx::AttributeProto *a = attr(n, name);
    return a ? a->f() : dflt;
  }
  /// Fails on attributes the importer does not know for this op.
  void onlyAttrs(const onnx::NodeProto &n,
                 std::initializer_list<const char *> known) {
    for (const onnx::AttributeProto &a : n.attribute())
      if (std::find_if(known.begin(), known.end(), [&](const char *k) {
            return a.name() == k;
          }) == known.end())
        fail(nodeName(n) + ": attribute '" + a.name() + "' is not supported");
  }

  Value constant(const onnx::TensorProto &t, const std::string &where);
  Value zeros(ArrayRef<int64_t> shape);
  Value matmul(Value a, Value c, const onnx::NodeProto &n);
  Value transpose(Value v, ArrayRef<int64_t> perm);
  Value
  elementwise(ValueRange inputs, const onnx::NodeProto &n,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  void node(const onnx::NodeProto &n);
};

Value Importer::constant(const onnx::TensorProto &t, const std::string &where) {
  std::vector<float> data;
  std::string why;
  if (!tensorValues(t, data, why))
    fail(where + ": " + why);
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  auto type = f32Tensor(shape);
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<float>(data)));
}

Value Importer::zeros(ArrayRef<int64_t> shape) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

Value Importer::transpose(Value v, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(shapeOf(v)[d]);
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

Value Importer::matmul(Value a, Value c, const onnx::NodeProto &n) {
  ArrayRef<int64_t> as = shapeOf(a), cs = shapeOf(c);
  if (as.size() == 2 && cs.size() == 2) {
    if (as[1] != cs[0])
      fail(nodeName(n) + ": inner dimensions differ (" + std::to_string(as[1]) +
           " vs " + std::to_string(cs[0]) + ")");
    Value init = zeros({as[0], cs[1]});
    return linalg::MatmulOp::create(b, loc, ValueRange{a, c}, ValueRange{init})
        .getResult(0);
  }
  if (as.size() == 3 && cs.size() == 3 && as[0] == cs[0] && as[2] == cs[1]) {
    Value init = zeros({as[0], as[1], cs[2]});
    return linalg::BatchMatmulOp::create(b, loc, ValueRange{a, c},
                                         ValueRange{init})
        .getResult(0);
  }
  fail(nodeName(n) + ": operands of rank " + std::to_string(as.size()) +
       " and " + std::to_string(cs.size()) +
       " are not supported (2-D, or 3-D with equal batches)");
}

/// numpy broadcasting of the inputs into one linalg.generic.
Value Importer::elementwise(
    ValueRange inputs, const onnx::NodeProto &n,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
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
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
      });
  return op.getResult(0);
}

void Importer::node(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    fail(nodeName(n) + ": domain '" + n.domain() + "' is not supported");
  auto define = [&](Value v, int i = 0) {
    if (i >= n.output_size())
      fail(nodeName(n) + ": missing output " + std::to_string(i));
    values[n.output(i)] = v;
  };
  auto binary = [&](auto make) {
    onlyAttrs(n, {});
    define(elementwise({input(n, 0), input(n, 1)}, n,
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         return make(nb, l, a[0], a[1]);
                       }));
  };
  if (op == "MatMul") {
    onlyAttrs(n, {});
    define(matmul(input(n, 0), input(n, 1), n));
  } else if (op == "Gemm") {
    onlyAttrs(n, {"alpha", "beta", "transA", "transB"});
    Value a = input(n, 0), c = input(n, 1);
    if (shapeOf(a).size() != 2 || shapeOf(c).size() != 2)
      fail(nodeName(n) + ": A and B must be 2-D");
    if (intAttr(n, "transA", 0))
      a = transpose(a, {1, 0});
    if (intAttr(n, "transB", 0))
      c = transpose(c, {1, 0});
    Value y = matmul(a, c, n);
    float alpha = floatAttr(n, "alpha", 1.0f),
          beta = floatAttr(n, "beta", 1.0f);
    if (alpha != 1.0f)
      y = elementwise({y}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value s = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(alpha));
        return arith::MulFOp::create(nb, l, v[0], s);
      });
    if (n.input_size() > 2 && !n.input(2).empty()) {
      Value bias = input(n, 2);
      y = elementwise(
          {y, bias}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
            Value c2 = v[1];
            if (beta != 1.0f)
              c2 = arith::MulFOp::create(
                  nb, l, c2,
                  arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(beta)));
            return arith::AddFOp::create(nb, l, v[0], c2);
          });
    }
    define(y);
  } else if (op == "Add") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::AddFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Sub") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::SubFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Mul") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::MulFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Div") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::DivFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Relu") {
    onlyAttrs(n, {});
    define(elementwise(
        {input(n, 0)}, n, [](OpBuilder &nb, Location l, ValueRange v) {
          Value zero =
              arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0f));
          return arith::MaximumFOp::create(nb, l, v[0], zero).getResult();
        }));
  } else if (op == "Identity") {
    onlyAttrs(n, {});
    define(input(n, 0));
  } else if (op == "Constant") {
    onlyAttrs(n, {"value"});
    const onnx::AttributeProto *v = attr(n, "value");
    if (!v)
      fail(nodeName(n) + ": only the 'value' form is supported");
    initializers[n.output(0)] = v->t();
    define(constant(v->t(), nodeName(n)));
  } else if (op == "Transpose") {
    onlyAttrs(n, {"perm"});
    Value x = input(n, 0);
    SmallVector<int64_t> perm;
    if (const onnx::AttributeProto *p = attr(n, "perm"))
      perm.assign(p->ints().begin(), p->ints().end());
    else
      for (int64_t i = shapeOf(x).size(); i-- > 0;)
        perm.push_back(i);
    SmallVector<int64_t> sorted(perm);
    llvm::sort(sorted);
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != int64_t(i) || perm.size() != shapeOf(x).size())
        fail(nodeName(n) + ": 'perm' is not a permutation of the dims");
    define(transpose(x, perm));
  } else if (op == "Flatten") {
    onlyAttrs(n, {"axis"});
    Value x = input(n, 0);
    int64_t rank = shapeOf(x).size();
    int64_t axis = intAttr(n, "axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      fail(nodeName(n) + ": axis out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= shapeOf(x)[i];
    ReassociationIndices lhs, rhs;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? lhs : rhs).push_back(i);
    SmallVector<ReassociationIndices> groups;
    // collapse_shape needs non-empty groups: an empty side is a unit dim.
    Value v = x;
    if (lhs.empty() || rhs.empty()) {
      SmallVector<int64_t> shape = {outer, inner};
      SmallVector<ReassociationIndices> all(1);
      for (int64_t i = 0; i < rank; ++i)
        all[0].push_back(i);
      Value flat = tensor::CollapseShapeOp::create(b, loc, x, all);
      groups = {{0, 1}};
      v = tensor::ExpandShapeOp::create(b, loc, f32Tensor(shape), flat, groups);
    } else {
      groups = {lhs, rhs};
      v = tensor::CollapseShapeOp::create(b, loc, x, groups);
    }
    define(v);
  } else {
    fail(nodeName(n) + ": op type '" + op + "' is not supported");
  }
}

OwningOpRef<ModuleOp> Importer::run(const onnx::ModelProto &model) {
  const onnx::GraphProto &g = model.graph();
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") &&
        (o.version() < 9 || o.version() > 21))
      fail("opset " + std::to_string(o.version()) +
           " is not supported (9 to 21 are)");
  for (const onnx::TensorProto &t : g.initializer())
    initializers[t.name()] = t;

  // The function's arguments: graph inputs that are not initializers.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &in : g.input()) {
    if (initializers.count(in.name()))
      continue;
    const onnx::TypeProto &t = in.type();
    if (!t.has_tensor_type() ||
        t.tensor_type().elem_type() != onnx::TensorProto::FLOAT)
      fail("input '" + in.name() + "': only float tensors are supported");
    SmallVector<int64_t> shape;
    auto given = options.inputShapes.find(in.name());
    if (given != options.inputShapes.end()) {
      shape.assign(given->second.begin(), given->second.end());
    } else {
      for (const onnx::TensorShapeProto::Dimension &d :
           t.tensor_type().shape().dim()) {
        if (!d.has_dim_value())
          fail("input '" + in.name() + "' has a symbolic dimension '" +
               d.dim_param() + "': fix it with --input-shape=" + in.name() +
               ":<d0>x<d1>...");
        shape.push_back(d.dim_value());
      }
    }
    argTypes.push_back(f32Tensor(shape));
    argNames.push_back(in.name());
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, options.function,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  for (auto [i, name] : llvm::enumerate(argNames))
    values[name] = entry->getArgument(i);
  for (auto &[name, t] : initializers)
    values[name] = constant(t, "initializer '" + name + "'");
  for (const onnx::NodeProto &n : g.node())
    node(n);

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : g.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      fail("output '" + out.name() + "' is not computed by the graph");
    results.push_back(it->second);
  }
  func::ReturnOp::create(b, loc, results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  return module;
}

} // namespace

OwningOpRef<ModuleOp> mlir::tq::importONNX(const std::string &bytes,
                                           const std::string &name,
                                           MLIRContext *ctx,
                                           const ONNXImportOptions &options,
                                           std::string &error) {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                   linalg::LinalgDialect, tensor::TensorDialect>();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    // Not a binary model: the ONNX text syntax?
    onnx::ModelProto text;
    onnx::OnnxParser parser(bytes.c_str());
    onnx::Status status = parser.Parse(text);
    if (!status.IsOK() || !text.has_graph()) {
      error = name + ": not an ONNX model (binary: invalid protobuf; text: " +
              status.ErrorMessage() + ")";
      return nullptr;
    }
    model = std::move(text);
  }
  try {
    Importer importer(ctx, options);
    return importer.run(model);
  } catch (const ImportError &e) {
    error = name + ": " + e.message;
    return nullptr;
  }
}
