//===- CPU.cpp - C API of the CPU backend ---------------------------------===//
#include "tq-c/CPU.h"
#include "tq/ExecutionEngine/CPUModule.h"

#include <cstdlib>
#include <cstring>

using namespace tq::cpu;

static_assert(int(ElementType::F32) == TQ_F32 &&
                  int(ElementType::I8) == TQ_I8 &&
                  int(ElementType::I16) == TQ_I16 &&
                  int(ElementType::I32) == TQ_I32 &&
                  int(ElementType::I64) == TQ_I64 &&
                  int(ElementType::Bool) == TQ_BOOL,
              "tq_element_type mirrors tq::cpu::ElementType");

struct tq_cpu_module {
  std::unique_ptr<CPUModule> module;
};

static void setError(char **error, const std::string &message) {
  if (!error)
    return;
  *error = static_cast<char *>(std::malloc(message.size() + 1));
  if (*error)
    std::memcpy(*error, message.c_str(), message.size() + 1);
}

static std::vector<Buffer> toBuffers(const tq_buffer *b, int64_t n) {
  std::vector<Buffer> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back({b[i].data, static_cast<ElementType>(b[i].type),
                   std::vector<int64_t>(b[i].shape, b[i].shape + b[i].rank)});
  return out;
}

extern "C" {

tq_cpu_module *tq_cpu_compile(const char *source, const char *target,
                              int64_t threads, char **error) {
  if (!source || !target || threads < 1) {
    setError(error, "tq_cpu_compile: null source or target, or threads < 1");
    return nullptr;
  }
  CompileOptions options;
  options.target = target;
  options.threads = threads;
  std::string message;
  std::unique_ptr<CPUModule> m =
      CPUModule::compile(source, "<source>", options, message);
  if (!m) {
    setError(error, message);
    return nullptr;
  }
  return new tq_cpu_module{std::move(m)};
}

void tq_cpu_destroy(tq_cpu_module *module) { delete module; }

int64_t tq_cpu_num_buffers(tq_cpu_module *module, const char *function,
                           int outputs) {
  Signature sig;
  std::string error;
  if (!module || !function || !module->module->signature(function, sig, error))
    return -1;
  return int64_t(outputs ? sig.outputs.size() : sig.inputs.size());
}

int tq_cpu_buffer_type(tq_cpu_module *module, const char *function, int outputs,
                       int64_t index, tq_element_type *type, int32_t *rank,
                       int64_t *shape, int32_t maxRank) {
  Signature sig;
  std::string error;
  if (!module || !function || !module->module->signature(function, sig, error))
    return 1;
  const std::vector<BufferType> &list = outputs ? sig.outputs : sig.inputs;
  if (index < 0 || index >= int64_t(list.size()))
    return 1;
  const BufferType &b = list[index];
  if (type)
    *type = static_cast<tq_element_type>(b.element);
  if (rank)
    *rank = int32_t(b.shape.size());
  for (int32_t i = 0; shape && i < maxRank && i < int32_t(b.shape.size()); ++i)
    shape[i] = b.shape[i];
  return 0;
}

int tq_cpu_invoke(tq_cpu_module *module, const char *function,
                  const tq_buffer *inputs, int64_t numInputs,
                  const tq_buffer *outputs, int64_t numOutputs, char **error) {
  if (!module || !function || (numInputs && !inputs) ||
      (numOutputs && !outputs)) {
    setError(error, "tq_cpu_invoke: null argument");
    return 1;
  }
  std::string message;
  if (!module->module->invoke(function, toBuffers(inputs, numInputs),
                              toBuffers(outputs, numOutputs), message)) {
    setError(error, message);
    return 1;
  }
  return 0;
}

void tq_free_string(char *s) { std::free(s); }

} // extern "C"
