//===- Importer.cpp - ONNX models to float MLIR ---------------------------===//
//
// The graph walk: opsets, graph inputs (with their fixed shapes or bound
// constants), initializers, then each node in order through the op
// registry, then the outputs. Shapes are static: every node computes its
// result shape. Before any node is imported, every op type the registry
// lacks is listed in one error.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"
#include "tq/Support/ArgNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/parser.h>

#include <set>

using namespace mlir;
using namespace mlir::tq::onnx_import;

const OpRegistry &mlir::tq::onnx_import::opRegistry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerMatmulOps(r);
    registerConvOps(r);
    registerPoolingOps(r);
    registerNormalizationOps(r);
    registerReductionOps(r);
    registerTensorOps(r);
    registerIndexingOps(r);
    registerResizeOps(r);
    registerLogicalOps(r);
    registerControlFlowOps(r);
    registerRecurrentOps(r);
    registerQuantizationOps(r);
    registerLossOps(r);
    return r;
  }();
  return registry;
}

/// The node's name, or its first output's when it has none.
static std::string displayName(const onnx::NodeProto &n) {
  return !n.name().empty()     ? n.name()
         : n.output_size() > 0 ? n.output(0)
                               : n.op_type();
}

/// Calls `f` on every node of `nodes` and of their subgraphs (If
/// branches), depth first.
static void forEachNode(ArrayRef<onnx::NodeProto> nodes,
                        function_ref<void(const onnx::NodeProto &)> f) {
  for (const onnx::NodeProto &n : nodes) {
    f(n);
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.has_g())
        forEachNode(std::vector<onnx::NodeProto>(a.g().node().begin(),
                                                 a.g().node().end()),
                    f);
  }
}

LogicalResult Importer::checkSupported(ArrayRef<onnx::NodeProto> nodes) {
  // Op type (with its domain) -> (count, first node), in first-seen order.
  SmallVector<std::string> order;
  std::map<std::string, std::pair<int, std::string>> missing;
  forEachNode(nodes, [&](const onnx::NodeProto &n) {
    std::string key = n.op_type();
    if (!isDefaultDomain(n.domain()))
      key = n.domain() + "." + key;
    else if (opRegistry().count(n.op_type()))
      return;
    auto [it, inserted] = missing.try_emplace(key, 0, displayName(n));
    if (inserted)
      order.push_back(key);
    ++it->second.first;
  });
  if (order.empty())
    return success();
  std::string msg = std::to_string(order.size()) + " op type" +
                    (order.size() == 1 ? " is" : "s are") + " not supported:";
  for (const std::string &key : order) {
    auto &[count, first] = missing[key];
    msg += "\n  " + key + ": " + std::to_string(count) + " node" +
           (count == 1 ? "" : "s") + ", first '" + first + "'";
  }
  return fail(msg);
}

LogicalResult Importer::node(const onnx::NodeProto &n) {
  // Ops carry the node's name (or its first output's): diagnostics and
  // per-layer options (keep-float, calibration) refer to ONNX nodes.
  loc = NameLoc::get(b.getStringAttr(displayName(n)));
  if (!isDefaultDomain(n.domain()))
    return fail(nodeName(n) + ": domain '" + n.domain() + "' is not supported");
  if (std::optional<LogicalResult> folded = fold(n))
    return *folded;
  OpImporter importer = opRegistry().lookup(n.op_type());
  if (!importer)
    return fail(nodeName(n) + ": op type '" + n.op_type() +
                "' is not supported");
  return (this->*importer)(n);
}

// Integer data computed at run time is carried as f32, exact up to 2^24;
// booleans are i1. At the function's boundary, integer graph inputs and
// outputs have their ONNX element type.

Type Importer::boundaryElement(int32_t onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

/// A node standing for a graph input or output, to name it in diagnostics.
static onnx::NodeProto boundaryNode(const std::string &name) {
  onnx::NodeProto n;
  n.set_name(name);
  n.set_op_type("graph boundary");
  return n;
}

FailureOr<Value> Importer::fromBoundary(Value arg, const std::string &name) {
  Type element = cast<RankedTensorType>(arg.getType()).getElementType();
  if (element.isF32() || element.isInteger(1))
    return arg;
  return elementwise(
      {arg}, boundaryNode(name),
      [](OpBuilder &nb, Location l, ValueRange v) {
        return arith::SIToFPOp::create(nb, l, nb.getF32Type(), v[0])
            .getResult();
      },
      b.getF32Type(), /*anyInputElement=*/true);
}

FailureOr<Value> Importer::toBoundary(Value v,
                                      const onnx::ValueInfoProto &out) {
  const onnx::TypeProto &t = out.type();
  Type want = t.has_tensor_type() ? boundaryElement(t.tensor_type().elem_type())
                                  : Type();
  Type have = cast<RankedTensorType>(v.getType()).getElementType();
  // Undeclared, float, or the value already has the type.
  if (!want || want.isF32() || want == have)
    return v;
  onnx::NodeProto n = boundaryNode(out.name());
  if (want.isInteger(1))
    return elementwise(
        {v}, n,
        [](OpBuilder &nb, Location l, ValueRange x) {
          return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE, x[0],
                                       f32Constant(nb, l, 0))
              .getResult();
        },
        want);
  // An integer output: f32 values rounded to the nearest integer (they are
  // integers unless a float op produced them), booleans extended.
  return elementwise(
      {v}, n,
      [want](OpBuilder &nb, Location l, ValueRange x) -> Value {
        if (x[0].getType().isInteger(1))
          return arith::ExtUIOp::create(nb, l, want, x[0]);
        Value r = math::RoundEvenOp::create(nb, l, x[0]);
        return arith::FPToSIOp::create(nb, l, want, r);
      },
      want, /*anyInputElement=*/true);
}

/// The element type of output `i` of `n` from its inputs' (`typeOf`):
/// ops that make indices, booleans or a given type, and for the rest the
/// type of their data input.
static int32_t
outputElementType(const onnx::NodeProto &n, int i,
                  function_ref<int32_t(const std::string &)> typeOf) {
  static const llvm::StringSet<> indices = {"Shape", "Size", "ArgMax", "ArgMin",
                                            "NonZero"};
  static const llvm::StringSet<> booleans = {
      "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Not", "And",
      "Or",    "Xor",     "IsNaN",          "IsInf"};
  const std::string &op = n.op_type();
  if (indices.contains(op) || (op == "TopK" && i == 1))
    return onnx::TensorProto::INT64;
  if (booleans.contains(op))
    return onnx::TensorProto::BOOL;
  for (const onnx::AttributeProto &a : n.attribute()) {
    if (op == "Cast" && a.name() == "to")
      return int32_t(a.i());
    if ((op == "Constant" || op == "ConstantOfShape") && a.name() == "value")
      return a.t().data_type();
  }
  if (op == "Constant" || op == "ConstantOfShape")
    return onnx::TensorProto::FLOAT;
  if (op == "CastLike" && n.input_size() > 1)
    return typeOf(n.input(1));
  // Where(condition, x, y) has x's type; the rest their first input's.
  int data = op == "Where" ? 1 : 0;
  return n.input_size() > data ? typeOf(n.input(data))
                               : int32_t(onnx::TensorProto::FLOAT);
}

void Importer::recordElementTypes(const onnx::GraphProto &g) {
  // Declared types first (inputs, outputs, value_info, initializers); the
  // others follow from each node's inputs, in the graph's order.
  for (const auto *list : {&g.input(), &g.output(), &g.value_info()})
    for (const onnx::ValueInfoProto &v : *list)
      if (v.type().has_tensor_type() && v.type().tensor_type().elem_type())
        elementTypes[v.name()] = v.type().tensor_type().elem_type();
  for (const onnx::TensorProto &t : g.initializer())
    elementTypes[t.name()] = t.data_type();
  auto typeOf = [&](const std::string &name) -> int32_t {
    auto it = elementTypes.find(name);
    return it == elementTypes.end() ? int32_t(onnx::TensorProto::FLOAT)
                                    : it->second;
  };
  for (const onnx::NodeProto &n : g.node()) {
    // Subgraphs (the branches of If) first: their outputs type the node's.
    const onnx::GraphProto *branch = nullptr;
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.has_g()) {
        recordElementTypes(a.g());
        branch = &a.g();
      }
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty() || elementTypes.count(n.output(i)))
        continue;
      elementTypes[n.output(i)] = branch && i < branch->output_size()
                                      ? typeOf(branch->output(i).name())
                                      : outputElementType(n, i, typeOf);
    }
  }
}

bool Importer::isInteger(const std::string &value) const {
  auto it = elementTypes.find(value);
  if (it == elementTypes.end())
    return false;
  switch (it->second) {
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT8:
    return true;
  default:
    return false;
  }
}

OwningOpRef<ModuleOp> Importer::run(const onnx::ModelProto &model) {
  const onnx::GraphProto &g = model.graph();
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") &&
        (o.version() < 6 || o.version() > 22)) {
      fail("opset " + std::to_string(o.version()) +
           " is not supported (6 to 22 are)");
      return nullptr;
    } else if (o.domain().empty() || o.domain() == "ai.onnx")
      opsets.push_back(o.version());
  for (const onnx::TensorProto &t : g.initializer())
    initializers[t.name()] = t;
  recordElementTypes(g);
  for (const auto &[name, c] : options.constants) {
    if (llvm::none_of(g.input(), [&, &name = name](const auto &in) {
          return in.name() == name;
        })) {
      fail("--constant-input '" + name + "' is not an input of the graph");
      return nullptr;
    }
    onnx::TensorProto t;
    t.set_name(name);
    for (int64_t d : c.shape)
      t.add_dims(d);
    t.set_data_type(c.dataType);
    for (double v : c.values)
      if (c.dataType == onnx::TensorProto::FLOAT)
        t.add_float_data(float(v));
      else if (c.dataType == onnx::TensorProto::INT64)
        t.add_int64_data(int64_t(v));
      else
        t.add_int32_data(int32_t(v));
    initializers[name] = t;
  }

  for (const auto &[name, value] : options.inputShapes)
    if (llvm::none_of(g.input(), [&, &name = name](const auto &in) {
          return in.name() == name && !initializers.count(name);
        })) {
      std::string known;
      for (const onnx::ValueInfoProto &in : g.input())
        if (!initializers.count(in.name()))
          known += (known.empty() ? "" : ", ") + in.name();
      fail("--input-shape " + name + ": the graph has no input named '" + name +
           "' (its inputs: " + known + ")");
      return nullptr;
    }
  // The function's arguments: graph inputs that are not initializers.
  std::set<std::string> usedDims;
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &in : g.input()) {
    if (initializers.count(in.name()))
      continue;
    const onnx::TypeProto &t = in.type();
    Type element = t.has_tensor_type()
                       ? boundaryElement(t.tensor_type().elem_type())
                       : Type();
    if (!element) {
      fail("input '" + in.name() +
           "': only float, int64, int32, int16, int8 and bool tensors are "
           "supported");
      return nullptr;
    }
    SmallVector<int64_t> shape;
    auto given = options.inputShapes.find(in.name());
    if (given != options.inputShapes.end()) {
      shape.assign(given->second.begin(), given->second.end());
      // Any dim may be set (a batch of 22 where the model says 1), not the
      // rank.
      if (t.tensor_type().has_shape() &&
          t.tensor_type().shape().dim_size() != int(shape.size())) {
        fail("--input-shape " + in.name() + ": the input has rank " +
             std::to_string(t.tensor_type().shape().dim_size()) + ", got " +
             std::to_string(shape.size()) + " dims");
        return nullptr;
      }
    } else {
      for (const onnx::TensorShapeProto::Dimension &d :
           t.tensor_type().shape().dim()) {
        if (!d.has_dim_value()) {
          auto known = options.dims.find(d.dim_param());
          if (!d.dim_param().empty() && known != options.dims.end()) {
            shape.push_back(known->second);
            usedDims.insert(d.dim_param());
            continue;
          }
          fail("input '" + in.name() + "' has a symbolic dimension '" +
               d.dim_param() + "': fix it with --dim=" +
               (d.dim_param().empty() ? std::string("NAME") : d.dim_param()) +
               "=N or --input-shape=" + in.name() + ":<d0>x<d1>...");
          return nullptr;
        }
        if (d.dim_value() < 1) {
          fail("input '" + in.name() + "' has a dimension of " +
               std::to_string(d.dim_value()) + " (dims must be positive)");
          return nullptr;
        }
        shape.push_back(d.dim_value());
      }
    }
    if (failed(checkShape(shape, "input '" + in.name() + "'")))
      return nullptr;
    argTypes.push_back(RankedTensorType::get(shape, element));
    argNames.push_back(in.name());
  }

  for (const auto &[name, value] : options.dims)
    if (!usedDims.count(name)) {
      fail("--dim " + name + "=" + std::to_string(value) +
           ": no graph input has a symbolic dimension '" + name + "'");
      return nullptr;
    }

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, options.function,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    loc = NameLoc::get(b.getStringAttr(name));
    entry->getArgument(i).setLoc(loc);
    FailureOr<Value> arg = fromBoundary(entry->getArgument(i), name);
    if (failed(arg))
      return nullptr;
    values[name] = *arg;
  }
  std::vector<onnx::NodeProto> nodes = foldBatchNorms(g);
  cancelTransposes(nodes, g);
  if (failed(checkSupported(nodes)))
    return nullptr;
  for (auto &[name, t] : initializers) {
    loc = NameLoc::get(b.getStringAttr(name));
    FailureOr<Value> c = constant(t, "initializer '" + name + "'");
    if (failed(c))
      return nullptr;
    values[name] = *c;
  }
  for (const onnx::NodeProto &n : nodes)
    if (failed(node(n)))
      return nullptr;

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : g.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) {
      fail("output '" + out.name() + "' is not computed by the graph");
      return nullptr;
    }
    loc = NameLoc::get(b.getStringAttr(out.name()));
    FailureOr<Value> result = toBoundary(it->second, out);
    if (failed(result))
      return nullptr;
    results.push_back(*result);
  }
  func::ReturnOp::create(b, module->getLoc(), results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  // The ONNX names of the inputs and outputs, for the runners and the
  // headers tq-compile writes.
  for (auto [i, name] : llvm::enumerate(argNames))
    func.setArgAttr(i, kNameArgAttr, b.getStringAttr(name));
  for (auto [i, out] : llvm::enumerate(g.output()))
    func.setResultAttr(i, kNameArgAttr, b.getStringAttr(out.name()));
  return module;
}

OwningOpRef<ModuleOp> mlir::tq::importONNX(const std::string &bytes,
                                           const std::string &name,
                                           MLIRContext *ctx,
                                           const ONNXImportOptions &options,
                                           std::string &error) {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                   linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                   tensor::TensorDialect>();
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
  // Errors are reported at the node's location; the first one is the
  // message returned.
  std::string first;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return failure(); // Not ours: on to the enclosing handler.
    if (first.empty())
      first = diag.str();
    return success();
  });
  onnx_import::Importer importer(ctx, options);
  OwningOpRef<ModuleOp> module = importer.run(model);
  if (!module)
    error = name + ": " + first;
  return module;
}