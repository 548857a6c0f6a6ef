//===- PPUModule.h - run tq programs on the PPU simulator -------*- C++ -*-===//
//
// A PPUModule runs a quantized tq module on the PPU model with the host CPU
// for the float code between layers, as an accelerator's runtime would:
//
// 1. `tq-partition-ppu` splits each function into PPU kernels (its tq ops)
//    and host functions (the rest); the function becomes a schedule;
// 2. `tq-to-ppu` compiles each kernel to an instruction stream for the
//    machine, `tq-to-cpu` the host functions (a CPUModule);
// 3. invoke() walks the schedule: host functions run JIT-compiled, kernels
//    on the bit-exact simulator (tq/Runtime/PPUSim.h), which counts the
//    reads, writes and cycles of every launch.
//
// Functions are called with the same buffers as a CPUModule (f32 and
// integer tensors; tiled values do not cross the host/PPU boundary).
//
//===----------------------------------------------------------------------===//
#ifndef TQ_EXECUTIONENGINE_PPUMODULE_H
#define TQ_EXECUTIONENGINE_PPUMODULE_H

#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Runtime/PPUSim.h"

namespace tq::ppu {

struct PPUCompileOptions {
  /// The machine, as the options of the tq-to-ppu pipeline
  /// ("v=32 rows=2 acc=64 ..."); `v` defaults to the module's tile size.
  std::string machine;
  /// The simulator's cost-model parameters (tq/Runtime/PPUCost.h).
  CostModel cost;
  /// How the host functions are compiled.
  cpu::CompileOptions host;
};

/// One compiled PPU kernel.
struct KernelInfo {
  std::string name;
  MachineConfig machine;
  size_t instructions = 0;
  size_t streamBytes = 0; // the encoded binary stream
};

/// A bit width chosen on the host at run time (tq.adaptive_bit_width) and
/// passed to a kernel's width input: the layer reading it, and at each
/// launch since the last reset its value and the A3 error of the kernel
/// input quantized at that width (NaN when no input is).
struct WidthInput {
  std::string kernel, input, layer;
  std::vector<int32_t> bits;
  std::vector<double> errors;
};

class PPUModule {
public:
  ~PPUModule();
  /// Partitions, compiles and JIT-compiles `source` (MLIR text; `name` for
  /// diagnostics). On failure returns null and sets `error`.
  static std::unique_ptr<PPUModule> compile(const std::string &source,
                                            const std::string &name,
                                            const PPUCompileOptions &options,
                                            std::string &error);
  /// The functions that can be called, in module order.
  const std::vector<std::string> &functions() const;
  bool signature(const std::string &function, cpu::Signature &out,
                 std::string &error) const;
  /// Calls `function` (see CPUModule::invoke); the statistics of its
  /// kernel launches are added to stats().
  bool invoke(const std::string &function,
              const std::vector<cpu::Buffer> &inputs,
              const std::vector<cpu::Buffer> &outputs, std::string &error);
  /// The kernels, in the order the schedules launch them.
  const std::vector<KernelInfo> &kernels() const;
  /// What the simulator counted over all launches since the last reset,
  /// and the number of launches.
  const Stats &stats() const;
  uint64_t launches() const;
  /// The kernels' width inputs and the widths they were given.
  const std::vector<WidthInput> &widths() const;
  void resetStats();

private:
  PPUModule();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace tq::ppu

#endif // TQ_EXECUTIONENGINE_PPUMODULE_H
