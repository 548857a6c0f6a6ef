//===- ArgNames.h - names of function arguments and results -----*- C++ -*-===//
//
// The attribute that names a function's arguments and results after the
// ONNX graph's inputs and outputs (the importer) or a training step's
// parameters (tq-training-step). Runners bind inputs by it, and tq-compile
// names a header's parameters after it. Header-only: the importer uses it
// without the tq dialect.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_SUPPORT_ARGNAMES_H
#define TQ_SUPPORT_ARGNAMES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::tq {

/// On function arguments and results: the ONNX name of the graph input or
/// output, or of the parameter, momentum or input of a training step.
constexpr llvm::StringLiteral kNameArgAttr = "tq.name";

} // namespace mlir::tq

#endif // TQ_SUPPORT_ARGNAMES_H
