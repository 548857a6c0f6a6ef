//===- Diagnostics.h - diagnostics fit for a terminal -----------*- C++ -*-===//
#ifndef TQ_SUPPORT_DIAGNOSTICS_H
#define TQ_SUPPORT_DIAGNOSTICS_H

#include <string>

namespace tq {

/// `text` (diagnostics with their source lines) with every source line (one
/// a caret line follows, "    ^") longer than `maxColumns` cut to a window
/// around the caret, the caret line moved with it, and any other line longer
/// than 5 x `maxColumns` (a printed op) cut to that length; "..." marks what
/// is cut. A 100 kB constant on the line of an error is no longer echoed
/// whole.
std::string elideLongLines(const std::string &text, size_t maxColumns = 200);

} // namespace tq

#endif // TQ_SUPPORT_DIAGNOSTICS_H
