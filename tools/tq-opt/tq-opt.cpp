//===- tq-opt.cpp - tile-quant optimizer driver ---------------------------===//
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "tq/Conversion/Passes.h"
#include "tq/Dialect/PPU/IR/PPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Pipelines/Pipelines.h"
#include "tq/Support/ToolOptions.h"

int main(int argc, char **argv) {
  tq::hideLLVMOptions();
  // Upstream passes too, so that tq-to-cpu can be run (and debugged) step
  // by step.
  mlir::registerAllPasses();
  mlir::tq::registerTQPasses();
  mlir::tq::registerTQConversionPasses();
  mlir::tq::registerTQPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tq::TQDialect, mlir::ppu::PPUDialect,
                  mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect>();
  mlir::tq::registerTQCPUDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tile-quant optimizer driver\n", registry));
}
