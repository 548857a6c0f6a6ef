//===- tq-bench.cpp - tile-quant benchmarks and measurements --------------===//
//
//   tq-bench ppu-transpose [--tiles=16,32,64]
//   tq-bench cpu-matmul [--shapes=MxNxK,...] [--tiles=32,128]
//                       [--thread-counts=1,2] [--target=native]
//
// cpu-matmul (CPUMatmul.cpp) times the CPU backend's tiled int8 matmul
// against oneDNN, OpenBLAS and the int8 peak, measured in the same run.
//
// ppu-transpose measures the claim of seed 000 on the PPU simulator: for a
// layer's forward GEMM and both backward GEMMs (dX = dY.W^T, dW = X^T.dY),
// the unified-buffer reads, requantizations and cycles with square VxV
// tiles (transposed operands read through the datapath unit, scales reused)
// against per-vector 1xV scaling (the transposed uses must be requantized).
// It prints a Markdown table; every figure comes from running the programs.
//
//===----------------------------------------------------------------------===//
#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Runtime/PPUSim.h"
#include "tq/Support/ToolOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <random>

using namespace llvm;
namespace ppu = tq::ppu;

static cl::SubCommand ppuTranspose(
    "ppu-transpose",
    "Square VxV tiles vs per-vector 1xV scaling on the PPU simulator");
static cl::list<unsigned> tileSizes("tiles", cl::CommaSeparated,
                                    cl::desc("tile sizes V (default 16,32,64)"),
                                    cl::sub(ppuTranspose));

namespace {
struct Layer {
  const char *name;
  uint32_t batch, in, out; // X [batch, in], W [in, out]
};

struct Totals {
  uint64_t ubReads = 0, requantizations = 0, cycles = 0, transposes = 0;
};

int fail(const Twine &msg) {
  errs() << "tq-bench: error: " << msg << "\n";
  return 1;
}

/// Runs one GEMM on a machine sized to fit it; adds its statistics.
bool runGemm(const ppu::GemmSpec &g, uint16_t V, Totals &t,
             std::string &error) {
  auto tiles = [&](uint32_t n) { return uint32_t((n + V - 1) / V); };
  ppu::MachineConfig m;
  m.V = m.macUnits = V;
  uint32_t a = tiles(g.M) * tiles(g.K), b = tiles(g.K) * tiles(g.N),
           c = tiles(g.M) * tiles(g.N);
  m.ubTiles = a + b;
  m.fmemTiles = a + b + c;
  ppu::Stream s;
  if (!ppu::buildGemm(g, m, s, error))
    return false;
  ppu::Simulator sim(s);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  for (const ppu::Binding &bd : s.bindings) {
    if (bd.output)
      continue;
    std::vector<float> data(bd.numElements());
    for (float &x : data)
      x = dist(rng);
    if (!sim.setInput(bd.name, data, bd.shape, error))
      return false;
  }
  if (!sim.run(error))
    return false;
  const ppu::Stats &st = sim.stats();
  t.ubReads += st.ubReads;
  t.requantizations += st.requantizations;
  t.cycles += st.cycles;
  t.transposes += st.transposes;
  return true;
}

/// Forward, dX and dW of one layer, with square tiles or per-vector scales
/// stored as the forward pass needs them (X and dY in rows, W in columns).
bool runLayer(const Layer &l, uint16_t V, bool perVector, Totals &t,
              std::string &error) {
  uint8_t rows = perVector ? ppu::kRowVectors : 0,
          cols = perVector ? ppu::kColVectors : 0;
  ppu::GemmSpec fwd{l.batch, l.in,  l.out, false, false, 8,
                    8,       false, 0,     rows,  cols};
  ppu::GemmSpec dx{l.batch, l.out, l.in, false, true, 8,
                   8,       false, 0,    rows,  cols};
  ppu::GemmSpec dw{l.in, l.batch, l.out, true, false, 8,
                   8,    false,   0,     rows, rows};
  return runGemm(fwd, V, t, error) && runGemm(dx, V, t, error) &&
         runGemm(dw, V, t, error);
}
} // namespace

extern cl::SubCommand cpuMatmulCmd;
int runCPUMatmul();

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  tq::hideLLVMOptions();
  cl::ParseCommandLineOptions(argc, argv, "tile-quant benchmarks\n");
  tq::cpu::keepFreedMemory(); // steady call times (see CPUModule.h)
  if (cpuMatmulCmd)
    return runCPUMatmul();
  if (!ppuTranspose)
    return fail("expected a benchmark: ppu-transpose or cpu-matmul (see "
                "--help)");
  std::vector<unsigned> vs(tileSizes.begin(), tileSizes.end());
  if (vs.empty())
    vs = {16, 32, 64};
  for (unsigned v : vs)
    if (v < 2 || v > 256)
      return fail("tile sizes must be in [2, 256], got " + Twine(v));
  const Layer layers[] = {
      {"MLP 512->256, batch 64", 64, 512, 256},
      {"conv 3x3 64->128 on 4x14x14 (im2col)", 4 * 14 * 14, 64 * 9, 128},
  };
  outs() << "| layer | V | scaling | UB reads | requantizations | cycles | "
            "transposed loads |\n|---|---|---|---|---|---|---|\n";
  for (const Layer &l : layers)
    for (unsigned v : vs) {
      Totals sq, pv;
      std::string error;
      if (!runLayer(l, v, false, sq, error) || !runLayer(l, v, true, pv, error))
        return fail(error);
      for (auto [name, t] :
           {std::pair<const char *, Totals &>{"VxV", sq}, {"1xV", pv}})
        outs() << "| " << l.name << " | " << v << " | " << name << " | "
               << t.ubReads << " | " << t.requantizations << " | " << t.cycles
               << " | " << t.transposes << " |\n";
      outs() << "| " << l.name << " | " << v << " | 1xV / VxV | "
             << format("%.3f", double(pv.ubReads) / sq.ubReads) << " | "
             << pv.requantizations << " vs " << sq.requantizations << " | "
             << format("%.3f", double(pv.cycles) / sq.cycles) << " | |\n";
    }
  return 0;
}
