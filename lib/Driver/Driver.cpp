//===- Driver.cpp - ONNX model to MLIR program ----------------------------===//
#include "tq/Driver/Driver.h"
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Pipelines/Pipelines.h"
#include "tq/Runtime/Npy.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace tq::driver;

namespace {
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Collects the errors emitted while it lives, a line "LOC: MSG" each.
class DiagnosticCollector {
public:
  DiagnosticCollector(mlir::MLIRContext &ctx)
      : handler(&ctx, [this](mlir::Diagnostic &d) {
          if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::failure(); // printed as usual
          raw_string_ostream os(text);
          if (!isa<mlir::UnknownLoc>(d.getLocation()))
            os << d.getLocation() << ": ";
          os << d.str() << "\n";
          return mlir::success();
        }) {}
  std::string text;

private:
  mlir::ScopedDiagnosticHandler handler;
};
} // namespace

/// Quantizes `module` as `options` say (if they do) and prints it into
/// `out`, with locations.
static bool quantizeAndPrint(mlir::ModuleOp module,
                             DiagnosticCollector &diagnostics,
                             const ProgramOptions &options, Program &out,
                             std::string &error) {
  if (options.quantize) {
    auto start = Clock::now();
    mlir::tq::QuantizePipelineOptions quantize;
    std::string why;
    raw_string_ostream os(why);
    if (failed(quantize.parseFromString(options.quantizeOptions, os))) {
      error = "bad quantize options '" + options.quantizeOptions +
              "': " + StringRef(why).trim().str();
      return false;
    }
    if (failed(mlir::tq::checkQuantizeOptions(quantize, error)))
      return false;
    mlir::PassManager pm(module.getContext());
    mlir::tq::buildQuantizePipeline(pm, quantize);
    if (failed(pm.run(module))) {
      error =
          "tq-quantize: " +
          (diagnostics.text.empty() ? std::string("failed") : diagnostics.text);
      return false;
    }
    out.phases.push_back({"quantize", since(start)});
  }

  // Locations name the ONNX nodes: profiles, PPU reports and diagnostics
  // downstream refer to layers by them.
  out.text.clear();
  raw_string_ostream os(out.text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo();
  module->print(os, flags);
  out.function = options.import.function;
  return true;
}

static void registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::tq::TQDialect>();
  mlir::tq::registerTQCPUDialects(registry);
}

bool tq::driver::buildProgram(const std::string &bytes, const std::string &name,
                              const ProgramOptions &options, Program &out,
                              std::string &error) {
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::MLIRContext ctx(registry);
  DiagnosticCollector diagnostics(ctx);

  auto start = Clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tq::importONNX(bytes, name, &ctx, options.import, error);
  if (!module)
    return false;
  if (failed(mlir::verify(*module))) {
    error = "the imported module does not verify (an importer bug): " +
            diagnostics.text;
    return false;
  }
  out.phases.push_back({"import", since(start)});
  return quantizeAndPrint(*module, diagnostics, options, out, error);
}

bool tq::driver::buildProgramFromMLIR(const std::string &source,
                                      const std::string &name,
                                      const ProgramOptions &options,
                                      Program &out, std::string &error) {
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::MLIRContext ctx(registry);
  DiagnosticCollector diagnostics(ctx);
  auto start = Clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &ctx, name);
  if (!module || failed(mlir::verify(*module))) {
    error = name + ": " +
            (diagnostics.text.empty() ? std::string("cannot be parsed")
                                      : diagnostics.text);
    return false;
  }
  out.phases.push_back({"parse", since(start)});
  return quantizeAndPrint(*module, diagnostics, options, out, error);
}

bool tq::driver::parseImportOptions(
    const std::vector<std::string> &inputShapes,
    const std::vector<std::string> &dims,
    const std::vector<std::string> &constantInputs,
    mlir::tq::ONNXImportOptions &options, std::string &error) {
  return all_of(inputShapes,
                [&](const std::string &s) {
                  return parseInputShape(s, options, error);
                }) &&
         all_of(dims,
                [&](const std::string &s) {
                  return parseDim(s, options, error);
                }) &&
         all_of(constantInputs, [&](const std::string &s) {
           return parseConstantInput(s, options, error);
         });
}

bool tq::driver::parseInputShape(const std::string &spec,
                                 mlir::tq::ONNXImportOptions &options,
                                 std::string &error) {
  auto [name, dims] = StringRef(spec).rsplit(':');
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  std::vector<int64_t> shape;
  for (StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 1) {
      error = "--input-shape must be NAME:D0xD1x... with positive dims, got '" +
              spec + "'";
      return false;
    }
    shape.push_back(d);
  }
  if (name.empty() || dims.empty()) {
    error = "--input-shape must be NAME:D0xD1x..., got '" + spec + "'";
    return false;
  }
  options.inputShapes[name.str()] = shape;
  return true;
}

bool tq::driver::parseDim(const std::string &spec,
                          mlir::tq::ONNXImportOptions &options,
                          std::string &error) {
  auto [name, value] = StringRef(spec).rsplit('=');
  int64_t d;
  if (name.empty() || value.getAsInteger(10, d) || d < 1) {
    error = "--dim must be NAME=N with N positive, got '" + spec + "'";
    return false;
  }
  options.dims[name.str()] = d;
  return true;
}

bool tq::driver::parseConstantInput(const std::string &spec,
                                    mlir::tq::ONNXImportOptions &options,
                                    std::string &error) {
  auto [name, path] = StringRef(spec).split('=');
  if (name.empty() || path.empty()) {
    error = "--constant-input must be NAME=FILE.npy, got '" + spec + "'";
    return false;
  }
  tq::npy::Array a;
  std::string why;
  if (!tq::npy::read(path.str(), a, why)) {
    error = "--constant-input " + name.str() + ": " + why;
    return false;
  }
  mlir::tq::ONNXConstant c;
  c.shape = a.shape;
  // ONNX data types: FLOAT 1, UINT8 2, INT8 3, INT16 5, INT32 6, INT64 7.
  switch (a.dtype) {
  case tq::npy::DType::F32:
  case tq::npy::DType::F64:
    c.dataType = 1;
    break;
  case tq::npy::DType::U8:
  case tq::npy::DType::Bool:
    c.dataType = 2;
    break;
  case tq::npy::DType::I8:
    c.dataType = 3;
    break;
  case tq::npy::DType::I16:
    c.dataType = 5;
    break;
  case tq::npy::DType::I32:
    c.dataType = 6;
    break;
  case tq::npy::DType::I64:
    c.dataType = 7;
    break;
  }
  for (int64_t i = 0; i < a.numElements(); ++i)
    c.values.push_back(a.at(i));
  options.constants[name.str()] = c;
  return true;
}
