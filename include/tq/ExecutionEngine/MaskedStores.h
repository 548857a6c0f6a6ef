//===- MaskedStores.h - one-lane masked stores as stores --------*- C++ -*-===//
//
// A rewrite of optimized LLVM IR before code generation, which CPUModule
// applies to the code it compiles.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_EXECUTIONENGINE_MASKEDSTORES_H
#define TQ_EXECUTIONENGINE_MASKEDSTORES_H

namespace llvm {
class Module;
} // namespace llvm

namespace tq::cpu {

/// Replaces each `llvm.masked.store` of a fixed-width vector whose mask is a
/// constant with exactly one lane set by a store of that lane's element, and
/// returns how many it replaced.
///
/// LLVM 22's X86 back end, with AVX-512, stores that lane of a truncated
/// vector (`trunc <16 x i32> to <16 x i8>`) with the width of the element
/// before truncation: 4 bytes where 1 is stored (llvm/llvm-project#179489).
/// Such masks appear once the optimizer has unrolled a loop whose last
/// vector holds one value (a column of tiles one element wide), and the
/// bytes written past the buffer corrupt the heap. A plain store of an
/// extracted element is compiled correctly. Lanes smaller than a byte and
/// element types with padding are left alone. LLVM fixed the bug after
/// 22.1 (llvm/llvm-project#179853); the rewrite can go once the toolchain
/// has that fix.
unsigned scalarizeSingleLaneMaskedStores(llvm::Module &module);

} // namespace tq::cpu

#endif // TQ_EXECUTIONENGINE_MASKEDSTORES_H
