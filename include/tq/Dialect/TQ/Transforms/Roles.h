//===- Roles.h - tensor roles and split dims of compute ops -----*- C++ -*-===//
//
// The analysis behind tq-choose-split-dims and tq-insert-quantization: which
// upstream ops tile-quant computes on, the role of each operand (SPEC T2) and
// the dims its tiles split.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_DIALECT_TQ_TRANSFORMS_ROLES_H
#define TQ_DIALECT_TQ_TRANSFORMS_ROLES_H

#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Support/ArgNames.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::tq {

/// Discardable attributes of the tq passes.
/// On compute ops: the role and split dims of each input operand.
constexpr StringLiteral kRolesAttr = "tq.roles";
constexpr StringLiteral kSplitDimsAttr = "tq.split_dims";
/// On compute ops: leave this op in float.
constexpr StringLiteral kKeepFloatAttr = "tq.keep_float";
/// On the compute ops of a training step (tq-training-step): a forward
/// GEMM's ordinal in its function (`tq.layer`), and on each gradient GEMM
/// the ordinal of the forward one it differentiates (`tq.gradient_of`): a
/// layer left in float has its gradients computed in float too.
constexpr StringLiteral kLayerAttr = "tq.layer";
constexpr StringLiteral kGradientOfAttr = "tq.gradient_of";
/// On function arguments: the argument's role, or that it is a parameter
/// (a weight).
constexpr StringLiteral kRoleArgAttr = "tq.role";
constexpr StringLiteral kParameterArgAttr = "tq.parameter";
/// On function arguments: one sample per entry of dim 0 (a training step's
/// images and labels). Where no argument has it, every tensor argument of
/// rank 1 or more but the parameters is taken for one (tq-cpu-split-batch).
constexpr StringLiteral kBatchArgAttr = "tq.batch";

/// Whether `r` is one of the gradient roles.
inline bool isGradient(Role r) {
  return r == Role::output_grad || r == Role::activation_grad ||
         r == Role::weight_grad;
}

/// A compute op tile-quant quantizes, seen uniformly.
struct ComputeOp {
  enum class Kind { Matmul, BatchMatmul, Conv2DNhwcFhwc, Conv2DNchwFchw };
  Kind kind;
  bool isConv() const {
    return kind == Kind::Conv2DNhwcFhwc || kind == Kind::Conv2DNchwFchw;
  }
  Operation *op;
  Value lhs, rhs, init;
  bool transposeA = false, transposeB = false;
  /// Conv only: strides and dilations (H, W).
  SmallVector<int64_t, 2> strides, dilations;
};

/// Recognizes linalg.matmul (default maps, or A or B transposed),
/// linalg.batch_matmul (same), linalg.conv_2d_nhwc_fhwc and
/// linalg.conv_2d_nchw_fchw on f32 tensors.
/// Fails (with a reason) for anything else.
FailureOr<ComputeOp> matchComputeOp(Operation *op, std::string *why = nullptr);

/// Infers the role of values from how they are produced: constants and
/// function arguments marked `tq.parameter` are weights, arguments may carry
/// `tq.role`, shape ops (reshape, transpose, slice, cast) keep the role of
/// their source, a product involving a gradient is a gradient (an activation
/// gradient with a weight, else a weight gradient), anything else is an
/// activation.
class RoleAnalysis {
public:
  Role getRole(Value v);

private:
  llvm::DenseMap<Value, Role> cache;
};

/// The split dims tile-quant uses for input `operand` (0 or 1) of `op`
/// (SPEC T2): the two innermost dims for matmul operands (rows, cols);
/// (N, C) = [0, 3] for NHWC activations and (K, C) = [0, 3] for KRSC
/// (FHWC) filters.
SmallVector<int64_t, 2> getDefaultSplitDims(const ComputeOp &op,
                                            unsigned operand);

/// Reads (or, when absent, computes) the roles and split dims of `op`'s two
/// inputs. Emits an error on `op` and fails when attributes are malformed.
LogicalResult getRolesAndSplitDims(const ComputeOp &op, RoleAnalysis &roles,
                                   Role (&outRoles)[2],
                                   SmallVector<int64_t, 2> (&outDims)[2]);

/// Split dims chosen by role, overriding the defaults (empty: default).
struct SplitDimsOverrides {
  SmallVector<int64_t, 2> activation, weight, gradient;
};

/// Sets `tq.roles` and `tq.split_dims` on every compute op under `root`
/// that does not have them yet (with `overrides` where they fit the
/// operand's rank); fails (with a diagnostic) on malformed attributes or
/// overrides.
LogicalResult
annotateRolesAndSplitDims(Operation *root,
                          const SplitDimsOverrides &overrides = {});

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_TRANSFORMS_ROLES_H
