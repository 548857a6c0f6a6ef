//===- LongLines.cpp - tq-opt's diagnostics on very long lines ------------===//
//
// MlirOptMain owns its diagnostic handler, which echoes the whole source
// line of an error. A handler registered when the func dialect loads (while
// the input is parsed, after MlirOptMain's own handler) is asked first: it
// prints the errors that would echo a very long line itself, cut, and
// leaves the others to MLIR.
//
//===----------------------------------------------------------------------===//
#include "LongLines.h"
#include "tq/Support/Diagnostics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace mlir;

namespace {
constexpr size_t kMaxColumns = 200;

/// Line `line` (1-based) of `file`, read once per file.
class SourceLines {
public:
  llvm::StringRef get(llvm::StringRef file, unsigned line) {
    auto it = files.find(file);
    if (it == files.end()) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> b =
          llvm::MemoryBuffer::getFile(file);
      it = files.try_emplace(file, b ? std::move(*b) : nullptr).first;
    }
    if (!it->second || line == 0)
      return {};
    llvm::StringRef rest = it->second->getBuffer();
    for (unsigned i = 1; i < line && !rest.empty(); ++i)
      rest = rest.split('\n').second;
    return rest.split('\n').first;
  }

private:
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
};

/// Whether -verify-diagnostics was given (its handler must see everything).
bool verifying() {
  llvm::cl::Option *o =
      llvm::cl::getRegisteredOptions().lookup("verify-diagnostics");
  return o && o->getNumOccurrences() > 0;
}

const char *severity(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// The location's file position, if it has one.
FileLineColLoc fileLoc(Location loc) {
  return loc->findInstanceOf<FileLineColLoc>();
}

/// "file:line:col: error: message", then the source line and a caret, as
/// MLIR prints them, with the source line and any line of the message after
/// its first (a note's op) cut to a window.
void format(llvm::raw_ostream &os, Location loc, DiagnosticSeverity kind,
            llvm::StringRef message, SourceLines &lines) {
  FileLineColLoc file = fileLoc(loc);
  if (file)
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn() << ": ";
  else if (!isa<UnknownLoc>(loc))
    os << loc << ": ";
  auto [first, rest] = message.split('\n');
  os << severity(kind) << ": " << first << "\n";
  if (!rest.empty())
    os << tq::elideLongLines(rest.str(), kMaxColumns) << "\n";
  if (!file)
    return;
  llvm::StringRef line =
      lines.get(file.getFilename().getValue(), file.getLine());
  if (line.empty())
    return;
  std::string caret(file.getColumn() ? file.getColumn() - 1 : 0, ' ');
  os << tq::elideLongLines(line.str() + "\n" + caret + "^", kMaxColumns)
     << "\n";
}

void registerHandler(MLIRContext *ctx) {
  auto lines = std::make_shared<SourceLines>();
  ctx->getDiagEngine().registerHandler([lines](Diagnostic &d) {
    if (verifying())
      return failure();
    // Only an error whose own source line is very long is printed here.
    FileLineColLoc file = fileLoc(d.getLocation());
    if (!file ||
        lines->get(file.getFilename().getValue(), file.getLine()).size() <=
            kMaxColumns)
      return failure(); // MLIR's handler prints it as usual
    std::string text;
    llvm::raw_string_ostream os(text);
    format(os, d.getLocation(), d.getSeverity(), d.str(), *lines);
    for (Diagnostic &note : d.getNotes())
      format(os, note.getLocation(), note.getSeverity(), note.str(), *lines);
    llvm::errs() << text;
    return success();
  });
}
} // namespace

void tq::registerLongLineDiagnostics(DialectRegistry &registry) {
  registry.addExtension(
      +[](MLIRContext *ctx, func::FuncDialect *) { registerHandler(ctx); });
}
