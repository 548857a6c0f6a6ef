//===- Diagnostics.h - diagnostics fit for a terminal -----------*- C++ -*-===//
#ifndef TQ_SUPPORT_DIAGNOSTICS_H
#define TQ_SUPPORT_DIAGNOSTICS_H

#include <string>

namespace tq {

/// `text` (diagnostics with their source lines) with every line longer than
/// `maxColumns` cut to a window: around the caret when the next line points
/// into it ("    ^"), else its start; "..." marks what is cut and the caret
/// line moves with the window. A 100 kB constant on the line of an error is
/// no longer echoed whole.
std::string elideLongLines(const std::string &text, size_t maxColumns = 200);

} // namespace tq

#endif // TQ_SUPPORT_DIAGNOSTICS_H
