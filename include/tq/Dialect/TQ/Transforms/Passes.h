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

#define GEN_PASS_DECL
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tq/Dialect/TQ/Transforms/Passes.h.inc"

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_TRANSFORMS_PASSES_H
