//===- Passes.h - tile-quant conversion passes ------------------*- C++ -*-===//
#ifndef TQ_CONVERSION_PASSES_H
#define TQ_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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
