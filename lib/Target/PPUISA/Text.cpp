//===- PPUText.cpp - readable listing of PPU instruction streams ----------===//
//
// The text form documented in ISA.h: print() writes it, parse() reads it
// back (and validates the result like decode()).
//
//===----------------------------------------------------------------------===//
#include "tq/Target/PPUISA/ISA.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace tq::ppu {

/// The flags a listing spells as words; kLoadB / kLayerScale (one bit) are
/// spelled by the operands instead (`b[...]`, `scale=`).
static void printFlags(std::ostream &os, uint8_t flags) {
  if (flags & kTranspose)
    os << " transpose";
  if (flags & kRelu)
    os << " relu";
  if (flags & kPow2)
    os << " pow2";
  if (flags & kRowVectors)
    os << " rows";
  if (flags & kColVectors)
    os << " cols";
  if (flags & kBF16Product)
    os << " bf16";
}

/// A width, or the register that holds it (`w3`).
static std::string bitsText(uint16_t bits) {
  return isWidthRegister(bits) ? "w" + std::to_string(bits & 0xff)
                               : std::to_string(bits);
}

std::string print(const Stream &s) {
  std::ostringstream os;
  const MachineConfig &m = s.machine;
  os << "ppu v" << Stream::kVersion << " V=" << m.V << " mac=" << m.macUnits
     << " ub=" << m.ubTiles << " rows=" << m.dataRows << " acc=" << m.accTiles
     << " fmem=" << m.fmemTiles << "\n";
  for (const Binding &b : s.bindings) {
    if (b.isWidth()) {
      os << "width " << b.name << " @w" << b.baseTile << "\n";
      continue;
    }
    os << (b.output ? "output " : "input ") << b.name << " ";
    for (size_t d = 0; d < b.shape.size(); ++d)
      os << (d ? "x" : "") << b.shape[d];
    os << " @" << b.baseTile << "\n";
  }
  auto printStep = [&](float step) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", step);
    os << text;
  };
  for (const ConstTile &c : s.constants) {
    os << "const ub[" << c.slot << "] bits=" << c.bits;
    if (c.vectors) {
      os << (c.vectors == kRowVectors ? " rows=" : " cols=");
      for (size_t k = 0; k < c.steps.size(); ++k) {
        os << (k ? "," : "");
        printStep(c.steps[k]);
      }
    } else {
      os << " step=";
      printStep(c.step);
    }
    os << " :";
    for (int32_t v : c.values)
      os << " " << v;
    os << "\n";
  }
  for (const Instr &i : s.code) {
    switch (i.op) {
    case Op::Halt:
      os << "halt";
      break;
    case Op::Quant:
      os << "quant ub[" << i.dst << "] <- fmem[" << i.src
         << "] bits=" << bitsText(i.bits);
      break;
    case Op::Load:
      os << "load " << ((i.flags & kLoadB) ? "b" : "a") << "[" << i.dst
         << "] <- ub[" << i.src << "]";
      break;
    case Op::Mac:
      os << "mac acc[" << i.dst << "] "
         << ((i.flags & kAccumulate) ? "+=" : "=") << " a[" << i.src << "] * b["
         << i.src2 << "]";
      break;
    case Op::Post:
      os << "post ub[" << i.dst << "] <- acc[" << i.src
         << "] bits=" << bitsText(i.bits);
      if (i.flags & kLayerScale) {
        char scale[32];
        std::snprintf(scale, sizeof(scale), "%.9g", i.imm);
        os << " scale=" << scale;
      }
      break;
    case Op::Store:
      os << "store fmem[" << i.dst << "] <- acc[" << i.src << "]";
      break;
    case Op::WUpd: {
      char lr[32];
      std::snprintf(lr, sizeof(lr), "%.9g", i.imm);
      os << "wupd ub[" << i.dst << "] -= " << lr << " * acc[" << i.src << "]";
      break;
    }
    case Op::Req:
      os << "req ub[" << i.dst << "] <- ub[" << i.src
         << "] bits=" << bitsText(i.bits);
      break;
    case Op::Deq:
      os << "deq fmem[" << i.dst << "] <- ub[" << i.src << "]";
      break;
    }
    printFlags(os, i.flags);
    os << "\n";
  }
  return os.str();
}

namespace {
/// A cursor over one line of the listing.
struct Line {
  std::string text;
  size_t pos = 0;

  void space() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
  }
  bool done() {
    space();
    return pos >= text.size();
  }
  bool lit(const std::string &s) {
    space();
    if (text.compare(pos, s.size(), s) != 0)
      return false;
    pos += s.size();
    return true;
  }
  bool word(std::string &w) {
    space();
    size_t start = pos;
    while (pos < text.size() && text[pos] != ' ' && text[pos] != '\t' &&
           text[pos] != '[' && text[pos] != '=')
      ++pos;
    w = text.substr(start, pos - start);
    return !w.empty();
  }
  bool number(uint64_t &v, uint64_t max) {
    space();
    size_t start = pos;
    v = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      v = v * 10 + (text[pos++] - '0');
      if (v > max)
        return false;
    }
    return pos > start;
  }
  template <typename T> bool num(T &out) {
    uint64_t v;
    if (!number(v, static_cast<T>(~T(0))))
      return false;
    out = static_cast<T>(v);
    return true;
  }
  /// name[N]
  bool slot(const std::string &name, uint32_t &v) {
    return lit(name) && lit("[") && num(v) && lit("]");
  }
  bool key(const std::string &k, uint16_t &v) {
    return lit(k) && lit("=") && num(v);
  }
  /// bits=N or bits=wR (a width register).
  bool bits(uint16_t &v) {
    if (!lit("bits") || !lit("="))
      return false;
    if (!lit("w"))
      return num(v);
    uint16_t r;
    if (!num(r) || r > 0xff)
      return false;
    v = kBitsRegister | r;
    return true;
  }
  template <typename T> bool key32(const std::string &k, T &v) {
    return lit(k) && lit("=") && num(v);
  }
};
} // namespace

bool parse(const std::string &text, Stream &out, std::string &error) {
  std::istringstream in(text);
  std::string raw;
  size_t lineNo = 0;
  bool header = false;
  uint16_t version = 0;
  out = Stream();
  auto fail = [&](const std::string &msg) {
    error = "line " + std::to_string(lineNo) + ": " + msg;
    return false;
  };
  while (std::getline(in, raw)) {
    ++lineNo;
    Line l{raw.substr(0, raw.find('#'))};
    if (l.done())
      continue;
    if (!header) {
      MachineConfig &m = out.machine;
      if (!l.lit("ppu") || !l.lit("v") || !l.num(version))
        return fail("expected the header 'ppu v" +
                    std::to_string(Stream::kVersion) +
                    " V=... mac=... ub=... rows=... acc=... fmem=...'");
      if (version < 1 || version > Stream::kVersion)
        return fail("unsupported listing version " + std::to_string(version));
      if (!l.key("V", m.V) || !l.key("mac", m.macUnits) ||
          !l.key32("ub", m.ubTiles) || !l.key("rows", m.dataRows) ||
          !l.key("acc", m.accTiles) || !l.key32("fmem", m.fmemTiles) ||
          !l.done())
        return fail("malformed machine in the header");
      header = true;
      continue;
    }
    std::string op;
    l.word(op);
    Instr i;
    bool ok = true;
    if (op == "input" || op == "output") {
      Binding b;
      b.output = op == "output";
      uint32_t d;
      ok = l.word(b.name) && l.num(d);
      if (ok)
        b.shape.push_back(d);
      while (ok && l.lit("x")) {
        ok = l.num(d);
        b.shape.push_back(d);
      }
      ok = ok && l.lit("@") && l.num(b.baseTile) && l.done();
      if (!ok)
        return fail("expected '" + op + " NAME DxDx... @TILE'");
      out.bindings.push_back(b);
      continue;
    }
    if (op == "width") {
      Binding b;
      if (!l.word(b.name) || !l.lit("@") || !l.lit("w") || !l.num(b.baseTile) ||
          !l.done())
        return fail("expected 'width NAME @wR'");
      if (version < 2)
        return fail("width inputs need a version 2 listing");
      out.bindings.push_back(b);
      continue;
    }
    if (op == "const") {
      ConstTile c;
      std::string steps;
      ok = l.slot("ub", c.slot) && l.key("bits", c.bits);
      if (ok && l.lit("rows"))
        c.vectors = kRowVectors;
      else if (ok && l.lit("cols"))
        c.vectors = kColVectors;
      else
        ok = ok && l.lit("step");
      if (c.vectors && version < 3)
        return fail("steps per row or column need a version 3 listing");
      ok = ok && l.lit("=") && l.word(steps) && l.lit(":");
      // One step, or (rows=, cols=) V of them separated by commas.
      for (size_t at = 0; ok && at <= steps.size();) {
        size_t comma = std::min(steps.find(',', at), steps.size());
        std::string one = steps.substr(at, comma - at);
        char *end = nullptr;
        float step = std::strtof(one.c_str(), &end);
        ok = !one.empty() && end && *end == '\0' && (c.vectors || at == 0);
        if (c.vectors)
          c.steps.push_back(step);
        else
          c.step = step;
        at = comma + 1;
      }
      while (ok && !l.done()) {
        l.space();
        bool neg = l.lit("-");
        uint64_t v;
        ok = l.number(v, 65535);
        c.values.push_back(neg ? -int32_t(v) : int32_t(v));
      }
      if (!ok)
        return fail("expected 'const ub[N] bits=B step=S : v v ...' (or "
                    "rows=S,S,... / cols=S,S,... for a step per row or "
                    "column)");
      out.constants.push_back(std::move(c));
      continue;
    }
    if (op == "halt") {
      i.op = Op::Halt;
    } else if (op == "quant") {
      i.op = Op::Quant;
      ok = l.slot("ub", i.dst) && l.lit("<-") && l.slot("fmem", i.src) &&
           l.bits(i.bits);
    } else if (op == "load") {
      i.op = Op::Load;
      std::string buf;
      ok = l.word(buf) && (buf == "a" || buf == "b") && l.lit("[") &&
           l.num(i.dst) && l.lit("]") && l.lit("<-") && l.slot("ub", i.src);
      if (buf == "b")
        i.flags |= kLoadB;
    } else if (op == "mac") {
      i.op = Op::Mac;
      ok = l.slot("acc", i.dst);
      if (ok && l.lit("+="))
        i.flags |= kAccumulate;
      else
        ok = ok && l.lit("=");
      ok = ok && l.slot("a", i.src) && l.lit("*") && l.slot("b", i.src2);
    } else if (op == "post") {
      i.op = Op::Post;
      ok = l.slot("ub", i.dst) && l.lit("<-") && l.slot("acc", i.src) &&
           l.bits(i.bits);
      if (ok && l.lit("scale")) {
        std::string scale;
        ok = l.lit("=") && l.word(scale);
        char *end = nullptr;
        i.imm = ok ? std::strtof(scale.c_str(), &end) : 0.0f;
        ok = ok && end && *end == '\0';
        i.flags |= kLayerScale;
      }
    } else if (op == "store") {
      i.op = Op::Store;
      ok = l.slot("fmem", i.dst) && l.lit("<-") && l.slot("acc", i.src);
    } else if (op == "wupd") {
      i.op = Op::WUpd;
      std::string lr;
      ok = l.slot("ub", i.dst) && l.lit("-=") && l.word(lr);
      if (ok) {
        char *end = nullptr;
        i.imm = std::strtof(lr.c_str(), &end);
        ok = end && *end == '\0';
      }
      ok = ok && l.lit("*") && l.slot("acc", i.src);
    } else if (op == "deq") {
      i.op = Op::Deq;
      ok = l.slot("fmem", i.dst) && l.lit("<-") && l.slot("ub", i.src);
    } else if (op == "req") {
      i.op = Op::Req;
      ok = l.slot("ub", i.dst) && l.lit("<-") && l.slot("ub", i.src) &&
           l.bits(i.bits);
    } else {
      return fail("unknown instruction '" + op + "'");
    }
    if (!ok)
      return fail("malformed '" + op + "' instruction");
    std::string flag;
    while (!l.done()) {
      l.word(flag);
      uint8_t f = flag == "transpose" ? kTranspose
                  : flag == "relu"    ? kRelu
                  : flag == "pow2"    ? kPow2
                  : flag == "rows"    ? kRowVectors
                  : flag == "cols"    ? kColVectors
                  : flag == "bf16"    ? kBF16Product
                                      : 0;
      if (!f)
        return fail("unknown flag '" + flag + "'");
      i.flags |= f;
    }
    out.code.push_back(i);
  }
  if (!header) {
    error = "empty listing: expected the 'ppu v" +
            std::to_string(Stream::kVersion) + " ...' header";
    return false;
  }
  return validate(out, error);
}

} // namespace tq::ppu
