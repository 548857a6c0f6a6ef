//===- ToolOptions.cpp - --help and --version of the tq tools -------------===//
#include "tq/Support/ToolOptions.h"

#include "llvm/Config/llvm-config.h"

using namespace llvm;

void tq::printVersion(raw_ostream &os) {
  os << "tile-quant " TQ_VERSION " (LLVM " LLVM_VERSION_STRING ")\n";
}

void tq::initToolOptions(cl::OptionCategory &category) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(printVersion);
}

void tq::hideLLVMOptions() {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *o = entry.second;
    StringRef name = entry.first;
    if (name == "help" || name == "help-list" || name == "version")
      continue;
    o->setHiddenFlag(cl::ReallyHidden);
  }
  cl::SetVersionPrinter(printVersion);
}
