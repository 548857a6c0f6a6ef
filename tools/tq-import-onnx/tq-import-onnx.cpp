//===- tq-import-onnx.cpp - ONNX models to MLIR ---------------------------===//
//
//   tq-import-onnx MODEL.onnx [-o out.mlir] [--input-shape=NAME:1x784]...
//                  [--dim=batch=1]...
//
// MODEL is a binary ONNX model or the ONNX text syntax. The output is the
// float MLIR form `tq-opt -tq-quantize` takes.
//
//===----------------------------------------------------------------------===//
#include "tq/Driver/Driver.h"
#include "tq/Importer/ONNX.h"
#include "tq/Support/ToolOptions.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory toolOptions("tq-import-onnx options");

static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::Required, cl::desc("<model.onnx>"));
static cl::opt<std::string> outputPath(cl::cat(toolOptions), "o",
                                       cl::desc("output file"), cl::init("-"));
static cl::list<std::string>
    inputShapes(cl::cat(toolOptions), "input-shape",
                cl::desc("NAME:D0xD1x...: fix the shape of a graph input"));
static cl::list<std::string>
    dims(cl::cat(toolOptions), "dim",
         cl::desc("NAME=N: give symbolic dimension NAME the value N "
                  "in every graph input"));
static cl::opt<bool>
    locations(cl::cat(toolOptions), "locations",
              cl::desc("print each op's location, the name of its ONNX node "
                       "(default on; --locations=false to omit them)"),
              cl::init(true));
static cl::list<std::string> constantInputs(
    cl::cat(toolOptions), "constant-input",
    cl::desc("NAME=FILE.npy: make graph input NAME this constant (for "
             "indices, shapes and other integer inputs)"));
static cl::opt<std::string> function(cl::cat(toolOptions), "function",
                                     cl::desc("name of the generated function"),
                                     cl::init("main"));

static int fail(const Twine &msg) {
  errs() << "tq-import-onnx: error: " << msg << "\n";
  return 1;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  tq::initToolOptions({&toolOptions});
  cl::ParseCommandLineOptions(argc, argv, "ONNX model to MLIR\n");
  mlir::tq::ONNXImportOptions options;
  options.function = function;
  std::string error;
  if (!tq::driver::parseImportOptions(inputShapes, dims, constantInputs,
                                      options, error))
    return fail(error);
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(modelPath);
  if (!file)
    return fail("cannot open '" + modelPath +
                "': " + file.getError().message());
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::tq::importONNX(
      (*file)->getBuffer().str(), modelPath, &ctx, options, error);
  if (!module)
    return fail(error);
  if (failed(mlir::verify(*module)))
    return fail("the imported module does not verify (an importer bug)");
  std::error_code ec;
  ToolOutputFile out(outputPath, ec, sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + outputPath + "': " + ec.message());
  // Each op's location is its ONNX node name: keep-float, calibration
  // and diagnostics downstream refer to nodes by it.
  mlir::OpPrintingFlags flags;
  if (locations)
    flags.enableDebugInfo();
  module->print(out.os(), flags);
  out.keep();
  return 0;
}
