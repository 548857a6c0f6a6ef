//===- LongLines.h - tq-opt's diagnostics on very long lines ----*- C++ -*-===//
#ifndef TQ_TOOLS_TQOPT_LONGLINES_H
#define TQ_TOOLS_TQOPT_LONGLINES_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tq {

/// Makes every context built from `registry` print an error whose source
/// line (or a note's text) is very long, a line holding a 100 kB constant,
/// with that line cut to a window around the caret (tq::elideLongLines).
/// Other diagnostics, and all of them under -verify-diagnostics, go to
/// MLIR's handler as before.
void registerLongLineDiagnostics(mlir::DialectRegistry &registry);

} // namespace tq

#endif // TQ_TOOLS_TQOPT_LONGLINES_H
