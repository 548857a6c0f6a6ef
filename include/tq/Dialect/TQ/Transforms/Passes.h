//===- Passes.h - tile-quant dialect passes ---------------------*- C++ -*-===//
#ifndef TQ_DIALECT_TQ_TRANSFORMS_PASSES_H
#define TQ_DIALECT_TQ_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "tq/Dialect/TQ/IR/TQ.h"

namespace mlir::arith {
class ArithDialect;
} // namespace mlir::arith

namespace mlir::tq {

/// Which operands of a compute op tq-insert-quantization quantizes.
enum class QuantizeOperands { all, weights, activations };

/// Where bit widths come from (SPEC A4, T8): `fixed` per role; `adaptive`
/// from the quantization error (at compile time for constants, at run time
/// through tq.adaptive_bit_width otherwise); `schedule` from the training
/// epoch, a function argument marked `tq.epoch`.
enum class BitWidthPolicy { fixed, adaptive, schedule };

/// The subsets that get their own parameters (SPEC A1), on the two split
/// dims of an operand, with k the one its product contracts:
///   tile:    VxV tiles
///   vector:  1xV vectors along k (per-vector scaling, the prior art)
///   channel: one vector per row or column, all of k (per-channel / per-batch)
///   tensor:  one scale per 2-D slice (per tensor for 2-D operands)
enum class Granularity { tile, vector, channel, tensor };

#define GEN_PASS_DECL
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_TRANSFORMS_PASSES_H
