//===- Header.cpp - the C header of a compiled entry point ----------------===//
//
// MLIR's C interface passes a memref as a pointer to its descriptor
// (allocated and aligned pointers, offset, then sizes and strides per dim),
// and shaped results as out-parameters after the inputs. The header
// declares that interface and wraps it in a function taking one pointer per
// buffer, named after the ONNX inputs and outputs.
//
//===----------------------------------------------------------------------===//
#include "tq/Driver/Driver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace llvm;
using namespace tq;

bool driver::isCIdentifier(const std::string &name) {
  if (name.empty() || isDigit(name[0]) || name == "main")
    return false;
  return all_of(name, [](char c) { return isAlnum(c) || c == '_'; });
}

std::string driver::toCIdentifier(const std::string &name) {
  std::string out;
  for (char c : name)
    out += isAlnum(c) || c == '_' ? c : '_';
  if (out.empty() || isDigit(out[0]))
    out = "_" + out;
  return out;
}

static const char *cType(cpu::ElementType t) {
  switch (t) {
  case cpu::ElementType::F32:
    return "float";
  case cpu::ElementType::I8:
    return "int8_t";
  case cpu::ElementType::I16:
    return "int16_t";
  case cpu::ElementType::I32:
    return "int32_t";
  case cpu::ElementType::I64:
    return "int64_t";
  case cpu::ElementType::Bool:
    return "uint8_t";
  }
  return "void";
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "";
  return "[" +
         join(map_range(shape, [](int64_t d) { return itostr(d); }), "][") +
         "]";
}

bool driver::writeHeader(const std::string &function, const std::string &symbol,
                         const cpu::Signature &sig, const std::string &source,
                         std::string &out, std::string &error) {
  for (const cpu::BufferType &b : sig.outputs)
    if (b.scalar) {
      error = "@" + function +
              " returns a scalar, which the C header cannot express";
      return false;
    }
  std::string guard = StringRef(toCIdentifier(function)).upper() + "_H";

  // One C parameter per buffer, named by its label (or position): not a C
  // keyword, not the wrapper's locals (tq_m_*), and unique ignoring case
  // (the size macros are upper case).
  static const std::set<std::string> keywords = {
      "auto",     "break",    "case",     "char",   "const",    "continue",
      "default",  "do",       "double",   "else",   "enum",     "extern",
      "float",    "for",      "goto",     "if",     "inline",   "int",
      "long",     "register", "restrict", "return", "short",    "signed",
      "sizeof",   "static",   "struct",   "switch", "typedef",  "union",
      "unsigned", "void",     "volatile", "while",  "bool",     "true",
      "false",    "class",    "new",      "delete", "template", "this"};
  std::set<std::string> taken;
  auto paramName = [&](const cpu::BufferType &b) {
    std::string base = toCIdentifier(b.label.empty() ? b.name : b.label);
    if (keywords.count(base) || StringRef(base).starts_with("tq_m_"))
      base += "_";
    std::string name = base;
    for (int i = 2; !taken.insert(StringRef(name).upper()).second; ++i)
      name = base + "_" + itostr(i);
    return name;
  };
  std::vector<std::string> inNames, outNames;
  for (const cpu::BufferType &b : sig.inputs)
    inNames.push_back(paramName(b));
  for (const cpu::BufferType &b : sig.outputs)
    outNames.push_back(paramName(b));

  std::set<size_t> ranks;
  for (const auto *list : {&sig.inputs, &sig.outputs})
    for (const cpu::BufferType &b : *list)
      if (!b.scalar)
        ranks.insert(b.shape.size());

  raw_string_ostream os(out);
  os << "/* " << function << ".h: the C interface of @" << function
     << ", compiled by tq-compile from " << source
     << ".\n   Generated: do not edit. Link against the library "
        "(-l, or its path).\n\n";
  os << "   " << function
     << "_run(...) takes one pointer per array, C order "
        "without padding;\n   outputs are overwritten:\n";
  auto describe = [&](const cpu::BufferType &b, const std::string &name,
                      const char *what) {
    os << formatv("     {0,-8} {1} {2}{3}\n", what, cType(b.element), name,
                  shapeText(b.shape));
  };
  for (auto [b, name] : zip(sig.inputs, inNames))
    describe(b, name, "input");
  for (auto [b, name] : zip(sig.outputs, outNames))
    describe(b, name, "output");
  os << "*/\n#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";

  // Element counts, for allocating the arrays.
  auto sizes = [&](const std::vector<cpu::BufferType> &list,
                   const std::vector<std::string> &names) {
    for (auto [b, name] : zip(list, names))
      if (!b.scalar)
        os << "#define " << StringRef(toCIdentifier(function)).upper() << "_"
           << StringRef(name).upper() << "_SIZE " << b.numElements() << "\n";
  };
  sizes(sig.inputs, inNames);
  sizes(sig.outputs, outNames);
  os << "\n";

  // The memref descriptors, one struct per rank.
  for (size_t r : ranks) {
    os << "typedef struct {\n  void *allocated, *aligned;\n  int64_t offset;\n";
    if (r)
      os << "  int64_t sizes[" << r << "], strides[" << r << "];\n";
    os << "} " << function << "_memref" << r << ";\n";
  }

  // The C interface.
  std::vector<std::string> params;
  auto declare = [&](const cpu::BufferType &b, const std::string &name) {
    params.push_back(
        b.scalar ? formatv("{0} {1}", cType(b.element), name).str()
                 : formatv("{0}_memref{1} *{2}", function, b.shape.size(), name)
                       .str());
  };
  for (auto [b, name] : zip(sig.inputs, inNames))
    declare(b, name);
  for (auto [b, name] : zip(sig.outputs, outNames))
    declare(b, name);
  os << "\nvoid _mlir_ciface_" << symbol << "(" << join(params, ", ")
     << ");\n\n";

  // The wrapper.
  params.clear();
  for (auto [b, name] : zip(sig.inputs, inNames))
    params.push_back(
        b.scalar ? formatv("{0} {1}", cType(b.element), name).str()
                 : formatv("const {0} *{1}", cType(b.element), name).str());
  for (auto [b, name] : zip(sig.outputs, outNames))
    params.push_back(formatv("{0} *{1}", cType(b.element), name).str());
  os << "static inline void " << function << "_run(" << join(params, ", ")
     << ") {\n";
  std::vector<std::string> args;
  auto descriptor = [&](const cpu::BufferType &b, const std::string &name) {
    if (b.scalar) {
      args.push_back(name);
      return;
    }
    std::string var = "tq_m_" + name;
    os << "  " << function << "_memref" << b.shape.size() << " " << var
       << " = {(void *)" << name << ", (void *)" << name << ", 0";
    if (!b.shape.empty()) {
      std::vector<int64_t> strides(b.shape.size(), 1);
      for (size_t i = b.shape.size() - 1; i > 0; --i)
        strides[i - 1] = strides[i] * b.shape[i];
      auto list = [](ArrayRef<int64_t> v) {
        return "{" +
               join(map_range(v, [](int64_t d) { return itostr(d); }), ", ") +
               "}";
      };
      os << ", " << list(b.shape) << ", " << list(strides);
    }
    os << "};\n";
    args.push_back("&" + var);
  };
  for (auto [b, name] : zip(sig.inputs, inNames))
    descriptor(b, name);
  for (auto [b, name] : zip(sig.outputs, outNames))
    descriptor(b, name);
  os << "  _mlir_ciface_" << symbol << "(" << join(args, ", ") << ");\n}\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return true;
}
