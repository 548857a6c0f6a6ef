//===- ONNX.h - ONNX models to float MLIR -----------------------*- C++ -*-===//
//
// Imports an ONNX model (binary protobuf or the ONNX text syntax) into the
// float MLIR form the tq passes take: one func.func on tensors, linalg ops
// for the compute, arith.constant for initializers. Every unsupported
// construct is an error naming the node, its op type and the reason.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_IMPORTER_ONNX_H
#define TQ_IMPORTER_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::tq {

/// A graph input fixed to a value (an integer tensor such as indices or a
/// shape, or a float one).
struct ONNXConstant {
  std::vector<int64_t> shape;
  std::vector<double> values;
  /// onnx::TensorProto::DataType: FLOAT, INT8, UINT8, INT16, INT32, INT64.
  int dataType = 1;
};

struct ONNXImportOptions {
  /// Fixed shapes for graph inputs with symbolic or unknown dimensions.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Values of symbolic dimensions by name (like onnxruntime's free
  /// dimension overrides), for every input that has them.
  std::map<std::string, int64_t> dims;
  /// Graph inputs that become constants (initializers) instead of
  /// function arguments.
  std::map<std::string, ONNXConstant> constants;
  /// Name of the generated function.
  std::string function = "main";
};

/// Imports the model in `bytes` (binary, else text); `name` is used in
/// messages. On failure returns null and sets `error`.
OwningOpRef<ModuleOp> importONNX(const std::string &bytes,
                                 const std::string &name, MLIRContext *ctx,
                                 const ONNXImportOptions &options,
                                 std::string &error);

/// The graph inputs of the binary model `bytes` that are not initializers,
/// in order.
bool listGraphInputs(const std::string &bytes, std::vector<std::string> &names,
                     std::string &error);

/// The names of the f32 initializers of the binary model `bytes`.
bool listFloatInitializers(const std::string &bytes,
                           std::vector<std::string> &names, std::string &error);

/// The binary model `bytes` with the f32 initializers named in `values`
/// holding new data (same element count; the data is stored as raw_data).
/// Fails naming an initializer that is missing, not f32 or of another size.
bool replaceInitializers(
    const std::string &bytes,
    const std::map<std::string, std::vector<float>> &values, std::string &out,
    std::string &error);

} // namespace mlir::tq

#endif // TQ_IMPORTER_ONNX_H
