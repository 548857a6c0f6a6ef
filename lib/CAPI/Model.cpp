//===- Model.cpp - C API: ONNX models, compiled and called ----------------===//
#include "tq-c/Model.h"
#include "tq/Driver/Driver.h"
#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/ExecutionEngine/PPUModule.h"
#include "tq/Runtime/Quant.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace tq;

struct tq_model {
  driver::Program program;
  std::unique_ptr<cpu::CPUModule> cpu;
  std::unique_ptr<ppu::PPUModule> ppu;
  cpu::Signature signature;
  bool profiling = false;
};

static void setError(char **error, const std::string &message) {
  if (!error)
    return;
  *error = static_cast<char *>(std::malloc(message.size() + 1));
  if (*error)
    std::memcpy(*error, message.c_str(), message.size() + 1);
}

static char *copyString(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out)
    std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

static std::vector<cpu::Buffer> toBuffers(const tq_buffer *b, int64_t n) {
  std::vector<cpu::Buffer> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back({b[i].data, static_cast<cpu::ElementType>(b[i].type),
                   std::vector<int64_t>(b[i].shape, b[i].shape + b[i].rank)});
  return out;
}

static std::vector<std::string> strings(const char *const *list, int64_t n) {
  std::vector<std::string> out;
  for (int64_t i = 0; list && i < n; ++i)
    out.push_back(list[i] ? list[i] : "");
  return out;
}

extern "C" {

void tq_model_options_init(tq_model_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->target = "native";
  options->threads = 1;
}

tq_model *tq_model_compile_onnx(const char *path,
                                const tq_model_options *options, char **error) {
  tq_model_options defaults;
  tq_model_options_init(&defaults);
  const tq_model_options &o = options ? *options : defaults;
  if (!path || !o.target || o.threads < 1) {
    setError(error, "tq_model_compile_onnx: null path or target, or threads "
                    "< 1");
    return nullptr;
  }
  std::string target = o.target, quantize = o.quantize ? o.quantize : "";
  if (o.float_model && !quantize.empty()) {
    setError(error, "float_model and quantize options exclude each other");
    return nullptr;
  }
  bool onPPU = target == "ppu";
  if (!onPPU && !cpu::hostSupports(target)) {
    setError(error, "unknown target '" + target +
                        "', or this host cannot run it (native, avx512, "
                        "avxvnni, avx2, generic or ppu)");
    return nullptr;
  }
  if (onPPU && (o.profile || o.float_model)) {
    setError(error, o.profile ? "the profile times the CPU backend; it does "
                                "not apply to target ppu"
                              : "target ppu runs quantized models only");
    return nullptr;
  }
  if (!onPPU && o.machine && *o.machine) {
    setError(error, "a machine is for target ppu");
    return nullptr;
  }

  driver::ProgramOptions programOptions;
  programOptions.quantize = !o.float_model;
  programOptions.quantizeOptions = quantize;
  // A C symbol of its own (see tq-compile): never main.
  programOptions.import.function = "model";
  std::string message;
  if (!driver::parseImportOptions(strings(o.input_shapes, o.num_input_shapes),
                                  strings(o.dims, o.num_dims), {},
                                  programOptions.import, message)) {
    setError(error, message);
    return nullptr;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path);
  if (!file) {
    setError(error, std::string("cannot open '") + path +
                        "': " + file.getError().message());
    return nullptr;
  }
  auto m = std::make_unique<tq_model>();
  if (!driver::buildProgram((*file)->getBuffer().str(), path, programOptions,
                            m->program, message)) {
    setError(error, message);
    return nullptr;
  }
  cpu::CompileOptions cpuOptions;
  cpuOptions.target = onPPU ? "native" : target;
  cpuOptions.threads = o.threads;
  cpuOptions.profile = o.profile != 0;
  m->profiling = cpuOptions.profile;
  auto start = std::chrono::steady_clock::now();
  bool ok;
  if (onPPU) {
    ppu::PPUCompileOptions ppuOptions;
    ppuOptions.machine = o.machine ? o.machine : "";
    ppuOptions.host = cpuOptions;
    m->ppu =
        ppu::PPUModule::compile(m->program.text, path, ppuOptions, message);
    ok =
        m->ppu && m->ppu->signature(m->program.function, m->signature, message);
    if (ok && m->ppu->kernels().empty()) {
      message = "target ppu: the program has no tq ops to run on the PPU "
                "(nothing was quantized)";
      ok = false;
    }
  } else {
    m->cpu =
        cpu::CPUModule::compile(m->program.text, path, cpuOptions, message);
    ok =
        m->cpu && m->cpu->signature(m->program.function, m->signature, message);
  }
  if (!ok) {
    setError(error, message);
    return nullptr;
  }
  m->program.phases.push_back(
      {"compile",
       std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
           .count()});
  return m.release();
}

void tq_model_destroy(tq_model *model) { delete model; }

const char *tq_model_program(const tq_model *model) {
  return model ? model->program.text.c_str() : nullptr;
}

int64_t tq_model_num_buffers(const tq_model *model, int outputs) {
  if (!model)
    return -1;
  return int64_t(outputs ? model->signature.outputs.size()
                         : model->signature.inputs.size());
}

int tq_model_buffer(const tq_model *model, int outputs, int64_t index,
                    tq_element_type *type, int32_t *rank, int64_t *shape,
                    int32_t maxRank, const char **name) {
  if (!model)
    return 1;
  const std::vector<cpu::BufferType> &list =
      outputs ? model->signature.outputs : model->signature.inputs;
  if (index < 0 || index >= int64_t(list.size()))
    return 1;
  const cpu::BufferType &b = list[index];
  if (type)
    *type = static_cast<tq_element_type>(b.element);
  if (rank)
    *rank = int32_t(b.shape.size());
  for (int32_t i = 0; shape && i < maxRank && i < int32_t(b.shape.size()); ++i)
    shape[i] = b.shape[i];
  if (name)
    *name = b.label.empty() ? b.name.c_str() : b.label.c_str();
  return 0;
}

int tq_model_invoke(tq_model *model, const tq_buffer *inputs, int64_t numInputs,
                    const tq_buffer *outputs, int64_t numOutputs,
                    char **error) {
  if (!model || (numInputs && !inputs) || (numOutputs && !outputs)) {
    setError(error, "tq_model_invoke: null argument");
    return 1;
  }
  std::string message;
  const std::string &f = model->program.function;
  std::vector<cpu::Buffer> in = toBuffers(inputs, numInputs),
                           out = toBuffers(outputs, numOutputs);
  bool ok = model->ppu ? model->ppu->invoke(f, in, out, message)
                       : model->cpu->invoke(f, in, out, message);
  if (!ok) {
    setError(error, message);
    return 1;
  }
  return 0;
}

char *tq_model_report(const tq_model *model, const char *report, char **error) {
  if (!model || !report) {
    setError(error, "tq_model_report: null argument");
    return nullptr;
  }
  std::string what = report;
  llvm::json::Value value = nullptr;
  if (what == "phases") {
    llvm::json::Array list;
    for (const driver::Phase &p : model->program.phases)
      list.push_back(
          llvm::json::Object{{"phase", p.name}, {"seconds", p.seconds}});
    value = std::move(list);
  } else if (what == "profile" && model->cpu && model->profiling) {
    llvm::json::Array list;
    for (const cpu::ProfileEntry &e : model->cpu->profile())
      list.push_back(llvm::json::Object{{"layer", e.name},
                                        {"kind", e.kind},
                                        {"calls", int64_t(e.calls)},
                                        {"seconds", e.seconds}});
    value = std::move(list);
  } else if (what == "ppu" && model->ppu) {
    llvm::Expected<llvm::json::Value> stats =
        llvm::json::parse(model->ppu->stats().json());
    if (!stats) {
      setError(error, llvm::toString(stats.takeError()));
      return nullptr;
    }
    llvm::json::Array widths;
    for (const ppu::WidthInput &w : model->ppu->widths()) {
      llvm::json::Array bits, errors;
      for (int32_t b : w.bits)
        bits.push_back(int64_t(b));
      for (double e : w.errors)
        errors.push_back(std::isnan(e) ? llvm::json::Value(nullptr)
                                       : llvm::json::Value(e));
      widths.push_back(llvm::json::Object{{"layer", w.layer},
                                          {"kernel", w.kernel},
                                          {"input", w.input},
                                          {"bits", std::move(bits)},
                                          {"errors", std::move(errors)}});
    }
    llvm::json::Array kernels;
    for (const ppu::KernelInfo &k : model->ppu->kernels())
      kernels.push_back(
          llvm::json::Object{{"name", k.name},
                             {"instructions", int64_t(k.instructions)},
                             {"stream_bytes", int64_t(k.streamBytes)}});
    value = llvm::json::Object{{"launches", int64_t(model->ppu->launches())},
                               {"stats", std::move(*stats)},
                               {"kernels", std::move(kernels)},
                               {"widths", std::move(widths)}};
  } else {
    setError(error, "no report '" + what +
                        "' (phases; profile on a CPU target compiled with the "
                        "profile option; ppu on target ppu)");
    return nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return copyString(text);
}

void tq_model_reset(tq_model *model) {
  if (!model)
    return;
  if (model->cpu)
    model->cpu->resetProfile();
  if (model->ppu)
    model->ppu->resetStats();
}

int64_t tq_quantize(const float *x, int64_t rows, int64_t cols,
                    int64_t tileRows, int64_t tileCols, int bits,
                    const char *scale, int offset, int32_t *q, float *steps,
                    float *offsets, char **error) {
  if (!x || !q || !steps || !offsets || !scale) {
    setError(error, "tq_quantize: null argument");
    return -1;
  }
  if (rows < 1 || cols < 1 || tileRows < 1 || tileCols < 1) {
    setError(error, "tq_quantize: the shape and the tile must be positive");
    return -1;
  }
  if (bits < 2 || bits > 16) {
    setError(error, "tq_quantize: bits must be in [2, 16], got " +
                        std::to_string(bits));
    return -1;
  }
  std::string s = scale;
  ref::QuantForm form;
  if (s == "f32")
    form = offset ? ref::QuantForm::OffsetScaled : ref::QuantForm::Scaled;
  else if (s == "pow2")
    form = offset ? ref::QuantForm::OffsetPow2 : ref::QuantForm::Pow2;
  else if (s == "pow2_f32")
    form =
        offset ? ref::QuantForm::OffsetPow2Scaled : ref::QuantForm::Pow2Scaled;
  else {
    setError(error, "tq_quantize: scale must be f32, pow2 or pow2_f32, got '" +
                        s + "'");
    return -1;
  }
  ref::FloatTensor t;
  t.shape = {rows, cols};
  t.data.assign(x, x + rows * cols);
  ref::TileLayout layout;
  layout.tile[0] = tileRows;
  layout.tile[1] = tileCols;
  ref::BitsSpec spec;
  spec.uniform = bits;
  ref::TiledTensor tiled = ref::quantizeTiled(t, layout, spec, form);
  std::copy(tiled.q.begin(), tiled.q.end(), q);
  for (size_t i = 0; i < tiled.params.size(); ++i) {
    steps[i] = tiled.params[i].step();
    offsets[i] = tiled.params[i].offset;
  }
  return tiled.nonFinite;
}

} // extern "C"
