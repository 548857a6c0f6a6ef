//===- Pipelines.h - named tile-quant pass pipelines ------------*- C++ -*-===//
#ifndef TQ_PIPELINES_PIPELINES_H
#define TQ_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::tq {

/// Options of the `tq-quantize` pipeline (float program -> tq program).
struct QuantizePipelineOptions
    : public PassPipelineOptions<QuantizePipelineOptions> {
  Option<int64_t> tile{*this, "tile", llvm::cl::desc("Tile size V (VxV)"),
                       llvm::cl::init(32)};
  Option<int64_t> actBits{*this, "act-bits",
                          llvm::cl::desc("Bit width of activations"),
                          llvm::cl::init(8)};
  Option<int64_t> weightBits{*this, "weight-bits",
                             llvm::cl::desc("Bit width of weights"),
                             llvm::cl::init(8)};
  Option<int64_t> gradBits{*this, "grad-bits",
                           llvm::cl::desc("Bit width of gradients"),
                           llvm::cl::init(8)};
  Option<RoundingMode> gradRounding{
      *this, "grad-rounding",
      llvm::cl::desc("Rounding of gradients: nearest_even, or stochastic "
                     "(seeded, deterministic)"),
      llvm::cl::init(RoundingMode::nearest_even),
      llvm::cl::values(clEnumValN(RoundingMode::nearest_even, "nearest_even",
                                  "round to nearest, ties to even"),
                       clEnumValN(RoundingMode::stochastic, "stochastic",
                                  "round up with probability frac(v)"))};
  Option<uint64_t> seed{
      *this, "seed",
      llvm::cl::desc("Seed of the first stochastic rounding (the next ones "
                     "count up)"),
      llvm::cl::init(0)};
  Option<ScaleKind> scaleKind{
      *this, "scale", llvm::cl::desc("Scale representation of every tile"),
      llvm::cl::init(ScaleKind::f32),
      llvm::cl::values(
          clEnumValN(ScaleKind::f32, "f32", "f32 scale"),
          clEnumValN(ScaleKind::pow2, "pow2", "power-of-two point position"),
          clEnumValN(ScaleKind::pow2_f32, "pow2_f32",
                     "point position and f32 factor"))};
  Option<QuantizeOperands> operands{
      *this, "quantize", llvm::cl::desc("Which matmul operands to quantize"),
      llvm::cl::init(QuantizeOperands::all),
      llvm::cl::values(
          clEnumValN(QuantizeOperands::all, "all", "both operands"),
          clEnumValN(QuantizeOperands::weights, "weights",
                     "only weights (mixed case)"),
          clEnumValN(QuantizeOperands::activations, "activations",
                     "only non-weights (mixed case)"))};
  Option<Granularity> granularity{
      *this, "granularity",
      llvm::cl::desc("Subsets with their own parameters (SPEC A1)"),
      llvm::cl::init(Granularity::tile),
      llvm::cl::values(
          clEnumValN(Granularity::tile, "tile", "VxV tiles"),
          clEnumValN(Granularity::vector, "vector",
                     "1xV vectors along the contracted dim"),
          clEnumValN(Granularity::channel, "channel",
                     "one scale per row/column (per channel or batch)"),
          clEnumValN(Granularity::tensor, "tensor",
                     "one scale per 2-D slice"))};
  Option<BitWidthPolicy> policy{
      *this, "policy", llvm::cl::desc("Where bit widths come from"),
      llvm::cl::init(BitWidthPolicy::fixed),
      llvm::cl::values(
          clEnumValN(BitWidthPolicy::fixed, "static", "per role"),
          clEnumValN(BitWidthPolicy::adaptive, "adaptive",
                     "from the quantization error (A4): constants at compile "
                     "time, other tensors at run time"),
          clEnumValN(BitWidthPolicy::schedule, "schedule",
                     "from the epoch argument (T8)"))};
  Option<double> low{*this, "low",
                     llvm::cl::desc("policy=adaptive: lower error threshold"),
                     llvm::cl::init(0.005)};
  Option<double> high{*this, "high",
                      llvm::cl::desc("policy=adaptive: upper error threshold"),
                      llvm::cl::init(0.02)};
  Option<int64_t> minBits{*this, "min-bits",
                          llvm::cl::desc("policy=adaptive: smallest width"),
                          llvm::cl::init(2)};
  Option<int64_t> maxBits{*this, "max-bits",
                          llvm::cl::desc("policy=adaptive: largest width"),
                          llvm::cl::init(8)};
  Option<bool> perTile{*this, "per-tile",
                       llvm::cl::desc("policy=adaptive: one width per tile"),
                       llvm::cl::init(false)};
  Option<bool> reuse{*this, "reuse",
                     llvm::cl::desc("policy=adaptive: reuse a previous "
                                    "tensor's width when its statistics are "
                                    "close (A5)"),
                     llvm::cl::init(false)};
  Option<std::string> schedule{
      *this, "schedule",
      llvm::cl::desc("policy=schedule: epochs and widths, e.g. 0-75:4,76-86:8"),
      llvm::cl::init("")};
  ListOption<int64_t> tileCandidates{
      *this, "tile-candidates",
      llvm::cl::desc("policy=adaptive: choose each layer's tile size among "
                     "these")};
  Option<std::string> calibration{
      *this, "calibration",
      llvm::cl::desc("Read per-layer parameters from this file (A8) instead "
                     "of choosing them"),
      llvm::cl::init("")};
  Option<std::string> calibrationOut{
      *this, "calibration-out",
      llvm::cl::desc("Write the per-layer parameters chosen to this file"),
      llvm::cl::init("")};
  ListOption<std::string> keepFloat{
      *this, "keep-float",
      llvm::cl::desc("Op names (linalg.matmul) or layer names (ONNX nodes) to "
                     "leave in float; each must match one in the input")};
  Option<int64_t> minChannels{
      *this, "min-channels",
      llvm::cl::desc("Leave in float a convolution with fewer input "
                     "channels, or a matmul with a shorter contraction, than "
                     "this (their tiles would be mostly padding); 0 "
                     "quantizes every layer"),
      llvm::cl::init(4)};
};

/// tq-quantize: roles and split dims, quantization insertion, CSE (which
/// shares one quantization of a tensor between its consumers), transpose
/// folding, fusion of layer outputs into tq.postprocess, the compile-time
/// bit-width search on constants (policy=adaptive), compile-time
/// quantization of constant weights, canonicalization.
/// The checks of option combinations that the passes cannot make (they see
/// only their own options), as `tq-quantize` runs them: fails with `error`.
LogicalResult checkQuantizeOptions(const QuantizePipelineOptions &options,
                                   std::string &error);
void buildQuantizePipeline(OpPassManager &pm,
                           const QuantizePipelineOptions &options);

/// Options of the `tq-to-ppu` pipeline: the machine to compile for.
struct ToPPUPipelineOptions : public PassPipelineOptions<ToPPUPipelineOptions> {
  Option<int64_t> v{*this, "v", llvm::cl::desc("Tile size V"),
                    llvm::cl::init(16)};
  Option<int64_t> mac{*this, "mac", llvm::cl::desc("MAC units (0: V)"),
                      llvm::cl::init(0)};
  Option<int64_t> ub{*this, "ub",
                     llvm::cl::desc("Unified buffer capacity, in tiles "
                                    "(0: what the program needs)"),
                     llvm::cl::init(0)};
  Option<int64_t> rows{*this, "rows",
                       llvm::cl::desc("Tile slots per data buffer"),
                       llvm::cl::init(2)};
  Option<int64_t> acc{*this, "acc", llvm::cl::desc("Accumulator tiles"),
                      llvm::cl::init(64)};
  Option<int64_t> fmem{*this, "fmem",
                       llvm::cl::desc("Host memory, in tiles (0: what the "
                                      "program needs)"),
                       llvm::cl::init(0)};
};

/// tq-to-ppu: canonicalization, then convert-tq-to-ppu for the machine.
void buildToPPUPipeline(OpPassManager &pm, const ToPPUPipelineOptions &o);

struct ToCPUPipelineOptions : public PassPipelineOptions<ToCPUPipelineOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc(
          "Instruction set: native, avx512, avxvnni, avx2 or generic"),
      llvm::cl::init("native")};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads sharing each matmul's output (OpenMP)"),
      llvm::cl::init(1)};
  Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("One function per distinct loop nest "
                     "(tq-cpu-outline-kernels); off compiles each public "
                     "function as one, as before"),
      llvm::cl::init(true)};
  Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time every kernel call (tq-cpu-profile-kinds, "
                     "tq-cpu-outline-kernels{profile}); implies "
                     "outline-kernels. The program then calls "
                     "tq_profile_begin/end, which tq-run provides"),
      llvm::cl::init(false)};
};

/// tq-to-cpu: convert-tq-to-cpu, one-shot bufferization (function results
/// become out-parameters), buffer deallocation, and the conversions of
/// every remaining dialect to LLVM.
void buildToCPUPipeline(OpPassManager &pm, const ToCPUPipelineOptions &o);

/// Registers the dialects and interfaces tq-to-cpu needs (bufferization
/// models, conversions to LLVM) into `registry`.
void registerTQCPUDialects(DialectRegistry &registry);

/// Registers the named pipelines with the pass registry (tq-opt).
void registerTQPipelines();

} // namespace mlir::tq

#endif // TQ_PIPELINES_PIPELINES_H
