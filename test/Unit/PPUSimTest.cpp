//===- PPUSimTest.cpp - PPU simulator tests -------------------------------===//
//
// The simulator against the reference numerics, bit for bit (SPEC P3-P6,
// T4, T5, T6, T7), and the stream decoder against corrupt input.
//
//===----------------------------------------------------------------------===//
#include "tq/Runtime/PPUSim.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace tq;
using namespace tq::ppu;

namespace {

std::vector<float> randomData(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// A GEMM program C = op(A) . op(B) for 2-D host tensors "a", "b" (inputs)
/// and "c" (output): quantize A and B tile by tile into the unified buffer
/// with the given scale layouts (0: square tiles, or kRowVectors /
/// kColVectors), requantize an operand whose per-vector scales do not run
/// along the reduction, then for each output tile accumulate over K-tiles
/// (a transposed operand read through LOAD's transpose) and store it. A
/// hand-written stream, to test the simulator on its own; the compiled
/// streams are tested in test/Conversion/TQToPPU and test/Integration/PPU.
struct GemmSpec {
  uint32_t M = 0, K = 0, N = 0;
  bool transA = false, transB = false;
  uint16_t bitsA = 8, bitsB = 8;
  bool pow2 = false;
  uint8_t macFlags = 0; // e.g. kBF16Product
  uint8_t aStored = 0, bStored = 0;
};

/// The scale layout operand a (or b) needs in the unified buffer given how
/// it is stored and whether it is read transposed.
uint8_t neededLayout(uint8_t stored, bool isA, bool transposed) {
  if (!stored)
    return 0;
  uint8_t inBuffer = isA ? kRowVectors : kColVectors;
  if (!transposed)
    return inBuffer;
  return inBuffer == kRowVectors ? kColVectors : kRowVectors;
}

/// Fails (with a message) when the machine's memories are too small.
bool gemmStream(const GemmSpec &g, const MachineConfig &m, Stream &s,
                std::string &error) {
  uint32_t V = m.V;
  auto tiles = [&](uint32_t n) { return (n + V - 1) / V; };
  uint32_t aRows = g.transA ? g.K : g.M, aCols = g.transA ? g.M : g.K;
  uint32_t bRows = g.transB ? g.N : g.K, bCols = g.transB ? g.K : g.N;
  uint64_t aTiles = uint64_t(tiles(aRows)) * tiles(aCols),
           bTiles = uint64_t(tiles(bRows)) * tiles(bCols),
           cTiles = uint64_t(tiles(g.M)) * tiles(g.N);
  if (aTiles + bTiles > m.ubTiles || aTiles + bTiles + cTiles > m.fmemTiles) {
    error = "the operands do not fit the machine's memories (" + m.str() + ")";
    return false;
  }
  s = Stream();
  s.machine = m;
  uint32_t bBase = aTiles, cBase = aTiles + bTiles;
  s.bindings = {{false, "a", {aRows, aCols}, 0},
                {false, "b", {bRows, bCols}, bBase},
                {true, "c", {g.M, g.N}, cBase}};
  uint8_t pow2 = g.pow2 ? kPow2 : 0;
  for (uint32_t t = 0; t < aTiles; ++t)
    s.code.push_back({Op::Quant, uint8_t(pow2 | g.aStored), g.bitsA, t, t});
  for (uint32_t t = 0; t < bTiles; ++t)
    s.code.push_back(
        {Op::Quant, uint8_t(pow2 | g.bStored), g.bitsB, bBase + t, bBase + t});
  uint8_t needA = neededLayout(g.aStored, true, g.transA),
          needB = neededLayout(g.bStored, false, g.transB);
  if (needA != g.aStored)
    for (uint32_t t = 0; t < aTiles; ++t)
      s.code.push_back({Op::Req, uint8_t(pow2 | needA), g.bitsA, t, t});
  if (needB != g.bStored)
    for (uint32_t t = 0; t < bTiles; ++t)
      s.code.push_back(
          {Op::Req, uint8_t(pow2 | needB), g.bitsB, bBase + t, bBase + t});
  for (uint32_t i = 0; i < tiles(g.M); ++i)
    for (uint32_t j = 0; j < tiles(g.N); ++j) {
      for (uint32_t t = 0; t < tiles(g.K); ++t) {
        uint32_t aSlot = g.transA ? t * tiles(aCols) + i : i * tiles(aCols) + t;
        uint32_t bSlot =
            bBase + (g.transB ? j * tiles(bCols) + t : t * tiles(bCols) + j);
        s.code.push_back(
            {Op::Load, uint8_t(g.transA ? kTranspose : 0), 0, 0, aSlot});
        s.code.push_back({Op::Load,
                          uint8_t(kLoadB | (g.transB ? kTranspose : 0)), 0, 0,
                          bSlot});
        s.code.push_back(
            {Op::Mac, uint8_t((t ? kAccumulate : 0) | g.macFlags), 0, 0, 0});
      }
      s.code.push_back({Op::Store, 0, 0, cBase + i * tiles(g.N) + j, 0});
    }
  s.code.push_back({Op::Halt});
  return validate(s, error);
}

using Gemm = GemmSpec;

Stream buildGemm(const Gemm &g, const MachineConfig &m) {
  Stream s;
  std::string error;
  EXPECT_TRUE(gemmStream(g, m, s, error)) << error;
  return s;
}

/// Runs a GEMM on the simulator and with the reference; compares bitwise.
void checkGemm(const Gemm &g, const MachineConfig &m, Stats *stats = nullptr) {
  uint32_t aRows = g.transA ? g.K : g.M, aCols = g.transA ? g.M : g.K;
  uint32_t bRows = g.transB ? g.N : g.K, bCols = g.transB ? g.K : g.N;
  std::vector<float> a = randomData(size_t(aRows) * aCols, 1 + g.M),
                     b = randomData(size_t(bRows) * bCols, 2 + g.N);
  Stream s = buildGemm(g, m);
  // Through the binary format, as the tools do.
  std::vector<uint8_t> bin = encode(s);
  Stream decoded;
  std::string error;
  ASSERT_TRUE(decode(bin.data(), bin.size(), decoded, error)) << error;
  Simulator sim(decoded);
  ASSERT_TRUE(sim.setInput("a", a, {aRows, aCols}, error)) << error;
  ASSERT_TRUE(sim.setInput("b", b, {bRows, bCols}, error)) << error;
  ASSERT_TRUE(sim.run(error)) << error;
  std::vector<uint32_t> shape;
  std::vector<float> c = sim.output("c", shape);
  ASSERT_EQ(shape, (std::vector<uint32_t>{g.M, g.N}));

  ref::TileLayout l;
  l.tile[0] = l.tile[1] = m.V;
  ref::BitsSpec ba, bb;
  ba.uniform = g.bitsA;
  bb.uniform = g.bitsB;
  ref::QuantForm form = g.pow2 ? ref::QuantForm::Pow2 : ref::QuantForm::Scaled;
  auto layoutOf = [&](uint8_t flags) {
    ref::TileLayout v = l;
    if (flags == kRowVectors)
      v.tile[0] = 1;
    if (flags == kColVectors)
      v.tile[1] = 1;
    return v;
  };
  ref::TiledTensor ta =
      ref::quantizeTiled({{aRows, aCols}, a}, layoutOf(g.aStored), ba, form);
  ref::TiledTensor tb =
      ref::quantizeTiled({{bRows, bCols}, b}, layoutOf(g.bStored), bb, form);
  uint8_t needA = neededLayout(g.aStored, true, g.transA),
          needB = neededLayout(g.bStored, false, g.transB);
  if (needA != g.aStored)
    ta = ref::requantizeTiled(ta, layoutOf(needA), ba, form);
  if (needB != g.bStored)
    tb = ref::requantizeTiled(tb, layoutOf(needB), bb, form);
  ref::FloatTensor expected;
  ASSERT_TRUE(ref::matmulTiled({&ta, nullptr, g.transA},
                               {&tb, nullptr, g.transB},
                               g.macFlags & kBF16Product, expected)
                  .ok);
  ASSERT_EQ(expected.data.size(), c.size());
  for (size_t k = 0; k < c.size(); ++k)
    ASSERT_EQ(c[k], expected.data[k]) << "element " << k;
  if (stats)
    *stats = sim.stats();
}

MachineConfig machine(uint16_t V) {
  MachineConfig m;
  m.V = V;
  m.macUnits = V;
  m.ubTiles = 256;
  m.fmemTiles = 512;
  return m;
}

} // namespace

TEST(PPUSim, GemmIsBitExactP3T5) {
  for (uint16_t V : {8, 16, 32})
    for (bool pow2 : {false, true}) {
      SCOPED_TRACE(V);
      checkGemm({37, 70, 29, false, false, 8, 4, pow2, 0, 0, 0}, machine(V));
    }
  checkGemm({16, 16, 16, false, false, 8, 8, false, kBF16Product}, machine(16));
}

TEST(PPUSim, TransposedOperandsAreBitExactAndCostNoExtraReadsT4) {
  // Forward Y = X.W, dX = dY.W^T, dW = X^T.dY: the same tiles, the
  // transposed ones read through the datapath unit.
  Stats fwd, dx, dw;
  checkGemm({40, 48, 32, false, false}, machine(16), &fwd);
  checkGemm({40, 32, 48, false, true}, machine(16), &dx);
  checkGemm({48, 40, 32, true, false}, machine(16), &dw);
  EXPECT_EQ(fwd.transposes, 0u);
  EXPECT_GT(dx.transposes, 0u);
  EXPECT_GT(dw.transposes, 0u);
  // The same number of tile loads and MACs, hence the same unified-buffer
  // and data-buffer reads, whether or not an operand is transposed.
  EXPECT_EQ(fwd.ubReads, dx.ubReads);
  EXPECT_EQ(fwd.ubReads, dw.ubReads);
  EXPECT_EQ(fwd.bufferReads, dx.bufferReads);
  EXPECT_EQ(fwd.macOps, dw.macOps);
  EXPECT_EQ(fwd.requantizations + dx.requantizations + dw.requantizations, 0u);
}

TEST(PPUSim, PerVectorScalingNeedsRequantizedTransposesT4) {
  // The prior art: 1xV vectors along the reduction. Forward X.W stores X
  // with row vectors and W with column vectors; the backward products need
  // them the other way, so each transposed use is requantized (REQ). All
  // bit-exact against the reference (requantizeTiled + matmulTiled).
  Stats fwd, dx, dw, sq;
  MachineConfig m = machine(16);
  checkGemm(
      {40, 48, 32, false, false, 8, 8, false, 0, kRowVectors, kColVectors}, m,
      &fwd);
  // dX = dY . W^T: dY stored with row vectors (fine as a); W needs REQ.
  checkGemm({40, 32, 48, false, true, 8, 8, false, 0, kRowVectors, kColVectors},
            m, &dx);
  // dW = X^T . dY: X (row vectors) and dY (row vectors) both need REQ.
  checkGemm({48, 40, 32, true, false, 8, 8, false, 0, kRowVectors, kRowVectors},
            m, &dw);
  EXPECT_EQ(fwd.requantizations, 0u);
  EXPECT_GT(dx.requantizations, 0u);
  EXPECT_GT(dw.requantizations, dx.requantizations);
  // Square tiles: the same dX with no requantization and fewer reads.
  checkGemm({40, 32, 48, false, true}, m, &sq);
  EXPECT_EQ(sq.requantizations, 0u);
  EXPECT_LT(sq.ubReads, dx.ubReads);
  EXPECT_LT(sq.cycles, dx.cycles);
}

TEST(PPUSim, MacRejectsScalesAlongTheReduction) {
  // A transposed row-vector tile in buffer a has column vectors: a fault.
  MachineConfig m = machine(8);
  Stream s;
  s.machine = m;
  s.bindings = {{false, "x", {8, 8}, 0}};
  s.code = {{Op::Quant, kRowVectors, 8, 0, 0, 0, 0},
            {Op::Load, kTranspose, 0, 0, 0, 0, 0},
            {Op::Load, kLoadB, 0, 0, 0, 0, 0},
            {Op::Mac, 0, 0, 0, 0, 0, 0}};
  Simulator sim(s);
  std::string error;
  ASSERT_TRUE(sim.setInput("x", randomData(64, 3), {8, 8}, error));
  EXPECT_FALSE(sim.run(error));
  EXPECT_EQ(error, "instruction 3: operand a has per-vector scales along the "
                   "reduction dim; requantize it (REQ) first");
}

TEST(PPUSim, PostprocessAndWeightUpdateMatchTheReferenceT6T7) {
  MachineConfig m = machine(8);
  Stream s;
  s.machine = m;
  s.bindings = {{false, "x", {8, 8}, 0}, {false, "w", {8, 8}, 1}};
  s.code = {{Op::Quant, 0, 8, 0, 0, 0, 0},
            {Op::Quant, 0, 8, 1, 1, 0, 0},
            {Op::Load, 0, 0, 0, 0, 0, 0},
            {Op::Load, kLoadB, 0, 0, 1, 0, 0},
            {Op::Mac, 0, 0, 0, 0, 0, 0},
            {Op::Post, kRelu, 4, 2, 0, 0, 0}, // ub[2] <- relu(acc), 4 bits
            {Op::Post, kLayerScale, 8, 3, 0, 0, 2.5f}, // ub[3] <- acc / 2.5
            {Op::WUpd, 0, 0, 1, 0, 0, 0.125f},         // w <- w - 0.125 * acc
            {Op::Halt, 0, 0, 0, 0, 0, 0}};
  std::vector<float> x = randomData(64, 5), w = randomData(64, 6);
  std::string error;
  Simulator sim(s);
  ASSERT_TRUE(sim.setInput("x", x, {8, 8}, error));
  ASSERT_TRUE(sim.setInput("w", w, {8, 8}, error));
  ASSERT_TRUE(sim.run(error)) << error;

  ref::TileLayout l;
  l.tile[0] = l.tile[1] = 8;
  ref::BitsSpec b8;
  ref::TiledTensor tx =
      ref::quantizeTiled({{8, 8}, x}, l, b8, ref::QuantForm::Scaled);
  ref::TiledTensor tw =
      ref::quantizeTiled({{8, 8}, w}, l, b8, ref::QuantForm::Scaled);
  ref::FloatTensor accRef;
  ASSERT_TRUE(ref::matmulTiled({&tx}, {&tw}, false, accRef).ok);
  ref::BitsSpec b4;
  b4.uniform = 4;
  ref::PostprocessResult post =
      ref::postprocess(accRef, std::nullopt, false, ref::Activation::Relu, l,
                       b4, ref::QuantForm::Scaled);
  EXPECT_EQ(sim.ubValues(2), post.out.q);
  EXPECT_EQ(sim.ubStep(2), post.out.params[0].step());
  ref::PostprocessResult scaled =
      ref::postprocess(accRef, 2.5f, false, ref::Activation::None, l, b8,
                       ref::QuantForm::Scaled);
  EXPECT_EQ(sim.ubValues(3), scaled.out.q);
  EXPECT_EQ(sim.ubStep(3), scaled.out.params[0].step());
  ref::TiledTensor updated = ref::weightUpdate(tw, accRef, 0.125f);
  EXPECT_EQ(sim.ubValues(1), updated.q);
  EXPECT_EQ(sim.ubStep(1), updated.params[0].step());
}

TEST(PPUSim, CostModelAndOverflow) {
  MachineConfig m = machine(16);
  Instr mac{Op::Mac, 0, 0, 0, 0, 0, 0};
  CostModel c = CostModel().resolved(m);
  EXPECT_EQ(instrCost(mac, m, c, 0).cycles, 16u); // 256 dot products, 16 units
  m.macUnits = 4;
  EXPECT_EQ(instrCost(mac, m, c, 0).cycles, 64u);
  // 16-bit tiles of qmax: a K-tile of 16 overflows int32 (T5 bound).
  MachineConfig m16 = machine(16);
  Stream s;
  s.machine = m16;
  s.bindings = {{false, "x", {16, 16}, 0}};
  s.code = {{Op::Quant, 0, 16, 0, 0, 0, 0},
            {Op::Load, 0, 0, 0, 0, 0, 0},
            {Op::Load, kLoadB, 0, 0, 0, 0, 0},
            {Op::Mac, 0, 0, 0, 0, 0, 0}};
  Simulator sim(s);
  std::string error;
  ASSERT_TRUE(
      sim.setInput("x", std::vector<float>(256, 1.0f), {16, 16}, error));
  EXPECT_FALSE(sim.run(error));
  EXPECT_EQ(error, "instruction 3: int32 partial sum overflow");
}

TEST(PPUSim, InputsAreChecked) {
  Stream s = buildGemm({8, 8, 8}, machine(8));
  Simulator sim(s);
  std::string error;
  EXPECT_FALSE(sim.setInput("nope", {}, {1, 1}, error));
  EXPECT_EQ(error, "no input named 'nope'");
  EXPECT_FALSE(sim.setInput("a", std::vector<float>(12), {3, 4}, error));
  EXPECT_EQ(error, "input 'a' expects 8x8, got 3x4");
  EXPECT_FALSE(sim.setInput("a", std::vector<float>(64), {8, 1, 1, 8}, error));
  EXPECT_EQ(error, "input 'a' expects 8x8, got 8x1x1x8");
  EXPECT_FALSE(sim.setInput("c", std::vector<float>(64), {8, 8}, error));
}

namespace {
std::string decodeError(const std::vector<uint8_t> &bin) {
  Stream s;
  std::string error;
  EXPECT_FALSE(decode(bin.data(), bin.size(), s, error));
  return error;
}
} // namespace

TEST(PPUStream, CorruptStreamsAreRejectedP6) {
  Stream s = buildGemm({16, 16, 16}, machine(8));
  std::vector<uint8_t> bin = encode(s);
  EXPECT_EQ(decodeError({'x'}), "not a PPU instruction stream (bad magic)");
  std::vector<uint8_t> v = bin;
  v[6] = 9;
  EXPECT_EQ(decodeError(v),
            "unsupported stream version 9 (this simulator reads versions 1 "
            "to 3)");
  v = bin;
  v.resize(12);
  EXPECT_EQ(decodeError(v), "truncated stream header");
  v = bin;
  v.pop_back();
  EXPECT_NE(decodeError(v).find("truncated or trailing bytes"),
            std::string::npos);
  v = bin;
  v.push_back(0);
  EXPECT_NE(decodeError(v).find("truncated or trailing bytes"),
            std::string::npos);
  // Out-of-range addresses, opcodes, flags and widths.
  auto withInstr = [&](Instr i) {
    Stream t = s;
    t.code.insert(t.code.begin(), i);
    return encode(t);
  };
  EXPECT_EQ(decodeError(withInstr({Op::Load, 0, 0, 8, 0, 0, 0})),
            "instruction 0: data buffer row 8 is out of range (size 8)");
  EXPECT_EQ(decodeError(withInstr({Op::Quant, 0, 8, 256, 0, 0, 0})),
            "instruction 0: ub slot 256 is out of range (size 256)");
  EXPECT_EQ(decodeError(withInstr({Op::Mac, 0, 0, 64, 0, 0, 0})),
            "instruction 0: acc tile 64 is out of range (size 64)");
  EXPECT_EQ(decodeError(withInstr({Op::Quant, 0, 17, 0, 0, 0, 0})),
            "instruction 0: bit width 17 not in [2, 16]");
  EXPECT_EQ(decodeError(withInstr({Op::Store, kRelu, 0, 0, 0, 0, 0})),
            "instruction 0: invalid flags 8");
  EXPECT_EQ(decodeError(withInstr({static_cast<Op>(42), 0, 0, 0, 0, 0, 0})),
            "instruction 0: unknown opcode 42");
  EXPECT_EQ(decodeError(withInstr({Op::WUpd, 0, 0, 0, 0, 0, NAN})),
            "instruction 0: learning rate is not finite");
  EXPECT_EQ(
      decodeError(
          withInstr({Op::Req, kRowVectors | kColVectors, 8, 0, 0, 0, 0})),
      "instruction 0: a tile's scales are per row or per column, not both");
  // A binding beyond fmem.
  Stream big = s;
  big.bindings.push_back({true, "huge", {10000, 10000}, 0});
  EXPECT_EQ(decodeError(encode(big)),
            "binding 'huge' overflows fmem (1562500 > 512 tiles)");
  Stream dup = s;
  dup.bindings.push_back(s.bindings[0]);
  EXPECT_EQ(decodeError(encode(dup)),
            "invalid binding #3 'a' (a unique name and 2 or 4 positive dims)");
  Stream huge = s;
  huge.machine.ubTiles = 4000000000u;
  EXPECT_NE(decodeError(encode(huge)).find("machine too large"),
            std::string::npos);
}

TEST(PPUSim, WidthRegistersGiveRunTimeWidths) {
  // A GEMM whose A is quantized at 5 bits, and the same program reading
  // the width from register w1, set by the host: the same bits.
  Gemm g{19, 24, 13};
  g.bitsA = 5;
  MachineConfig m = machine(8);
  Stream fixed = buildGemm(g, m);
  Stream viaRegister = fixed;
  for (Instr &i : viaRegister.code)
    if (i.op == Op::Quant && i.bits == 5)
      i.bits = kBitsRegister | 1;
  viaRegister.bindings.push_back({false, "n", {}, 1});
  std::string error;
  ASSERT_TRUE(validate(viaRegister, error)) << error;
  std::vector<uint8_t> bin = encode(viaRegister);
  Stream decoded;
  ASSERT_TRUE(decode(bin.data(), bin.size(), decoded, error)) << error;
  std::vector<float> a = randomData(19 * 24, 5), b = randomData(24 * 13, 6);
  auto run = [&](const Stream &s, int bits) {
    Simulator sim(s);
    EXPECT_TRUE(sim.setInput("a", a, {19, 24}, error)) << error;
    EXPECT_TRUE(sim.setInput("b", b, {24, 13}, error)) << error;
    if (bits)
      EXPECT_TRUE(sim.setWidth("n", bits, error)) << error;
    EXPECT_TRUE(sim.run(error)) << error;
    std::vector<uint32_t> shape;
    return sim.output("c", shape);
  };
  std::vector<float> want = run(fixed, 0), got = run(decoded, 5);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)),
            0);
  EXPECT_NE(run(decoded, 3), want); // the register is what counts
  // Errors: an unset register, widths out of range, a tensor input.
  Simulator unset(decoded);
  EXPECT_FALSE(unset.run(error));
  EXPECT_NE(error.find("width register w1 was never set"), std::string::npos);
  EXPECT_FALSE(unset.setWidth("n", 1, error));
  EXPECT_FALSE(unset.setWidth("a", 4, error));
  EXPECT_EQ(error, "no width input named 'a'");
  EXPECT_FALSE(unset.setInput("n", a, {19, 24}, error));
  // Version 1 streams are read, but cannot have width inputs.
  std::vector<uint8_t> v1 = encode(fixed);
  v1[6] = 1;
  EXPECT_TRUE(decode(v1.data(), v1.size(), decoded, error)) << error;
  bin[6] = 1;
  EXPECT_EQ(decodeError(bin), "width input 'n' in a version 1 stream");
}

TEST(PPUStream, MutatedStreamsNeverCrash) {
  Stream s = buildGemm({16, 16, 16}, machine(8));
  std::vector<uint8_t> good = encode(s);
  std::mt19937 rng(99);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> bin = good;
    for (int k = 0, n = 1 + rng() % 3; k < n; ++k)
      bin[rng() % bin.size()] = rng() & 0xff;
    if (rng() % 5 == 0)
      bin.resize(rng() % bin.size());
    Stream t;
    std::string error;
    if (!decode(bin.data(), bin.size(), t, error)) {
      EXPECT_FALSE(error.empty());
      continue;
    }
    ++accepted;
    // Whatever decodes runs safely (memories are sized by the header; keep
    // the test quick by running only small machines).
    const MachineConfig &m = t.machine;
    if (uint64_t(m.ubTiles + m.fmemTiles + m.accTiles) * m.V * m.V > (1u << 20))
      continue;
    Simulator sim(t);
    sim.run(error);
  }
  EXPECT_GT(accepted, 0);
}

TEST(PPUText, ListingRoundTripsP6) {
  Gemm g{40, 48,   32,           true,        false,      8,
         4,  true, kBF16Product, kRowVectors, kRowVectors};
  Stream s = buildGemm(g, machine(16));
  s.code.insert(s.code.end() - 1, {Op::Post, kRelu | kPow2, 6, 0, 0, 0, 0});
  s.code.insert(s.code.end() - 1, {Op::Post, kLayerScale, 8, 1, 0, 0, 0.75f});
  s.code.insert(s.code.end() - 1, {Op::WUpd, 0, 0, 1, 0, 0, 0.0125f});
  s.code.insert(s.code.end() - 1, {Op::Deq, 0, 0, 3, 1});
  ConstTile c;
  c.slot = 2;
  c.bits = 4;
  c.step = 0.5f;
  c.values.assign(16 * 16, 0);
  c.values[1] = -7;
  s.constants.push_back(c);
  std::string text = print(s);
  Stream back;
  std::string error;
  ASSERT_TRUE(parse(text, back, error)) << error;
  EXPECT_EQ(print(back), text);
  EXPECT_EQ(encode(back), encode(s));
  EXPECT_NE(text.find("load a[0] <- ub[0] transpose"), std::string::npos);
  EXPECT_NE(text.find("mac acc[0] += a[0] * b[0] bf16"), std::string::npos);
  EXPECT_NE(text.find("req ub[0] <- ub[0] bits=8 pow2 cols"),
            std::string::npos);
  EXPECT_NE(text.find("wupd ub[1] -= 0.0125000002 * acc[0]"),
            std::string::npos);
  EXPECT_NE(text.find("deq fmem[3] <- ub[1]"), std::string::npos);
  EXPECT_NE(text.find("post ub[1] <- acc[0] bits=8 scale=0.75\n"),
            std::string::npos);
  EXPECT_NE(text.find("const ub[2] bits=4 step=0.5 : 0 -7 0"),
            std::string::npos);
}

TEST(PPUText, MalformedListingsAreRejected) {
  auto err = [](const std::string &text) {
    Stream s;
    std::string error;
    EXPECT_FALSE(parse(text, s, error));
    return error;
  };
  const std::string hdr = "ppu v1 V=8 mac=8 ub=16 rows=2 acc=4 fmem=16\n";
  EXPECT_EQ(err(""), "empty listing: expected the 'ppu v3 ...' header");
  EXPECT_EQ(err("ppu v4 V=8\n"), "line 1: unsupported listing version 4");
  EXPECT_EQ(err("ppu v1 V=8 mac=8\n"),
            "line 1: malformed machine in the header");
  EXPECT_EQ(err(hdr + "jump 3\n"), "line 2: unknown instruction 'jump'");
  EXPECT_EQ(err(hdr + "load c[0] <- ub[0]\n"),
            "line 2: malformed 'load' instruction");
  EXPECT_EQ(err(hdr + "load a[0] <- ub[0] sideways\n"),
            "line 2: unknown flag 'sideways'");
  EXPECT_EQ(err(hdr + "quant ub[16] <- fmem[0] bits=8\n"),
            "instruction 0: ub slot 16 is out of range (size 16)");
  EXPECT_EQ(err(hdr + "input x 8 0\n"),
            "line 2: expected 'input NAME DxDx... @TILE'");
  EXPECT_EQ(err(hdr + "input x 8 @0\n"),
            "invalid binding #0 'x' (a unique name and 2 or 4 positive dims)");
  EXPECT_EQ(err(hdr + "quant ub[99999999999] <- fmem[0] bits=8\n"),
            "line 2: malformed 'quant' instruction");
}
