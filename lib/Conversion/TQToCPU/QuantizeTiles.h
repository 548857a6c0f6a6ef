//===- QuantizeTiles.h - the loops of tile quantization on the CPU -*- C++
//-*-===//
//
// The helpers of QuantizeTiles.cpp that the tq lowerings share besides
// cpu::emitQuantizeTiles (declared in TQToCPU.h).
//
//===----------------------------------------------------------------------===//
#ifndef TQ_LIB_CONVERSION_TQTOCPU_QUANTIZETILES_H
#define TQ_LIB_CONVERSION_TQTOCPU_QUANTIZETILES_H

#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::tq::cpu {

/// The index constant `v`.
Value index(ImplicitLocOpBuilder &b, int64_t v);
/// Loops over every index of `shape` (outermost first); with `threads` > 1
/// the iterations must be independent (see buildIndependentLoops).
void forEachIndex(ImplicitLocOpBuilder &b, ArrayRef<int64_t> shape,
                  function_ref<void(ImplicitLocOpBuilder &, ValueRange)> body,
                  int64_t threads = 1);
/// qmax = 2^(bits-1) - 1 as f32, from an i32 bit width.
Value qmaxOf(ImplicitLocOpBuilder &b, Value bits);
/// A tile's running max |x| over its finite elements, with x:
/// max(acc, x finite ? |x| : 0). Neither is NaN (`acc` starts at +0), so
/// the max needs no NaN check (x86 `maxps`), and is a plain operation, not
/// a select of `acc` (which LLVM would make a masked store when `acc` is
/// loaded and stored back: microcode on AVX2).
Value maxFiniteAbs(ImplicitLocOpBuilder &b, Value acc, Value x);
/// The i32 seed of an op's stochastic rounding: its `seed` attribute's low
/// 32 bits plus its run-time `offset` (an i32, or none), modulo 2^32; none
/// without a seed.
Value seedValue(ImplicitLocOpBuilder &b, std::optional<uint64_t> seed,
                Value offset);
/// A tq.quantize of an NCHW tensor split on (N, C), written in the NHWC
/// layout of the tq.transpose [0, 2, 3, 1] that is its only user (see
/// quantizeFusesIntoTranspose): the steps as the memory-order quantization
/// computes them, then the values of a vector of channels × as many pixels
/// at a time, transposed in registers and stored as the channels of each
/// pixel; then the steps permuted. Element by element the arithmetic is the
/// same (stochastic noise too, from the NCHW index): the same bits as
/// quantizing, then transposing. `qT` is [N][H][W][C]; returns the steps,
/// [N/t0][H][W][C/t1].
Value emitQuantizeChannelsLast(ImplicitLocOpBuilder &b, TiledType type, Value x,
                               Value qT, Value m, RoundingMode rounding,
                               Value seed, int64_t threads);

} // namespace mlir::tq::cpu

#endif // TQ_LIB_CONVERSION_TQTOCPU_QUANTIZETILES_H
