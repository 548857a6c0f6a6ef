/*===- tq-c/Model.h - C API: ONNX models, compiled and called -----*- C -*-===*\
|*                                                                            *|
|* An ONNX model imported, quantized and compiled for this CPU or for the    *|
|* PPU simulator in one call (what tq-compile does, without the files), then *|
|* called on caller-owned buffers named after the ONNX inputs and outputs.   *|
|* The Python package (`tq.compile`) is built on it. Also the reference      *|
|* tile quantization (`tq.quantize`).                                        *|
|*                                                                            *|
|* Buffers, element types, errors and strings are as in tq-c/CPU.h.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef TQ_C_MODEL_H
#define TQ_C_MODEL_H

#include "tq-c/CPU.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tq_model tq_model;

typedef struct {
  /* Options of the tq-quantize pipeline ("tile=16 act-bits=8"); NULL or ""
     for its defaults. */
  const char *quantize;
  /* Non-zero: compile the float model (quantize must then be empty). */
  int float_model;
  /* "native", "avx512", "avxvnni", "avx2", "generic", or "ppu": the tq ops
     on the PPU simulator, the float code between them natively. */
  const char *target;
  /* target "ppu": the machine, as tq-to-ppu options ("v=16 rows=2"). */
  const char *machine;
  /* Threads sharing the compiled loops, >= 1. */
  int64_t threads;
  /* Non-zero: time every kernel call (tq_model_report "profile"); CPU
     targets only. */
  int profile;
  /* "NAME=N" values of symbolic dimensions, and "NAME:D0xD1x..." input
     shapes (the --dim and --input-shape of the tools). */
  const char *const *dims;
  int64_t num_dims;
  const char *const *input_shapes;
  int64_t num_input_shapes;
} tq_model_options;

/* The defaults: quantized with tq-quantize's defaults, native, 1 thread. */
void tq_model_options_init(tq_model_options *options);

/* Imports the ONNX model at `path`, quantizes and compiles it. */
tq_model *tq_model_compile_onnx(const char *path,
                                const tq_model_options *options, char **error);
void tq_model_destroy(tq_model *model);

/* The MLIR program that was compiled (quantized, with locations). */
const char *tq_model_program(const tq_model *model);

/* The number of input (outputs != 0: output) buffers. */
int64_t tq_model_num_buffers(const tq_model *model, int outputs);
/* Buffer `index`: its element type, rank, up to `max_rank` dims, and its
   name (the ONNX input or output; valid while the model lives). */
int tq_model_buffer(const tq_model *model, int outputs, int64_t index,
                    tq_element_type *type, int32_t *rank, int64_t *shape,
                    int32_t max_rank, const char **name);

/* Calls the model; the outputs are overwritten. */
int tq_model_invoke(tq_model *model, const tq_buffer *inputs,
                    int64_t num_inputs, const tq_buffer *outputs,
                    int64_t num_outputs, char **error);

/* A JSON report, released with tq_free_string:
   "phases":  [{"phase", "seconds"}] of the compilation;
   "profile": [{"layer", "kind", "calls", "seconds"}] summed over the calls
              since the last reset (with the profile option);
   "ppu":     {"launches", "stats": {...}, "widths": [...]}, target "ppu".
   NULL (with `error`) for an unknown report or one the target lacks. */
char *tq_model_report(const tq_model *model, const char *report, char **error);
/* Clears the profile and the PPU statistics. */
void tq_model_reset(tq_model *model);

/* The reference quantization of a row-major rows x cols f32 matrix in
   tile_rows x tile_cols tiles, each with its own parameters (SPEC T1, A2),
   at `bits` (2..16). `scale` is "f32", "pow2" or "pow2_f32"; `offset`
   non-zero for the asymmetric forms. Writes rows*cols integers to `q` and,
   per tile in grid row-major order, its step and offset. Returns the number
   of NaN/Inf elements seen (+-Inf saturates to +-qmax, NaN gives 0), or -1
   with `error`. */
int64_t tq_quantize(const float *x, int64_t rows, int64_t cols,
                    int64_t tile_rows, int64_t tile_cols, int bits,
                    const char *scale, int offset, int32_t *q, float *steps,
                    float *offsets, char **error);

#ifdef __cplusplus
}
#endif

#endif /* TQ_C_MODEL_H */
