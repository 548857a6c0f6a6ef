//===- Calibration.h - per-layer quantization parameters in JSON -*- C++
//-*-===//
//
// SPEC A8: the quantization parameters chosen for each layer and operand
// (its tiled type, per-tile widths, the run-time search configuration and
// the compile-time search record) are written to a JSON file and read back,
// so that a later compilation reuses them instead of searching again:
//
//   {"version": 1, "layers": [
//     {"name": "mlp#0", "op": "tq.matmul", "operands": [
//       {"type": "!tq.tiled<8x32xi8:?, ...>",
//        "adaptive": {"low": 0.005, "high": 0.02, "init": 8, "min": 2,
//                     "max": 8, "step": 1}},
//       {"type": "!tq.tiled<32x32xi8:7, ...>",
//        "record": "{bits = 7 : i64, error = 0.036 : f64}"}]}]}
//
// An operand may also be {"float": true} (the mixed case) and carry
// "tile_bits": [...] for a per-tile width. Layers are named by their
// location when it is a name (e.g. an ONNX node), else "function#ordinal".
//
//===----------------------------------------------------------------------===//
#ifndef TQ_DIALECT_TQ_TRANSFORMS_CALIBRATION_H
#define TQ_DIALECT_TQ_TRANSFORMS_CALIBRATION_H

#include "tq/Dialect/TQ/IR/TQ.h"

#include "llvm/ADT/StringMap.h"

#include <optional>

namespace mlir::tq {

struct CalibratedOperand {
  bool isFloat = false;
  std::string type;              // MLIR syntax of the !tq.tiled type
  std::vector<int64_t> tileBits; // per-tile widths, grid order
  struct Adaptive {
    double low, high;
    int64_t init, min, max, step;
  };
  std::optional<Adaptive> adaptive; // run-time A4 search
  std::string record;               // tq.bit_width attribute, MLIR syntax
};

struct CalibratedLayer {
  std::string name, op;
  SmallVector<CalibratedOperand, 2> operands;
};

struct CalibrationTable {
  std::vector<CalibratedLayer> layers;
  llvm::StringMap<size_t> byName;
  const CalibratedLayer *lookup(StringRef name) const;
};

/// The names of the compute ops under `root` (tq.matmul / tq.conv2d, or the
/// linalg ops tq-insert-quantization rewrites), in walk order.
llvm::DenseMap<Operation *, std::string> nameLayers(Operation *root);

/// Collects the parameters of every tq.matmul / tq.conv2d under `root`.
/// Fails with a diagnostic for an operand whose width comes from a source
/// the file cannot describe (e.g. an epoch schedule).
FailureOr<CalibrationTable> collectCalibration(Operation *root);

/// JSON text of a table, and its parser (errors name the file and field).
std::string printCalibration(const CalibrationTable &table);
FailureOr<CalibrationTable> parseCalibration(StringRef text,
                                             std::string &error);

/// Reads a calibration file; emits an error at `loc` on failure.
FailureOr<CalibrationTable> readCalibrationFile(StringRef path, Location loc);

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_TRANSFORMS_CALIBRATION_H
