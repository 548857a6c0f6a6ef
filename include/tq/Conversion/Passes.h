//===- Passes.h - tile-quant conversion passes ------------------*- C++ -*-===//
#ifndef TQ_CONVERSION_PASSES_H
#define TQ_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tq/Dialect/PPU/IR/PPU.h"

namespace mlir::tq {

#define GEN_PASS_DECL
#include "tq/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tq/Conversion/Passes.h.inc"

} // namespace mlir::tq

#endif // TQ_CONVERSION_PASSES_H
