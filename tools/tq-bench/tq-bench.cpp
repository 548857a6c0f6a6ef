//===- tq-bench.cpp - tile-quant benchmarks and measurements --------------===//
//
//   tq-bench ppu-transpose [--tiles=16,32] [--rows=2] [--cost=...] [--small]
//   tq-bench cpu-matmul [--shapes=MxNxK,...] [--tiles=32,128]
//                       [--thread-counts=1,2] [--target=native]
//                       [--int4=true] [--peers=true] [--rounds=3]
//
// cpu-matmul (CPUMatmul.cpp) times the CPU backend's tiled int8 matmul
// against oneDNN, OpenBLAS and the int8 peak, measured in the same run.
//
// ppu-transpose (PPUTranspose.cpp) measures the claim of seed 000 on the
// streams tq-to-ppu emits for a layer's forward and backward products:
// unified-buffer reads, requantizations, cycles and unit utilisation with
// square VxV tiles against per-vector 1xV scaling. It prints a Markdown
// table; every figure comes from running the compiled programs.
//
//===----------------------------------------------------------------------===//
#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Support/ToolOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

extern cl::SubCommand cpuMatmulCmd, ppuTransposeCmd;
int runCPUMatmul();
int runPPUTranspose();

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  // Every option of tq-bench is a subcommand's.
  tq::initToolOptions({});
  cl::ParseCommandLineOptions(argc, argv, "tile-quant benchmarks\n");
  tq::cpu::keepFreedMemory(); // steady call times (see CPUModule.h)
  if (cpuMatmulCmd)
    return runCPUMatmul();
  if (ppuTransposeCmd)
    return runPPUTranspose();
  errs() << "tq-bench: error: expected a benchmark: ppu-transpose or "
            "cpu-matmul (see --help)\n";
  return 1;
}
