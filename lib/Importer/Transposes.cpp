//===- Transposes.cpp - NHWC Transpose pairs cancelled before import ------===//
//
// Converters from TensorFlow (NHWC) wrap each Conv and pooling node, which
// ONNX defines on NCHW, in a pair of Transposes:
//
//   T(0,3,1,2) -> Conv -> T(0,2,3,1) -> Relu -> Max(x, c) -> T(0,3,1,2) -> Conv
//
// Between two layers a Transpose and its inverse enclose only ops that do
// not care about the layout (element-wise on one tensor, or with a scalar
// constant). Both Transposes then become Identity, and the ops between run
// in the layer's layout: one transpose at each end of the graph instead of
// two per layer.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// The perm of a Transpose node, empty if it has none (the reversal).
static std::vector<int64_t> permOf(const onnx::NodeProto &n) {
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.name() == "perm")
      return {a.ints().begin(), a.ints().end()};
  return {};
}

/// Whether applying `p` and then `q` is the identity.
static bool inverse(ArrayRef<int64_t> p, ArrayRef<int64_t> q) {
  if (p.empty() || p.size() != q.size())
    return false;
  for (size_t i = 0; i < q.size(); ++i)
    if (q[i] < 0 || size_t(q[i]) >= p.size() || p[q[i]] != int64_t(i))
      return false;
  return true;
}

void Importer::cancelTransposes(std::vector<onnx::NodeProto> &nodes,
                                const onnx::GraphProto &g) {
  static const llvm::StringSet<> unary = {
      "Relu",      "LeakyRelu", "Sigmoid", "Tanh",     "HardSigmoid",
      "HardSwish", "Elu",       "Selu",    "Softplus", "Abs",
      "Neg",       "Exp",       "Log",     "Sqrt",     "Erf",
      "Identity",  "Cast",      "Floor",   "Ceil"};
  static const llvm::StringSet<> withScalar = {"Add", "Sub", "Mul",  "Div",
                                               "Max", "Min", "Clip", "Pow"};
  std::map<std::string, int> uses, producer;
  for (const onnx::ValueInfoProto &out : g.output())
    ++uses[out.name()];
  for (auto [i, n] : llvm::enumerate(nodes)) {
    for (const std::string &in : n.input())
      ++uses[in];
    for (const std::string &out : n.output())
      producer[out] = i;
  }
  auto scalarConstant = [&](const std::string &name) {
    auto it = initializers.find(name);
    if (it == initializers.end())
      return false;
    int64_t count = 1;
    for (int64_t d : it->second.dims())
      count *= d;
    return count == 1;
  };
  // The input of `n` that carries the tensor, if `n` is layout-agnostic.
  auto dataInput = [&](const onnx::NodeProto &n) -> const std::string * {
    if (n.output_size() != 1 || !isDefaultDomain(n.domain()))
      return nullptr;
    if (unary.contains(n.op_type()) && n.input_size() == 1)
      return &n.input(0);
    if (!withScalar.contains(n.op_type()))
      return nullptr;
    const std::string *data = nullptr;
    for (const std::string &in : n.input()) {
      if (in.empty() || scalarConstant(in))
        continue;
      if (data)
        return nullptr; // two tensors: their layouts must agree
      data = &in;
    }
    return data;
  };
  for (onnx::NodeProto &last : nodes) {
    if (last.op_type() != "Transpose" || last.input_size() != 1)
      continue;
    // Walk back through layout-agnostic ops, each read only by the next.
    std::string v = last.input(0);
    while (uses[v] == 1 && producer.count(v)) {
      onnx::NodeProto &p = nodes[producer[v]];
      if (p.op_type() == "Transpose") {
        if (p.input_size() == 1 && inverse(permOf(p), permOf(last))) {
          for (onnx::NodeProto *t : {&p, &last}) {
            t->set_op_type("Identity");
            t->clear_attribute();
          }
        }
        break;
      }
      const std::string *in = dataInput(p);
      if (!in)
        break;
      v = *in;
    }
  }
}
