//===- PPUSim.h - PPU simulator ---------------------------------*- C++ -*-===//
//
// A parameterised, bit-exact model of the PPU of seed 000 (SPEC P1-P6),
// plain C++ (no MLIR). It executes an instruction stream (tq/Target/PPUISA/
// ISA.h, which documents the memories and instructions) and counts what
// the hardware would do: reads and writes per memory, MAC operations, and
// cycles under the cost model of tq/Runtime/PPUCost.h.
//
// Numerics are those of tq/Runtime/Quant.h (symmetric f32 or power-of-two
// steps, nearest-even rounding); partial edge tiles are zero-padded, which
// leaves symmetric steps unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_RUNTIME_PPUSIM_H
#define TQ_RUNTIME_PPUSIM_H

#include "tq/Runtime/PPUCost.h"
#include "tq/Runtime/Quant.h"
#include "tq/Target/PPUISA/ISA.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tq::ppu {

/// What the simulator counted (P6).
struct Stats {
  uint64_t ubReads = 0, ubWrites = 0;     // tile-row accesses
  uint64_t fmemReads = 0, fmemWrites = 0; // tile-row accesses
  uint64_t bufferReads = 0, bufferWrites = 0;
  uint64_t accReads = 0, accWrites = 0;
  uint64_t macOps = 0;     // multiply-accumulates
  uint64_t transposes = 0; // tiles transposed by the datapath unit
  uint64_t requantizations = 0;
  uint64_t ubBytesRead = 0, ubBytesWritten = 0; // at the tiles' widths
  uint64_t bankReads = 0;    // words the unified buffer's banks read for LOADs
  uint64_t cycles = 0;       // with the units overlapping (PPUCost.h)
  uint64_t serialCycles = 0; // the instructions' cycles summed
  std::array<uint64_t, kUnits> busy{}; // cycles each unit is busy
  uint64_t instructions = 0;
  /// The share of `cycles` unit `u` is busy (0 when nothing ran).
  double utilisation(Unit u) const;
  /// Adds another run's counts (programs run one after the other).
  Stats &operator+=(const Stats &o);
  std::string json() const;
  std::string text() const;
};

/// Executes a validated stream. Inputs are given by binding name (2-D
/// row-major f32); outputs are returned the same way.
class Simulator {
public:
  /// `cost` sets the cost model's parameters (defaults resolved for the
  /// stream's machine).
  explicit Simulator(const Stream &stream, const CostModel &cost = {});
  /// Sets an input binding; fails when the name or the shape is unknown.
  bool setInput(const std::string &name, const std::vector<float> &data,
                const std::vector<uint32_t> &shape, std::string &error);
  /// Sets a width input (a bit width in [2, 16] for its register); fails
  /// when the name is unknown or the width out of range.
  bool setWidth(const std::string &name, int64_t bits, std::string &error);
  /// Runs to HALT (or the end). After a fault the statistics include the
  /// faulting instruction's cycles but none of its reads. Fails on a
  /// run-time fault (an instruction
  /// reading a tile nothing wrote is fine: memories start zeroed).
  bool run(std::string &error);
  /// An output (or input) binding's data and shape; empty if unknown.
  std::vector<float> output(const std::string &name,
                            std::vector<uint32_t> &shape) const;
  const Stats &stats() const { return st; }
  /// A unified-buffer tile (V*V values, row-major) and its step, for tools
  /// and tests.
  const std::vector<int32_t> &ubValues(uint32_t slot) const {
    return ub[slot].q;
  }
  float ubStep(uint32_t slot) const { return ub[slot].params.step(); }

  /// The cost model in use, its defaults resolved.
  const CostModel &costModel() const { return cost; }

private:
  enum class Layout : uint8_t { Square, Rows, Cols };
  struct Tile {
    std::vector<int32_t> q;     // V*V
    tq::ref::TileParams params; // Square
    Layout layout = Layout::Square;
    std::vector<tq::ref::TileParams> vp; // Rows / Cols: one per vector
    float step(uint32_t r, uint32_t c) const;
  };
  void quantize(const std::vector<float> &x, int bits, uint8_t flags, Tile &t);
  std::vector<float> dequantize(const Tile &t) const;
  const Stream &s;
  uint16_t V;
  std::vector<std::vector<float>> fmem, acc;
  std::vector<Tile> ub, bufA, bufB;
  uint16_t widths[kWidthRegisters] = {}; // 0: not written
  Stats st;
  CostModel cost;
  Timeline timeline;
  /// LOAD costs by width and transpose flag, computed once each.
  InstrCost loads[17][2];
  /// The cost of `i`, whose width is resolved.
  InstrCost costOf(const Instr &i);
  /// The width of the unified-buffer tile `i` reads (0 if none).
  unsigned readBits(const Instr &i) const;
  bool execute(std::string &error);
};

} // namespace tq::ppu

#endif // TQ_RUNTIME_PPUSIM_H
