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

FailureOr<SmallVector<Value>>
Importer::importSubgraph(const onnx::GraphProto &g) {
  for (const onnx::TensorProto &t : g.initializer()) {
    initializers[t.name()] = t;
    loc = NameLoc::get(b.getStringAttr(t.name()));
    FailureOr<Value> v = constant(t, "initializer '" + t.name() + "'");
    if (failed(v))
      return failure();
    values[t.name()] = *v;
  }
  for (const onnx::NodeProto &n : g.node())
    if (failed(node(n)))
      return failure();
  SmallVector<Value> outputs;
  for (const onnx::ValueInfoProto &out : g.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      return fail("subgraph '" + g.name() + "': output '" + out.name() +
                  "' is not computed");
    outputs.push_back(it->second);
  }
  return outputs;
}

LogicalResult Importer::importIf(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"then_branch", "else_branch"})))
    return failure();
  FailureOr<const onnx::AttributeProto *> thenOr =
      attr(n, "then_branch", onnx::AttributeProto::GRAPH);
  if (failed(thenOr))
    return failure();
  FailureOr<const onnx::AttributeProto *> elseOr =
      attr(n, "else_branch", onnx::AttributeProto::GRAPH);
  if (failed(elseOr))
    return failure();
  const onnx::AttributeProto *thenAttr = *thenOr, *elseAttr = *elseOr;
  if (!thenAttr || !elseAttr || !thenAttr->has_g() || !elseAttr->has_g())
    return fail(nodeName(n) + ": needs the then_branch and else_branch graphs");
  Location ifLoc = loc;
  // What a branch defines must not be seen after it.
  auto scoped =
      [&](const onnx::GraphProto &g) -> FailureOr<SmallVector<Value>> {
    std::map<std::string, Value> savedValues = values;
    std::map<std::string, onnx::TensorProto> savedInits = initializers;
    FailureOr<SmallVector<Value>> outputs = importSubgraph(g);
    values = std::move(savedValues);
    initializers = std::move(savedInits);
    loc = ifLoc;
    if (failed(outputs))
      return failure();
    if (int64_t(outputs->size()) != n.output_size())
      return fail(nodeName(n) + ": branch '" + g.name() + "' has " +
                  std::to_string(outputs->size()) + " outputs, the node " +
                  std::to_string(n.output_size()));
    return outputs;
  };

  if (initializers.count(n.input(0))) {
    FailureOr<std::vector<float>> c = requiredConstant(n, 0);
    if (failed(c))
      return failure();
    if (c->size() != 1)
      return fail(nodeName(n) + ": the condition must have one element");
    FailureOr<SmallVector<Value>> outputs =
        scoped((*c)[0] != 0 ? thenAttr->g() : elseAttr->g());
    if (failed(outputs))
      return failure();
    for (auto [i, v] : llvm::enumerate(*outputs))
      if (failed(define(n, v, i)))
        return failure();
    return success();
  }

  // A run-time condition: its one element, as an i1.
  FailureOr<Value> cond = input(n, 0);
  if (failed(cond))
    return failure();
  auto condType = cast<RankedTensorType>(cond->getType());
  if (condType.getNumElements() != 1)
    return fail(nodeName(n) + ": the condition must have one element");
  SmallVector<Value> zeros(condType.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  Value c = tensor::ExtractOp::create(b, loc, *cond, zeros);
  if (!c.getType().isInteger(1))
    c = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, c,
                              f32Constant(b, loc, 0));

  // Each branch is imported into a block of its own, then moved into the
  // scf.if once the result types are known.
  OpBuilder::InsertionGuard guard(b);
  auto branch =
      [&](const onnx::GraphProto &g,
          SmallVector<Value> &outputs) -> FailureOr<std::unique_ptr<Block>> {
    auto block = std::make_unique<Block>();
    b.setInsertionPointToStart(block.get());
    FailureOr<SmallVector<Value>> branchOutputs = scoped(g);
    if (failed(branchOutputs))
      return failure();
    outputs = std::move(*branchOutputs);
    return block;
  };
  SmallVector<Value> thenOut, elseOut;
  OpBuilder::InsertPoint ip = b.saveInsertionPoint();
  FailureOr<std::unique_ptr<Block>> thenBlock = branch(thenAttr->g(), thenOut);
  if (failed(thenBlock))
    return failure();
  FailureOr<std::unique_ptr<Block>> elseBlock = branch(elseAttr->g(), elseOut);
  if (failed(elseBlock))
    return failure();
  b.restoreInsertionPoint(ip);
  SmallVector<Type> types;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(thenOut, elseOut))) {
    auto [t, e] = pair;
    if (t.getType() != e.getType()) {
      std::string a, z;
      llvm::raw_string_ostream as(a), zs(z);
      as << t.getType();
      zs << e.getType();
      return fail(nodeName(n) + ": output " + std::to_string(i) +
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
  fill(ifOp.thenBlock(), thenBlock->get(), thenOut);
  fill(ifOp.elseBlock(), elseBlock->get(), elseOut);
  for (auto [i, v] : llvm::enumerate(ifOp.getResults()))
    if (failed(define(n, v, i)))
      return failure();
  return success();
}

void mlir::tq::onnx_import::registerControlFlowOps(OpRegistry &r) {
  r["If"] = &Importer::importIf;
}
