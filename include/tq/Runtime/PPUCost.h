//===- PPUCost.h - the PPU simulator's cost model ---------------*- C++ -*-===//
//
// What an instruction costs on the PPU, computed from what it does rather
// than assumed (docs/PPU.md, "Cost model"):
//
//   Banks (P2)  The unified buffer has `banks` banks, each reading one word
//               of `wordBits` bits a cycle and keeping its last word
//               latched. A tile's values are packed at their bit width into
//               words, in row-major order (layout `rows`: consecutive
//               words in consecutive banks, so with 8-bit values and the
//               default words one tile row a bank, seed 000's embodiment),
//               column-major order (`cols`), or with the whole tile in one
//               bank (`slot`). A LOAD delivers
//               the tile's rows (or, transposed, its columns) into a data
//               buffer, at most `wordBits` bits a cycle; each cycle the
//               banks must supply the words the delivered elements sit in.
//               So a transposed read costs what its access pattern costs.
//   Width       Narrower tiles take fewer words: with the default words a
//               4-bit tile is loaded in half the cycles of an 8-bit one,
//               and the word part of every other read or write shrinks
//               the same way.
//   Overlap     Four units (load, mac, post, datapath) run concurrently.
//               Instructions issue in order, one a cycle, and start once
//               their unit is free and the tiles they read are written
//               (and the tiles they write are no longer read), so double
//               buffering (`rows >= 2`) hides loads behind MACs.
//
// The parameters change cycles, never results, so they are simulator
// options and not part of the stream.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_RUNTIME_PPUCOST_H
#define TQ_RUNTIME_PPUCOST_H

#include "tq/Target/PPUISA/ISA.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tq::ppu {

/// How a tile's words are spread over the unified buffer's banks.
enum class BankLayout : uint8_t { Rows, Cols, Slot };

/// The units that run concurrently.
enum class Unit : uint8_t { Load, Mac, Post, Datapath };
constexpr unsigned kUnits = 4;
const char *unitName(Unit u);

struct CostModel {
  uint16_t banks = 0;    // unified-buffer banks; 0: V
  uint32_t wordBits = 0; // bits a bank reads a cycle; 0: 8 * V
  BankLayout layout = BankLayout::Rows;
  bool overlap = true; // false: every instruction waits for the previous one
  /// The parameters with their defaults resolved for machine `m`.
  CostModel resolved(const MachineConfig &m) const;
  /// "banks=16 word-bits=128 layout=rows overlap=1" ("banks=V word-bits=8V"
  /// for the defaults not yet resolved).
  std::string str() const;
};

/// Parses space- or comma-separated `key=value` pairs: banks=N,
/// word-bits=N, layout=rows|cols|slot, overlap=0|1. Fails naming the key or
/// value.
bool parseCostModel(const std::string &spec, CostModel &out,
                    std::string &error);

/// The cost of one instruction.
struct InstrCost {
  uint64_t cycles = 0;
  uint64_t bankReads = 0; // LOAD: words the banks read
  Unit unit = Unit::Datapath;
};

/// The cost of a LOAD of a `bits`-wide tile, plain or transposed, from the
/// access pattern. (The functions below resolve the model's defaults.)
InstrCost loadCost(const MachineConfig &m, const CostModel &c, unsigned bits,
                   bool transposed);

/// The cost of `i` (with its width resolved), where `readBits` is the width
/// of the unified-buffer tile it reads (LOAD, REQ, WUPD, DEQ).
InstrCost instrCost(const Instr &i, const MachineConfig &m, const CostModel &c,
                    unsigned readBits);

/// The words of a `bits`-wide tile: ceil(V * V * bits / wordBits).
uint64_t tileWords(const MachineConfig &m, const CostModel &c, unsigned bits);

/// When each instruction runs: in-order issue, one instruction a cycle,
/// each unit busy for its instruction's cycles, and dependences through
/// the tiles read and written (read after write, write after read and
/// write after write).
class Timeline {
public:
  Timeline(const MachineConfig &m, bool overlap);
  /// Schedules `i`, which costs `cost`.
  void schedule(const Instr &i, const InstrCost &cost);
  /// The cycle the last instruction finishes.
  uint64_t finish() const { return end; }
  const std::array<uint64_t, kUnits> &busy() const { return unitBusy; }

private:
  struct Resource {
    uint64_t written = 0; // when the last write finishes
    uint64_t read = 0;    // when the last read finishes
  };
  Resource &at(std::vector<Resource> &mem, uint32_t i);
  bool overlap;
  Resource spare;
  std::vector<Resource> fmem, ub, bufA, bufB, acc;
  std::array<uint64_t, kUnits> unitFree{}, unitBusy{};
  uint64_t issue = 0, end = 0;
};

} // namespace tq::ppu

#endif // TQ_RUNTIME_PPUCOST_H
