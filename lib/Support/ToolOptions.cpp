//===- ToolOptions.cpp - the tq tools' options, --help and --version ------===//
#include "tq/Support/ToolOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Config/llvm-config.h"

using namespace llvm;

void tq::printVersion(raw_ostream &os) {
  os << "tile-quant " TQ_VERSION " (LLVM " LLVM_VERSION_STRING ")\n";
}

/// The options registered so far outside `categories`, --help's and
/// --version's aside.
static SmallVector<cl::Option *>
foreignOptions(ArrayRef<const cl::OptionCategory *> categories) {
  SmallVector<cl::Option *> foreign;
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *o = entry.second;
    StringRef name = entry.first;
    if (name.starts_with("help") || name == "version" ||
        any_of(o->Categories, [&](cl::OptionCategory *c) {
          return is_contained(categories, c);
        }))
      continue;
    foreign.push_back(o);
  }
  return foreign;
}

void tq::initToolOptions(ArrayRef<const cl::OptionCategory *> categories) {
  // LLVM's options, hidden only, would still be accepted: one of them is
  // --threads, so `tq-run --threads=2` ran on one thread without a word.
  // Dropped, an option of another tool or a misspelt one is an error that
  // names the nearest of this tool's.
  for (cl::Option *o : foreignOptions(categories))
    o->removeArgument();
  cl::SetVersionPrinter(printVersion);
}

void tq::hideLLVMOptions() {
  for (cl::Option *o : foreignOptions({}))
    o->setHiddenFlag(cl::ReallyHidden);
  cl::SetVersionPrinter(printVersion);
}
