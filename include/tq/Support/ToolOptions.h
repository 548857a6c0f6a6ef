//===- ToolOptions.h - --help and --version of the tq tools -----*- C++ -*-===//
//
// The tools link all of LLVM, whose libraries register hundreds of command
// line options (amdgpu, aarch64, polly...). A tool's --help lists only its
// own; --version prints tile-quant's version.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_SUPPORT_TOOLOPTIONS_H
#define TQ_SUPPORT_TOOLOPTIONS_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace tq {

/// "tile-quant X.Y.Z (LLVM A.B.C)".
void printVersion(llvm::raw_ostream &os);

/// Before cl::ParseCommandLineOptions: --help shows the options in
/// `category` (and --help, --version), and --version prints tile-quant's.
void initToolOptions(llvm::cl::OptionCategory &category);

/// For the tools built on MLIR's mains (tq-opt, tq-translate), which
/// register their options as they start: hides every option registered so
/// far (LLVM's), --help and --version aside, and sets the version printer.
void hideLLVMOptions();

} // namespace tq

#endif // TQ_SUPPORT_TOOLOPTIONS_H
