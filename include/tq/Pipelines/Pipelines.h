//===- Pipelines.h - named tile-quant pass pipelines ------------*- C++ -*-===//
#ifndef TQ_PIPELINES_PIPELINES_H
#define TQ_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "tq/Conversion/Passes.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Transforms.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::tq {

// The options of the named pipelines, generated from Pipelines.td: each is
// the option of one of the pipeline's passes (or of the pipeline alone), and
// get<Pass>Options() fills that pass's options from them.
#define GEN_PIPELINE_DECL_QUANTIZEPIPELINEOPTIONS
#define GEN_PIPELINE_DECL_TOPPUPIPELINEOPTIONS
#define GEN_PIPELINE_DECL_TOCPUPIPELINEOPTIONS
#include "tq/Pipelines/Pipelines.h.inc"

// The builders of the pipelines: Pipelines.td (and docs/Pipelines.md)
// says what each one runs.

/// The checks of option combinations that the passes cannot make (they see
/// only their own options), as `tq-quantize` runs them: fails with `error`.
LogicalResult checkQuantizeOptions(const QuantizePipelineOptions &options,
                                   std::string &error);
void buildQuantizePipeline(OpPassManager &pm,
                           const QuantizePipelineOptions &options);
void buildToPPUPipeline(OpPassManager &pm, const ToPPUPipelineOptions &o);
void buildToCPUPipeline(OpPassManager &pm, const ToCPUPipelineOptions &o);

/// Registers the dialects and interfaces tq-to-cpu needs (bufferization
/// models, conversions to LLVM) into `registry`.
void registerTQCPUDialects(DialectRegistry &registry);

/// Registers the named pipelines with the pass registry (tq-opt).
void registerTQPipelines();

} // namespace mlir::tq

#endif // TQ_PIPELINES_PIPELINES_H
