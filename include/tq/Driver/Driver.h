//===- Driver.h - ONNX model to compiled program, in one call ---*- C++ -*-===//
//
// What tq-compile, the C API (tq-c/Model.h) and the Python package share:
// an ONNX model imported (tq/Importer/ONNX.h), quantized with the
// tq-quantize pipeline and printed as the MLIR program that CPUModule and
// PPUModule compile, with the time of each phase; the parsers of the
// options every front end takes (--input-shape, --dim, --constant-input);
// and the C header of a compiled entry point.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_DRIVER_DRIVER_H
#define TQ_DRIVER_DRIVER_H

#include "tq/ExecutionEngine/CPUModule.h"
#include "tq/Importer/ONNX.h"

#include <string>
#include <vector>

namespace tq::driver {

/// The time one phase took.
struct Phase {
  std::string name;
  double seconds = 0;
};

struct ProgramOptions {
  /// Shapes, symbolic dims, constant inputs, the function's name.
  mlir::tq::ONNXImportOptions import;
  /// Run tq-quantize (false: the float program).
  bool quantize = true;
  /// Options of the tq-quantize pipeline ("tile=16 act-bits=8"); empty for
  /// its defaults.
  std::string quantizeOptions;
};

/// A model as an MLIR program: the text CPUModule::compile and
/// PPUModule::compile take, with each op's location (its ONNX node).
struct Program {
  std::string text;
  /// The function computing the graph (ProgramOptions::import.function).
  std::string function;
  std::vector<Phase> phases;
};

/// Imports the ONNX model in `bytes` (binary or text; `name` for messages)
/// and quantizes it. On failure returns false with `error` (the importer's
/// or the passes' diagnostics).
bool buildProgram(const std::string &bytes, const std::string &name,
                  const ProgramOptions &options, Program &out,
                  std::string &error);

/// The same for a float MLIR program (`source`, MLIR text) instead of an
/// ONNX model; `options.import` gives only the function's name.
bool buildProgramFromMLIR(const std::string &source, const std::string &name,
                          const ProgramOptions &options, Program &out,
                          std::string &error);

/// `NAME:D0xD1x...` (an --input-shape) into `options.inputShapes`.
bool parseInputShape(const std::string &spec,
                     mlir::tq::ONNXImportOptions &options, std::string &error);
/// `NAME=N` (a --dim, a symbolic dimension's value) into `options.dims`.
bool parseDim(const std::string &spec, mlir::tq::ONNXImportOptions &options,
              std::string &error);
/// `NAME=FILE.npy` (a --constant-input) into `options.constants`.
bool parseConstantInput(const std::string &spec,
                        mlir::tq::ONNXImportOptions &options,
                        std::string &error);

/// The three above, for each string of each list (the tools' repeated
/// options).
bool parseImportOptions(const std::vector<std::string> &inputShapes,
                        const std::vector<std::string> &dims,
                        const std::vector<std::string> &constantInputs,
                        mlir::tq::ONNXImportOptions &options,
                        std::string &error);

/// Whether `name` can name a C function (and is not `main`).
bool isCIdentifier(const std::string &name);
/// `name` with every character a C identifier cannot hold replaced by '_'
/// (and a leading '_' before a digit): "input.1" -> "input_1".
std::string toCIdentifier(const std::string &name);

/// The C header of compiled function `function` with signature `sig`,
/// whose C interface is `_mlir_ciface_<symbol>`: the memref descriptor
/// structs, that function's prototype, and `<function>_run`, which takes a
/// pointer per buffer (named by the buffers' labels, the ONNX names) and
/// builds the descriptors. `source` names the model in a comment. Fails
/// on a signature a header cannot express (a scalar result).
bool writeHeader(const std::string &function, const std::string &symbol,
                 const cpu::Signature &sig, const std::string &source,
                 std::string &out, std::string &error);

} // namespace tq::driver

#endif // TQ_DRIVER_DRIVER_H
