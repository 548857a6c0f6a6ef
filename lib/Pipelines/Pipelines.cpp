//===- Pipelines.cpp - named tile-quant pass pipelines --------------------===//
#include "tq/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tq;

LogicalResult
mlir::tq::checkQuantizeOptions(const QuantizePipelineOptions &options,
                               std::string &error) {
  if (options.policy == BitWidthPolicy::adaptive &&
      options.weightBits.hasValue()) {
    error = "tq-quantize: weight-bits has no effect with policy=adaptive "
            "(the widths are searched in [min-bits, max-bits])";
    return failure();
  }
  return success();
}

void mlir::tq::buildQuantizePipeline(OpPassManager &pm,
                                     const QuantizePipelineOptions &o) {
  TQSplitGroupedConvsOptions split;
  split.minChannels = o.minChannels;
  pm.addPass(createTQSplitGroupedConvs(split));
  pm.addPass(createTQChooseSplitDims());
  TQInsertQuantizationOptions insert;
  insert.tile = o.tile;
  insert.actBits = o.actBits;
  insert.weightBits = o.weightBits;
  insert.gradBits = o.gradBits;
  insert.gradRounding = o.gradRounding;
  insert.seed = o.seed;
  insert.scaleKind = o.scaleKind;
  insert.operands = o.operands;
  insert.granularity = o.granularity;
  insert.policy = o.policy;
  insert.low = o.low;
  insert.high = o.high;
  insert.minBits = o.minBits;
  insert.maxBits = o.maxBits;
  insert.perTile = o.perTile;
  insert.schedule = o.schedule;
  insert.calibration = o.calibration;
  insert.tileCandidates.assign(o.tileCandidates.begin(),
                               o.tileCandidates.end());
  insert.keepFloat.assign(o.keepFloat.begin(), o.keepFloat.end());
  insert.minChannels = o.minChannels;
  pm.addPass(createTQInsertQuantization(insert));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTQFoldTransposes());
  pm.addPass(createTQFusePostprocess());
  // With a calibration file the widths are read, not searched.
  if (o.policy == BitWidthPolicy::adaptive && o.calibration.empty()) {
    TQAdaptiveBitWidthOptions adaptive;
    adaptive.low = o.low;
    adaptive.high = o.high;
    adaptive.minBits = o.minBits;
    adaptive.maxBits = o.maxBits;
    adaptive.initBits = std::min<int64_t>(
        std::max<int64_t>(o.weightBits, o.minBits), o.maxBits);
    adaptive.perTile = o.perTile;
    adaptive.reuse = o.reuse;
    pm.addPass(createTQAdaptiveBitWidth(adaptive));
  }
  pm.addPass(createTQQuantizeConstants());
  pm.addPass(createCanonicalizerPass());
  if (!o.calibrationOut.empty()) {
    TQExportCalibrationOptions out;
    out.file = o.calibrationOut;
    pm.addPass(createTQExportCalibration(out));
  }
}

void mlir::tq::buildToPPUPipeline(OpPassManager &pm,
                                  const ToPPUPipelineOptions &o) {
  pm.addPass(createCanonicalizerPass());
  ConvertTQToPPUOptions c;
  c.v = o.v;
  c.mac = o.mac;
  c.ub = o.ub;
  c.rows = o.rows;
  c.acc = o.acc;
  c.fmem = o.fmem;
  pm.addPass(createConvertTQToPPU(c));
}

/// The canonicalizer as the CPU passes apply patterns (bottom-up, without
/// region simplification). The pass's default, top-down, took three times
/// as long on the unrolled micro-kernels of a large network (1.5 s against
/// 0.5 s after convert-tq-to-cpu on a 700-node network).
static std::unique_ptr<Pass> loopNestCanonicalizer() {
  return createCanonicalizerPass(loopNestRewriteConfig());
}

void mlir::tq::buildToCPUPipeline(OpPassManager &pm,
                                  const ToCPUPipelineOptions &o) {
  pm.addPass(loopNestCanonicalizer());
  ConvertTQToCPUOptions c;
  c.target = o.target;
  c.threads = o.threads;
  if (o.profile)
    pm.addPass(createTQCPUProfileKinds());
  pm.addPass(createConvertTQToCPU(c));
  pm.addPass(loopNestCanonicalizer());
  pm.addPass(createTQCPUFuseElementwise());
  pm.addNestedPass<func::FuncOp>(createTQCPUDistinctResults());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A loop over time (LSTM) yields new tensors for its state each step;
  // ownership-based deallocation frees them.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Each buffer freed after its last use (upstream ownership-based
  // deallocation where buffers leave their block).
  pm.addPass(createTQCPUFreeBuffers());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createConvertTQCPUIntrinsics());
  TQCPUFloatKernelsOptions floats;
  floats.target = o.target;
  floats.threads = o.threads;
  pm.addPass(createTQCPUFloatKernels(floats));
  pm.addPass(createTQCPULoopOrder());
  // One function per distinct loop nest: LLVM's cost grows faster than a
  // function's size, and layers of the same shape share one.
  if (o.outlineKernels || o.profile) {
    TQCPUOutlineKernelsOptions outline;
    outline.profile = o.profile;
    pm.addPass(createTQCPUOutlineKernels(outline));
  }
  // With threads, the float ops' loops are shared among them too.
  if (o.threads > 1) {
    pm.addPass(createConvertLinalgToParallelLoopsPass());
    TQCPUShareLoopsOptions share;
    share.threads = o.threads;
    pm.addPass(createTQCPUShareLoops(share));
  } else {
    pm.addPass(createConvertLinalgToLoopsPass());
  }
  pm.addPass(loopNestCanonicalizer());
  pm.addPass(createCSEPass());
  ConvertSCFToOpenMPPassOptions omp;
  omp.numThreads = o.threads;
  pm.addPass(createConvertSCFToOpenMPPass(omp));
  // Inlines the memref.alloca_scope the OpenMP conversion wraps loop bodies
  // in (they allocate nothing), before the loops become blocks.
  pm.addPass(loopNestCanonicalizer());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (asinh, erf, ...) calls the C library.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Blocks now: region simplification merges and drops them.
  pm.addPass(createCanonicalizerPass());
}

void mlir::tq::registerTQCPUDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
}

void mlir::tq::registerTQPipelines() {
  PassPipelineRegistration<ToCPUPipelineOptions>(
      "tq-to-cpu",
      "Lower a tq program to the LLVM dialect for this CPU (or another "
      "target)",
      buildToCPUPipeline);
  PassPipelineRegistration<ToPPUPipelineOptions>(
      "tq-to-ppu", "Lower a tq program to a PPU instruction program",
      buildToPPUPipeline);
  // tq-quantize checks the options that only the pipeline sees (whether
  // one was given at all) before building.
  registerPassPipeline(
      "tq-quantize",
      "Quantize a float program (linalg on tensors) into tiled tq ops",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        QuantizePipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error;
        if (failed(checkQuantizeOptions(options, error)))
          return errorHandler(error);
        buildQuantizePipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(QuantizePipelineOptions());
      });
}
