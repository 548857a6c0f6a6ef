//===- ToolOptions.h - --help and --version of the tq tools -----*- C++ -*-===//
//
// The tools link all of LLVM, whose libraries register hundreds of command
// line options (amdgpu, aarch64, polly...). A tool takes only its own and
// its --help lists only those (tq-opt and tq-translate, like mlir-opt,
// still take LLVM's, unlisted); --version prints tile-quant's version.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_SUPPORT_TOOLOPTIONS_H
#define TQ_SUPPORT_TOOLOPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace tq {

/// "tile-quant X.Y.Z (LLVM A.B.C)".
void printVersion(llvm::raw_ostream &os);

/// Before cl::ParseCommandLineOptions: the tool takes the options in
/// `categories`, those of its subcommands, and the --help* options and
/// --version, and no others (LLVM's are dropped); --help shows them, and
/// --version prints tile-quant's.
void initToolOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> categories);

/// For the tools built on MLIR's mains (tq-opt, tq-translate), which
/// register their options as they start: hides every option registered so
/// far (LLVM's), --help* and --version aside, and sets the version
/// printer. Hidden, they are still accepted, as by mlir-opt.
void hideLLVMOptions();

} // namespace tq

#endif // TQ_SUPPORT_TOOLOPTIONS_H
