//===- tq-tblgen.cpp - tile-quant's TableGen backends ---------------------===//
//
// mlir-tblgen's driver with tile-quant's own generators (PipelineGen.cpp):
// the named pipelines' options and reference page.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"

int main(int argc, char **argv) { return mlir::MlirTblgenMain(argc, argv); }
