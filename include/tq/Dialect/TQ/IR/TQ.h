//===- TQ.h - tile-quant dialect --------------------------------*- C++ -*-===//
#ifndef TQ_DIALECT_TQ_IR_TQ_H
#define TQ_DIALECT_TQ_IR_TQ_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tq/Runtime/Quant.h"

#include "tq/Dialect/TQ/IR/TQEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tq/Dialect/TQ/IR/TQAttrs.h.inc"

#include "tq/Dialect/TQ/IR/TQOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tq/Dialect/TQ/IR/TQOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "tq/Dialect/TQ/IR/TQOps.h.inc"

namespace mlir::tq {

/// The reference-numerics description of a tiled type's layout and form.
::tq::ref::TileLayout getRefLayout(TiledType type);
::tq::ref::QuantForm getRefForm(TiledType type);
::tq::ref::Rounding getRefRounding(RoundingMode mode);

/// The f32 values of a constant `v` (a dense literal or a dense resource
/// blob, as importers write large weights); nullopt if `v` is not one.
std::optional<std::vector<float>> getConstantF32(Value v);

/// Runs `op` on the constant `input` (its f32 values, row-major) with the
/// reference numerics: the compile-time value of a quantize. Fails for
/// non-static or dynamic-width types, given scales, per-tile widths that
/// are not constant, or more than `maxElements` elements.
FailureOr<::tq::ref::TiledTensor>
evaluateQuantize(QuantizeOp op, ArrayRef<float> input,
                 int64_t maxElements = int64_t(1) << 22);

/// The values of a tq.constant, sign-extended from the storage type, from
/// its dense literal or its dense resource blob.
std::vector<int64_t> getConstantValues(ConstantOp op);

/// `values` as integer elements of `type`: from 256 elements on, for i8 and
/// i16, a dense resource blob named after `key` (made unique), unless they
/// are all equal; else a dense literal (a splat when all equal).
ElementsAttr getIntElements(RankedTensorType type, ArrayRef<int64_t> values,
                            StringRef key);

/// The reference-numerics value of a tq.constant (steps as factors with
/// point position 0, offsets, per-tile or fixed bit widths).
::tq::ref::TiledTensor toRefTensor(ConstantOp op);

/// Builds a tq.constant of `type` holding `value`.
ConstantOp buildConstant(OpBuilder &b, Location loc, TiledType type,
                         const ::tq::ref::TiledTensor &value);

/// Joins sizes with `sep`, printing dynamic sizes as '?': "4x?x8".
std::string formatDims(ArrayRef<int64_t> dims, StringRef sep);

/// `inner` then `outer`: result dim i is input dim inner[outer[i]].
DenseI64ArrayAttr composePermutations(Builder &b, DenseI64ArrayAttr inner,
                                      DenseI64ArrayAttr outer);

/// The type `tq.transpose` gives `type` under `perm`, or failure (with a
/// message in `why`) when the permutation is not legal for its tiles.
FailureOr<TiledType> getTransposedType(TiledType type, ArrayRef<int64_t> perm,
                                       std::string &why);

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_IR_TQ_H
