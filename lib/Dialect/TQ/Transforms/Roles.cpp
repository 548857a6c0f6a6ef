//===- Roles.cpp - tensor roles and split dims of compute ops -------------===//
#include "tq/Dialect/TQ/Transforms/Roles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tq;

static bool isF32Tensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32();
}

FailureOr<ComputeOp> mlir::tq::matchComputeOp(Operation *op, std::string *why) {
  auto fail = [&](const char *reason) -> FailureOr<ComputeOp> {
    if (why)
      *why = reason;
    return failure();
  };
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics())
    return fail("not a linalg op on tensors");
  if (linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1)
    return fail("expected two inputs and one init");
  ComputeOp c;
  c.op = op;
  c.lhs = linalgOp.getDpsInputOperand(0)->get();
  c.rhs = linalgOp.getDpsInputOperand(1)->get();
  c.init = linalgOp.getDpsInitOperand(0)->get();
  if (!isF32Tensor(c.lhs) || !isF32Tensor(c.rhs) || !isF32Tensor(c.init))
    return fail("operands are not f32 tensors");
  if (isa<linalg::MatmulOp>(op)) {
    c.kind = ComputeOp::Kind::Matmul;
    c.transposeA = isa<linalg::MatmulTransposeAOp>(op);
    c.transposeB = isa<linalg::MatmulTransposeBOp>(op);
    auto mm = cast<linalg::MatmulOp>(op);
    if (!c.transposeA && !c.transposeB && mm.hasUserDefinedMaps())
      return fail("indexing maps other than plain or transposed operands");
    return c;
  }
  if (isa<linalg::BatchMatmulOp>(op)) {
    c.kind = ComputeOp::Kind::BatchMatmul;
    c.transposeA = isa<linalg::BatchMatmulTransposeAOp>(op);
    c.transposeB = isa<linalg::BatchMatmulTransposeBOp>(op);
    auto mm = cast<linalg::BatchMatmulOp>(op);
    if (!c.transposeA && !c.transposeB && mm.hasUserDefinedMaps())
      return fail("indexing maps other than plain or transposed operands");
    return c;
  }
  auto convParams = [&](auto conv) {
    for (APInt v : conv.getStrides().template getValues<APInt>())
      c.strides.push_back(v.getSExtValue());
    for (APInt v : conv.getDilations().template getValues<APInt>())
      c.dilations.push_back(v.getSExtValue());
  };
  if (auto conv = dyn_cast<linalg::Conv2DNhwcFhwcOp>(op)) {
    c.kind = ComputeOp::Kind::Conv2DNhwcFhwc;
    convParams(conv);
    return c;
  }
  if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op)) {
    c.kind = ComputeOp::Kind::Conv2DNchwFchw;
    convParams(conv);
    return c;
  }
  return fail("not a matmul, batch_matmul, conv_2d_nhwc_fhwc or "
              "conv_2d_nchw_fchw");
}

Role RoleAnalysis::getRole(Value v) {
  auto it = cache.find(v);
  if (it != cache.end())
    return it->second;
  Role role = Role::activation;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (func && arg.getOwner()->isEntryBlock()) {
      unsigned i = arg.getArgNumber();
      if (auto r = func.getArgAttrOfType<RoleAttr>(i, kRoleArgAttr))
        role = r.getValue();
      else if (func.getArgAttr(i, kParameterArgAttr))
        role = Role::weight;
    }
  } else if (matchPattern(v, m_Constant())) {
    role = Role::weight;
  } else if (Operation *def = v.getDefiningOp()) {
    if (isa<tensor::CastOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
            tensor::ReshapeOp, tensor::ExtractSliceOp, linalg::TransposeOp,
            tensor::PadOp>(def)) {
      role = getRole(def->getOperand(0));
    } else if (FailureOr<ComputeOp> c = matchComputeOp(def); succeeded(c)) {
      Role a = getRole(c->lhs), b = getRole(c->rhs);
      if (isGradient(a) || isGradient(b))
        role = (a == Role::weight || b == Role::weight) ? Role::activation_grad
                                                        : Role::weight_grad;
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
      // Elementwise and other linalg ops: the role of their first input.
      if (linalgOp.getNumDpsInputs() > 0)
        role = getRole(linalgOp.getDpsInputOperand(0)->get());
    } else if (def->getNumOperands() > 0 &&
               isa<TensorType>(def->getOperand(0).getType())) {
      role = getRole(def->getOperand(0));
    }
  }
  cache[v] = role;
  return role;
}

SmallVector<int64_t, 2> mlir::tq::getDefaultSplitDims(const ComputeOp &op,
                                                      unsigned operand) {
  if (op.kind == ComputeOp::Kind::Conv2DNhwcFhwc)
    return {0, 3}; // NHWC activation (N, C); FHWC = KRSC filter (K, C)
  if (op.kind == ComputeOp::Kind::Conv2DNchwFchw)
    return {0, 1}; // NCHW activation (N, C); FCHW filter (K, C)
  Value v = operand == 0 ? op.lhs : op.rhs;
  int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
  return {rank - 2, rank - 1};
}

LogicalResult
mlir::tq::getRolesAndSplitDims(const ComputeOp &op, RoleAnalysis &analysis,
                               Role (&roles)[2],
                               SmallVector<int64_t, 2> (&dims)[2]) {
  Value operands[2] = {op.lhs, op.rhs};
  for (unsigned i = 0; i < 2; ++i) {
    roles[i] = analysis.getRole(operands[i]);
    dims[i] = getDefaultSplitDims(op, i);
  }
  if (Attribute attr = op.op->getAttr(kRolesAttr)) {
    auto array = dyn_cast<ArrayAttr>(attr);
    if (!array || array.size() != 2 ||
        !llvm::all_of(array, [](Attribute a) { return isa<RoleAttr>(a); }))
      return op.op->emitOpError("'")
             << kRolesAttr << "' must be an array of two #tq.role attributes";
    for (unsigned i = 0; i < 2; ++i)
      roles[i] = cast<RoleAttr>(array[i]).getValue();
  }
  if (Attribute attr = op.op->getAttr(kSplitDimsAttr)) {
    auto array = dyn_cast<ArrayAttr>(attr);
    auto isPair = [](Attribute a) {
      auto d = dyn_cast<DenseI64ArrayAttr>(a);
      return d && d.size() == 2;
    };
    if (!array || array.size() != 2 || !llvm::all_of(array, isPair))
      return op.op->emitOpError("'")
             << kSplitDimsAttr
             << "' must be an array of two array<i64: d0, d1> attributes";
    for (unsigned i = 0; i < 2; ++i) {
      ArrayRef<int64_t> d = cast<DenseI64ArrayAttr>(array[i]).asArrayRef();
      int64_t rank = cast<RankedTensorType>(operands[i].getType()).getRank();
      if (d[0] < 0 || d[1] >= rank || d[0] >= d[1])
        return op.op->emitOpError("split dims [")
               << d[0] << ", " << d[1] << "] of operand #" << i
               << " must satisfy 0 <= d0 < d1 < " << rank;
      dims[i].assign(d.begin(), d.end());
    }
  }
  return success();
}

LogicalResult
mlir::tq::annotateRolesAndSplitDims(Operation *root,
                                    const SplitDimsOverrides &overrides) {
  for (const SmallVector<int64_t, 2> *o :
       {&overrides.activation, &overrides.weight, &overrides.gradient})
    if (!o->empty() && (o->size() != 2 || (*o)[0] < 0 || (*o)[0] >= (*o)[1]))
      return mlir::emitError(root->getLoc(),
                             "split dims overrides must be two dims d0,d1 "
                             "with 0 <= d0 < d1");
  RoleAnalysis analysis;
  // Infer every role before changing anything, so that the answers do not
  // depend on the walk order.
  SmallVector<std::tuple<ComputeOp, std::array<Role, 2>,
                         std::array<SmallVector<int64_t, 2>, 2>>>
      found;
  WalkResult result = root->walk([&](Operation *op) {
    FailureOr<ComputeOp> c = matchComputeOp(op);
    if (failed(c))
      return WalkResult::advance();
    Role roles[2];
    SmallVector<int64_t, 2> dims[2];
    bool hadDims = op->hasAttr(kSplitDimsAttr);
    if (failed(getRolesAndSplitDims(*c, analysis, roles, dims)))
      return WalkResult::interrupt();
    Value operands[2] = {c->lhs, c->rhs};
    for (unsigned i = 0; i < 2 && !hadDims; ++i) {
      const SmallVector<int64_t, 2> &o =
          roles[i] == Role::weight ? overrides.weight
          : isGradient(roles[i])   ? overrides.gradient
                                   : overrides.activation;
      int64_t rank = cast<RankedTensorType>(operands[i].getType()).getRank();
      if (!o.empty() && o[1] < rank)
        dims[i] = o;
    }
    found.push_back({*c, {roles[0], roles[1]}, {dims[0], dims[1]}});
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (auto &[c, roles, dims] : found) {
    MLIRContext *ctx = c.op->getContext();
    Builder b(ctx);
    c.op->setAttr(kRolesAttr, b.getArrayAttr({RoleAttr::get(ctx, roles[0]),
                                              RoleAttr::get(ctx, roles[1])}));
    c.op->setAttr(kSplitDimsAttr,
                  b.getArrayAttr({b.getDenseI64ArrayAttr(dims[0]),
                                  b.getDenseI64ArrayAttr(dims[1])}));
  }
  return success();
}
