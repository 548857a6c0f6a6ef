//===- Epilogue.h - elementwise ops applied as a kernel stores -*- C++ -*-===//
//
// A kernel that writes its output one vector at a time can apply the
// elementwise linalg.generic that follows it (bias, activation, residual
// add) to each vector before the store, instead of writing the output and
// reading it back.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_LIB_CONVERSION_TQTOCPU_EPILOGUE_H
#define TQ_LIB_CONVERSION_TQTOCPU_EPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::tq {

/// The all-parallel linalg.generic on buffers just after a kernel (past
/// allocations and deallocations) that reads the kernel's output `out` through
/// the identity map, if at all, and writes either `out` in place or a buffer of
/// the same shape (then `out` must be a buffer of its own that nothing else
/// reads: the kernel stores into the target instead). `out` may also be a
/// memref.collapse_shape view passed as `kernel`, of a buffer that only the
/// view, one writer before it (the kernel) and deallocs use. The kernel stores
/// vectors along the trailing `vectorDims` dims of `out`, flattened. Each other
/// operand is read either as a scalar (its indices use only the leading, outer
/// dims) or as a vector (its trailing indices are the vector dims, in order,
/// over contiguous memory).
class VectorEpilogue {
public:
  /// The generic after `kernel`, if it has that form and an elementwise
  /// body on f32.
  static std::optional<VectorEpilogue> match(Operation *kernel, Value out,
                                             int64_t vectorDims);

  /// A generic on buffers that reads one input (source()) through
  /// `sourceMap` (a permutation) where the target is written through the
  /// identity, with the body as match() accepts it: that input plays the
  /// kernel's output (apply's `acc`), and the caller loads it, transposed.
  /// The target is a separate buffer, or an input read element for
  /// element (an in-place residual add); the body does not read the init.
  static std::optional<VectorEpilogue>
  matchTransposed(linalg::GenericOp g, AffineMap sourceMap, int64_t vectorDims);

  /// An elementwise generic on its own: all parallel, writing a static f32
  /// buffer of identity layout through the identity map, with the body and
  /// operands as match() accepts them and no kernel output among them.
  /// apply's `acc` is then the target's old value, which the body may read.
  static std::optional<VectorEpilogue> matchElementwise(linalg::GenericOp g,
                                                        int64_t vectorDims);

  /// A generic on buffers that reads `out` (a kernel's output, built before
  /// the kernel) through the identity, writing `out` itself or another
  /// buffer without reading its old values: the epilogue of a kernel
  /// lowered from tensors, built by the kernel's own pattern.
  static std::optional<VectorEpilogue>
  matchReading(linalg::GenericOp g, Value out, int64_t vectorDims);

  /// Views of the vector operands with the vector dims collapsed, built at
  /// `b`'s insertion point (before the kernel's loops).
  void prepare(ImplicitLocOpBuilder &b);

  /// The body on `acc`, the vector of `out` at the outer indices `outer`
  /// (one per leading dim) and at flattened position `col` along the vector
  /// dims. `mask` (or null) marks the lanes in range. `scalars`, when given
  /// (loadScalars at the same `outer`), are the scalar inputs' values,
  /// loaded once for all the vectors of those outer indices.
  Value apply(ImplicitLocOpBuilder &b, Value acc, ValueRange outer, Value col,
              Value mask, ArrayRef<Value> scalars = {}) const;
  /// The values of the inputs read as scalars at the outer indices `outer`,
  /// one per input (null for the others). Loaded once for a row, they are
  /// one value to LLVM, which then computes the body's ops on them alone
  /// (a layer norm's square root) once for the row, not once per vector:
  /// it cannot tell that the row's stores leave the scalar inputs alone.
  /// The caller makes sure they do: no store between this load and the
  /// applys that take its values may write a scalar input.
  SmallVector<Value> loadScalars(ImplicitLocOpBuilder &b,
                                 ValueRange outer) const;

  linalg::GenericOp op() const { return generic; }
  /// The location of the kernel with its epilogue: both layers, which the
  /// profile names as one (`conv1+relu1`).
  Location fusedLoc(Operation *kernel) const;
  /// The input that plays the kernel's output (apply's `acc`), if any.
  Value source() const {
    linalg::GenericOp g = generic;
    for (auto [in, kind] : llvm::zip(g.getDpsInputs(), kinds))
      if (kind == Kind::output)
        return in;
    return Value();
  }
  /// Where the kernel stores: `out`, or the generic's own output.
  Value target() const {
    return generic->getOperand(generic->getNumOperands() - 1);
  }

private:
  /// The operands and body of `g`, whose operand `out` (read through
  /// `outMap`) is the kernel's output.
  static std::optional<VectorEpilogue> classify(linalg::GenericOp g, Value out,
                                                AffineMap outMap,
                                                int64_t vectorDims);

  enum class Kind { output, scalar, vector };
  linalg::GenericOp generic;
  int64_t vectorDims = 1;
  SmallVector<Kind> kinds;  // per input
  SmallVector<Value> views; // per input: the collapsed view of a vector one
  /// The target's allocation, when it comes after the kernel: prepare
  /// moves it before.
  Operation *targetAlloc = nullptr;
  /// Views of values from before the kernel between it and the generic (a
  /// bias reshaped): prepare moves them before the kernel.
  SmallVector<Operation *> viewsBetween;
};

/// Whether a linalg body has only elementwise arith and math ops on
/// scalars and constants, no integer division (lanes past the data would
/// divide by zero), and yields f32 values: what applyBodyToVectorResults
/// takes.
bool isElementwiseBody(Block *body);
/// isElementwiseBody, with one value yielded: what applyBodyToVectors takes.
bool isVectorizableBody(Block *body);

/// The ops of a linalg body (elementwise arith and math ops, constants)
/// applied lane by lane to vectors of `shape`'s shape: each block argument
/// is mapped in `map` to a vector; a value from outside the body is
/// broadcast. Returns the vectors of the yielded values, in order.
SmallVector<Value> applyBodyToVectorResults(ImplicitLocOpBuilder &b,
                                            Block *body, IRMapping &map,
                                            VectorType shape);
/// applyBodyToVectorResults for a body that yields one value.
Value applyBodyToVectors(ImplicitLocOpBuilder &b, Block *body, IRMapping &map,
                         VectorType shape);

/// The op after `op`, past the deallocations of buffers whose last use came
/// before it (tq-cpu-free-buffers puts them right after that use) and the
/// allocations made for the ops after it (bufferization puts them right
/// before their first use).
Operation *nextPastAllocations(Operation *op);
/// The op before `op`, past allocations and deallocations of other buffers
/// (bufferization puts the allocations an op needs right before it).
Operation *previousPastAllocations(Operation *op);

/// The metadata of a location that names a kernel and its epilogue.
constexpr llvm::StringLiteral kFusedLayersLoc = "tq.fused_layers";

} // namespace mlir::tq

#endif // TQ_LIB_CONVERSION_TQTOCPU_EPILOGUE_H
