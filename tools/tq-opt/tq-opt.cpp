//===- tq-opt.cpp - tile-quant optimizer driver ---------------------------===//
#include "LongLines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
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

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

/// Whether the input file (the first positional argument) holds printed
/// locations, `loc(...)` or `#loc` aliases. Options taking a separate value (-o
/// FILE) are skipped; stdin is not read ahead.
static bool inputHasLocations(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "-o" || arg == "--o") {
      ++i;
      continue;
    }
    if (arg.starts_with("-"))
      continue;
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(arg);
    if (!file)
      return false;
    // `loc(` as a word (not the end of alloc( or dealloc(), or an alias.
    llvm::StringRef text = (*file)->getBuffer();
    if (text.contains("#loc"))
      return true;
    for (size_t at = text.find("loc("); at != llvm::StringRef::npos;
         at = text.find("loc(", at + 1))
      if (at == 0 || !(llvm::isAlnum(text[at - 1]) || text[at - 1] == '_'))
        return true;
    return false;
  }
  return false;
}

int main(int argc, char **argv) {
  tq::hideLLVMOptions();
  // An input printed with its locations (tq-import-onnx's, which name the
  // ONNX nodes that keep-float, profiles and PPU reports refer to) is
  // printed with them: `tq-opt -o` dropped them. -mlir-print-debuginfo=false
  // omits them.
  mlir::registerAsmPrinterCLOptions();
  if (inputHasLocations(argc, argv))
    if (auto *o = static_cast<llvm::cl::opt<bool> *>(
            llvm::cl::getRegisteredOptions().lookup("mlir-print-debuginfo")))
      o->setInitialValue(true);
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
  tq::registerLongLineDiagnostics(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tile-quant optimizer driver\n", registry));
}
