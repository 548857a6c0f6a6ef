//===- PassOptionsGen.cpp - a pass's current options as its struct --------===//
//
// mlir-tblgen gives each pass an options struct (`<Pass>Options`) to create
// it with, but no way back: the values parsed into the pass's `Option`
// members cannot be read out as that struct. `-gen-pass-option-getters`
// writes, for each pass with options, a member function to include in the
// pass's class body:
//
//   struct MyPass : impl::MyPassBase<MyPass> {
//   #define GEN_PASS_OPTIONS_GETTER_MYPASS
//   #include "PassOptions.h.inc"
//     void runOnOperation() override { MyPassOptions o = getOptions(); }
//   };
//
// so code that takes the options as a struct (the rewrite patterns) does not
// declare them a second time.
//
//===----------------------------------------------------------------------===//

#include "OptionCopy.h"

#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Pass.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace mlir;
using namespace mlir::tblgen;

static bool emitPassOptionGetters(const llvm::RecordKeeper &records,
                                  raw_ostream &os) {
  llvm::emitSourceFileHeader("Pass options as their structs", os, records);
  for (const llvm::Record *def : records.getAllDerivedDefinitions("PassBase")) {
    Pass pass(def);
    if (pass.getOptions().empty())
      continue;
    StringRef name = def->getName();
    os << llvm::formatv("#ifdef GEN_PASS_OPTIONS_GETTER_{0}\n", name.upper());
    os << llvm::formatv("/// The values of this pass's options (`{0}`).\n",
                        pass.getArgument());
    os << llvm::formatv("{0}Options getOptions() const {{\n", name);
    os << llvm::formatv("  {0}Options result;\n", name);
    for (const PassOption &o : pass.getOptions())
      tq::tblgen::emitOptionCopy(o, "  ", os);
    os << "  return result;\n}\n";
    os << llvm::formatv("#undef GEN_PASS_OPTIONS_GETTER_{0}\n", name.upper());
    os << llvm::formatv("#endif // GEN_PASS_OPTIONS_GETTER_{0}\n\n",
                        name.upper());
  }
  return false;
}

static GenRegistration
    genPassOptionGetters("gen-pass-option-getters",
                         "Generate getters of a pass's options as its "
                         "generated options struct",
                         emitPassOptionGetters);
