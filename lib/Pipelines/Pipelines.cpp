//===- Pipelines.cpp - named tile-quant pass pipelines --------------------===//
#include "tq/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tq;

void mlir::tq::buildQuantizePipeline(OpPassManager &pm,
                                     const QuantizePipelineOptions &o) {
  pm.addPass(createTQChooseSplitDims());
  TQInsertQuantizationOptions insert;
  insert.tile = o.tile;
  insert.actBits = o.actBits;
  insert.weightBits = o.weightBits;
  insert.gradBits = o.gradBits;
  insert.scaleKind = o.scaleKind;
  insert.operands = o.operands;
  insert.granularity = o.granularity;
  insert.keepFloat.assign(o.keepFloat.begin(), o.keepFloat.end());
  pm.addPass(createTQInsertQuantization(insert));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTQFoldTransposes());
  pm.addPass(createTQFusePostprocess());
  pm.addPass(createTQQuantizeConstants());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tq::registerTQPipelines() {
  PassPipelineRegistration<QuantizePipelineOptions>(
      "tq-quantize",
      "Quantize a float program (linalg on tensors) into tiled tq ops",
      buildQuantizePipeline);
}
