//===- Stream.h - ppu programs to and from instruction streams --*- C++ -*-===//
#ifndef TQ_TARGET_PPUISA_STREAM_H
#define TQ_TARGET_PPUISA_STREAM_H

#include "tq/Dialect/PPU/IR/PPU.h"
#include "tq/Target/PPUISA/ISA.h"

namespace mlir::ppu {

/// The stream a program stands for (bindings and instructions, in order).
::tq::ppu::Stream toStream(ProgramOp program);

/// Builds a program from a stream at the builder's insertion point.
ProgramOp fromStream(OpBuilder &b, Location loc, StringRef name,
                     const ::tq::ppu::Stream &stream);

} // namespace mlir::ppu

#endif // TQ_TARGET_PPUISA_STREAM_H
