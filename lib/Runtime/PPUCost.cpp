//===- PPUCost.cpp - the PPU simulator's cost model -----------------------===//
#include "tq/Runtime/PPUCost.h"

#include <algorithm>
#include <sstream>

namespace tq::ppu {

const char *unitName(Unit u) {
  switch (u) {
  case Unit::Load:
    return "load";
  case Unit::Mac:
    return "mac";
  case Unit::Post:
    return "post";
  case Unit::Datapath:
    return "datapath";
  }
  return "?";
}

CostModel CostModel::resolved(const MachineConfig &m) const {
  CostModel c = *this;
  if (!c.banks)
    c.banks = m.V;
  if (!c.wordBits)
    c.wordBits = 8u * m.V;
  return c;
}

static const char *layoutName(BankLayout l) {
  switch (l) {
  case BankLayout::Rows:
    return "rows";
  case BankLayout::Cols:
    return "cols";
  case BankLayout::Slot:
    return "slot";
  }
  return "?";
}

std::string CostModel::str() const {
  std::ostringstream os;
  os << "banks=" << (banks ? std::to_string(banks) : "V")
     << " word-bits=" << (wordBits ? std::to_string(wordBits) : "8V")
     << " layout=" << layoutName(layout) << " overlap=" << (overlap ? 1 : 0);
  return os.str();
}

bool parseCostModel(const std::string &spec, CostModel &out,
                    std::string &error) {
  std::string text = spec;
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream is(text);
  std::string item;
  auto number = [&](const std::string &key, const std::string &value,
                    uint64_t max, uint64_t &n) {
    if (value.empty() || value.size() > 9 ||
        value.find_first_not_of("0123456789") != std::string::npos ||
        (n = std::stoull(value)) == 0 || n > max) {
      error = "cost model: " + key + "=" + value +
              " is not a whole number in [1, " + std::to_string(max) + "]";
      return false;
    }
    return true;
  };
  while (is >> item) {
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq),
                value = eq == std::string::npos ? "" : item.substr(eq + 1);
    uint64_t n = 0;
    if (key == "banks") {
      if (!number(key, value, 65535, n))
        return false;
      out.banks = uint16_t(n);
    } else if (key == "word-bits") {
      if (!number(key, value, 1u << 20, n))
        return false;
      out.wordBits = uint32_t(n);
    } else if (key == "layout") {
      if (value == "rows")
        out.layout = BankLayout::Rows;
      else if (value == "cols")
        out.layout = BankLayout::Cols;
      else if (value == "slot")
        out.layout = BankLayout::Slot;
      else {
        error =
            "cost model: layout=" + value + " is not one of rows, cols, slot";
        return false;
      }
    } else if (key == "overlap") {
      if (value != "0" && value != "1") {
        error = "cost model: overlap=" + value + " is not 0 or 1";
        return false;
      }
      out.overlap = value == "1";
    } else {
      error = "cost model: unknown parameter '" + key +
              "' (banks, word-bits, layout, overlap)";
      return false;
    }
  }
  return true;
}

uint64_t tileWords(const MachineConfig &m, const CostModel &model,
                   unsigned bits) {
  CostModel c = model.resolved(m);
  uint64_t total = uint64_t(m.V) * m.V * (bits ? bits : 8);
  return (total + c.wordBits - 1) / c.wordBits;
}

InstrCost loadCost(const MachineConfig &m, const CostModel &model,
                   unsigned bits, bool transposed) {
  CostModel c = model.resolved(m);
  uint64_t V = m.V, W = c.wordBits, b = bits ? bits : 8;
  // The tile goes out row by row (column by column when transposed); the
  // data buffer takes W / b elements a cycle.
  uint64_t perBeat = std::max<uint64_t>(1, W / b), total = V * V;
  std::vector<int64_t> latch(c.banks, -1);
  std::vector<std::vector<int64_t>> need(c.banks);
  std::vector<uint32_t> touched; // the banks a beat needs
  InstrCost cost;
  cost.unit = Unit::Load;
  for (uint64_t e0 = 0; e0 < total; e0 += perBeat) {
    for (uint32_t bank : touched)
      need[bank].clear();
    touched.clear();
    for (uint64_t d = e0; d < std::min(total, e0 + perBeat); ++d) {
      uint64_t v = d / V, k = d % V; // element k of delivered vector v
      uint64_t r = transposed ? k : v, col = transposed ? v : k;
      uint64_t e = c.layout == BankLayout::Cols ? col * V + r : r * V + col;
      for (uint64_t w = e * b / W; w <= (e * b + b - 1) / W; ++w) {
        uint32_t bank = c.layout == BankLayout::Slot ? 0 : w % c.banks;
        if (need[bank].empty())
          touched.push_back(bank);
        need[bank].push_back(int64_t(w));
      }
    }
    uint64_t beat = 1;
    for (uint32_t bank : touched) {
      std::vector<int64_t> &words = need[bank];
      std::sort(words.begin(), words.end());
      words.erase(std::unique(words.begin(), words.end()), words.end());
      // The latched word comes free; the others are read in order.
      uint64_t reads = 0;
      int64_t latched = latch[bank];
      for (int64_t w : words)
        if (w != latched) {
          ++reads;
          latch[bank] = w;
        }
      cost.bankReads += reads;
      beat = std::max(beat, reads);
    }
    cost.cycles += beat;
  }
  return cost;
}

InstrCost instrCost(const Instr &i, const MachineConfig &m,
                    const CostModel &model, unsigned readBits) {
  CostModel c = model.resolved(m);
  uint64_t V = m.V;
  switch (i.op) {
  case Op::Halt:
    return {1, 0, Unit::Datapath};
  case Op::Quant:
    // One pass for the tile's range, then its words written.
    return {V + tileWords(m, c, i.bits), 0, Unit::Datapath};
  case Op::Post:
    return {V + tileWords(m, c, i.bits), 0, Unit::Post};
  case Op::Load:
    return loadCost(m, c, readBits, i.flags & kTranspose);
  case Op::Mac:
    // V*V dot products of V lanes; each MAC unit does one a cycle.
    return {(V * V + m.macUnits - 1) / m.macUnits, 0, Unit::Mac};
  case Op::Store:
    return {V, 0, Unit::Post};
  case Op::Deq:
    return {tileWords(m, c, readBits) + V, 0, Unit::Datapath};
  case Op::Req:
    // Read and dequantize, find the scales, quantize and write.
    return {tileWords(m, c, readBits) + V + tileWords(m, c, i.bits), 0,
            Unit::Datapath};
  case Op::WUpd:
    return {2 * tileWords(m, c, readBits) + V, 0, Unit::Datapath};
  }
  return {};
}

Timeline::Timeline(const MachineConfig &m, bool overlap)
    : overlap(overlap), fmem(m.fmemTiles), ub(m.ubTiles), bufA(m.dataRows),
      bufB(m.dataRows), acc(m.accTiles) {}

Timeline::Resource &Timeline::at(std::vector<Resource> &mem, uint32_t i) {
  // A validated stream stays inside the machine; anything else shares one
  // spare entry (no reallocation: the pointers taken stay valid).
  return i < mem.size() ? mem[i] : spare;
}

void Timeline::schedule(const Instr &i, const InstrCost &cost) {
  Resource *reads[3] = {}, *writes[1] = {};
  switch (i.op) {
  case Op::Halt:
    issue = std::max(issue, end);
    end = std::max(end, issue + cost.cycles);
    return;
  case Op::Quant:
    reads[0] = &at(fmem, i.src);
    writes[0] = &at(ub, i.dst);
    break;
  case Op::Req:
    reads[0] = &at(ub, i.src);
    writes[0] = &at(ub, i.dst);
    break;
  case Op::Load:
    reads[0] = &at(ub, i.src);
    writes[0] = &at((i.flags & kLoadB) ? bufB : bufA, i.dst);
    break;
  case Op::Mac:
    reads[0] = &at(bufA, i.src);
    reads[1] = &at(bufB, i.src2);
    if (i.flags & kAccumulate)
      reads[2] = &at(acc, i.dst);
    writes[0] = &at(acc, i.dst);
    break;
  case Op::Post:
    reads[0] = &at(acc, i.src);
    writes[0] = &at(ub, i.dst);
    break;
  case Op::Store:
    reads[0] = &at(acc, i.src);
    writes[0] = &at(fmem, i.dst);
    break;
  case Op::WUpd:
    reads[0] = &at(acc, i.src);
    reads[1] = &at(ub, i.dst);
    writes[0] = &at(ub, i.dst);
    break;
  case Op::Deq:
    reads[0] = &at(ub, i.src);
    writes[0] = &at(fmem, i.dst);
    break;
  }
  unsigned u = static_cast<unsigned>(cost.unit);
  uint64_t start = std::max(issue, unitFree[u]);
  if (!overlap)
    start = std::max(start, end);
  for (Resource *r : reads)
    if (r)
      start = std::max(start, r->written);
  for (Resource *w : writes)
    start = std::max({start, w->written, w->read});
  uint64_t finish = start + cost.cycles;
  for (Resource *r : reads)
    if (r)
      r->read = std::max(r->read, finish);
  for (Resource *w : writes)
    w->written = finish;
  unitFree[u] = finish;
  unitBusy[u] += cost.cycles;
  issue = start + 1;
  end = std::max(end, finish);
}

} // namespace tq::ppu
