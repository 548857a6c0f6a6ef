//===- PPUSim.cpp - PPU simulator -----------------------------------------===//
#include "tq/Runtime/PPUSim.h"

#include <cstdio>
#include <limits>
#include <sstream>

namespace tq::ppu {

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
  ubBytesRead += o.ubBytesRead;
  ubBytesWritten += o.ubBytesWritten;
  bankReads += o.bankReads;
  cycles += o.cycles;
  serialCycles += o.serialCycles;
  for (unsigned u = 0; u < kUnits; ++u)
    busy[u] += o.busy[u];
  instructions += o.instructions;
  return *this;
}

double Stats::utilisation(Unit u) const {
  return cycles ? double(busy[static_cast<unsigned>(u)]) / double(cycles) : 0;
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
     << ", \"requantizations\": " << requantizations
     << ", \"ub_bytes_read\": " << ubBytesRead
     << ", \"ub_bytes_written\": " << ubBytesWritten
     << ", \"bank_reads\": " << bankReads
     << ", \"serial_cycles\": " << serialCycles << ", \"utilisation\": {";
  for (unsigned u = 0; u < kUnits; ++u)
    os << (u ? ", " : "") << "\"" << unitName(Unit(u))
       << "\": " << utilisation(Unit(u));
  os << "}}";
  return os.str();
}

std::string Stats::text() const {
  std::ostringstream os;
  os << "instructions      " << instructions << "\n"
     << "cycles            " << cycles << " (" << serialCycles
     << " if the units did not overlap)\n"
     << "MAC operations    " << macOps << "\n"
     << "unified buffer    " << ubReads << " row reads, " << ubWrites
     << " row writes (" << ubBytesRead << " / " << ubBytesWritten << " bytes), "
     << bankReads << " bank reads for loads\n"
     << "fmem              " << fmemReads << " row reads, " << fmemWrites
     << " row writes\n"
     << "data buffers      " << bufferReads << " row reads, " << bufferWrites
     << " row writes\n"
     << "accumulator       " << accReads << " row reads, " << accWrites
     << " row writes\n"
     << "transposes        " << transposes << "\n"
     << "requantizations   " << requantizations << "\n"
     << "utilisation      ";
  for (unsigned u = 0; u < kUnits; ++u) {
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%", 100 * utilisation(Unit(u)));
    os << " " << unitName(Unit(u)) << " " << share;
  }
  os << "\n";
  return os.str();
}

InstrCost Simulator::costOf(const Instr &i) {
  unsigned bits = readBits(i);
  if (i.op != Op::Load)
    return instrCost(i, s.machine, cost, bits);
  if (bits > 16) // validated streams have none
    return loadCost(s.machine, cost, bits, i.flags & kTranspose);
  InstrCost &c = loads[bits][(i.flags & kTranspose) ? 1 : 0];
  if (!c.cycles) // every load takes a cycle at least
    c = loadCost(s.machine, cost, bits, i.flags & kTranspose);
  return c;
}

Simulator::Simulator(const Stream &stream, const CostModel &model)
    : s(stream), V(stream.machine.V), cost(model.resolved(stream.machine)),
      timeline(stream.machine, cost.overlap) {
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
  // Compile-time tiles: each step is a factor with point position 0.
  auto paramsOf = [](uint16_t bits, float step) {
    tq::ref::TileParams p;
    p.bits = bits;
    p.factor = step;
    return p;
  };
  for (const ConstTile &c : s.constants) {
    Tile &t = ub[c.slot];
    t.q = c.values;
    t.layout = c.vectors == kRowVectors   ? Layout::Rows
               : c.vectors == kColVectors ? Layout::Cols
                                          : Layout::Square;
    t.params = paramsOf(c.bits, c.step);
    t.vp.clear();
    for (float step : c.steps)
      t.vp.push_back(paramsOf(c.bits, step));
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
  bool ok = execute(error);
  st.cycles = timeline.finish();
  st.busy = timeline.busy();
  return ok;
}

unsigned Simulator::readBits(const Instr &i) const {
  if (i.op != Op::Load && i.op != Op::Req && i.op != Op::WUpd &&
      i.op != Op::Deq)
    return 0;
  unsigned bits = ub[i.op == Op::WUpd ? i.dst : i.src].params.bits;
  return bits ? bits : 8;
}

bool Simulator::execute(std::string &error) {
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
    InstrCost c = costOf(i);
    st.serialCycles += c.cycles;
    st.bankReads += c.bankReads;
    timeline.schedule(i, c);
    // Unified-buffer traffic at the tiles' widths.
    auto bytes = [&](unsigned bits) { return (uint64_t(n) * bits + 7) / 8; };
    unsigned rb = readBits(i);
    st.ubBytesRead += bytes(rb);
    if (i.op == Op::Quant || i.op == Op::Req || i.op == Op::Post)
      st.ubBytesWritten += bytes(i.bits);
    else if (i.op == Op::WUpd)
      st.ubBytesWritten += bytes(rb);
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
