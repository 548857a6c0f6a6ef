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
  ListOption<std::string> keepFloat{
      *this, "keep-float", llvm::cl::desc("Names of ops to leave in float")};
};

/// tq-quantize: roles and split dims, quantization insertion, compile-time
/// quantization of constant weights, then canonicalization and CSE (which
/// shares one quantization of a tensor between its consumers).
void buildQuantizePipeline(OpPassManager &pm,
                           const QuantizePipelineOptions &options);

/// Registers the named pipelines with the pass registry (tq-opt).
void registerTQPipelines();

} // namespace mlir::tq

#endif // TQ_PIPELINES_PIPELINES_H
