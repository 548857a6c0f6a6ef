//===- PPUSim.cpp - PPU machine model and simulator -----------------------===//
#include "tq/Runtime/PPUSim.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

namespace tq::ppu {

bool MachineConfig::operator==(const MachineConfig &o) const {
  return V == o.V && macUnits == o.macUnits && ubTiles == o.ubTiles &&
         dataRows == o.dataRows && accTiles == o.accTiles &&
         fmemTiles == o.fmemTiles;
}

std::string MachineConfig::str() const {
  std::ostringstream os;
  os << "V=" << V << " mac=" << macUnits << " ub=" << ubTiles
     << " rows=" << dataRows << " acc=" << accTiles << " fmem=" << fmemTiles;
  return os.str();
}

//===----------------------------------------------------------------------===//
// Bindings
//===----------------------------------------------------------------------===//

std::vector<uint64_t> Binding::grid(uint16_t V) const {
  std::vector<uint64_t> g(shape.begin(), shape.end());
  if (g.empty())
    return g;
  g.front() = (g.front() + V - 1) / V;
  g.back() = (g.back() + V - 1) / V;
  return g;
}

uint64_t Binding::tiles(uint16_t V) const {
  uint64_t n = 1;
  for (uint64_t d : grid(V))
    n *= d;
  return n;
}

uint64_t Binding::numElements() const {
  uint64_t n = 1;
  for (uint32_t d : shape)
    n *= d;
  return n;
}

void Binding::locate(uint64_t linear, uint16_t V, uint64_t &tile,
                     uint32_t &pos) const {
  // Unravel the row-major index; the first and last dims are split.
  size_t rank = shape.size();
  std::vector<uint64_t> idx(rank);
  for (size_t d = rank; d-- > 0;) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  std::vector<uint64_t> g = grid(V);
  tile = 0;
  for (size_t d = 0; d < rank; ++d) {
    uint64_t i = (d == 0 || d == rank - 1) ? idx[d] / V : idx[d];
    tile = tile * g[d] + i;
  }
  pos = uint32_t((idx[0] % V) * V + idx[rank - 1] % V);
}

//===----------------------------------------------------------------------===//
// Binary format
//===----------------------------------------------------------------------===//

namespace {
const char kMagic[6] = {'T', 'Q', 'P', 'P', 'U', '\0'};

struct Writer {
  std::vector<uint8_t> out;
  template <typename T> void put(T v) {
    for (size_t i = 0; i < sizeof(T); ++i)
      out.push_back(
          static_cast<uint8_t>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  }
};

struct Reader {
  const uint8_t *data;
  size_t size, pos = 0;
  template <typename T> bool get(T &v) {
    if (size - pos < sizeof(T))
      return false;
    uint64_t x = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
      x |= static_cast<uint64_t>(data[pos + i]) << (8 * i);
    v = static_cast<T>(x);
    pos += sizeof(T);
    return true;
  }
};

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
} // namespace

std::vector<uint8_t> encode(const Stream &s) {
  Writer w;
  w.out.assign(kMagic, kMagic + 6);
  const MachineConfig &m = s.machine;
  w.put<uint16_t>(Stream::kVersion);
  w.put<uint16_t>(m.V);
  w.put<uint16_t>(m.macUnits);
  w.put<uint32_t>(m.ubTiles);
  w.put<uint16_t>(m.dataRows);
  w.put<uint16_t>(m.accTiles);
  w.put<uint32_t>(m.fmemTiles);
  w.put<uint32_t>(s.bindings.size());
  w.put<uint32_t>(s.constants.size());
  w.put<uint32_t>(s.code.size());
  for (const Binding &b : s.bindings) {
    w.put<uint8_t>(b.output);
    w.put<uint8_t>(b.name.size());
    w.out.insert(w.out.end(), b.name.begin(), b.name.end());
    w.put<uint8_t>(b.shape.size());
    for (uint32_t d : b.shape)
      w.put<uint32_t>(d);
    w.put<uint32_t>(b.baseTile);
  }
  for (const ConstTile &c : s.constants) {
    w.put<uint32_t>(c.slot);
    w.put<uint16_t>(c.bits);
    w.put<uint32_t>(floatBits(c.step));
    for (int32_t v : c.values)
      w.put<uint16_t>(static_cast<uint16_t>(static_cast<int16_t>(v)));
  }
  for (const Instr &i : s.code) {
    w.put<uint8_t>(static_cast<uint8_t>(i.op));
    w.put<uint8_t>(i.flags);
    w.put<uint16_t>(i.bits);
    w.put<uint32_t>(i.dst);
    w.put<uint32_t>(i.src);
    w.put<uint32_t>(hasImmediate(i.op, i.flags) ? floatBits(i.imm) : i.src2);
  }
  return w.out;
}

std::string verifyInstr(const Instr &i, const MachineConfig &m) {
  auto range = [](const char *what, uint32_t v, uint32_t n) -> std::string {
    if (v < n)
      return "";
    return std::string(what) + " " + std::to_string(v) +
           " is out of range (size " + std::to_string(n) + ")";
  };
  auto flags = [&](uint8_t allowed) -> std::string {
    return (i.flags & ~allowed) ? "invalid flags " + std::to_string(i.flags)
                                : "";
  };
  auto bits = [&]() -> std::string {
    if (isWidthRegister(i.bits))
      return (i.bits & 0xff) < kWidthRegisters &&
                     (i.bits & ~(kBitsRegister | 0xff)) == 0
                 ? ""
                 : "width register " + std::to_string(i.bits & 0xff) +
                       " out of range (" + std::to_string(kWidthRegisters) +
                       " registers)";
    return (i.bits < 2 || i.bits > 16)
               ? "bit width " + std::to_string(i.bits) + " not in [2, 16]"
               : "";
  };
  // QUANT and REQ: scale form and vector layout of the tile they produce.
  auto quantFlags = [&]() -> std::string {
    if ((i.flags & kRowVectors) && (i.flags & kColVectors))
      return "a tile's scales are per row or per column, not both";
    return flags(kPow2 | kRowVectors | kColVectors);
  };
  std::string e;
  switch (i.op) {
  case Op::Halt:
    return flags(0);
  case Op::Deq:
    if (!(e = range("fmem tile", i.dst, m.fmemTiles)).empty() ||
        !(e = range("ub slot", i.src, m.ubTiles)).empty())
      return e;
    return flags(0);
  case Op::Quant:
    if (!(e = range("ub slot", i.dst, m.ubTiles)).empty() ||
        !(e = range("fmem tile", i.src, m.fmemTiles)).empty() ||
        !(e = bits()).empty())
      return e;
    return quantFlags();
  case Op::Req:
    if (!(e = range("ub slot", i.dst, m.ubTiles)).empty() ||
        !(e = range("ub slot", i.src, m.ubTiles)).empty() ||
        !(e = bits()).empty())
      return e;
    return quantFlags();
  case Op::Load:
    if (!(e = range("data buffer row", i.dst, m.dataRows)).empty() ||
        !(e = range("ub slot", i.src, m.ubTiles)).empty())
      return e;
    return flags(kLoadB | kTranspose);
  case Op::Mac:
    if (!(e = range("acc tile", i.dst, m.accTiles)).empty() ||
        !(e = range("buffer a row", i.src, m.dataRows)).empty() ||
        !(e = range("buffer b row", i.src2, m.dataRows)).empty())
      return e;
    return flags(kAccumulate | kBF16Product);
  case Op::Post:
    if (!(e = range("ub slot", i.dst, m.ubTiles)).empty() ||
        !(e = range("acc tile", i.src, m.accTiles)).empty() ||
        !(e = bits()).empty())
      return e;
    if ((i.flags & kLayerScale) && !std::isfinite(i.imm))
      return "layer scale is not finite";
    return flags(kRelu | kPow2 | kLayerScale);
  case Op::Store:
    if (!(e = range("fmem tile", i.dst, m.fmemTiles)).empty() ||
        !(e = range("acc tile", i.src, m.accTiles)).empty())
      return e;
    return flags(0);
  case Op::WUpd:
    if (!(e = range("ub slot", i.dst, m.ubTiles)).empty() ||
        !(e = range("acc tile", i.src, m.accTiles)).empty())
      return e;
    if (!std::isfinite(i.imm))
      return "learning rate is not finite";
    return flags(kPow2);
  }
  return "unknown opcode " + std::to_string(static_cast<int>(i.op));
}

static bool checkMachine(const MachineConfig &m, std::string &error) {
  if (m.V < 1 || m.V > 256 || m.macUnits < 1 || m.ubTiles < 1 ||
      m.dataRows < 1 || m.accTiles < 1 || m.fmemTiles < 1) {
    error = "invalid machine (" + m.str() + ")";
    return false;
  }
  uint64_t tileBytes = uint64_t(m.V) * m.V * 4;
  uint64_t tiles =
      uint64_t(m.ubTiles) + m.fmemTiles + m.accTiles + 2 * uint64_t(m.dataRows);
  if (tiles * tileBytes > (uint64_t(1) << 31)) {
    error = "machine too large to simulate (" + m.str() + ")";
    return false;
  }
  return true;
}

std::string verifyMachine(const MachineConfig &m) {
  std::string error;
  return checkMachine(m, error) ? "" : error;
}

static bool checkBinding(const Binding &bd, const MachineConfig &m,
                         std::set<std::string> &names, size_t index,
                         std::string &error) {
  if (bd.isWidth()) {
    if (bd.name.empty() || bd.name.size() > 255 ||
        !names.insert(bd.name).second || bd.output ||
        bd.baseTile >= kWidthRegisters) {
      error = "invalid width input #" + std::to_string(index) + " '" + bd.name +
              "' (a unique name, an input, a register below " +
              std::to_string(kWidthRegisters) + ")";
      return false;
    }
    return true;
  }
  bool dimsOk = bd.shape.size() == 2 || bd.shape.size() == 4;
  for (uint32_t d : bd.shape)
    dimsOk = dimsOk && d > 0 && d <= (1u << 24);
  if (bd.name.empty() || bd.name.size() > 255 ||
      !names.insert(bd.name).second || !dimsOk) {
    error = "invalid binding #" + std::to_string(index) + " '" + bd.name +
            "' (a unique name and 2 or 4 positive dims)";
    return false;
  }
  uint64_t end = uint64_t(bd.baseTile) + bd.tiles(m.V);
  if (end > m.fmemTiles) {
    error = "binding '" + bd.name + "' overflows fmem (" + std::to_string(end) +
            " > " + std::to_string(m.fmemTiles) + " tiles)";
    return false;
  }
  return true;
}

static bool checkConstant(const ConstTile &c, const MachineConfig &m,
                          size_t index, std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "constant tile #" + std::to_string(index) + ": " + why;
    return false;
  };
  if (c.slot >= m.ubTiles)
    return fail("ub slot " + std::to_string(c.slot) + " is out of range");
  if (c.bits < 2 || c.bits > 16)
    return fail("bit width " + std::to_string(c.bits) + " not in [2, 16]");
  if (!std::isfinite(c.step) || c.step < 0)
    return fail("the step must be finite and non-negative");
  if (c.values.size() != size_t(m.V) * m.V)
    return fail("expected " + std::to_string(m.V * m.V) + " values");
  int32_t q = tq::ref::qmax(c.bits);
  for (int32_t v : c.values)
    if (v < -q || v > q)
      return fail("value " + std::to_string(v) + " outside the " +
                  std::to_string(c.bits) + "-bit range");
  return true;
}

bool validate(const Stream &s, std::string &error) {
  if (!checkMachine(s.machine, error))
    return false;
  std::set<std::string> names;
  std::set<uint32_t> registers;
  for (size_t b = 0; b < s.bindings.size(); ++b) {
    const Binding &bd = s.bindings[b];
    if (!checkBinding(bd, s.machine, names, b, error))
      return false;
    if (bd.isWidth() && !registers.insert(bd.baseTile).second) {
      error = "width inputs share register w" + std::to_string(bd.baseTile);
      return false;
    }
  }
  for (size_t c = 0; c < s.constants.size(); ++c)
    if (!checkConstant(s.constants[c], s.machine, c, error))
      return false;
  for (size_t k = 0; k < s.code.size(); ++k) {
    std::string e = verifyInstr(s.code[k], s.machine);
    if (!e.empty()) {
      error = "instruction " + std::to_string(k) + ": " + e;
      return false;
    }
  }
  return true;
}

bool decode(const uint8_t *data, size_t size, Stream &out, std::string &error) {
  Reader r{data, size};
  if (size < 6 || std::memcmp(data, kMagic, 6) != 0) {
    error = "not a PPU instruction stream (bad magic)";
    return false;
  }
  r.pos = 6;
  uint16_t version;
  uint32_t nBindings, nConst, nInstr;
  MachineConfig &m = out.machine;
  if (!r.get(version)) {
    error = "truncated stream header";
    return false;
  }
  if (version < 1 || version > Stream::kVersion) {
    error = "unsupported stream version " + std::to_string(version) +
            " (this simulator reads versions 1 to " +
            std::to_string(Stream::kVersion) + ")";
    return false;
  }
  if (!r.get(m.V) || !r.get(m.macUnits) || !r.get(m.ubTiles) ||
      !r.get(m.dataRows) || !r.get(m.accTiles) || !r.get(m.fmemTiles) ||
      !r.get(nBindings) || !r.get(nConst) || !r.get(nInstr)) {
    error = "truncated stream header";
    return false;
  }
  if (!checkMachine(m, error))
    return false;
  std::set<std::string> names;
  out.bindings.clear();
  for (uint32_t b = 0; b < nBindings; ++b) {
    Binding bd;
    uint8_t output, len;
    if (!r.get(output) || !r.get(len) || size - r.pos < len) {
      error = "truncated binding table";
      return false;
    }
    bd.output = output != 0;
    bd.name.assign(reinterpret_cast<const char *>(data + r.pos), len);
    r.pos += len;
    uint8_t rank;
    if (!r.get(rank) || rank > 8) {
      error = rank > 8 ? "invalid binding #" + std::to_string(b)
                       : "truncated binding table";
      return false;
    }
    bd.shape.resize(rank);
    for (uint32_t &d : bd.shape)
      if (!r.get(d)) {
        error = "truncated binding table";
        return false;
      }
    if (!r.get(bd.baseTile)) {
      error = "truncated binding table";
      return false;
    }
    if (output > 1) {
      error = "invalid binding #" + std::to_string(b) + " '" + bd.name + "'";
      return false;
    }
    if (!checkBinding(bd, m, names, b, error))
      return false;
    if (bd.isWidth() && version < 2) {
      error = "width input '" + bd.name + "' in a version 1 stream";
      return false;
    }
    out.bindings.push_back(bd);
  }
  out.constants.clear();
  uint64_t constBytes = 10 + 2 * uint64_t(m.V) * m.V;
  if (uint64_t(nConst) * constBytes > size - r.pos) {
    error = "truncated constant tiles";
    return false;
  }
  for (uint32_t k = 0; k < nConst; ++k) {
    ConstTile c;
    uint32_t stepBits;
    r.get(c.slot);
    r.get(c.bits);
    r.get(stepBits);
    c.step = bitsFloat(stepBits);
    c.values.resize(size_t(m.V) * m.V);
    for (int32_t &v : c.values) {
      uint16_t u;
      r.get(u);
      v = static_cast<int16_t>(u);
    }
    if (!checkConstant(c, m, k, error))
      return false;
    out.constants.push_back(std::move(c));
  }
  if (uint64_t(nInstr) * 16 != size - r.pos) {
    error = "stream size does not match its " + std::to_string(nInstr) +
            " instructions (truncated or trailing bytes)";
    return false;
  }
  out.code.clear();
  out.code.reserve(nInstr);
  for (uint32_t k = 0; k < nInstr; ++k) {
    Instr i;
    uint8_t op;
    uint32_t src2;
    r.get(op);
    r.get(i.flags);
    r.get(i.bits);
    r.get(i.dst);
    r.get(i.src);
    r.get(src2);
    i.op = static_cast<Op>(op);
    if (hasImmediate(i.op, i.flags))
      i.imm = bitsFloat(src2);
    else
      i.src2 = src2;
    std::string e = op > static_cast<uint8_t>(Op::Deq)
                        ? "unknown opcode " + std::to_string(op)
                        : verifyInstr(i, m);
    if (!e.empty()) {
      error = "instruction " + std::to_string(k) + ": " + e;
      return false;
    }
    out.code.push_back(i);
  }
  // Whole-stream checks (width registers read by inputs only once, ...).
  return validate(out, error);
}

//===----------------------------------------------------------------------===//
// Program builder
//===----------------------------------------------------------------------===//

uint8_t neededLayout(uint8_t stored, bool isA, bool transposed) {
  if (!stored)
    return 0;
  uint8_t inBuffer = isA ? kRowVectors : kColVectors;
  if (!transposed)
    return inBuffer;
  return inBuffer == kRowVectors ? kColVectors : kRowVectors;
}

bool buildGemm(const GemmSpec &g, const MachineConfig &m, Stream &s,
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

//===----------------------------------------------------------------------===//
// Simulator
//===----------------------------------------------------------------------===//

Stats &Stats::operator+=(const Stats &o) {
  ubReads += o.ubReads;
  ubWrites += o.ubWrites;
  fmemReads += o.fmemReads;
  fmemWrites += o.fmemWrites;
  bufferReads += o.bufferReads;
  bufferWrites += o.bufferWrites;
  accReads += o.accReads;
  accWrites += o.accWrites;
  macOps += o.macOps;
  transposes += o.transposes;
  requantizations += o.requantizations;
  cycles += o.cycles;
  instructions += o.instructions;
  return *this;
}

std::string Stats::json() const {
  std::ostringstream os;
  os << "{\"instructions\": " << instructions << ", \"cycles\": " << cycles
     << ", \"mac_ops\": " << macOps << ", \"ub_reads\": " << ubReads
     << ", \"ub_writes\": " << ubWrites << ", \"fmem_reads\": " << fmemReads
     << ", \"fmem_writes\": " << fmemWrites
     << ", \"buffer_reads\": " << bufferReads
     << ", \"buffer_writes\": " << bufferWrites
     << ", \"acc_reads\": " << accReads << ", \"acc_writes\": " << accWrites
     << ", \"transposes\": " << transposes
     << ", \"requantizations\": " << requantizations << "}";
  return os.str();
}

std::string Stats::text() const {
  std::ostringstream os;
  os << "instructions      " << instructions << "\n"
     << "cycles            " << cycles << "\n"
     << "MAC operations    " << macOps << "\n"
     << "unified buffer    " << ubReads << " row reads, " << ubWrites
     << " row writes\n"
     << "fmem              " << fmemReads << " row reads, " << fmemWrites
     << " row writes\n"
     << "data buffers      " << bufferReads << " row reads, " << bufferWrites
     << " row writes\n"
     << "accumulator       " << accReads << " row reads, " << accWrites
     << " row writes\n"
     << "transposes        " << transposes << "\n"
     << "requantizations   " << requantizations << "\n";
  return os.str();
}

uint64_t Simulator::cycles(const Instr &i, const MachineConfig &m) {
  uint64_t V = m.V;
  switch (i.op) {
  case Op::Halt:
    return 1;
  case Op::Quant:
  case Op::Post:
    return 2 * V; // one pass for the tile's max, one to quantize
  case Op::Load:
    return V; // V row reads; the datapath transposes while rows stream
  case Op::Mac:
    // V*V dot products of V lanes; each MAC unit does one per cycle.
    return (V * V + m.macUnits - 1) / m.macUnits;
  case Op::Store:
    return V;
  case Op::Deq:
    return 2 * V; // read and dequantize, write
  case Op::WUpd:
  case Op::Req:
    return 3 * V; // read and dequantize, find the scales, quantize and write
  }
  return 0;
}

Simulator::Simulator(const Stream &stream) : s(stream), V(stream.machine.V) {
  size_t n = size_t(V) * V;
  const MachineConfig &m = s.machine;
  fmem.assign(m.fmemTiles, std::vector<float>(n, 0.0f));
  acc.assign(m.accTiles, std::vector<float>(n, 0.0f));
  Tile empty;
  empty.q.assign(n, 0);
  empty.params.factor = 0.0f;
  ub.assign(m.ubTiles, empty);
  bufA.assign(m.dataRows, empty);
  bufB.assign(m.dataRows, empty);
  // Compile-time tiles: the step is a factor with point position 0.
  for (const ConstTile &c : s.constants) {
    Tile &t = ub[c.slot];
    t.q = c.values;
    t.layout = Layout::Square;
    t.params = tq::ref::TileParams();
    t.params.bits = c.bits;
    t.params.factor = c.step;
  }
}

static const Binding *findBinding(const Stream &s, const std::string &name) {
  for (const Binding &b : s.bindings)
    if (b.name == name)
      return &b;
  return nullptr;
}

bool Simulator::setInput(const std::string &name,
                         const std::vector<float> &data,
                         const std::vector<uint32_t> &shape,
                         std::string &error) {
  const Binding *b = findBinding(s, name);
  if (!b || b->output) {
    error = "no input named '" + name + "'";
    return false;
  }
  if (b->isWidth()) {
    error = "input '" + name +
            "' is a bit width (a width register), not a "
            "tensor";
    return false;
  }
  auto str = [](const std::vector<uint32_t> &v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i)
      out += (i ? "x" : "") + std::to_string(v[i]);
    return out;
  };
  if (shape != b->shape || data.size() != b->numElements()) {
    error =
        "input '" + name + "' expects " + str(b->shape) + ", got " + str(shape);
    return false;
  }
  for (uint64_t i = 0; i < data.size(); ++i) {
    uint64_t tile;
    uint32_t pos;
    b->locate(i, V, tile, pos);
    fmem[b->baseTile + tile][pos] = data[i];
  }
  return true;
}

bool Simulator::setWidth(const std::string &name, int64_t bits,
                         std::string &error) {
  const Binding *b = findBinding(s, name);
  if (!b || !b->isWidth()) {
    error = "no width input named '" + name + "'";
    return false;
  }
  if (bits < 2 || bits > 16) {
    error = "width input '" + name + "': bit width " + std::to_string(bits) +
            " not in [2, 16]";
    return false;
  }
  widths[b->baseTile] = uint16_t(bits);
  return true;
}

std::vector<float> Simulator::output(const std::string &name,
                                     std::vector<uint32_t> &shape) const {
  const Binding *b = findBinding(s, name);
  if (!b)
    return {};
  shape = b->shape;
  std::vector<float> out(b->numElements());
  for (uint64_t i = 0; i < out.size(); ++i) {
    uint64_t tile;
    uint32_t pos;
    b->locate(i, V, tile, pos);
    out[i] = fmem[b->baseTile + tile][pos];
  }
  return out;
}

float Simulator::Tile::step(uint32_t r, uint32_t c) const {
  switch (layout) {
  case Layout::Square:
    return params.step();
  case Layout::Rows:
    return vp[r].step();
  case Layout::Cols:
    return vp[c].step();
  }
  return 0.0f;
}

/// Quantizes V*V floats into `t` with fresh parameters (T3), one set for
/// the tile or one per row or column as the flags say.
void Simulator::quantize(const std::vector<float> &x, int bits, uint8_t flags,
                         Tile &t) {
  using namespace tq::ref;
  QuantForm form = (flags & kPow2) ? QuantForm::Pow2 : QuantForm::Scaled;
  t.layout = (flags & kRowVectors)   ? Layout::Rows
             : (flags & kColVectors) ? Layout::Cols
                                     : Layout::Square;
  if (t.layout == Layout::Square) {
    t.params = computeParams(computeRange(x.data(), x.size()), bits, form);
    for (size_t k = 0; k < x.size(); ++k)
      t.q[k] = quantizeValue(x[k], t.params, Rounding::NearestEven);
    return;
  }
  bool rows = t.layout == Layout::Rows;
  t.vp.assign(V, TileParams());
  t.params = TileParams();
  t.params.bits = bits;
  for (uint32_t v = 0; v < V; ++v) {
    // Vector v: row v (stride 1) or column v (stride V).
    const float *start = rows ? &x[v * V] : &x[v];
    t.vp[v] = computeParams(computeRange(start, V, rows ? 1 : V), bits, form);
    for (uint32_t k = 0; k < V; ++k) {
      size_t idx = rows ? v * V + k : k * V + v;
      t.q[idx] = quantizeValue(x[idx], t.vp[v], Rounding::NearestEven);
    }
  }
}

std::vector<float> Simulator::dequantize(const Tile &t) const {
  std::vector<float> x(size_t(V) * V);
  for (uint32_t r = 0; r < V; ++r)
    for (uint32_t c = 0; c < V; ++c) {
      const tq::ref::TileParams &p = t.layout == Layout::Square ? t.params
                                     : t.layout == Layout::Rows ? t.vp[r]
                                                                : t.vp[c];
      x[r * V + c] = tq::ref::dequantizeValue(t.q[r * V + c], p);
    }
  return x;
}

bool Simulator::run(std::string &error) {
  using namespace tq::ref;
  size_t n = size_t(V) * V;
  std::vector<float> tmp(n);
  for (size_t pc = 0; pc < s.code.size(); ++pc) {
    Instr i = s.code[pc];
    if ((i.op == Op::Quant || i.op == Op::Req || i.op == Op::Post) &&
        isWidthRegister(i.bits)) {
      uint16_t w = widths[i.bits & 0xff];
      if (!w) {
        error = "instruction " + std::to_string(pc) + ": width register w" +
                std::to_string(i.bits & 0xff) + " was never set";
        return false;
      }
      i.bits = w;
    }
    ++st.instructions;
    st.cycles += cycles(i, s.machine);
    switch (i.op) {
    case Op::Halt:
      return true;
    case Op::Quant:
      quantize(fmem[i.src], i.bits, i.flags, ub[i.dst]);
      st.fmemReads += V;
      st.ubWrites += V;
      break;
    case Op::Req: {
      Tile t = ub[i.src];
      quantize(dequantize(t), i.bits, i.flags, ub[i.dst]);
      st.ubReads += V;
      st.ubWrites += V;
      ++st.requantizations;
      break;
    }
    case Op::Load: {
      const Tile &src = ub[i.src];
      Tile &dst = (i.flags & kLoadB) ? bufB[i.dst] : bufA[i.dst];
      // The scales come with the rows: one read returns both.
      dst.params = src.params;
      dst.vp = src.vp;
      dst.layout = src.layout;
      if (i.flags & kTranspose) {
        for (uint32_t r = 0; r < V; ++r)
          for (uint32_t c = 0; c < V; ++c)
            dst.q[c * V + r] = src.q[r * V + c];
        // Per-vector scales travel with their vectors: rows become columns.
        if (src.layout == Layout::Rows)
          dst.layout = Layout::Cols;
        else if (src.layout == Layout::Cols)
          dst.layout = Layout::Rows;
        ++st.transposes;
      } else {
        dst.q = src.q;
      }
      st.ubReads += V;
      st.bufferWrites += V;
      break;
    }
    case Op::Mac: {
      const Tile &a = bufA[i.src], &b = bufB[i.src2];
      std::vector<float> &out = acc[i.dst];
      if (a.layout == Layout::Cols || b.layout == Layout::Rows) {
        error = "instruction " + std::to_string(pc) + ": operand " +
                (a.layout == Layout::Cols ? "a" : "b") +
                " has per-vector scales along the reduction dim; requantize "
                "it (REQ) first";
        return false;
      }
      for (uint32_t r = 0; r < V; ++r)
        for (uint32_t c = 0; c < V; ++c) {
          float scale = a.step(r, 0) * b.step(0, c);
          if (i.flags & kBF16Product)
            scale = roundToBF16(scale);
          int64_t psum = 0;
          for (uint32_t k = 0; k < V; ++k)
            psum += int64_t(a.q[r * V + k]) * b.q[k * V + c];
          if (psum > std::numeric_limits<int32_t>::max() ||
              psum < std::numeric_limits<int32_t>::min()) {
            error = "instruction " + std::to_string(pc) +
                    ": int32 partial sum overflow";
            return false;
          }
          float term = static_cast<float>(static_cast<int32_t>(psum)) * scale;
          float base = (i.flags & kAccumulate) ? out[r * V + c] : 0.0f;
          out[r * V + c] = base + term;
        }
      st.bufferReads += 2 * V;
      if (i.flags & kAccumulate)
        st.accReads += V;
      st.accWrites += V;
      st.macOps += uint64_t(V) * V * V;
      break;
    }
    case Op::Post: {
      const std::vector<float> &src = acc[i.src];
      for (size_t k = 0; k < n; ++k) {
        // As tq::ref::postprocess: y = L / s_layer (0 when s_layer is 0),
        // then the nonlinearity.
        float v = src[k];
        if (i.flags & kLayerScale)
          v = i.imm == 0.0f ? 0.0f : v / i.imm;
        tmp[k] = (i.flags & kRelu) && v < 0.0f ? 0.0f : v;
      }
      quantize(tmp, i.bits, i.flags & kPow2, ub[i.dst]);
      st.accReads += V;
      st.ubWrites += V;
      break;
    }
    case Op::Store:
      fmem[i.dst] = acc[i.src];
      st.accReads += V;
      st.fmemWrites += V;
      break;
    case Op::Deq:
      fmem[i.dst] = dequantize(ub[i.src]);
      st.ubReads += V;
      st.fmemWrites += V;
      break;
    case Op::WUpd: {
      Tile &w = ub[i.dst];
      const std::vector<float> &dw = acc[i.src];
      std::vector<float> wf = dequantize(w);
      for (size_t k = 0; k < n; ++k)
        tmp[k] = wf[k] - i.imm * dw[k];
      uint8_t layout = w.layout == Layout::Rows   ? kRowVectors
                       : w.layout == Layout::Cols ? kColVectors
                                                  : 0;
      quantize(tmp, w.params.bits, (i.flags & kPow2) | layout, w);
      st.ubReads += V;
      st.accReads += V;
      st.ubWrites += V;
      break;
    }
    }
  }
  return true;
}

} // namespace tq::ppu
