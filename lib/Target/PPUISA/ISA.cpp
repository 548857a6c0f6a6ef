//===- ISA.cpp - PPU machine, bindings and the binary stream --------------===//
#include "tq/Target/PPUISA/ISA.h"

#include <algorithm>
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
    w.put<uint8_t>(c.vectors);
    if (c.vectors)
      for (float step : c.steps)
        w.put<uint32_t>(floatBits(step));
    else
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
  if (c.vectors != 0 && c.vectors != kRowVectors && c.vectors != kColVectors)
    return fail("layout " + std::to_string(c.vectors) +
                " is not one step (0), a step per row (64) or per column "
                "(128)");
  auto badStep = [](float step) { return !std::isfinite(step) || step < 0; };
  if (c.vectors) {
    if (c.steps.size() != m.V)
      return fail("expected " + std::to_string(m.V) + " steps, one per " +
                  (c.vectors == kRowVectors ? "row" : "column"));
    if (std::any_of(c.steps.begin(), c.steps.end(), badStep))
      return fail("the steps must be finite and non-negative");
  } else {
    if (!c.steps.empty())
      return fail("a tile with one step has no per-vector steps");
    if (badStep(c.step))
      return fail("the step must be finite and non-negative");
  }
  if (c.values.size() != size_t(m.V) * m.V)
    return fail("expected " + std::to_string(m.V * m.V) + " values");
  // The symmetric range of an N-bit tile: +-(2^(N-1) - 1).
  int32_t q = (int32_t(1) << (c.bits - 1)) - 1;
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
  // slot, bits, (version 3: the layout byte,) one step, V*V values.
  uint64_t valueBytes = 2 * uint64_t(m.V) * m.V;
  uint64_t constBytes = 10 + (version >= 3 ? 1 : 0) + valueBytes;
  if (uint64_t(nConst) * constBytes > size - r.pos) {
    error = "truncated constant tiles";
    return false;
  }
  for (uint32_t k = 0; k < nConst; ++k) {
    ConstTile c;
    uint32_t stepBits;
    if (constBytes > size - r.pos) { // the tiles before had V steps each
      error = "truncated constant tiles";
      return false;
    }
    r.get(c.slot);
    r.get(c.bits);
    if (version >= 3)
      r.get(c.vectors);
    if (c.vectors) {
      // Its V steps, where the size checks counted one.
      if (4 * uint64_t(m.V) + valueBytes > size - r.pos) {
        error = "truncated constant tiles";
        return false;
      }
      c.steps.resize(m.V);
      for (float &step : c.steps) {
        r.get(stepBits);
        step = bitsFloat(stepBits);
      }
    } else {
      r.get(stepBits);
      c.step = bitsFloat(stepBits);
    }
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

} // namespace tq::ppu
