//===- Transforms.h - tile-quant rewrite patterns ---------------*- C++ -*-===//
#ifndef TQ_DIALECT_TQ_TRANSFORMS_TRANSFORMS_H
#define TQ_DIALECT_TQ_TRANSFORMS_TRANSFORMS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::tq {

/// Patterns that evaluate quantization of constants at compile time:
///   - tq.quantize(arith.constant) -> tq.constant (reference numerics),
///     for constants of at most `maxElements` elements.
void populateQuantizeConstantsPatterns(RewritePatternSet &patterns,
                                       int64_t maxElements);

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_TRANSFORMS_TRANSFORMS_H
