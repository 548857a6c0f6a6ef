//===- PPUModule.cpp - run tq programs on the PPU simulator ---------------===//
#include "tq/ExecutionEngine/PPUModule.h"
#include "Buffers.h"
#include "tq/Dialect/PPU/IR/PPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "tq/Pipelines/Pipelines.h"
#include "tq/Support/Diagnostics.h"
#include "tq/Target/PPUISA/Stream.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/SourceMgr.h"

#include <cstring>
#include <limits>
#include <map>
#include <set>

using namespace mlir;
using namespace ::tq::ppu;
namespace cpu = ::tq::cpu;

namespace {

/// One call of a schedule: a host function or a kernel launch, reading and
/// writing value slots.
struct Step {
  bool onPPU = false;
  /// A host-side copy of a scalar argument into a 0-d tensor (the
  /// schedule's tensor.from_elements of a training step's iteration), no
  /// call.
  bool pack = false;
  std::string callee;
  size_t kernel = 0; // index into streams, on the PPU
  std::vector<unsigned> ins, outs;
};

struct Schedule {
  std::vector<cpu::BufferType> slots; // the type of each value
  std::vector<Step> steps;
  unsigned numArgs = 0;
  std::vector<unsigned> results;
  cpu::Signature signature;
};

/// The tile size V of the tiled types in `module`: 0 if none, -1 if several.
int64_t tileSizeOf(ModuleOp module) {
  std::set<int64_t> sizes;
  auto note = [&](Type t) {
    if (auto tiled = dyn_cast<mlir::tq::TiledType>(t)) {
      ArrayRef<int64_t> tile = tiled.getTileShape();
      sizes.insert(*std::max_element(tile.begin(), tile.end()));
    }
  };
  module->walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      note(t);
  });
  if (sizes.size() > 1)
    return -1;
  return sizes.empty() ? 0 : *sizes.begin();
}

} // namespace

struct PPUModule::Impl {
  std::unique_ptr<cpu::CPUModule> host;
  std::vector<Stream> streams;
  CostModel cost;
  std::vector<KernelInfo> kernels;
  std::vector<std::string> functions;
  std::map<std::string, Schedule> schedules;
  Stats stats;
  uint64_t launches = 0;
  std::vector<WidthInput> widths;
  /// Per kernel: width input name -> index into `widths`.
  std::vector<std::map<std::string, size_t>> widthIndex;
  /// Per kernel: width input name -> the input binding QUANT reads at that
  /// width, and whether its steps are powers of two.
  std::vector<std::map<std::string, std::pair<std::string, bool>>> quantizedAt;
};

/// The input binding holding fmem tile `tile`, or null.
static const Binding *bindingOfTile(const Stream &s, uint32_t tile) {
  for (const Binding &b : s.bindings)
    if (!b.output && !b.isWidth() && tile >= b.baseTile &&
        tile < b.baseTile + b.tiles(s.machine.V))
      return &b;
  return nullptr;
}

/// The A3 error of `x` (a binding's data, V x V tiles on its first and last
/// dims) quantized at `bits`.
static double errorAt(const std::vector<float> &x,
                      const std::vector<uint32_t> &shape, uint16_t V, int bits,
                      bool pow2) {
  ::tq::ref::FloatTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.data = x;
  ::tq::ref::TileLayout layout;
  layout.tile[0] = layout.tile[1] = V;
  layout.dims[0] = 0;
  layout.dims[1] = int(shape.size()) - 1;
  ::tq::ref::BitSearchOptions o;
  o.low = 0.0;
  o.high = std::numeric_limits<double>::infinity();
  o.init = o.min = o.max = bits;
  return ::tq::ref::searchBitWidthTiled(t, layout,
                                        pow2 ? ::tq::ref::QuantForm::Pow2
                                             : ::tq::ref::QuantForm::Scaled,
                                        o)
      .error;
}

PPUModule::PPUModule() : impl(std::make_unique<Impl>()) {}
PPUModule::~PPUModule() = default;

const std::vector<std::string> &PPUModule::functions() const {
  return impl->functions;
}
const std::vector<KernelInfo> &PPUModule::kernels() const {
  return impl->kernels;
}
const Stats &PPUModule::stats() const { return impl->stats; }
uint64_t PPUModule::launches() const { return impl->launches; }
const std::vector<WidthInput> &PPUModule::widths() const {
  return impl->widths;
}
void PPUModule::resetStats() {
  impl->stats = Stats();
  impl->launches = 0;
  for (WidthInput &w : impl->widths) {
    w.bits.clear();
    w.errors.clear();
  }
}

std::unique_ptr<PPUModule> PPUModule::compile(const std::string &source,
                                              const std::string &name,
                                              const PPUCompileOptions &options,
                                              std::string &error) {
  std::unique_ptr<PPUModule> m(new PPUModule());
  DialectRegistry registry;
  registry.insert<mlir::tq::TQDialect, mlir::ppu::PPUDialect>();
  mlir::tq::registerTQCPUDialects(registry);
  MLIRContext ctx(registry);
  // Source lines echoed with an error are cut to a window: a constant's
  // line can be megabytes long.
  llvm::scope_exit elide([&] { error = ::tq::elideLongLines(error); });
  llvm::raw_string_ostream errs(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx, errs);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!module)
    return nullptr;

  // The machine: the options, with V from the tiles unless given.
  std::unique_ptr<mlir::tq::ToPPUPipelineOptions> machine =
      mlir::tq::ToPPUPipelineOptions::createFromString(options.machine);
  if (!machine) {
    errs << name << ": error: malformed PPU machine '" << options.machine
         << "' (expected tq-to-ppu options such as \"v=16 rows=2\")\n";
    return nullptr;
  }
  if (!machine->v.hasValue()) {
    int64_t v = tileSizeOf(*module);
    if (v < 0) {
      errs << name << ": error: the module has tiles of several sizes; give "
           << "the PPU's V (v=N in the machine options)\n";
      return nullptr;
    }
    if (v > 0)
      machine->v = v;
  }

  PassManager pm(&ctx);
  pm.addPass(mlir::tq::createTQPartitionPPU());
  mlir::tq::buildToPPUPipeline(pm, *machine);
  if (failed(pm.run(*module)))
    return nullptr;

  // The kernels' streams.
  std::map<std::string, size_t> kernelIndex;
  for (auto program : module->getOps<mlir::ppu::ProgramOp>()) {
    Stream s = mlir::ppu::toStream(program);
    std::string why;
    if (!validate(s, why)) {
      program.emitError("invalid PPU stream: ") << why;
      return nullptr;
    }
    // Width inputs are located at the layer that reads them.
    std::map<std::string, size_t> widthIndex;
    for (auto w : program.getOps<mlir::ppu::WidthInputOp>()) {
      std::string layer;
      if (auto loc = dyn_cast<NameLoc>(w.getLoc())) {
        layer = loc.getName().str();
      } else {
        llvm::raw_string_ostream os(layer);
        w.getLoc().print(os);
      }
      widthIndex[w.getName().str()] = m->impl->widths.size();
      m->impl->widths.push_back(
          {program.getSymName().str(), w.getName().str(), layer, {}, {}});
    }
    m->impl->widthIndex.push_back(std::move(widthIndex));
    std::map<std::string, std::pair<std::string, bool>> quantizedAt;
    for (const Binding &b : s.bindings) {
      if (!b.isWidth())
        continue;
      for (const Instr &i : s.code)
        if (i.op == Op::Quant && i.bits == (kBitsRegister | b.baseTile)) {
          if (const Binding *in = bindingOfTile(s, i.src))
            quantizedAt[b.name] = {in->name, bool(i.flags & kPow2)};
          break;
        }
    }
    m->impl->quantizedAt.push_back(std::move(quantizedAt));
    kernelIndex[program.getSymName().str()] = m->impl->streams.size();
    m->impl->kernels.push_back({program.getSymName().str(), s.machine,
                                s.code.size(), encode(s).size()});
    m->impl->streams.push_back(std::move(s));
  }

  // The schedules (a function that has no tq op is its own schedule: one
  // host call).
  for (auto f : module->getOps<func::FuncOp>()) {
    if (f.isPrivate() || f.isExternal() || f->hasAttr("tq.outlined"))
      continue;
    Schedule sched;
    DenseMap<Value, unsigned> slot;
    std::string why;
    auto add = [&](Value v, Operation *where) -> FailureOr<unsigned> {
      std::vector<cpu::BufferType> types;
      // Scalars may be arguments (a training step's epoch), passed to the
      // host functions that read them; only tensors cross segments.
      if (failed(cpu::detail::flatten(v.getType(), "", types, why)) ||
          types.size() != 1 || (types[0].scalar && !isa<BlockArgument>(v))) {
        where->emitError("tq-run: @")
            << f.getName() << " passes " << v.getType()
            << ", which cannot be a host/PPU buffer";
        return failure();
      }
      slot[v] = sched.slots.size();
      sched.slots.push_back(types[0]);
      return slot[v];
    };
    for (BlockArgument arg : f.getArguments()) {
      if (failed(add(arg, f)))
        return nullptr;
      sched.signature.inputs.push_back(sched.slots.back());
      sched.signature.inputs.back().name =
          "arg" + std::to_string(arg.getArgNumber());
    }
    sched.numArgs = f.getNumArguments();
    auto defineResults = [&](Step &step, Operation *op) -> LogicalResult {
      for (Value r : op->getResults()) {
        FailureOr<unsigned> s = add(r, op);
        if (failed(s))
          return failure();
        step.outs.push_back(*s);
      }
      return success();
    };
    if (!f->hasAttr("tq.schedule")) {
      Step step;
      step.callee = f.getName().str();
      for (unsigned i = 0; i < sched.numArgs; ++i)
        step.ins.push_back(i);
      for (auto [i, t] : llvm::enumerate(f.getResultTypes())) {
        std::vector<cpu::BufferType> types;
        if (failed(cpu::detail::flatten(t, "", types, why)) ||
            types.size() != 1 || types[0].scalar) {
          f.emitError("tq-run: result ")
              << i << " of @" << f.getName() << " is " << t
              << ", which --target=ppu cannot return";
          return nullptr;
        }
        step.outs.push_back(sched.slots.size());
        sched.results.push_back(sched.slots.size());
        sched.slots.push_back(types[0]);
      }
      sched.steps.push_back(step);
    } else {
      for (Operation &op : f.getBody().front()) {
        Step step;
        if (auto call = dyn_cast<func::CallOp>(op)) {
          step.callee = call.getCallee().str();
        } else if (auto launch = dyn_cast<mlir::ppu::LaunchOp>(op)) {
          step.onPPU = true;
          step.callee = launch.getKernel().str();
          step.kernel = kernelIndex.at(step.callee);
        } else if (auto pack = dyn_cast<tensor::FromElementsOp>(op);
                   pack && pack.getElements().size() == 1 &&
                   slot.count(pack.getElements()[0])) {
          step.pack = true;
        } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
          for (Value v : ret.getOperands()) {
            auto it = slot.find(v);
            if (it == slot.end()) {
              ret.emitError("tq-run: a schedule returns a value that no "
                            "host function or kernel computes");
              return nullptr;
            }
            sched.results.push_back(it->second);
          }
          continue;
        } else {
          op.emitError("tq-run: unexpected op in a PPU schedule");
          return nullptr;
        }
        for (Value v : op.getOperands())
          step.ins.push_back(slot.at(v));
        if (failed(defineResults(step, &op)))
          return nullptr;
        sched.steps.push_back(step);
      }
    }
    for (auto [i, s] : llvm::enumerate(sched.results)) {
      sched.signature.outputs.push_back(sched.slots[s]);
      sched.signature.outputs.back().name = "result" + std::to_string(i);
    }
    cpu::detail::labelBuffers(f, sched.signature);
    m->impl->functions.push_back(f.getName().str());
    m->impl->schedules[f.getName().str()] = std::move(sched);
  }

  m->impl->cost = options.cost;
  // The host code: everything but the kernels and the schedules.
  for (Operation &op : llvm::make_early_inc_range(module->getOps()))
    if (isa<mlir::ppu::ProgramOp>(op) || op.hasAttr("tq.schedule"))
      op.erase();
  if (module->getOps<func::FuncOp>().empty())
    return m;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  // The host code's locations are those of `name`'s source; under another
  // buffer name, diagnostics show the lines of that source (read from its
  // file), not those of this printed text.
  m->impl->host =
      cpu::CPUModule::compile(text, name + " (host code)", options.host, error);
  if (!m->impl->host)
    return nullptr;
  return m;
}

bool PPUModule::signature(const std::string &function, cpu::Signature &out,
                          std::string &error) const {
  auto it = impl->schedules.find(function);
  if (it == impl->schedules.end()) {
    error = "no function @" + function + " in the module";
    return false;
  }
  out = it->second.signature;
  return true;
}

bool PPUModule::invoke(const std::string &function,
                       const std::vector<cpu::Buffer> &inputs,
                       const std::vector<cpu::Buffer> &outputs,
                       std::string &error) {
  auto it = impl->schedules.find(function);
  if (it == impl->schedules.end()) {
    error = "no function @" + function + " in the module";
    return false;
  }
  const Schedule &sched = it->second;
  if (!cpu::detail::checkBuffers(sched.signature.inputs, inputs, "input",
                                 error) ||
      !cpu::detail::checkBuffers(sched.signature.outputs, outputs, "output",
                                 error))
    return false;
  // Each value's memory: the caller's for arguments, else owned here.
  std::vector<std::vector<char>> storage(sched.slots.size());
  std::vector<void *> data(sched.slots.size());
  for (unsigned i = 0; i < sched.numArgs; ++i)
    data[i] = inputs[i].data;
  auto bufferOf = [&](unsigned s) {
    return cpu::Buffer{data[s], sched.slots[s].element, sched.slots[s].shape};
  };
  auto bytesOf = [&](unsigned s) {
    return size_t(sched.slots[s].numElements()) *
           cpu::elementSize(sched.slots[s].element);
  };
  for (const Step &step : sched.steps) {
    for (unsigned s : step.outs) {
      storage[s].assign(bytesOf(s), 0);
      data[s] = storage[s].data();
    }
    if (step.pack) {
      std::memcpy(data[step.outs[0]], data[step.ins[0]], bytesOf(step.outs[0]));
      continue;
    }
    if (!step.onPPU) {
      std::vector<cpu::Buffer> ins, outs;
      for (unsigned s : step.ins)
        ins.push_back(bufferOf(s));
      for (unsigned s : step.outs)
        outs.push_back(bufferOf(s));
      if (!impl->host->invoke(step.callee, ins, outs, error))
        return false;
      continue;
    }
    Simulator sim(impl->streams[step.kernel], impl->cost);
    const std::map<std::string, size_t> &widthIndex =
        impl->widthIndex[step.kernel];
    for (auto [i, s] : llvm::enumerate(step.ins)) {
      std::string name = "arg" + std::to_string(i);
      if (auto w = widthIndex.find(name); w != widthIndex.end()) {
        int32_t bits = *static_cast<const int32_t *>(data[s]);
        if (!sim.setWidth(name, bits, error)) {
          error = "PPU kernel @" + step.callee + ": " + error;
          return false;
        }
        impl->widths[w->second].bits.push_back(bits);
        continue;
      }
      const float *p = static_cast<const float *>(data[s]);
      std::vector<float> values(p, p + sched.slots[s].numElements());
      std::vector<uint32_t> shape(sched.slots[s].shape.begin(),
                                  sched.slots[s].shape.end());
      if (!sim.setInput(name, values, shape, error))
        return false;
    }
    // The error each run-time width gives the input it quantizes.
    for (const auto &[name, index] : widthIndex) {
      WidthInput &w = impl->widths[index];
      if (w.errors.size() == w.bits.size())
        continue; // not passed at this launch
      auto q = impl->quantizedAt[step.kernel].find(name);
      double e = std::numeric_limits<double>::quiet_NaN();
      if (q != impl->quantizedAt[step.kernel].end()) {
        std::vector<uint32_t> shape;
        std::vector<float> x = sim.output(q->second.first, shape);
        e = errorAt(x, shape, impl->streams[step.kernel].machine.V,
                    w.bits.back(), q->second.second);
      }
      w.errors.push_back(e);
    }
    if (!sim.run(error)) {
      error = "PPU kernel @" + step.callee + ": " + error;
      return false;
    }
    for (auto [i, s] : llvm::enumerate(step.outs)) {
      std::vector<uint32_t> shape;
      std::vector<float> values =
          sim.output("result" + std::to_string(i), shape);
      if (values.size() != size_t(sched.slots[s].numElements())) {
        error = "PPU kernel @" + step.callee + " did not produce result" +
                std::to_string(i);
        return false;
      }
      std::memcpy(data[s], values.data(), bytesOf(s));
    }
    impl->stats += sim.stats();
    ++impl->launches;
  }
  for (auto [i, s] : llvm::enumerate(sched.results))
    std::memcpy(outputs[i].data, data[s], bytesOf(s));
  return true;
}
