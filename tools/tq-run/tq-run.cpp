//===- tq-run.cpp - compile a tq program and run it on the CPU ------------===//
//
//   tq-run PROGRAM.mlir [--entry=main] [--target=native]
//          --input x.npy ... --output y.npy ... [--repeat=N]
//   tq-run PROGRAM.mlir --target=ppu [--machine="v=16 rows=2"] ...
//   tq-run model.mlir --input image=x.npy --compare=expected.npz
//
// Inputs are bound in order, by name (the ONNX input, or argN), from an
// .npz (every array by name) or from stdin (-); PROGRAM may be - too.
// --print-outputs prints the results, --compare checks them against
// expected arrays (exit 1 past --atol/--rtol).
//
// Lowers PROGRAM with tq-to-cpu, JIT-compiles it for this host and calls
// the entry function on .npy inputs, writing .npy outputs. A `!tq.tiled`
// argument or result is two arrays, its data then its steps (see
// --print-signature). --emit-object keeps the compiled code for linking
// ahead of time.
//
// --target=ppu runs the tq ops on the PPU simulator instead (kernels
// compiled by tq-to-ppu for --machine) and the float code between them on
// this host (see tq/ExecutionEngine/PPUModule.h); --ppu-report prints what
// the simulator counted.
//
// -mlir-timing prints the time of each compile phase (parse, the tq-to-cpu
// passes, LLVM translation and optimization, code generation).
//
//===----------------------------------------------------------------------===//
#include "Arrays.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/ExecutionEngine/PPUModule.h"
#include "tq/Runtime/Npy.h"
#include "tq/Support/ToolOptions.h"

#include "mlir/Support/Timing.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

#include <algorithm>
#include <chrono>

using namespace llvm;

static cl::OptionCategory toolOptions("tq-run options");
namespace cpu = tq::cpu;
namespace npy = tq::npy;
using tq::run::describe;
using tq::run::dtypeOf;

static cl::opt<std::string>
    programPath(cl::cat(toolOptions), cl::Positional, cl::Required,
                cl::desc("<program.mlir, or - for stdin>"));
static cl::opt<std::string> entry(cl::cat(toolOptions), "entry",
                                  cl::desc("function to call"),
                                  cl::init("main"));
static cl::opt<std::string> target(
    cl::cat(toolOptions), "target",
    cl::desc("instruction set: native, avx512, avxvnni, avx2 or generic; or "
             "ppu: the tq ops on the PPU simulator, the rest natively"),
    cl::init("native"));
static cl::opt<std::string>
    machine(cl::cat(toolOptions), "machine",
            cl::desc("--target=ppu: the machine, as tq-to-ppu options "
                     "(\"v=16 rows=2 acc=64\"); v defaults to the tile size"),
            cl::init(""));
static cl::opt<std::string>
    ppuCost(cl::cat(toolOptions), "ppu-cost",
            cl::desc("--target=ppu: the simulator's cost-model parameters "
                     "(\"banks=4 layout=slot overlap=0\", docs/PPU.md)"),
            cl::init(""));
static cl::opt<std::string>
    ppuReport(cl::cat(toolOptions), "ppu-report",
              cl::desc("--target=ppu: print the simulator's statistics of "
                       "one call: text, json or none"),
              cl::init("none"));
static cl::list<std::string> inputs(
    cl::cat(toolOptions), "input",
    cl::desc("FILE.npy: the next input buffer, in order; NAME=FILE.npy: the "
             "input named NAME (its ONNX name, or argN); FILE.npz: inputs by "
             "name; -: a .npy on stdin"));
static cl::list<std::string>
    outputs(cl::cat(toolOptions), "output",
            cl::desc("FILE.npy: the next output buffer, in order"));
static cl::opt<bool>
    printOutputs(cl::cat(toolOptions), "print-outputs",
                 cl::desc("print each output's name, shape and values"));
static cl::opt<std::string> compare(
    cl::cat(toolOptions), "compare",
    cl::desc("EXPECTED.npz (by output name) or .npy (one output): print each "
             "output's largest absolute and relative error, and exit 1 past "
             "--atol/--rtol"),
    cl::value_desc("file"), cl::init(""));
static cl::opt<double> absTolerance(cl::cat(toolOptions), "atol",
                                    cl::desc("--compare: absolute tolerance"),
                                    cl::init(1e-5));
static cl::opt<double> relTolerance(cl::cat(toolOptions), "rtol",
                                    cl::desc("--compare: relative tolerance"),
                                    cl::init(1e-4));
static cl::opt<std::string>
    timeFormat(cl::cat(toolOptions), "time-format",
               cl::desc("--repeat's timing: text or json"), cl::init("text"));
static cl::opt<unsigned> repeat(cl::cat(toolOptions), "repeat",
                                cl::desc("call the function N times and "
                                         "report the time"),
                                cl::init(1));
static cl::opt<int64_t>
    threads(cl::cat(toolOptions), "num-threads",
            cl::desc("threads sharing the compiled loops, one per core "
                     "(OMP_PROC_BIND=spread OMP_PLACES=cores unless the "
                     "environment sets either)"),
            cl::init(1));
static cl::opt<unsigned> optLevel(cl::cat(toolOptions), "O",
                                  cl::desc("LLVM optimization level"),
                                  cl::init(3));
static cl::opt<bool>
    outlineKernels(cl::cat(toolOptions), "outline-kernels",
                   cl::desc("compile each distinct loop nest once, as its "
                            "own function (tq-to-cpu outline-kernels)"),
                   cl::init(true));
static cl::opt<bool>
    splitBatch(cl::cat(toolOptions), "split-batch",
               cl::desc("with --num-threads above 1, share whole images "
                        "among the threads where the program allows; on "
                        "one thread, run two halves of the batch in turn "
                        "where they take the whole program (tq-to-cpu "
                        "split-batch); false: share each layer's loops"),
               cl::init(true));
static cl::opt<bool> channelsLast(
    cl::cat(toolOptions), "channels-last",
    cl::desc("run the float layers between quantized convolutions in NHWC "
             "(tq-to-cpu channels-last); false: in the model's NCHW"),
    cl::init(true));
static cl::opt<bool>
    verifyEach(cl::cat(toolOptions), "verify-each",
               cl::desc("verify the IR after each tq-to-cpu pass (by "
                        "default the program and the lowered module are "
                        "verified)"),
               cl::init(false));
static cl::opt<std::string> profileFormat(
    cl::cat(toolOptions), "profile", cl::ValueOptional,
    cl::desc("time each layer's kernels (tq-to-cpu profile): print the time "
             "per layer, named by its ONNX node, and per op kind, with each "
             "one's share; --profile or --profile=table, --profile=json"));
static cl::opt<bool> printSignature(cl::cat(toolOptions), "print-signature",
                                    cl::desc("print the entry's buffers"));
static cl::opt<std::string>
    emitObject(cl::cat(toolOptions), "emit-object",
               cl::desc("write the compiled object file (AOT) here"));
static cl::opt<std::string>
    emitShared(cl::cat(toolOptions), "emit-shared",
               cl::desc("link the compiled code into this shared library "
                        "(AOT, with ld.lld)"));

static int fail(const Twine &msg) {
  outs().flush(); // what was printed comes first
  errs() << "tq-run: error: " << msg << "\n";
  return 1;
}

/// The time per layer (ONNX node and op kind) and per op kind over
/// `calls` invocations that took `wallMs` in all, as a table or JSON.
static void printProfile(const std::vector<cpu::ProfileEntry> &sites,
                         unsigned calls, double wallMs, bool asJson) {
  struct Row {
    std::string name, kind;
    uint64_t calls = 0;
    double ms = 0;
  };
  std::vector<Row> layers, kinds;
  auto add = [](std::vector<Row> &rows, const std::string &name,
                const std::string &kind, const cpu::ProfileEntry &e) {
    auto it = llvm::find_if(
        rows, [&](const Row &r) { return r.name == name && r.kind == kind; });
    if (it == rows.end())
      it = rows.insert(rows.end(), Row{name, kind});
    it->calls += e.calls;
    it->ms += e.seconds * 1e3;
  };
  double kernelMs = 0;
  for (const cpu::ProfileEntry &e : sites) {
    add(layers, e.name, e.kind, e);
    add(kinds, "", e.kind, e);
    kernelMs += e.seconds * 1e3;
  }
  auto slowestFirst = [](const Row &a, const Row &b) { return a.ms > b.ms; };
  llvm::stable_sort(layers, slowestFirst);
  llvm::stable_sort(kinds, slowestFirst);
  double per = 1.0 / std::max(1u, calls);
  auto share = [&](double ms) { return kernelMs > 0 ? ms / kernelMs : 0.0; };
  if (asJson) {
    json::Array layerList, kindList;
    for (const Row &r : layers)
      layerList.push_back(json::Object{{"layer", r.name},
                                       {"kind", r.kind},
                                       {"calls", int64_t(r.calls * per)},
                                       {"ms", r.ms * per},
                                       {"share", share(r.ms)}});
    for (const Row &r : kinds)
      kindList.push_back(json::Object{
          {"kind", r.kind}, {"ms", r.ms * per}, {"share", share(r.ms)}});
    outs() << json::Value(json::Object{{"calls", int64_t(calls)},
                                       {"ms", wallMs * per},
                                       {"kernel_ms", kernelMs * per},
                                       {"layers", std::move(layerList)},
                                       {"kinds", std::move(kindList)}})
           << "\n";
    return;
  }
  outs() << format("profile: %.3f ms per call, %.3f ms of it in %zu kernel "
                   "call sites (the rest: allocation and glue), over %u "
                   "calls\n",
                   wallMs * per, kernelMs * per, sites.size(), calls);
  outs() << "| layer | kind | kernel calls | ms per call | share |\n"
         << "|---|---|---|---|---|\n";
  for (const Row &r : layers)
    outs() << format("| %s | %s | %llu | %.3f | %.1f%% |\n", r.name.c_str(),
                     r.kind.c_str(), (unsigned long long)(r.calls * per),
                     r.ms * per, 100 * share(r.ms));
  outs() << "| op kind | ms per call | share |\n|---|---|---|\n";
  for (const Row &r : kinds)
    outs() << format("| %s | %.3f | %.1f%% |\n", r.kind.c_str(), r.ms * per,
                     100 * share(r.ms));
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  tq::initToolOptions({&toolOptions});
  // -mlir-timing: the time of each compile phase, as in tq-opt (registered
  // after LLVM's options are dropped).
  mlir::registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "compile a tq program and run it on the CPU\n");
  // Steady call times: intermediate buffers reuse freed memory.
  tq::cpu::keepFreedMemory();
  if (optLevel > 3)
    return fail("-O must be 0..3, got " + Twine(optLevel));
  if (threads < 1)
    return fail("--num-threads must be at least 1, got " + Twine(threads));
  if (threads > 1)
    tq::cpu::bindThreadsToCores();
  if (repeat == 0)
    return fail("--repeat must be at least 1");
  bool onPPU = target == "ppu";
  if (!onPPU && !mlir::tq::parseCPUTarget(target))
    return fail("--target must be " + mlir::tq::cpuTargetNames() +
                ", or ppu; got '" + target + "'");
  if (!onPPU && !cpu::hostSupports(target))
    return fail("this host cannot run --target=" + target);
  if (!onPPU && (!machine.empty() || !ppuCost.empty() || ppuReport != "none"))
    return fail("--machine, --ppu-cost and --ppu-report need --target=ppu");
  if (timeFormat != "text" && timeFormat != "json")
    return fail("--time-format must be text or json, got '" + timeFormat + "'");
  if (!(absTolerance >= 0) || !(relTolerance >= 0))
    return fail("--atol and --rtol must be >= 0");
  if (ppuReport != "text" && ppuReport != "json" && ppuReport != "none")
    return fail("--ppu-report must be text, json or none, got '" + ppuReport +
                "'");
  if (onPPU && (!emitObject.empty() || !emitShared.empty()))
    return fail("--emit-object and --emit-shared need a CPU --target");
  if (programPath == "-" && llvm::any_of(inputs, [](const std::string &s) {
        return s == "-" || StringRef(s).ends_with("=-");
      }))
    return fail("the program and an --input cannot both be - (stdin)");
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFileOrSTDIN(programPath);
  if (!file)
    return fail("cannot open '" + programPath +
                "': " + file.getError().message());

  // An ONNX model (binary protobuf) would give a parse error on garbage.
  StringRef head = (*file)->getBuffer().take_front(4096);
  if (!head.starts_with("ML\xefR") &&
      (StringRef(programPath).ends_with(".onnx") ||
       head.find('\0') != StringRef::npos))
    return fail("'" + programPath +
                "' is not MLIR text (an ONNX model?): import it first, e.g. "
                "tq-import-onnx " +
                programPath + " -o model.mlir");

  cpu::CompileOptions options;
  options.target = onPPU ? "native" : target.getValue();
  options.optLevel = optLevel;
  options.threads = threads;
  options.outlineKernels = outlineKernels;
  options.splitBatch = splitBatch;
  options.channelsLast = channelsLast;
  options.verifyEach = verifyEach;
  bool profiling = profileFormat.getNumOccurrences() > 0;
  if (profiling && profileFormat != "" && profileFormat != "table" &&
      profileFormat != "json")
    return fail("--profile must be table or json, got '" + profileFormat + "'");
  if (profiling && onPPU)
    return fail("--profile times the CPU backend; it does not apply to "
                "--target=ppu");
  if (profiling && (!emitObject.empty() || !emitShared.empty()))
    return fail("--profile is for running here; it cannot be combined with "
                "--emit-object or --emit-shared");
  options.profile = profiling;
  options.keepObject = !emitObject.empty() || !emitShared.empty();
  std::string error;
  std::string source = (*file)->getBuffer().str();
  std::unique_ptr<cpu::CPUModule> module;
  std::unique_ptr<tq::ppu::PPUModule> ppuModule;
  if (onPPU) {
    tq::ppu::PPUCompileOptions ppuOptions;
    ppuOptions.machine = machine;
    if (!tq::ppu::parseCostModel(ppuCost, ppuOptions.cost, error))
      return fail("--ppu-cost: " + error);
    ppuOptions.host = options;
    ppuModule =
        tq::ppu::PPUModule::compile(source, programPath, ppuOptions, error);
  } else {
    module = cpu::CPUModule::compile(source, programPath, options, error);
  }
  if (!module && !ppuModule) {
    errs() << error;
    return 1;
  }
  if (ppuModule && ppuModule->kernels().empty())
    return fail("--target=ppu: the program has no tq ops to run on the PPU "
                "(it is not quantized): quantize it first (tq-opt "
                "-tq-quantize)");
  if (!emitObject.empty() && !module->dumpObject(emitObject, error))
    return fail(error);
  if (!emitShared.empty() && !module->writeSharedLibrary(emitShared, error))
    return fail(error);
  cpu::Signature sig;
  if (!(onPPU ? ppuModule->signature(entry, sig, error)
              : module->signature(entry, sig, error)))
    return fail(error);
  std::string targetName = onPPU ? "ppu" : module->target();
  if (printSignature) {
    outs() << "@" << entry << " (target " << targetName << ")\n";
    if (module && module->symbol(entry) != entry)
      outs() << "  compiled as " << module->symbol(entry)
             << " (C interface _mlir_ciface_" << module->symbol(entry)
             << "): a C program has a main of its own\n";
    if (onPPU)
      for (const tq::ppu::KernelInfo &k : ppuModule->kernels())
        outs() << "  kernel @" << k.name << ": " << k.instructions
               << " instructions, " << k.streamBytes << " bytes ("
               << k.machine.str() << ")\n";
    for (auto [kind, list] : {std::make_pair("input", &sig.inputs),
                              std::make_pair("output", &sig.outputs)})
      for (size_t i = 0; i < list->size(); ++i)
        outs() << "  " << kind << " " << i << ": "
               << tq::run::bufferName((*list)[i]) << " "
               << describe(*dtypeOf((*list)[i].element), (*list)[i].shape)
               << "\n";
  }
  if (inputs.empty() && outputs.empty() &&
      (printSignature || !emitObject.empty() || !emitShared.empty()))
    return 0;

  if (!outputs.empty() && outputs.size() != sig.outputs.size())
    return fail("@" + entry + " produces " + Twine(sig.outputs.size()) +
                " output buffers, got " + Twine(outputs.size()) +
                " --output (see --print-signature)");

  std::vector<npy::Array> in, out(sig.outputs.size());
  std::vector<cpu::Buffer> inBuffers, outBuffers;
  if (!tq::run::bindInputs(entry, sig.inputs, inputs, in, error))
    return fail(error);
  for (auto [a, want] : llvm::zip(in, sig.inputs))
    inBuffers.push_back({a.bytes.data(), want.element, want.shape});
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const cpu::BufferType &want = sig.outputs[i];
    out[i].dtype = *dtypeOf(want.element);
    out[i].shape = want.shape;
    out[i].bytes.assign(want.numElements() * cpu::elementSize(want.element), 0);
    outBuffers.push_back({out[i].bytes.data(), want.element, want.shape});
  }

  // SPEC T3: quantization maps NaN to 0 and +-Inf to +-qmax, so a
  // quantized program's outputs can be finite where the float program's are
  // NaN. Say so when an input has such values.
  if (StringRef(source).contains("tq.quantize"))
    for (auto [a, want] : llvm::zip(in, sig.inputs)) {
      if (a.dtype != npy::DType::F32)
        continue;
      int64_t n = 0;
      for (int64_t i = 0; i < a.numElements(); ++i)
        n += !std::isfinite(a.at(i));
      if (n)
        errs() << "tq-run: warning: input " << tq::run::bufferName(want)
               << " has " << n
               << " NaN or infinite values; quantized layers read NaN as 0 "
                  "and +-Inf as +-qmax (SPEC T3), so the outputs may be "
                  "finite where the float program's are not\n";
    }
  if (outputs.empty() && repeat == 1 && !profiling && !printOutputs &&
      compare.empty())
    errs() << "tq-run: warning: no --output: the results are not written\n";
  std::vector<double> ms;
  for (unsigned r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (ppuModule)
      ppuModule->resetStats();
    if (!(onPPU ? ppuModule->invoke(entry, inBuffers, outBuffers, error)
                : module->invoke(entry, inBuffers, outBuffers, error)))
      return fail(error);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!npy::write(outputs[i], out[i], error))
      return fail("output " + Twine(i) + " ('" + outputs[i] + "'): " + error);
  if (printOutputs)
    tq::run::printOutputs(outs(), sig.outputs, out);
  bool withinTolerance = true;
  if (!compare.empty() &&
      !tq::run::compareOutputs(outs(), compare, sig.outputs, out, absTolerance,
                               relTolerance, withinTolerance, error))
    return fail(error);
  if (repeat > 1) {
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (double t : ms)
      mean += t / double(ms.size());
    if (timeFormat == "json")
      outs() << json::Value(json::Object{{"calls", int64_t(repeat)},
                                         {"min_ms", sorted.front()},
                                         {"median_ms", sorted[ms.size() / 2]},
                                         {"mean_ms", mean},
                                         {"max_ms", sorted.back()},
                                         {"target", targetName}})
             << "\n";
    else
      outs() << format("time: min %.3f ms, median %.3f ms over %u calls "
                       "(target %s)\n",
                       sorted.front(), sorted[ms.size() / 2], unsigned(repeat),
                       targetName.c_str());
  }
  if (profiling) {
    double wall = 0;
    for (double t : ms)
      wall += t;
    printProfile(module->profile(), repeat, wall, profileFormat == "json");
  }
  if (onPPU && ppuReport != "none") {
    const tq::ppu::Stats &st = ppuModule->stats();
    const std::vector<tq::ppu::WidthInput> &widths = ppuModule->widths();
    if (ppuReport == "json") {
      json::Array list;
      for (const tq::ppu::WidthInput &w : widths) {
        json::Array bits, errors;
        for (int32_t b : w.bits)
          bits.push_back(b);
        for (double e : w.errors)
          errors.push_back(std::isnan(e) ? json::Value(nullptr)
                                         : json::Value(e));
        list.push_back(json::Object{{"layer", w.layer},
                                    {"kernel", w.kernel},
                                    {"input", w.input},
                                    {"bits", std::move(bits)},
                                    {"errors", std::move(errors)}});
      }
      std::string text;
      raw_string_ostream os(text);
      os << json::Value(std::move(list));
      outs() << "{\"launches\": " << ppuModule->launches()
             << ", \"widths\": " << text << ", "
             << StringRef(st.json()).drop_front() << "\n";
    } else {
      outs() << "PPU: " << ppuModule->launches() << " kernel launches\n"
             << st.text();
      // Widths chosen on the host at run time, per layer (one per launch).
      for (const tq::ppu::WidthInput &w : widths) {
        outs() << "run-time width of " << w.layer << " (@" << w.kernel << " "
               << w.input << "):";
        for (auto [b, e] : llvm::zip(w.bits, w.errors)) {
          outs() << " " << b;
          if (!std::isnan(e))
            outs() << format(" (error %.4g)", e);
        }
        outs() << "\n";
      }
    }
  }
  if (!withinTolerance)
    return fail("--compare: outputs differ from '" + compare +
                "' past the tolerance");
  return 0;
}
