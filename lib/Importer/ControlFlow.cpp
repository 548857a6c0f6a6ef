//===- ControlFlow.cpp - If ---------------------------------------------===//
//
// An If whose condition is a constant (an initializer, a bound input, or
// shape arithmetic folded at import) imports only the branch it takes, in
// the enclosing scope. A condition computed at run time becomes an scf.if
// whose regions hold the two branches. Branches read outer-scope values
// by name; what a branch defines is visible only inside it.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

SmallVector<Value> Importer::importSubgraph(const onnx::GraphProto &g) {
  for (const onnx::TensorProto &t : g.initializer()) {
    initializers[t.name()] = t;
    loc = NameLoc::get(b.getStringAttr(t.name()));
    values[t.name()] = constant(t, "initializer '" + t.name() + "'");
  }
  for (const onnx::NodeProto &n : g.node())
    node(n);
  SmallVector<Value> outputs;
  for (const onnx::ValueInfoProto &out : g.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      fail("subgraph '" + g.name() + "': output '" + out.name() +
           "' is not computed");
    outputs.push_back(it->second);
  }
  return outputs;
}

void Importer::importIf(const onnx::NodeProto &n) {
  onlyAttrs(n, {"then_branch", "else_branch"});
  const onnx::AttributeProto *thenAttr =
      attr(n, "then_branch", onnx::AttributeProto::GRAPH);
  const onnx::AttributeProto *elseAttr =
      attr(n, "else_branch", onnx::AttributeProto::GRAPH);
  if (!thenAttr || !elseAttr || !thenAttr->has_g() || !elseAttr->has_g())
    fail(nodeName(n) + ": needs the then_branch and else_branch graphs");
  Location ifLoc = loc;
  // What a branch defines must not be seen after it.
  auto scoped = [&](const onnx::GraphProto &g) {
    std::map<std::string, Value> savedValues = values;
    std::map<std::string, onnx::TensorProto> savedInits = initializers;
    SmallVector<Value> outputs = importSubgraph(g);
    values = std::move(savedValues);
    initializers = std::move(savedInits);
    loc = ifLoc;
    if (int64_t(outputs.size()) != n.output_size())
      fail(nodeName(n) + ": branch '" + g.name() + "' has " +
           std::to_string(outputs.size()) + " outputs, the node " +
           std::to_string(n.output_size()));
    return outputs;
  };

  if (initializers.count(n.input(0))) {
    std::vector<float> c = requiredConstant(n, 0);
    if (c.size() != 1)
      fail(nodeName(n) + ": the condition must have one element");
    SmallVector<Value> outputs =
        scoped(c[0] != 0 ? thenAttr->g() : elseAttr->g());
    for (auto [i, v] : llvm::enumerate(outputs))
      define(n, v, i);
    return;
  }

  // A run-time condition: its one element, as an i1.
  Value cond = input(n, 0);
  auto condType = cast<RankedTensorType>(cond.getType());
  if (condType.getNumElements() != 1)
    fail(nodeName(n) + ": the condition must have one element");
  SmallVector<Value> zeros(condType.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  Value c = tensor::ExtractOp::create(b, loc, cond, zeros);
  if (!c.getType().isInteger(1))
    c = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, c,
                              f32Constant(b, loc, 0));

  // Each branch is imported into a block of its own, then moved into the
  // scf.if once the result types are known.
  OpBuilder::InsertionGuard guard(b);
  auto branch = [&](const onnx::GraphProto &g,
                    SmallVector<Value> &outputs) -> std::unique_ptr<Block> {
    auto block = std::make_unique<Block>();
    b.setInsertionPointToStart(block.get());
    outputs = scoped(g);
    return block;
  };
  SmallVector<Value> thenOut, elseOut;
  OpBuilder::InsertPoint ip = b.saveInsertionPoint();
  std::unique_ptr<Block> thenBlock = branch(thenAttr->g(), thenOut);
  std::unique_ptr<Block> elseBlock = branch(elseAttr->g(), elseOut);
  b.restoreInsertionPoint(ip);
  SmallVector<Type> types;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(thenOut, elseOut))) {
    auto [t, e] = pair;
    if (t.getType() != e.getType()) {
      std::string a, z;
      llvm::raw_string_ostream as(a), zs(z);
      as << t.getType();
      zs << e.getType();
      fail(nodeName(n) + ": output " + std::to_string(i) +
           " differs between the branches (" + a + " and " + z + ")");
    }
    types.push_back(t.getType());
  }
  auto ifOp = scf::IfOp::create(b, loc, types, c, /*withElseRegion=*/true);
  auto fill = [&](Block *dst, Block *src, ValueRange outputs) {
    dst->getOperations().splice(dst->end(), src->getOperations());
    OpBuilder yb = OpBuilder::atBlockEnd(dst);
    scf::YieldOp::create(yb, loc, outputs);
  };
  fill(ifOp.thenBlock(), thenBlock.get(), thenOut);
  fill(ifOp.elseBlock(), elseBlock.get(), elseOut);
  for (auto [i, v] : llvm::enumerate(ifOp.getResults()))
    define(n, v, i);
}

void mlir::tq::onnx_import::registerControlFlowOps(OpRegistry &r) {
  r["If"] = &Importer::importIf;
}
