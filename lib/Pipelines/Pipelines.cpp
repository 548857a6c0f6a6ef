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
  pm.addPass(createTQSplitGroupedConvs(o.getTQSplitGroupedConvsOptions()));
  pm.addPass(createTQChooseSplitDims());
  pm.addPass(createTQInsertQuantization(o.getTQInsertQuantizationOptions()));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTQFoldTransposes());
  pm.addPass(createTQFusePostprocess());
  // With a calibration file the widths are read, not searched.
  if (o.policy == BitWidthPolicy::adaptive && o.calibration.empty()) {
    TQAdaptiveBitWidthOptions adaptive = o.getTQAdaptiveBitWidthOptions();
    adaptive.initBits = std::min<int64_t>(
        std::max<int64_t>(o.weightBits, o.minBits), o.maxBits);
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
  pm.addPass(createConvertTQToPPU(o.getConvertTQToPPUOptions()));
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
  if (o.channelsLast)
    pm.addPass(createTQCPUChannelsLast());
  // The profiler's clock is one per program, not per thread. On one
  // thread, two shares run in turn where they take the whole program (for
  // locality).
  if (o.splitBatch && !o.profile) {
    TQCPUSplitBatchOptions split;
    split.chunks = std::max<int64_t>(o.threads, 2);
    split.whole = o.threads == 1;
    pm.addNestedPass<func::FuncOp>(createTQCPUSplitBatch(split));
  }
  if (o.profile)
    pm.addPass(createTQCPUProfileKinds());
  // The elementwise chains fused first, so that a tq.matmul applies the
  // whole chain after it (bias, activation) as it stores.
  pm.addPass(createTQCPUFuseElementwise());
  // Before a tq.conv2d takes the ReLU before a pooling as its epilogue, and
  // before the products whose quantized inputs it marks are lowered.
  pm.addPass(createTQCPUMarkNonNegative());
  pm.addPass(createConvertTQToCPU(o.getConvertTQToCPUOptions()));
  pm.addPass(loopNestCanonicalizer());
  pm.addPass(createTQCPUFuseElementwise());
  pm.addPass(createTQCPUMarkNonNegative());
  pm.addNestedPass<func::FuncOp>(createTQCPUCollapseDims());
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
  // A generic's results written into the slices they were copied to.
  pm.addNestedPass<func::FuncOp>(createTQCPUForwardCopies());
  // Each buffer freed after its last use (upstream ownership-based
  // deallocation where buffers leave their block).
  pm.addPass(createTQCPUFreeBuffers());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createConvertTQCPUIntrinsics());
  pm.addPass(createTQCPUFloatKernels(o.getTQCPUFloatKernelsOptions()));
  pm.addPass(createTQCPULoopOrder());
  // The short-lived buffers of the body in one allocation, instead of a
  // malloc and free each.
  pm.addNestedPass<func::FuncOp>(createTQCPUPlanBuffers());
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
    pm.addPass(createTQCPUShareLoops(o.getTQCPUShareLoopsOptions()));
  } else {
    pm.addPass(createConvertLinalgToLoopsPass());
  }
  pm.addPass(createTQCPUSelectClamps());
  // Without AVX-512 a masked store is microcode (f32, i32) or a branch per
  // lane (i8).
  if (parseCPUTarget(o.target) != CPUTarget::avx512)
    pm.addPass(createTQCPUSplitMaskedStores());
  pm.addPass(loopNestCanonicalizer());
  pm.addPass(createCSEPass());
  ConvertSCFToOpenMPPassOptions omp;
  omp.numThreads = o.threads;
  pm.addPass(createConvertSCFToOpenMPPass(omp));
  // Inlines the memref.alloca_scope the OpenMP conversion wraps loop bodies
  // in (they allocate nothing), before the loops become blocks.
  pm.addPass(createTQCPUInlineAllocaScopes());
  pm.addPass(loopNestCanonicalizer());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (asinh, erf, ...) calls the C library,
  // one lane of a vector at a time (vector.extract and insert, which the
  // vector lowering then takes).
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
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
  PassPipelineRegistration<ToCPUPipelineOptions>(ToCPUPipelineOptions::argument,
                                                 ToCPUPipelineOptions::summary,
                                                 buildToCPUPipeline);
  PassPipelineRegistration<ToPPUPipelineOptions>(ToPPUPipelineOptions::argument,
                                                 ToPPUPipelineOptions::summary,
                                                 buildToPPUPipeline);
  // tq-quantize checks the options that only the pipeline sees (whether
  // one was given at all) before building.
  registerPassPipeline(
      QuantizePipelineOptions::argument, QuantizePipelineOptions::summary,
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
