//===- CPUModule.h - compile and call tq programs on the CPU ----*- C++ -*-===//
//
// A CPUModule is a tq (or already lowered) MLIR module compiled with the
// tq-to-cpu pipeline and JIT-compiled for the host by MLIR's
// ExecutionEngine. Its functions are called with plain buffers:
//
// - a float or integer tensor argument or result is one buffer;
// - a `!tq.tiled` one is two: its integer data (i8 or i16 container) and
//   its steps (f32, tile-grid shape);
// - an i32 / f32 scalar is a rank-0 buffer.
//
// Results are written into buffers the caller allocates (the shapes are in
// the signature). The C API in tq-c/CPU.h wraps this class.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_EXECUTIONENGINE_CPUMODULE_H
#define TQ_EXECUTIONENGINE_CPUMODULE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tq::cpu {

/// Bool is an i1 tensor, one byte (0 or 1) per element.
enum class ElementType { F32, I8, I16, I32, I64, Bool };
const char *elementTypeName(ElementType t);
size_t elementSize(ElementType t);

/// One buffer of a function's flattened signature.
struct BufferType {
  ElementType element = ElementType::F32;
  std::vector<int64_t> shape; // empty: a scalar or a rank-0 tensor
  /// A scalar (i32, f32) passed by value, not a rank-0 tensor.
  bool scalar = false;
  /// What the buffer is: "arg0", "arg1.data", "arg1.steps", "result0", ...
  std::string name;
  /// The same with the value's name (its `tq.name` attribute: the ONNX
  /// input or output) instead of its position: "x", "w.data", "logits";
  /// empty for an unnamed value.
  std::string label;
  int64_t numElements() const;
};

struct Signature {
  std::vector<BufferType> inputs, outputs;
};

/// A view of caller-owned memory (C order, no padding).
struct Buffer {
  void *data = nullptr;
  ElementType element = ElementType::F32;
  std::vector<int64_t> shape;
};

/// The time spent in one kernel call site (CompileOptions::profile): an
/// op of the program, named by its location (the ONNX node) and kind (the
/// op it was before lowering: tq.matmul, linalg.conv_2d_nchw_fchw, ...).
struct ProfileEntry {
  std::string name, kind;
  uint64_t calls = 0;
  double seconds = 0;
};

struct CompileOptions {
  /// native | avx512 | avxvnni | avx2 | generic (see convert-tq-to-cpu).
  std::string target = "native";
  /// Threads sharing the compiled loops (OpenMP when more than 1).
  int64_t threads = 1;
  /// LLVM optimization level, 0..3.
  unsigned optLevel = 3;
  /// Also compile position-independent object code (dumpObject,
  /// writeSharedLibrary).
  bool keepObject = false;
  /// Print the time of each phase (parse, each tq-to-cpu pass, LLVM
  /// translation, optimization and code generation) to stderr in
  /// -mlir-timing's format. The -mlir-timing options, where the tool
  /// registers them, also enable it and pick the display.
  bool timing = false;
  /// tq-to-cpu's outline-kernels option (one function per distinct loop
  /// nest, compiled once).
  bool outlineKernels = true;
  /// tq-to-cpu's split-batch option: with threads, whole images shared
  /// among them where the program allows.
  bool splitBatch = true;
  /// tq-to-cpu's channels-last option: the float layers between quantized
  /// convolutions run in NHWC.
  bool channelsLast = true;
  /// Time every kernel call (tq-to-cpu's profile option; implies
  /// outlineKernels); see CPUModule::profile. JIT only: the program calls
  /// back into this library.
  bool profile = false;
  /// Verify the IR after each tq-to-cpu pass, not only the program and the
  /// lowered module (a quarter of the compile time of a large network).
  bool verifyEach = false;
};

/// The symbol @main is compiled as: a C program that loads the code has a
/// main of its own.
inline constexpr const char *kMainSymbol = "tq_main";

class CPUModule {
public:
  ~CPUModule();
  /// Parses, lowers and JIT-compiles `source` (MLIR text; `name` is used in
  /// diagnostics). On failure returns null and sets `error` (MLIR
  /// diagnostics in file:line:col form).
  static std::unique_ptr<CPUModule> compile(const std::string &source,
                                            const std::string &name,
                                            const CompileOptions &options,
                                            std::string &error);

  /// The functions that can be called, in module order.
  const std::vector<std::string> &functions() const;
  /// False (with `error`) if the module has no such function.
  bool signature(const std::string &function, Signature &out,
                 std::string &error) const;
  /// Calls `function`. Inputs and outputs must match its signature in
  /// number, element type and shape; outputs are overwritten.
  bool invoke(const std::string &function, const std::vector<Buffer> &inputs,
              const std::vector<Buffer> &outputs, std::string &error);
  /// With CompileOptions::profile: the time of each kernel call site,
  /// summed over the invocations since the last resetProfile(), in program
  /// order. Empty otherwise.
  const std::vector<ProfileEntry> &profile() const;
  void resetProfile();
  /// The instruction set the kernels were generated for.
  const std::string &target() const;
  /// The symbol `function` has in the compiled code: its name, or
  /// kMainSymbol for main. Empty if there is no such function.
  std::string symbol(const std::string &function) const;
  /// Writes position-independent object code for this host (needs
  /// CompileOptions::keepObject). Each public function @f is there as `f`
  /// (memref arguments expanded to pointers, offset, sizes, strides) and as
  /// `_mlir_ciface_f` (a pointer to each memref descriptor struct); shaped
  /// results are out-parameters after the inputs. @main is there as
  /// kMainSymbol.
  bool dumpObject(const std::string &path, std::string &error);
  /// Links the object into a shared library with ld.lld (AOT deployment;
  /// needs CompileOptions::keepObject).
  bool writeSharedLibrary(const std::string &path, std::string &error);

private:
  CPUModule();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Whether this host can run code generated for `target`.
bool hostSupports(const std::string &target);

/// Compiled functions allocate their intermediate buffers (malloc) and free
/// them on return. glibc serves large blocks with mmap and returns them to
/// the system on free, so every call pays fresh page faults, and which
/// blocks do varies from run to run. This makes the process keep freed
/// memory for reuse instead (glibc's mmap and trim thresholds raised):
/// steady call times. It is process-wide, so tools call it (tq-run,
/// tq-bench); a library user decides for their own process.
void keepFreedMemory();

/// Binds the OpenMP threads of compiled code one per core
/// (OMP_PROC_BIND=spread, OMP_PLACES=cores), unless the environment sets
/// either. Between two parallel loops the threads wait spinning; left
/// unbound, the scheduler can keep a new thread on its parent's core,
/// where the two share one core for the whole run (on a 2-core virtual
/// machine, about 2.3 times one thread's time instead of 0.75 times). It
/// is process-wide, so tools call it (tq-run, tq-train); a library user
/// decides for their own process. Call it before the first parallel loop.
void bindThreadsToCores();

} // namespace tq::cpu

#endif // TQ_EXECUTIONENGINE_CPUMODULE_H
