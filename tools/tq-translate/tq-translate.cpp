//===- tq-translate.cpp - tile-quant translations
//--------------------------===//
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "tq/Support/ToolOptions.h"
#include "tq/Target/PPUISA/PPUISAEmitter.h"

int main(int argc, char **argv) {
  tq::hideLLVMOptions();
  mlir::ppu::registerPPUTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "tile-quant translation tool\n"));
}
