//===- PPUCostTest.cpp - the PPU cost model
//--------------------------------===//
//
// The costs follow from access patterns, widths and dependences, so each
// claim is checked together with a configuration that makes it false: a bank
// layout where a transposed read is dearer, a single data-buffer row where
// loads cannot hide behind MACs.
//
//===----------------------------------------------------------------------===//
#include "tq/Runtime/PPUCost.h"
#include "tq/Runtime/PPUSim.h"

#include <gtest/gtest.h>

using namespace tq::ppu;

namespace {

MachineConfig machine(uint16_t V, uint16_t rows = 8) {
  MachineConfig m;
  m.V = V;
  m.macUnits = V;
  m.ubTiles = 64;
  m.dataRows = rows;
  m.fmemTiles = 64;
  return m;
}

CostModel model(const MachineConfig &m, BankLayout layout, uint16_t banks = 0,
                bool overlap = true) {
  CostModel c;
  c.layout = layout;
  c.banks = banks;
  c.overlap = overlap;
  return c.resolved(m);
}

/// A K-panel product on the simulator: quantize `k` tiles of a and b, then
/// LOAD a, LOAD b (transposed if asked), MAC for each, cycling through the
/// data-buffer rows as tq-to-ppu does.
Stats runPanel(const MachineConfig &m, const CostModel &c, unsigned k,
               bool transposeB, uint16_t bits = 8) {
  Stream s;
  s.machine = m;
  s.bindings = {{false, "x", {uint32_t(m.V), uint32_t(m.V * 2 * k)}, 0}};
  for (uint32_t t = 0; t < 2 * k; ++t)
    s.code.push_back({Op::Quant, 0, bits, t, t});
  for (uint32_t t = 0; t < k; ++t) {
    uint32_t row = t % m.dataRows;
    s.code.push_back({Op::Load, 0, 0, row, t});
    s.code.push_back({Op::Load, uint8_t(kLoadB | (transposeB ? kTranspose : 0)),
                      0, row, k + t});
    s.code.push_back({Op::Mac, uint8_t(t ? kAccumulate : 0), 0, 0, row, row});
  }
  s.code.push_back({Op::Halt});
  std::string error;
  EXPECT_TRUE(validate(s, error)) << error;
  Simulator sim(s, c);
  std::vector<float> x(size_t(m.V) * m.V * 2 * k);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int(i % 13) - 6) * 0.25f;
  EXPECT_TRUE(sim.setInput("x", x, s.bindings[0].shape, error)) << error;
  EXPECT_TRUE(sim.run(error)) << error;
  return sim.stats();
}

} // namespace

TEST(PPUCost, TransposedLoadCostsWhatAPlainOneDoesWithRowBanksP2) {
  for (uint16_t V : {8, 16, 32})
    for (unsigned bits : {4u, 8u, 16u}) {
      SCOPED_TRACE(std::to_string(V) + " x " + std::to_string(bits));
      MachineConfig m = machine(V);
      for (BankLayout l : {BankLayout::Rows, BankLayout::Cols}) {
        CostModel c = model(m, l);
        InstrCost plain = loadCost(m, c, bits, false),
                  transposed = loadCost(m, c, bits, true);
        EXPECT_EQ(plain.cycles, transposed.cycles);
        EXPECT_EQ(plain.cycles, tileWords(m, c, bits));
        // Up to 8 bits each word of the tile is read once either way; a
        // 16-bit column gathers from twice as many words as fit a cycle.
        uint64_t words = tileWords(m, c, bits);
        InstrCost along = l == BankLayout::Rows ? plain : transposed,
                  across = l == BankLayout::Rows ? transposed : plain;
        EXPECT_EQ(along.bankReads, words);
        if (bits <= 8)
          EXPECT_EQ(across.bankReads, words);
        else
          EXPECT_GT(across.bankReads, words);
      }
    }
}

TEST(PPUCost, ABankLayoutCanMakeTransposedReadsDearerP2) {
  MachineConfig m = machine(16);
  // The whole tile in one bank: a column needs a word from every row, all
  // from that bank, so the first column takes 16 cycles and each of the
  // other 15 takes 15 (the word still latched comes free).
  CostModel slot = model(m, BankLayout::Slot);
  EXPECT_EQ(loadCost(m, slot, 8, false).cycles, 16u);
  EXPECT_EQ(loadCost(m, slot, 8, true).cycles, 16u + 15u * 15u);
  EXPECT_EQ(loadCost(m, slot, 8, true).bankReads, 16u + 15u * 15u);
  // Rows in 4 banks: 4 rows share a bank, a column reads each of them.
  CostModel fewBanks = model(m, BankLayout::Rows, 4);
  EXPECT_EQ(loadCost(m, fewBanks, 8, false).cycles, 16u);
  EXPECT_GT(loadCost(m, fewBanks, 8, true).cycles, 3u * 16u);
  // The same holds in a whole program: the transposed panel is dearer.
  Stats plain = runPanel(m, slot, 4, false), trans = runPanel(m, slot, 4, true);
  EXPECT_GT(trans.cycles, plain.cycles);
  EXPECT_GT(trans.bankReads, plain.bankReads);
  // And with the seed's layout it is not.
  CostModel rows = model(m, BankLayout::Rows);
  EXPECT_EQ(runPanel(m, rows, 4, true).cycles,
            runPanel(m, rows, 4, false).cycles);
}

TEST(PPUCost, NarrowerTilesCostFewerCyclesAndBytes) {
  MachineConfig m = machine(16);
  CostModel c = model(m, BankLayout::Rows);
  EXPECT_EQ(loadCost(m, c, 8, false).cycles, 16u);
  EXPECT_EQ(loadCost(m, c, 4, false).cycles, 8u);
  EXPECT_EQ(loadCost(m, c, 4, true).cycles, 8u);
  EXPECT_EQ(loadCost(m, c, 16, false).cycles, 32u);
  // 6-bit values straddle words: 21 a cycle, 13 cycles a tile.
  EXPECT_EQ(loadCost(m, c, 6, false).cycles, 13u);
  EXPECT_EQ(loadCost(m, c, 6, true).cycles, 13u);
  Instr quant{Op::Quant, 0, 4, 0, 0};
  EXPECT_EQ(instrCost(quant, m, c, 0).cycles, 16u + 8u);
  Stats s8 = runPanel(m, c, 4, true, 8), s4 = runPanel(m, c, 4, true, 4);
  EXPECT_EQ(s4.ubBytesRead * 2, s8.ubBytesRead);
  EXPECT_EQ(s4.ubBytesWritten * 2, s8.ubBytesWritten);
  EXPECT_LT(s4.serialCycles, s8.serialCycles);
}

TEST(PPUCost, DoubleBufferingOverlapsLoadsWithMacs) {
  // MACs of 4 cycles (V = 16 with 64 units) against loads of 16: with two
  // data-buffer rows the next loads run while a MAC does; with one, each
  // load waits for the MAC reading the row.
  MachineConfig one = machine(16, 1), two = machine(16, 2);
  one.macUnits = two.macUnits = 64;
  CostModel c = model(one, BankLayout::Rows);
  Stats s1 = runPanel(one, c, 8, false), s2 = runPanel(two, c, 8, false);
  EXPECT_EQ(s1.serialCycles, s2.serialCycles);
  EXPECT_LT(s2.cycles, s1.cycles);
  EXPECT_LT(s1.cycles, s1.serialCycles); // the quantizations still overlap
  // Without overlap the cycles are the sum.
  CostModel serial = model(two, BankLayout::Rows, 0, false);
  Stats s = runPanel(two, serial, 8, false);
  EXPECT_EQ(s.cycles, s.serialCycles);
  // Each unit's busy cycles are what its instructions cost.
  EXPECT_EQ(s2.busy[unsigned(Unit::Mac)], 8u * 4u);
  EXPECT_EQ(s2.busy[unsigned(Unit::Load)], 16u * 16u);
  EXPECT_GT(s2.utilisation(Unit::Load), s1.utilisation(Unit::Load));
  EXPECT_LE(s2.utilisation(Unit::Load), 1.0);
}

TEST(PPUCost, OptionsAreParsedAndChecked) {
  CostModel c;
  std::string error;
  ASSERT_TRUE(
      parseCostModel("banks=4,layout=slot word-bits=64 overlap=0", c, error))
      << error;
  EXPECT_EQ(c.banks, 4u);
  EXPECT_EQ(c.wordBits, 64u);
  EXPECT_EQ(c.layout, BankLayout::Slot);
  EXPECT_FALSE(c.overlap);
  EXPECT_EQ(c.str(), "banks=4 word-bits=64 layout=slot overlap=0");
  EXPECT_FALSE(parseCostModel("banks=0", c, error));
  EXPECT_EQ(error, "cost model: banks=0 is not a whole number in [1, 65535]");
  EXPECT_FALSE(parseCostModel("layout=diagonal", c, error));
  EXPECT_EQ(error, "cost model: layout=diagonal is not one of rows, cols, "
                   "slot");
  EXPECT_FALSE(parseCostModel("ports=2", c, error));
  EXPECT_EQ(error, "cost model: unknown parameter 'ports' (banks, word-bits, "
                   "layout, overlap)");
  EXPECT_FALSE(parseCostModel("overlap=yes", c, error));
}
