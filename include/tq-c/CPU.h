/*===- tq-c/CPU.h - C API of the CPU backend ----------------------*- C -*-===*\
|*                                                                            *|
|* Compile a tq program for this CPU and call its functions on caller-owned  *|
|* buffers, from C or through a foreign-function interface (Python ctypes).  *|
|* A wrapper of tq::cpu::CPUModule (tq/ExecutionEngine/CPUModule.h): a       *|
|* `!tq.tiled` argument or result is two buffers (data, then steps), a       *|
|* scalar is a rank-0 buffer.                                                *|
|*                                                                            *|
|* Errors: functions returning a pointer return NULL, others a non-zero      *|
|* int, and set `*error` (when `error` is not NULL) to a message to release  *|
|* with tq_free_string.                                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef TQ_C_CPU_H
#define TQ_C_CPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tq_cpu_module tq_cpu_module;

typedef enum {
  TQ_F32 = 0,
  TQ_I8 = 1,
  TQ_I16 = 2,
  TQ_I32 = 3,
  TQ_I64 = 4,
  TQ_BOOL = 5, /* one byte per element, 0 or 1 */
} tq_element_type;

/* A C-order array without padding; `shape` has `rank` entries. */
typedef struct {
  void *data;
  tq_element_type type;
  int32_t rank;
  const int64_t *shape;
} tq_buffer;

/* Lowers (tq-to-cpu) and JIT-compiles MLIR source text. `target` is
   "native", "avx512", "avxvnni", "avx2" or "generic"; `threads` >= 1. */
tq_cpu_module *tq_cpu_compile(const char *source, const char *target,
                              int64_t threads, char **error);
void tq_cpu_destroy(tq_cpu_module *module);

/* The number of input / output buffers of `function`, or -1 if the module
   has no such public function. */
int64_t tq_cpu_num_buffers(tq_cpu_module *module, const char *function,
                           int outputs);
/* Buffer `index` of the inputs (outputs != 0: of the outputs): its element
   type, rank and up to `max_rank` dimensions. */
int tq_cpu_buffer_type(tq_cpu_module *module, const char *function, int outputs,
                       int64_t index, tq_element_type *type, int32_t *rank,
                       int64_t *shape, int32_t max_rank);

/* Calls `function`; the outputs are overwritten. */
int tq_cpu_invoke(tq_cpu_module *module, const char *function,
                  const tq_buffer *inputs, int64_t num_inputs,
                  const tq_buffer *outputs, int64_t num_outputs, char **error);

void tq_free_string(char *s);

#ifdef __cplusplus
}
#endif

#endif /* TQ_C_CPU_H */
