//===- tq-tblgen.cpp - tile-quant's TableGen backends ---------------------===//
//
// mlir-tblgen's driver with tile-quant's own generators: the named
// pipelines' options and reference page (PipelineGen.cpp), and a pass's
// options read back as its options struct (PassOptionsGen.cpp).
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"

int main(int argc, char **argv) { return mlir::MlirTblgenMain(argc, argv); }
