//===- CPUModule.cpp - compile and call tq programs on the CPU ------------===//
#include "tq/ExecutionEngine/CPUModule.h"
#include "Buffers.h"
#include "Profile.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/PPU/IR/PPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/ExecutionEngine/MaskedStores.h"
#include "tq/Pipelines/Pipelines.h"
#include "tq/Support/ArgNames.h"
#include "tq/Support/Diagnostics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <map>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace mlir;
using namespace ::tq::cpu;

namespace tq::cpu {

const char *elementTypeName(ElementType t) {
  switch (t) {
  case ElementType::F32:
    return "f32";
  case ElementType::I8:
    return "i8";
  case ElementType::I16:
    return "i16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::Bool:
    return "bool";
  }
  return "?";
}

size_t elementSize(ElementType t) {
  switch (t) {
  case ElementType::Bool:
  case ElementType::I8:
    return 1;
  case ElementType::I16:
    return 2;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::I64:
    return 8;
  }
  return 0;
}

int64_t BufferType::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool hostSupports(const std::string &target) {
  std::optional<mlir::tq::CPUTarget> t = mlir::tq::parseCPUTarget(target);
  return t && mlir::tq::hostSupportsCPUTarget(*t);
}
} // namespace tq::cpu

namespace {

std::optional<ElementType> elementOf(Type t) {
  if (t.isF32())
    return ElementType::F32;
  if (t.isInteger(1))
    return ElementType::Bool;
  if (t.isInteger(8))
    return ElementType::I8;
  if (t.isInteger(16))
    return ElementType::I16;
  if (t.isInteger(32))
    return ElementType::I32;
  if (t.isInteger(64))
    return ElementType::I64;
  return std::nullopt;
}

} // namespace

/// Appends the buffers of one argument or result of type `t`.
namespace tq::cpu::detail {
LogicalResult flatten(Type t, const std::string &name,
                      std::vector<BufferType> &out, std::string &why) {
  if (auto tiled = dyn_cast<mlir::tq::TiledType>(t)) {
    if (!tiled.hasStaticShape()) {
      why = "a dynamic shape";
      return failure();
    }
    BufferType data, steps;
    data.element =
        mlir::tq::TiledToTensorsConverter::containerType(tiled).getWidth() == 8
            ? ElementType::I8
            : ElementType::I16;
    data.shape.assign(tiled.getShape().begin(), tiled.getShape().end());
    data.name = name + ".data";
    steps.element = ElementType::F32;
    SmallVector<int64_t> grid = tiled.getGridShape();
    steps.shape.assign(grid.begin(), grid.end());
    steps.name = name + ".steps";
    out.push_back(data);
    out.push_back(steps);
    return success();
  }
  BufferType b;
  b.name = name;
  if (auto tensor = dyn_cast<RankedTensorType>(t)) {
    std::optional<ElementType> e = elementOf(tensor.getElementType());
    if (!tensor.hasStaticShape() || !e) {
      why = "not a static f32/i8/i16/i32/i64/i1 tensor";
      return failure();
    }
    b.element = *e;
    b.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  } else if (std::optional<ElementType> e = elementOf(t)) {
    b.element = *e;
    b.scalar = true;
  } else {
    why = "an unsupported type";
    return failure();
  }
  out.push_back(b);
  return success();
}

void labelBuffers(func::FuncOp f, Signature &sig) {
  auto label = [](std::vector<BufferType> &buffers, StringRef prefix,
                  auto nameOf) {
    for (BufferType &b : buffers) {
      // "arg3.data" -> position 3, suffix ".data".
      StringRef rest = StringRef(b.name).drop_front(prefix.size());
      auto [index, suffix] = rest.split('.');
      unsigned i;
      if (!StringRef(b.name).starts_with(prefix) || index.getAsInteger(10, i))
        continue;
      if (StringAttr name = nameOf(i))
        b.label = name.str() + (suffix.empty() ? "" : "." + suffix.str());
    }
  };
  label(sig.inputs, "arg", [&](unsigned i) {
    return f.getArgAttrOfType<StringAttr>(i, mlir::tq::kNameArgAttr);
  });
  label(sig.outputs, "result", [&](unsigned i) {
    return f.getResultAttrOfType<StringAttr>(i, mlir::tq::kNameArgAttr);
  });
}

} // namespace tq::cpu::detail

namespace {

/// A ranked memref descriptor as the expanded LLVM calling convention
/// passes it: allocated and aligned pointers, offset, sizes, strides.
struct Descriptor {
  std::vector<int64_t> slots;
  Descriptor(void *data, const std::vector<int64_t> &shape) {
    slots.push_back(reinterpret_cast<int64_t>(data));
    slots.push_back(reinterpret_cast<int64_t>(data));
    slots.push_back(0);
    for (int64_t d : shape)
      slots.push_back(d);
    int64_t stride = 1;
    std::vector<int64_t> strides(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= shape[i];
    }
    slots.insert(slots.end(), strides.begin(), strides.end());
  }
};

} // namespace

struct CPUModule::Impl {
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ExecutionEngine> engine;
  std::vector<std::string> functions;
  std::map<std::string, Signature> signatures;
  /// The symbol of each function in the compiled code: its name, but for
  /// @main (see kMainSymbol).
  std::map<std::string, std::string> symbols;
  std::string target;
  bool usesOpenMP = false;
  std::string object; // AOT object code, with CompileOptions::keepObject
  /// The host, for LLVM's cost models (vector widths) in the JIT's
  /// optimization pipeline.
  std::unique_ptr<llvm::TargetMachine> hostMachine;
  detail::ProfileState profile;
};

CPUModule::CPUModule() : impl(std::make_unique<Impl>()) {}
CPUModule::~CPUModule() = default;

const std::vector<std::string> &CPUModule::functions() const {
  return impl->functions;
}
const std::string &CPUModule::target() const { return impl->target; }
const std::vector<ProfileEntry> &CPUModule::profile() const {
  return impl->profile.entries;
}
void CPUModule::resetProfile() {
  for (ProfileEntry &e : impl->profile.entries)
    e.calls = 0, e.seconds = 0;
}

std::unique_ptr<CPUModule> CPUModule::compile(const std::string &source,
                                              const std::string &name,
                                              const CompileOptions &options,
                                              std::string &error) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  std::unique_ptr<CPUModule> m(new CPUModule());
  DialectRegistry registry;
  registry.insert<mlir::tq::TQDialect, mlir::ppu::PPUDialect>();
  mlir::tq::registerTQCPUDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  m->impl->context = std::make_unique<MLIRContext>(registry);
  MLIRContext *ctx = m->impl->context.get();

  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  if (options.timing)
    timing.setEnabled(true);
  TimingScope root = timing.getRootScope();
  TimingScope parseTimer = root.nest("parse");

  // Source lines echoed with an error are cut to a window: a constant's
  // line can be megabytes long.
  llvm::scope_exit elide([&] { error = ::tq::elideLongLines(error); });
  llvm::raw_string_ostream errs(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, ctx, errs);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, ctx);
  if (!module)
    return nullptr;
  parseTimer.stop();

  // The signatures, before lowering changes them.
  for (auto f : module->getOps<func::FuncOp>()) {
    if (f.isPrivate() || f.isExternal())
      continue;
    Signature sig;
    std::string why;
    FunctionType type = f.getFunctionType();
    int scalarResults = 0;
    for (auto [i, t] : llvm::enumerate(type.getInputs()))
      if (failed(
              detail::flatten(t, "arg" + std::to_string(i), sig.inputs, why))) {
        f.emitError("tq-run: argument ")
            << i << " of @" << f.getName() << " has " << why << ": " << t;
        return nullptr;
      }
    for (auto [i, t] : llvm::enumerate(type.getResults())) {
      if (failed(detail::flatten(t, "result" + std::to_string(i), sig.outputs,
                                 why))) {
        f.emitError("tq-run: result ")
            << i << " of @" << f.getName() << " has " << why << ": " << t;
        return nullptr;
      }
      scalarResults += !isa<ShapedType, mlir::tq::TiledType>(t);
    }
    if (scalarResults > 1) {
      f.emitError("tq-run: @")
          << f.getName() << " returns more than one scalar";
      return nullptr;
    }
    detail::labelBuffers(f, sig);
    m->impl->functions.push_back(f.getName().str());
    m->impl->signatures[f.getName().str()] = sig;
  }

  // C wrappers (_mlir_ciface_<f>, memref descriptors by pointer) for code
  // linked ahead of time. A C program that loads the library has a main of
  // its own, which @main's symbols would shadow (or call): @main is
  // compiled as kMainSymbol.
  SymbolTable symbols(*module);
  for (const std::string &f : m->impl->functions)
    m->impl->symbols[f] = f;
  if (symbols.lookup("main") && m->impl->symbols.count("main")) {
    if (symbols.lookup(kMainSymbol)) {
      errs << name << ": error: @main is compiled as @" << kMainSymbol
           << " (a C program has a main of its own), but the module has a @"
           << kMainSymbol << " too\n";
      return nullptr;
    }
    if (failed(symbols.rename(symbols.lookup("main"), kMainSymbol))) {
      errs << name << ": error: cannot rename @main to @" << kMainSymbol
           << "\n";
      return nullptr;
    }
    m->impl->symbols["main"] = kMainSymbol;
  }
  for (auto f : module->getOps<func::FuncOp>())
    if (f.isPublic() && !f.isExternal())
      f->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));

  PassManager pm(ctx);
  mlir::tq::ToCPUPipelineOptions pipeline;
  pipeline.target = options.target;
  pipeline.threads = options.threads;
  pipeline.outlineKernels = options.outlineKernels;
  pipeline.splitBatch = options.splitBatch;
  pipeline.channelsLast = options.channelsLast;
  pipeline.profile = options.profile;
  if (options.profile && options.keepObject) {
    errs << name << ": error: profiling is for the JIT only (the program "
         << "calls back into tq-run)\n";
    return nullptr;
  }
  mlir::tq::buildToCPUPipeline(pm, pipeline);
  TimingScope lowerTimer = root.nest("tq-to-cpu");
  pm.enableTiming(lowerTimer);
  pm.enableVerifier(options.verifyEach);
  if (failed(pm.run(*module)) ||
      (!options.verifyEach && failed(verify(*module))))
    return nullptr;
  if (auto t = (*module)->getAttrOfType<StringAttr>("tq.cpu_target"))
    m->impl->target = t.str();
  if (!hostSupports(m->impl->target)) {
    errs << name << ": error: code for target '" << m->impl->target
         << "' does not run on this host (try --target=native)\n";
    return nullptr;
  }

  lowerTimer.stop();

  if (options.keepObject) {
    TimingScope objectTimer = root.nest("object code (PIC, for AOT)");
    // Position-independent code for the host, for AOT linking (the JIT's
    // own object is not position independent).
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, llvmContext, name);
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!llvmModule || !builder) {
      errs << name << ": error: cannot translate to LLVM IR for this host\n";
      return nullptr;
    }
    builder->setRelocationModel(llvm::Reloc::PIC_);
    builder->setCodeGenOptLevel(
        static_cast<llvm::CodeGenOptLevel>(options.optLevel));
    auto machine = builder->createTargetMachine();
    if (!machine) {
      errs << name << ": error: " << llvm::toString(machine.takeError())
           << "\n";
      return nullptr;
    }
    llvmModule->setDataLayout((*machine)->createDataLayout());
    llvmModule->setTargetTriple((*machine)->getTargetTriple());
    if (llvm::Error e = makeOptimizingTransformer(
            options.optLevel, 0, machine->get())(llvmModule.get())) {
      errs << name << ": error: " << llvm::toString(std::move(e)) << "\n";
      return nullptr;
    }
    scalarizeSingleLaneMaskedStores(*llvmModule);
    llvm::raw_string_ostream object(m->impl->object);
    llvm::buffer_ostream stream(object);
    llvm::legacy::PassManager codegen;
    if ((*machine)->addPassesToEmitFile(codegen, stream, nullptr,
                                        llvm::CodeGenFileType::ObjectFile)) {
      errs << name << ": error: cannot emit object code for this host\n";
      return nullptr;
    }
    codegen.run(*llvmModule);
  }

  ExecutionEngineOptions engineOptions;
  // MLIR's default writes a jit-PID.dump for `perf inject --jit` on every
  // run (thousands of files under /tmp/.debug); only TQ_PERF_JIT=1 does, so
  // that `perf report` can name the generated kernels when asked.
  const char *perf = std::getenv("TQ_PERF_JIT");
  engineOptions.enablePerfNotificationListener = perf && *perf == '1';
  // Optimized for the host: without a target machine LLVM's cost models
  // assume no vector registers and leave the float loops scalar.
  if (auto host = llvm::orc::JITTargetMachineBuilder::detectHost()) {
    host->setCodeGenOptLevel(
        static_cast<llvm::CodeGenOptLevel>(options.optLevel));
    if (auto machine = host->createTargetMachine())
      m->impl->hostMachine = std::move(*machine);
    else
      llvm::consumeError(machine.takeError());
  } else {
    llvm::consumeError(host.takeError());
  }
  TimingScope llvmTimer = root.nest("LLVM");
  TimingScope translateTimer = llvmTimer.nest("translate and optimize");
  auto optimize = makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                            m->impl->hostMachine.get());
  // ExecutionEngineOptions::transformer is a function_ref: the callable
  // must outlive create().
  auto timedOptimize = [&](llvm::Module *llvmModule) -> llvm::Error {
    TimingScope t = translateTimer.nest("optimize (-O" +
                                        std::to_string(options.optLevel) + ")");
    if (llvm::Error e = optimize(llvmModule))
      return e;
    // After the optimizer, which makes the masks constant: see
    // tq/ExecutionEngine/MaskedStores.h.
    scalarizeSingleLaneMaskedStores(*llvmModule);
    return llvm::Error::success();
  };
  engineOptions.transformer = timedOptimize;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(options.optLevel);
  // Parallel loops call the OpenMP runtime.
  bool usesOpenMP = false;
  module->walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "omp")
      usesOpenMP = true;
  });
  // Strided memref copies (from bufferized tensor.pad / insert_slice) call
  // memrefCopy from MLIR's C runner utilities.
  SmallVector<StringRef> libs = {TQ_RUNNER_UTILS};
  if (usesOpenMP)
    libs.push_back(TQ_OPENMP_RUNTIME);
  m->impl->usesOpenMP = usesOpenMP;
  engineOptions.sharedLibPaths = libs;
  if (auto sites = (*module)->getAttrOfType<ArrayAttr>("tq.profile"))
    for (Attribute site : sites) {
      auto pair = cast<ArrayAttr>(site);
      m->impl->profile.entries.push_back(
          {cast<StringAttr>(pair[0]).str(), cast<StringAttr>(pair[1]).str()});
    }
  m->impl->profile.started.assign(m->impl->profile.entries.size(), 0);
  auto engine = ExecutionEngine::create(*module, engineOptions);
  translateTimer.stop();
  if (!engine) {
    errs << name << ": error: JIT compilation failed: "
         << llvm::toString(engine.takeError()) << "\n";
    return nullptr;
  }
  if (options.profile)
    detail::registerProfileSymbols(**engine);
  // The JIT generates code at the first lookup: do it here, so compile
  // errors surface now and the phase is timed.
  TimingScope codegenTimer = llvmTimer.nest("code generation");
  for (const std::string &f : m->impl->functions)
    if (auto fn = (*engine)->lookupPacked(m->impl->symbols[f]); !fn) {
      errs << name << ": error: JIT compilation of @" << f
           << " failed: " << llvm::toString(fn.takeError()) << "\n";
      return nullptr;
    }
  codegenTimer.stop();
  m->impl->engine = std::move(*engine);
  return m;
}

std::string CPUModule::symbol(const std::string &function) const {
  auto it = impl->symbols.find(function);
  return it == impl->symbols.end() ? std::string() : it->second;
}

bool CPUModule::signature(const std::string &function, Signature &out,
                          std::string &error) const {
  auto it = impl->signatures.find(function);
  if (it == impl->signatures.end()) {
    error = "no public function @" + function + " in the module";
    if (!impl->functions.empty()) {
      error += " (it has";
      for (const std::string &f : impl->functions)
        error += " @" + f;
      error += ")";
    }
    return false;
  }
  out = it->second;
  return true;
}

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace tq::cpu::detail {
bool checkBuffers(const std::vector<BufferType> &want,
                  const std::vector<Buffer> &got, const char *what,
                  std::string &error) {
  if (want.size() != got.size()) {
    error = "expected " + std::to_string(want.size()) + " " + what +
            " buffers, got " + std::to_string(got.size());
    return false;
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i].element != want[i].element || got[i].shape != want[i].shape) {
      error = std::string(what) + " " + want[i].name + ": expected " +
              elementTypeName(want[i].element) + " " +
              shapeString(want[i].shape) + ", got " +
              elementTypeName(got[i].element) + " " + shapeString(got[i].shape);
      return false;
    }
    if (!got[i].data) {
      error = std::string(what) + " " + want[i].name + " has no data";
      return false;
    }
  }
  return true;
}
} // namespace tq::cpu::detail

bool CPUModule::invoke(const std::string &function,
                       const std::vector<Buffer> &inputs,
                       const std::vector<Buffer> &outputs, std::string &error) {
  Signature sig;
  if (!signature(function, sig, error) ||
      !detail::checkBuffers(sig.inputs, inputs, "input", error) ||
      !detail::checkBuffers(sig.outputs, outputs, "output", error))
    return false;
  // Memrefs are passed as expanded descriptors, scalars by value; shaped
  // results are out-parameters after the inputs; a scalar result is
  // returned through the last pointer.
  std::vector<Descriptor> descriptors;
  descriptors.reserve(inputs.size() + outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!sig.inputs[i].scalar)
      descriptors.emplace_back(inputs[i].data, inputs[i].shape);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!sig.outputs[i].scalar)
      descriptors.emplace_back(outputs[i].data, outputs[i].shape);
  // Pointers into the descriptors, in argument order; a scalar input by
  // value, a scalar result through the last pointer.
  size_t d = 0;
  std::vector<void *> packed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (sig.inputs[i].scalar) {
      packed.push_back(inputs[i].data);
      continue;
    }
    for (int64_t &slot : descriptors[d++].slots)
      packed.push_back(&slot);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!sig.outputs[i].scalar)
      for (int64_t &slot : descriptors[d++].slots)
        packed.push_back(&slot);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (sig.outputs[i].scalar)
      packed.push_back(outputs[i].data);
  detail::ActiveProfile profiling(&impl->profile);
  if (llvm::Error e =
          impl->engine->invokePacked(impl->symbols[function], packed)) {
    error = llvm::toString(std::move(e));
    return false;
  }
  return true;
}

bool CPUModule::dumpObject(const std::string &path, std::string &error) {
  if (impl->object.empty()) {
    error = "no object code (compile with CompileOptions::keepObject)";
    return false;
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec) {
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  out << impl->object;
  return true;
}

bool CPUModule::writeSharedLibrary(const std::string &path,
                                   std::string &error) {
  llvm::SmallString<128> object;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tq-aot", "o", object)) {
    error = "cannot create a temporary file: " + ec.message();
    return false;
  }
  llvm::FileRemover remove(object);
  if (!dumpObject(object.str().str(), error))
    return false;
  llvm::ErrorOr<std::string> lld =
      llvm::sys::findProgramByName("ld.lld", {TQ_LLVM_BIN_DIR});
  if (!lld) {
    error = "cannot find ld.lld (apt lld-22)";
    return false;
  }
  SmallVector<StringRef> args = {*lld,     "-shared",      "-o",
                                 path,     object,         TQ_RUNNER_UTILS,
                                 "-rpath", TQ_LLVM_LIB_DIR};
  std::string runtimeDir;
  if (impl->usesOpenMP) {
    // Threads need the OpenMP runtime, found where it was at build time.
    runtimeDir = llvm::sys::path::parent_path(TQ_OPENMP_RUNTIME).str();
    args.append({TQ_OPENMP_RUNTIME, "-rpath", runtimeDir});
  }
  std::string message;
  if (llvm::sys::ExecuteAndWait(*lld, args, std::nullopt, {}, 0, 0, &message) !=
      0) {
    error = "linking '" + path + "' failed" +
            (message.empty() ? "" : ": " + message);
    return false;
  }
  return true;
}

void ::tq::cpu::bindThreadsToCores() {
  if (std::getenv("OMP_PROC_BIND") || std::getenv("OMP_PLACES"))
    return;
  ::setenv("OMP_PROC_BIND", "spread", /*overwrite=*/1);
  ::setenv("OMP_PLACES", "cores", /*overwrite=*/1);
}

void ::tq::cpu::keepFreedMemory() {
#if defined(__GLIBC__)
  // Blocks up to glibc's largest mmap threshold (32 MiB on 64-bit hosts)
  // come from the heap, and the heap's top is not given back on free.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}
