//===- tq-compile.cpp - ONNX model to a library, in one command -----------===//
//
//   tq-compile MODEL.onnx -o model.so [--dim=batch=64] [--quantize="tile=16"]
//   tq-compile MODEL.onnx -o model.o      (object code, to link yourself)
//   tq-compile MODEL.onnx -o model.mlir   (the quantized program)
//
// Imports MODEL (tq-import-onnx), quantizes it (the tq-quantize pipeline,
// unless --float), lowers it for this CPU (tq-to-cpu) and links it. Next to
// a library or object it writes a C header (model.h) that declares the
// entry point, named after the output file (--name), with one parameter per
// ONNX input and output. It prints the time of each phase.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Driver/Driver.h"
#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Support/ToolOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
namespace cpu = tq::cpu;
namespace driver = tq::driver;

static cl::OptionCategory toolOptions("tq-compile options");
static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::Required, cl::desc("<model.onnx>"));
static cl::opt<std::string>
    outputPath(cl::cat(toolOptions), "o", cl::Required,
               cl::desc("output file: a shared library (.so), object code "
                        "(.o) or MLIR (.mlir); --emit overrides the suffix"),
               cl::value_desc("file"));
static cl::opt<std::string>
    emit(cl::cat(toolOptions), "emit",
         cl::desc("what to write: so, obj or mlir (default: from -o's suffix)"),
         cl::init(""));
static cl::opt<std::string>
    headerPath(cl::cat(toolOptions), "header",
               cl::desc("where the C header goes (default: -o with .h; "
                        "'none' for no header)"),
               cl::value_desc("file.h"), cl::init(""));
static cl::opt<std::string>
    name(cl::cat(toolOptions), "name",
         cl::desc("the entry point's name, a C identifier (default: -o's "
                  "stem); the header declares <name>_run"),
         cl::init(""));
static cl::list<std::string>
    inputShapes(cl::cat(toolOptions), "input-shape",
                cl::desc("NAME:D0xD1x...: fix the shape of a graph input"));
static cl::list<std::string>
    dims(cl::cat(toolOptions), "dim",
         cl::desc("NAME=N: give symbolic dimension NAME the value N"));
static cl::list<std::string> constantInputs(
    cl::cat(toolOptions), "constant-input",
    cl::desc("NAME=FILE.npy: make graph input NAME this constant"));
static cl::opt<std::string>
    quantize(cl::cat(toolOptions), "quantize",
             cl::desc("tq-quantize options (\"tile=16 act-bits=8\"); "
                      "default: the pipeline's defaults"),
             cl::init(""));
static cl::opt<bool>
    floatModel(cl::cat(toolOptions), "float",
               cl::desc("compile the float model, unquantized"));
static cl::opt<std::string>
    target(cl::cat(toolOptions), "target",
           cl::desc("instruction set: native, avx512, avxvnni, avx2 or "
                    "generic"),
           cl::init("native"));
static cl::opt<int64_t>
    threads(cl::cat(toolOptions), "num-threads",
            cl::desc("threads sharing the compiled loops (more "
                     "than 1: the library needs libomp)"),
            cl::init(1));
static cl::opt<unsigned> optLevel(cl::cat(toolOptions), "O",
                                  cl::desc("LLVM optimization level"),
                                  cl::init(3));
static cl::opt<bool>
    verifyEach(cl::cat(toolOptions), "verify-each",
               cl::desc("verify the IR after each tq-to-cpu pass (by "
                        "default the program and the lowered module are "
                        "verified)"),
               cl::init(false));
static cl::opt<bool> quiet(cl::cat(toolOptions), "quiet",
                           cl::desc("do not print the time of each phase"));

static int fail(const Twine &msg) {
  errs() << "tq-compile: error: " << msg << "\n";
  return 1;
}

using Clock = std::chrono::steady_clock;
static double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

static bool writeFile(const std::string &path, const std::string &text,
                      std::string &error) {
  std::error_code ec;
  ToolOutputFile out(path, ec, sys::fs::OF_Text);
  if (ec) {
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  out.os() << text;
  out.keep();
  return true;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  tq::initToolOptions({&toolOptions});
  cl::ParseCommandLineOptions(
      argc, argv,
      "tile-quant compiler: an ONNX model to a shared library (or object "
      "code, or MLIR) and its C header, quantized\n");

  // What to write.
  std::string kind = emit;
  StringRef suffix = sys::path::extension(outputPath);
  if (kind.empty())
    kind = suffix == ".so"     ? "so"
           : suffix == ".o"    ? "obj"
           : suffix == ".mlir" ? "mlir"
                               : "";
  if (kind.empty())
    return fail("cannot tell what to write from '" + outputPath +
                "': name it .so, .o or .mlir, or give --emit=so|obj|mlir");
  if (kind != "so" && kind != "obj" && kind != "mlir")
    return fail("--emit must be so, obj or mlir, got '" + kind + "'");
  std::string entry = name;
  if (entry.empty())
    entry = driver::toCIdentifier(sys::path::stem(outputPath).str());
  if (!driver::isCIdentifier(entry))
    return fail("--name must be a C identifier other than main, got '" + entry +
                "'");
  if (floatModel && !quantize.empty())
    return fail("--float and --quantize exclude each other");
  if (optLevel > 3)
    return fail("-O must be 0..3, got " + Twine(optLevel));
  if (threads < 1)
    return fail("--num-threads must be at least 1, got " + Twine(threads));
  if (!mlir::tq::parseCPUTarget(target))
    return fail("--target must be " + mlir::tq::cpuTargetNames() + ", got '" +
                target + "'");
  if (!cpu::hostSupports(target))
    return fail("this host cannot run --target=" + target);
  if (kind == "mlir" && !headerPath.empty())
    return fail("--header is for a library or object code; -o " + outputPath +
                " writes MLIR");
  std::string header = headerPath;
  if (header.empty() && kind != "mlir") {
    SmallString<128> h(outputPath);
    sys::path::replace_extension(h, ".h");
    header = h.str().str();
  }
  if (header == "none" || kind == "mlir")
    header.clear();

  driver::ProgramOptions options;
  options.import.function = entry;
  options.quantize = !floatModel;
  options.quantizeOptions = quantize;
  std::string error;
  if (!driver::parseImportOptions(inputShapes, dims, constantInputs,
                                  options.import, error))
    return fail(error);

  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(modelPath);
  if (!file)
    return fail("cannot open '" + modelPath +
                "': " + file.getError().message());
  driver::Program program;
  if (!driver::buildProgram((*file)->getBuffer().str(), modelPath, options,
                            program, error)) {
    errs() << "tq-compile: error: " << error;
    if (!StringRef(error).ends_with("\n"))
      errs() << "\n";
    return 1;
  }
  std::vector<driver::Phase> phases = program.phases;
  auto report = [&](const std::string &written) {
    if (quiet)
      return;
    errs() << "tq-compile: " << written << " (";
    double total = 0;
    for (auto [i, p] : llvm::enumerate(phases)) {
      errs() << (i ? ", " : "") << p.name << " " << format("%.2f", p.seconds)
             << " s";
      total += p.seconds;
    }
    errs() << "; total " << format("%.2f", total) << " s)\n";
  };
  if (kind == "mlir") {
    auto start = Clock::now();
    if (!writeFile(outputPath, program.text, error))
      return fail(error);
    phases.push_back({"write", since(start)});
    report(outputPath);
    return 0;
  }

  cpu::CompileOptions cpuOptions;
  cpuOptions.target = target;
  cpuOptions.threads = threads;
  cpuOptions.optLevel = optLevel;
  cpuOptions.keepObject = true;
  cpuOptions.verifyEach = verifyEach;
  auto start = Clock::now();
  std::unique_ptr<cpu::CPUModule> module =
      cpu::CPUModule::compile(program.text, modelPath, cpuOptions, error);
  if (!module) {
    errs() << error;
    return 1;
  }
  phases.push_back({"compile", since(start)});
  // The header's text first: a signature it cannot express writes nothing.
  std::string headerText;
  if (!header.empty()) {
    cpu::Signature sig;
    if (!module->signature(entry, sig, error) ||
        !driver::writeHeader(entry, module->symbol(entry), sig,
                             sys::path::filename(modelPath).str(), headerText,
                             error))
      return fail(error);
  }
  start = Clock::now();
  if (kind == "so" ? !module->writeSharedLibrary(outputPath, error)
                   : !module->dumpObject(outputPath, error))
    return fail(error);
  phases.push_back({kind == "so" ? "link" : "write", since(start)});
  std::string written = outputPath;
  if (!header.empty()) {
    if (!writeFile(header, headerText, error)) {
      sys::fs::remove(outputPath); // not a library without its header
      return fail(error);
    }
    written += ", " + header;
  }
  report(written);
  return 0;
}
