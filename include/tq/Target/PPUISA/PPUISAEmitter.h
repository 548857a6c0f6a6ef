//===- PPUISAEmitter.h - ppu programs to instruction streams ----*- C++ -*-===//
#ifndef TQ_TARGET_PPUISA_PPUISAEMITTER_H
#define TQ_TARGET_PPUISA_PPUISAEMITTER_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::ppu {

/// Writes the single ppu.program under `root` as the binary stream (or, with
/// `listing`, as the text listing). Fails with a diagnostic otherwise.
LogicalResult emitStream(Operation *root, raw_ostream &os, bool listing);

/// Registers with mlir-translate:
///   --ppu-to-binary   ppu.program -> versioned binary stream
///   --ppu-to-listing  ppu.program -> text listing
///   --listing-to-ppu  text listing -> ppu.program (assembles it back)
void registerPPUTranslations();

} // namespace mlir::ppu

#endif // TQ_TARGET_PPUISA_PPUISAEMITTER_H
