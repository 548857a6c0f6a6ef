//===- Diagnostics.cpp - diagnostics fit for a terminal -------------------===//
#include "tq/Support/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

using namespace llvm;

/// The caret's column if `line` is a caret line ("   ^~~~"), else npos.
static size_t caretColumn(StringRef line) {
  size_t caret = line.find_first_not_of(' ');
  if (caret == StringRef::npos || line[caret] != '^' ||
      line.drop_front(caret + 1).find_first_not_of('~') != StringRef::npos)
    return StringRef::npos;
  return caret;
}

std::string tq::elideLongLines(const std::string &text, size_t maxColumns) {
  SmallVector<StringRef> lines;
  StringRef(text).split(lines, '\n');
  std::string out;
  size_t keep = maxColumns < 40 ? 40 : maxColumns; // the window's width
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef line = lines[i];
    if (i)
      out += '\n';
    size_t caret =
        i + 1 < lines.size() ? caretColumn(lines[i + 1]) : StringRef::npos;
    bool source = caret != StringRef::npos && caret <= line.size();
    // A source line is cut at maxColumns; other lines (messages, printed
    // ops) only when much longer.
    if (line.size() <= (source ? maxColumns : 5 * maxColumns)) {
      out += line.str();
      continue;
    }
    size_t start = 0;
    if (source)
      start = caret > keep / 3 ? caret - keep / 3 : 0;
    size_t end = std::min(line.size(), start + (source ? keep : 5 * keep));
    std::string prefix = start ? "..." : "";
    out += prefix + line.slice(start, end).str();
    if (end < line.size())
      out += "... (" + std::to_string(line.size()) + " characters)";
    if (source) {
      // The caret line, shifted with the window (the caret may sit just
      // past the line's end).
      out += '\n';
      out += std::string(caret - start + prefix.size(), ' ');
      out += lines[i + 1].drop_front(caret).take_front(end + 1 - caret).str();
      ++i;
    }
  }
  return out;
}
