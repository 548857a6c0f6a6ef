//===- PPU.h - PPU instruction-level dialect --------------------*- C++ -*-===//
#ifndef TQ_DIALECT_PPU_IR_PPU_H
#define TQ_DIALECT_PPU_IR_PPU_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "tq/Target/PPUISA/ISA.h"

#include "tq/Dialect/PPU/IR/PPUOpsDialect.h.inc"
#include "tq/Dialect/PPU/IR/PPUOpsEnums.h.inc"

#define GET_OP_CLASSES
#include "tq/Dialect/PPU/IR/PPUOps.h.inc"

namespace mlir::ppu {

/// The machine of a program.
::tq::ppu::MachineConfig getMachine(ProgramOp program);

/// The simulator instruction an op stands for; fails for bindings.
FailureOr<::tq::ppu::Instr> toInstr(Operation *op);

/// The machine, bindings and constant tiles of a program: its stream
/// without instructions (tq/Target/PPUISA/Stream.h adds them).
::tq::ppu::Stream streamHeader(ProgramOp program);

} // namespace mlir::ppu

#endif // TQ_DIALECT_PPU_IR_PPU_H
