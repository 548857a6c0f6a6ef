//===- PipelineGen.cpp - pass pipeline options and docs from ODS ----------===//
//
// Generates, for each `Pipeline` record (include/tq/Pipelines/Pipelines.td),
// a `PassPipelineOptions` struct with the pipeline's options, and for each
// pass the pipeline lists, a method that fills that pass's generated options
// struct from the options of the same name. The options are the pass
// records' own (`ConvertTQToPPU.options`), so each is declared once, in the
// pass that reads it; `-gen-pipeline-doc` writes the reference page.
//
//===----------------------------------------------------------------------===//

#include "OptionCopy.h"

#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Pass.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tblgen;
using llvm::Record;
using llvm::RecordKeeper;

namespace {
/// A `Pipeline` record.
class Pipeline {
public:
  explicit Pipeline(const Record *def) : def(def) {
    for (const Record *o : def->getValueAsListOfDefs("options"))
      options.emplace_back(o);
    for (const Record *p : def->getValueAsListOfDefs("passes"))
      passes.emplace_back(p);
  }

  StringRef getArgument() const { return def->getValueAsString("argument"); }
  StringRef getSummary() const { return def->getValueAsString("summary"); }
  StringRef getDescription() const {
    return def->getValueAsString("description");
  }
  std::string getOptionsStructName() const {
    return (def->getName() + "Options").str();
  }

  const Record *def;
  std::vector<PassOption> options;
  std::vector<Pass> passes;
};
} // namespace

static std::vector<Pipeline> getPipelines(const RecordKeeper &records) {
  std::vector<Pipeline> pipelines;
  for (const Record *def : records.getAllDerivedDefinitions("Pipeline"))
    pipelines.emplace_back(def);
  return pipelines;
}

/// Checks that the pipeline's options have distinct names, and that each
/// listed pass shares at least one with it, with the same type.
static void verify(const Pipeline &pipeline) {
  llvm::StringMap<const PassOption *> byName, byArgument;
  for (const PassOption &o : pipeline.options) {
    if (!byName.try_emplace(o.getCppVariableName(), &o).second ||
        !byArgument.try_emplace(o.getArgument(), &o).second)
      llvm::PrintFatalError(pipeline.def,
                            "option '" + o.getArgument() + "' appears twice");
  }
  for (const Pass &pass : pipeline.passes) {
    bool shared = false;
    for (const PassOption &p : pass.getOptions()) {
      auto it = byName.find(p.getCppVariableName());
      if (it == byName.end())
        continue;
      const PassOption &o = *it->second;
      auto kind = [](const PassOption &x) {
        return (x.isListOption() ? "a list of " : "") + x.getType().str();
      };
      if (o.getArgument() != p.getArgument())
        llvm::PrintFatalError(pipeline.def,
                              "option '" + o.getArgument() + "' fills '" +
                                  p.getArgument() + "' of pass " +
                                  pass.getDef()->getName() +
                                  " (same C++ name, other argument)");
      if (kind(o) != kind(p))
        llvm::PrintFatalError(pipeline.def,
                              "option '" + o.getArgument() + "' is " + kind(o) +
                                  " here but " + kind(p) + " in pass " +
                                  pass.getDef()->getName());
      shared = true;
    }
    if (!shared)
      llvm::PrintFatalError(pipeline.def,
                            "pass " + pass.getDef()->getName() +
                                " shares no option with the pipeline");
  }
}

static void emitOption(const PassOption &o, raw_ostream &os) {
  os << llvm::formatv("  {0}<{1}> {2}{{*this, \"{3}\", ::llvm::cl::desc(R\"PO("
                      "{4})PO\")",
                      o.isListOption() ? "ListOption" : "Option", o.getType(),
                      o.getCppVariableName(), o.getArgument(),
                      o.getDescription().trim());
  if (std::optional<StringRef> init = o.getDefaultValue())
    os << ", ::llvm::cl::init(" << *init << ")";
  if (std::optional<StringRef> flags = o.getAdditionalFlags())
    os << ", " << *flags;
  os << "};\n";
}

/// `<Pass>Options get<Pass>Options() const`: the pass's options that the
/// pipeline has, copied; the others at the pass's defaults.
static void emitPassOptionsGetter(const Pipeline &pipeline, const Pass &pass,
                                  raw_ostream &os) {
  StringRef name = pass.getDef()->getName();
  os << llvm::formatv("  /// The options `{0}` shares with this pipeline; its "
                      "others keep their defaults.\n",
                      pass.getArgument());
  os << llvm::formatv("  {0}Options get{0}Options() const {{\n", name);
  os << llvm::formatv("    {0}Options result;\n", name);
  for (const PassOption &p : pass.getOptions()) {
    bool shared = llvm::any_of(pipeline.options, [&](const PassOption &o) {
      return o.getCppVariableName() == p.getCppVariableName();
    });
    if (!shared)
      continue;
    tq::tblgen::emitOptionCopy(p, "    ", os);
  }
  os << "    return result;\n  }\n";
}

static bool emitPipelineDecls(const RecordKeeper &records, raw_ostream &os) {
  llvm::emitSourceFileHeader("Pass pipeline options", os, records);
  for (const Pipeline &pipeline : getPipelines(records)) {
    verify(pipeline);
    std::string name = pipeline.getOptionsStructName();
    os << llvm::formatv("#ifdef GEN_PIPELINE_DECL_{0}\n",
                        StringRef(name).upper());
    os << llvm::formatv("/// Options of the `{0}` pipeline.\n",
                        pipeline.getArgument());
    os << llvm::formatv("struct {0} : public ::mlir::PassPipelineOptions<{0}> "
                        "{{\n",
                        name);
    os << llvm::formatv("  static constexpr ::llvm::StringLiteral argument = "
                        "\"{0}\";\n",
                        pipeline.getArgument());
    os << llvm::formatv("  static constexpr ::llvm::StringLiteral summary = "
                        "R\"PO({0})PO\";\n",
                        pipeline.getSummary());
    for (const PassOption &o : pipeline.options)
      emitOption(o, os);
    for (const Pass &pass : pipeline.passes)
      emitPassOptionsGetter(pipeline, pass, os);
    os << "};\n";
    os << llvm::formatv("#undef GEN_PIPELINE_DECL_{0}\n",
                        StringRef(name).upper());
    os << llvm::formatv("#endif // GEN_PIPELINE_DECL_{0}\n\n",
                        StringRef(name).upper());
  }
  return false;
}

/// The default as a user writes it: an enum's by its name in the option's
/// `clEnumValN` list, a string without quotes; empty for none.
static std::string getDefaultSpelling(const PassOption &o) {
  std::optional<StringRef> init = o.getDefaultValue();
  if (!init)
    return "";
  // clEnumValN(VALUE, "name", "description"): the name of the entry whose
  // value is the default.
  if (std::optional<StringRef> flags = o.getAdditionalFlags()) {
    StringRef rest = *flags;
    for (size_t at; (at = rest.find("clEnumValN(")) != StringRef::npos;) {
      rest = rest.drop_front(at + strlen("clEnumValN("));
      auto [value, tail] = rest.split(',');
      size_t open = tail.find('"'), close = tail.find('"', open + 1);
      if (value.trim() == init->trim() && close != StringRef::npos)
        return tail.slice(open + 1, close).str();
    }
  }
  return init->trim('"').str();
}

/// The reference page, laid out as mlir-tblgen's pass pages are, with each
/// option's default.
static bool emitPipelineDoc(const RecordKeeper &records, raw_ostream &os) {
  os << "<!-- Autogenerated by tq-tblgen; don't manually edit -->\n";
  for (const Pipeline &pipeline : getPipelines(records)) {
    verify(pipeline);
    os << llvm::formatv("\n### `-{0}`\n\n_{1}_\n", pipeline.getArgument(),
                        pipeline.getSummary());
    StringRef description = pipeline.getDescription().trim();
    if (!description.empty()) {
      os << "\n";
      // Descriptions are indented in the .td file; drop that indentation.
      SmallVector<StringRef> lines;
      description.split(lines, '\n');
      size_t indent = StringRef::npos;
      for (StringRef line : ArrayRef(lines).drop_front())
        if (!line.trim().empty())
          indent = std::min(indent, line.find_first_not_of(' '));
      for (auto [i, line] : llvm::enumerate(lines))
        os << (i == 0 || line.size() < indent ? line.rtrim()
                                              : line.drop_front(indent).rtrim())
           << "\n";
    }
    if (pipeline.options.empty())
      continue;
    size_t width = 0;
    for (const PassOption &o : pipeline.options)
      width = std::max(width, o.getArgument().size());
    os << "\n#### Options\n\n```\n";
    for (const PassOption &o : pipeline.options) {
      os << "-" << o.getArgument();
      os.indent(width - o.getArgument().size());
      os << " : " << o.getDescription().trim();
      if (std::string init = getDefaultSpelling(o); !init.empty())
        os << " (default: " << init << ")";
      os << "\n";
    }
    os << "```\n";
    if (!pipeline.passes.empty()) {
      os << "\nEach option is the option of the same name of ";
      llvm::interleave(
          pipeline.passes, os,
          [&](const Pass &p) { os << "`-" << p.getArgument() << "`"; }, ", ");
      os << " where that pass has one.\n";
    }
  }
  return false;
}

static GenRegistration genPipelineDecls("gen-pipeline-decls",
                                        "Generate pass pipeline options",
                                        emitPipelineDecls);
static GenRegistration genPipelineDoc("gen-pipeline-doc",
                                      "Generate pass pipeline documentation",
                                      emitPipelineDoc);
