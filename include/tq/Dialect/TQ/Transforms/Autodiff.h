//===- Autodiff.h - reverse-mode differentiation of tensor programs -*- C++
//-*-===//
//
// The reverse pass behind tq-training-step: given a function body in the
// float form tq-import-onnx produces (linalg on tensors), it emits the
// gradients of one result with respect to chosen values. Each op family has
// its adjoint rule (AdjointElementwise.cpp, AdjointStructured.cpp,
// Autodiff.cpp for shape ops); the rules emit linalg and tensor ops, with the
// gradient GEMMs as linalg.matmul on transposed operands (dX = dY·Wᵀ,
// dW = Xᵀ·dY) so that tq-quantize reads the stored tiles transposed.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_DIALECT_TQ_TRANSFORMS_AUTODIFF_H
#define TQ_DIALECT_TQ_TRANSFORMS_AUTODIFF_H

#include "tq/Dialect/TQ/Transforms/Roles.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tq {

/// The gradient of each value reached so far by the reverse pass.
class GradientMap {
public:
  /// The gradient of `v`, or null when nothing has flowed into it.
  Value lookup(Value v) const { return grads.lookup(v); }
  /// Adds `grad` to the gradient of `v` (the first contribution is taken as
  /// is).
  void accumulate(OpBuilder &b, Location loc, Value v, Value grad);

private:
  llvm::DenseMap<Value, Value> grads;
};

/// What an adjoint rule needs: where to build, which values carry a
/// gradient (depend on a differentiated value), and the map to add into.
struct AdjointContext {
  OpBuilder &builder;
  const llvm::DenseSet<Value> &active;
  GradientMap &grads;
  /// The roles of forward values (SPEC T2), for the gradient GEMMs' roles.
  RoleAnalysis &roles;
  bool isActive(Value v) const { return active.contains(v); }
};

/// Emits the gradients of `output` (seeded with `seed`, a tensor of the same
/// type) with respect to each of `wrt`, all defined in `body`, at the
/// builder's insertion point (after every op of `body`). Values that do not
/// reach `output` get a zero gradient. Fails with an error on the first op
/// on the path that has no adjoint rule.
FailureOr<SmallVector<Value>> emitGradients(OpBuilder &b, Block &body,
                                            Value output, Value seed,
                                            ArrayRef<Value> wrt);

// Shared construction helpers of the rules.

/// A tensor of `type` filled with zeros.
Value emitZeros(OpBuilder &b, Location loc, RankedTensorType type);
/// Element-wise `x + y` on tensors of one type.
Value emitAdd(OpBuilder &b, Location loc, Value x, Value y);
/// `linalg.transpose` of `x` by `perm`.
Value emitTranspose(OpBuilder &b, Location loc, Value x,
                    ArrayRef<int64_t> perm);
/// `linalg.matmul` of 2-D `a` (M×K) and `bm` (K×N) into zeros, marked with
/// the roles (SPEC T2) of its operands for tq-quantize.
Value emitMatmul(OpBuilder &b, Location loc, Value a, Value bm, Role aRole,
                 Role bRole);
/// The NCHW convolution of `input` by `filter` (FCHW) with unit strides and
/// dilations and no padding, into zeros, marked with its operands' roles.
Value emitConv(OpBuilder &b, Location loc, Value input, Value filter,
               Role inputRole, Role filterRole);
/// Adds `tap` into the strided window of `acc` starting at `offsets` with
/// `strides` (the shape of `tap`), as col2im and pooling gradients do.
Value emitStridedAccumulate(OpBuilder &b, Location loc, Value acc, Value tap,
                            ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> strides);

// The adjoint rules, by op family. Each reads the gradients of `op`'s
// results from `ctx.grads` and adds into those of its active operands.
LogicalResult emitElementwiseAdjoint(AdjointContext &ctx, Operation *op);
LogicalResult emitMatmulAdjoint(AdjointContext &ctx, Operation *op);
LogicalResult emitConvAdjoint(AdjointContext &ctx, Operation *op);
LogicalResult emitPoolAdjoint(AdjointContext &ctx, Operation *op);

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_TRANSFORMS_AUTODIFF_H
