//===- Importer.h - The ONNX importer's state and helpers -------*- C++ -*-===//
//
// Private to lib/Importer. The importer walks an ONNX graph in order and
// keeps an SSA value per ONNX tensor name. Each op family lives in its own
// file and registers the op types it imports in an OpRegistry:
//
//   Importer.cpp       the graph walk, opsets, the registry, the entry point
//   Tensors.cpp        tensor data, attributes, constants, shape builders
//   Fold.cpp           import-time evaluation of shape arithmetic
//   Elementwise.cpp    unary, binary and variadic element-wise ops, Mod
//   Matmul.cpp         MatMul, Gemm, MatMulInteger, QLinearMatMul
//   Conv.cpp           Conv, ConvTranspose, the BatchNormalization fold
//   Pooling.cpp        max, average and global pooling
//   Normalization.cpp  BatchNormalization (inference), LayerNormalization,
//                      InstanceNormalization, LRN
//   Reductions.cpp     Reduce*, Softmax, LogSoftmax, Hardmax, ArgMax/Min
//   TensorOps.cpp      reshapes, slices, concatenation, casts
//   Indexing.cpp       Gather(Elements), Expand, Tile, Trilu, DepthToSpace
//   Transposes.cpp     NHWC Transpose pairs cancelled before import
//   Resize.cpp         Resize
//   Logical.cpp        comparisons, Not / And / Or / Xor, Where
//   ControlFlow.cpp    If
//   Recurrent.cpp      LSTM, GRU, RNN
//   Quantization.cpp   QuantizeLinear, DequantizeLinear
//   Losses.cpp         NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
//
//===----------------------------------------------------------------------===//
#ifndef TQ_LIB_IMPORTER_IMPORTER_H
#define TQ_LIB_IMPORTER_IMPORTER_H

#include "tq/Importer/ONNX.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tq::onnx_import {

/// Constants of at least this many elements become dense resources.
constexpr size_t kResourceElements = 256;

/// The largest dimension, pad, stride or dilation taken from a file, and the
/// most elements a tensor may have: every size computed from a file is
/// checked against them before it is used, so no later product overflows.
constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxElements = int64_t(1) << 32;

/// "node 'NAME' (OP)", the prefix of every message about a node.
std::string nodeName(const onnx::NodeProto &n);
/// The default ONNX operator domain ("" or "ai.onnx").
inline bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// The float values of a tensor (FLOAT, or an integer type converted).
/// False, with the reason in `why`, if the data cannot be read.
bool tensorValues(const onnx::TensorProto &t, std::vector<float> &out,
                  std::string &why);

/// The element-wise op OpT of one value.
template <typename OpT> Value oneOp(OpBuilder &b, Location loc, Value x) {
  return OpT::create(b, loc, x).getResult();
}

/// An f32 constant, in a linalg.generic body or outside.
inline Value f32Constant(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)).getResult();
}

class Importer;
/// Imports one node of the op types it is registered for.
using OpImporter = LogicalResult (Importer::*)(const onnx::NodeProto &);
/// Op type -> importer.
using OpRegistry = llvm::StringMap<OpImporter>;

/// Each op family adds its op types.
void registerElementwiseOps(OpRegistry &r);
void registerMatmulOps(OpRegistry &r);
void registerConvOps(OpRegistry &r);
void registerPoolingOps(OpRegistry &r);
void registerNormalizationOps(OpRegistry &r);
void registerReductionOps(OpRegistry &r);
void registerTensorOps(OpRegistry &r);
void registerIndexingOps(OpRegistry &r);
void registerResizeOps(OpRegistry &r);
void registerLogicalOps(OpRegistry &r);
void registerControlFlowOps(OpRegistry &r);
void registerRecurrentOps(OpRegistry &r);
void registerQuantizationOps(OpRegistry &r);
void registerLossOps(OpRegistry &r);

/// Every op type the importer knows, built once.
const OpRegistry &opRegistry();

class Importer {
public:
  Importer(MLIRContext *ctx, const tq::ONNXImportOptions &options)
      : ctx(ctx), b(ctx), options(options) {}

  /// The module, or null after an error was reported.
  OwningOpRef<ModuleOp> run(const onnx::ModelProto &model);

  /// Records the ONNX element type of every value of `g` and its
  /// subgraphs: declared, or derived from the node's inputs.
  void recordElementTypes(const onnx::GraphProto &g);
  /// True if ONNX types `value` as an integer (carried as f32 here).
  bool isInteger(const std::string &value) const;
  /// The element type a graph input or output of ONNX element type
  /// `onnxType` has in the function's signature; null if unsupported.
  Type boundaryElement(int32_t onnxType);
  /// Graph input `arg` as the importer carries it: integers as f32.
  FailureOr<Value> fromBoundary(Value arg, const std::string &name);
  /// `v` converted to the element type graph output `out` declares.
  FailureOr<Value> toBoundary(Value v, const onnx::ValueInfoProto &out);

  //===--------------------------------------------------------------------===//
  // State
  //===--------------------------------------------------------------------===//

  MLIRContext *ctx;
  OpBuilder b;
  const tq::ONNXImportOptions &options;
  Location loc = UnknownLoc::get(ctx);
  std::map<std::string, Value> values;
  std::map<std::string, onnx::TensorProto> initializers;
  std::vector<int64_t> opsets;
  /// ONNX element types by value name (recordElementTypes).
  std::map<std::string, int32_t> elementTypes;

  //===--------------------------------------------------------------------===//
  // Nodes, inputs and attributes (Tensors.cpp)
  //
  // A helper that can fail reports the error with fail() and returns
  // failure(); its callers return failure() in turn, and the import stops
  // at the first error.
  //===--------------------------------------------------------------------===//

  /// Reports `message` at the current node's location; converts to
  /// failure() (`return fail(...)` in a LogicalResult or FailureOr
  /// function).
  InFlightDiagnostic fail(const std::string &message) {
    return emitError(loc) << message;
  }
  RankedTensorType f32Tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  /// Input `i`, which must be present and defined.
  FailureOr<Value> input(const onnx::NodeProto &n, int i);
  /// Fails unless every dim of `shape` is in [0, kMaxDim] and they have at
  /// most kMaxElements elements; `what` names the tensor.
  LogicalResult checkShape(ArrayRef<int64_t> shape, const std::string &what);
  /// Binds output `i` of `n` to `v` (its shape checked by checkShape).
  LogicalResult define(const onnx::NodeProto &n, Value v, int i = 0);
  /// define() of a helper's result, failing if the helper failed.
  LogicalResult define(const onnx::NodeProto &n, FailureOr<Value> v,
                       int i = 0) {
    return failed(v) ? failure() : define(n, *v, i);
  }
  /// Attribute `name` of `n`, or null; an error if it has another type.
  FailureOr<const onnx::AttributeProto *>
  attr(const onnx::NodeProto &n, const std::string &name,
       onnx::AttributeProto::AttributeType type);
  FailureOr<int64_t> intAttr(const onnx::NodeProto &n, const std::string &name,
                             int64_t dflt);
  /// Attribute `name` as an axis of a rank-`rank` tensor: negative values
  /// count from the end; `end` allows `rank` itself (Flatten).
  FailureOr<int64_t> axisAttr(const onnx::NodeProto &n, const std::string &name,
                              int64_t dflt, int64_t rank, bool end = false);
  FailureOr<float> floatAttr(const onnx::NodeProto &n, const std::string &name,
                             float dflt);
  /// The ints of attribute `name`, or `dflt`.
  FailureOr<SmallVector<int64_t>> intsAttr(const onnx::NodeProto &n,
                                           const char *name,
                                           SmallVector<int64_t> dflt);
  /// An int list given as attribute `name` (older opsets) or as constant
  /// input `i` (newer ones); empty if neither is there.
  FailureOr<std::vector<int64_t>> intsAttrOrInput(const onnx::NodeProto &n,
                                                  const char *name, int i);
  /// Fails on attributes the importer does not know for this op.
  LogicalResult onlyAttrs(const onnx::NodeProto &n,
                          ArrayRef<const char *> known);
  /// True if any opset the model imports is below `version`.
  bool opsetBelow(int64_t version) const;
  /// The values of input `i`, which must be present and constant.
  FailureOr<std::vector<float>> requiredConstant(const onnx::NodeProto &n,
                                                 int i);
  /// The values of a constant input (an initializer or a Constant node);
  /// nullopt if the input is absent, an error if it is not constant.
  FailureOr<std::optional<std::vector<float>>>
  constantInput(const onnx::NodeProto &n, int i);

  //===--------------------------------------------------------------------===//
  // Builders shared by the op families
  //===--------------------------------------------------------------------===//

  FailureOr<Value> constant(const onnx::TensorProto &t,
                            const std::string &where);
  Value zeros(ArrayRef<int64_t> shape);
  Value transpose(Value v, ArrayRef<int64_t> perm);
  /// x's slices at constant `indices` along `axis`, with the indices'
  /// shape in place of that dim.
  Value gatherSlices(Value x, ArrayRef<float> indices, int64_t axis,
                     ArrayRef<int64_t> indexShape);
  /// `x` broadcast (numpy rules) to `shape`, any element type.
  FailureOr<Value> broadcastTo(const onnx::NodeProto &n, Value x,
                               ArrayRef<int64_t> shape);
  /// A reshape between static shapes.
  Value reshape(Value x, ArrayRef<int64_t> shape);
  /// numpy broadcasting of `inputs` into one linalg.generic with `body`,
  /// whose result elements are `resultElement` (f32 by default). Inputs
  /// must be f32 unless `anyInputElement` (booleans are i1 tensors).
  FailureOr<Value>
  elementwise(ValueRange inputs, const onnx::NodeProto &n,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body,
              Type resultElement = {}, bool anyInputElement = false);
  FailureOr<Value> matmul(Value a, Value c, const onnx::NodeProto &n);
  /// `x` padded with `value`, `low[d]` before and `high[d]` after dim d.
  Value padConstant(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                    float value);
  /// NCHW `x` padded on H and W by pads = [top, left, bottom, right].
  Value pad(Value x, ArrayRef<int64_t> pads, float value);
  /// Imports a node on a 1-D (NCL) input as the 2-D node `twoD` on
  /// [N, C, 1, L] and returns its result; nullopt if the input is not 1-D.
  std::optional<LogicalResult> importAs2D(const onnx::NodeProto &n,
                                          OpImporter twoD);
  /// A 2-D convolution of NCHW `padded` with filter `w` [K, C/groups, R,
  /// S] into `outShape`, grouped convolutions as one op;
  /// `constantFilter(shape)` gives the filter as a constant of another
  /// shape, a null Value if it is not constant, or failure.
  FailureOr<Value>
  convolution(Value padded, Value w, int64_t groups, ArrayRef<int64_t> strides,
              ArrayRef<int64_t> dilations, ArrayRef<int64_t> outShape,
              function_ref<FailureOr<Value>(ArrayRef<int64_t>)> constantFilter);
  /// The window attributes of a 2-D Conv or pooling node.
  struct Window {
    SmallVector<int64_t> strides, dilations, pads;
    std::string autoPad = "NOTSET";
  };
  FailureOr<Window> windowAttrs(const onnx::NodeProto &n);
  /// The output's spatial size for NCHW `xs` and a kernel, with `w.pads`
  /// set from auto_pad; an error if it is empty.
  FailureOr<SmallVector<int64_t>> windowOutput(const onnx::NodeProto &n,
                                               Window &w, ArrayRef<int64_t> xs,
                                               ArrayRef<int64_t> kernel);
  FailureOr<Value> reduce(Value x, ArrayRef<int64_t> axes, bool keepdims,
                          const std::string &kind);
  struct AlongAxis {
    SmallVector<int64_t> kept;
    AffineMap id, reduced;
    SmallVector<utils::IteratorType> iters, parallel;
  };
  AlongAxis alongAxis(Value x, int64_t axis);
  Value softmax(Value x, int64_t axis, bool log = false);
  Value hardmax(Value x, int64_t axis);
  Value argExtreme(Value x, int64_t axis, bool max, bool last);
  FailureOr<Value> nllLoss(const onnx::NodeProto &n, Value logProb,
                           int targetInput, int weightInput);
  /// Evaluates a node whose inputs are all constants and returns whether
  /// that succeeded; nullopt to import it as usual (Fold.cpp).
  std::optional<LogicalResult> fold(const onnx::NodeProto &n);
  /// Makes Identity of each Transpose pair that encloses only
  /// layout-agnostic ops (Transposes.cpp).
  void cancelTransposes(std::vector<onnx::NodeProto> &nodes,
                        const onnx::GraphProto &g);
  /// The graph's nodes with BatchNormalization folded into Conv (Conv.cpp).
  std::vector<onnx::NodeProto> foldBatchNorms(const onnx::GraphProto &g);

  //===--------------------------------------------------------------------===//
  // Op importers (OpImporter), by family
  //===--------------------------------------------------------------------===//

  // Elementwise.cpp
  LogicalResult importUnary(const onnx::NodeProto &n);
  LogicalResult importBinary(const onnx::NodeProto &n);
  LogicalResult importVariadic(const onnx::NodeProto &n);
  LogicalResult importMod(const onnx::NodeProto &n);
  LogicalResult importPRelu(const onnx::NodeProto &n);
  LogicalResult importShrink(const onnx::NodeProto &n);
  LogicalResult importIsInfNaN(const onnx::NodeProto &n);
  LogicalResult importClip(const onnx::NodeProto &n);
  // Matmul.cpp
  LogicalResult importMatMul(const onnx::NodeProto &n);
  LogicalResult importGemm(const onnx::NodeProto &n);
  LogicalResult importIntegerMatmul(const onnx::NodeProto &n);
  // Conv.cpp
  LogicalResult importConv(const onnx::NodeProto &n);
  LogicalResult importConvTranspose(const onnx::NodeProto &n);
  // Pooling.cpp
  LogicalResult importPool(const onnx::NodeProto &n);
  LogicalResult importGlobalPool(const onnx::NodeProto &n);
  // Normalization.cpp
  LogicalResult importBatchNormalization(const onnx::NodeProto &n);
  LogicalResult importLayerNormalization(const onnx::NodeProto &n);
  LogicalResult importInstanceNormalization(const onnx::NodeProto &n);
  LogicalResult importLRN(const onnx::NodeProto &n);
  // Reductions.cpp
  LogicalResult importReduce(const onnx::NodeProto &n);
  LogicalResult importSoftmax(const onnx::NodeProto &n);
  LogicalResult importHardmax(const onnx::NodeProto &n);
  LogicalResult importArgExtreme(const onnx::NodeProto &n);
  LogicalResult importCumSum(const onnx::NodeProto &n);
  // TensorOps.cpp
  LogicalResult importReshape(const onnx::NodeProto &n);
  LogicalResult importSqueeze(const onnx::NodeProto &n);
  LogicalResult importFlatten(const onnx::NodeProto &n);
  LogicalResult importConcat(const onnx::NodeProto &n);
  LogicalResult importSplit(const onnx::NodeProto &n);
  LogicalResult importSlice(const onnx::NodeProto &n);
  LogicalResult importTranspose(const onnx::NodeProto &n);

  // Indexing.cpp
  LogicalResult importGather(const onnx::NodeProto &n);
  LogicalResult importGatherElements(const onnx::NodeProto &n);
  LogicalResult importExpand(const onnx::NodeProto &n);
  LogicalResult importTile(const onnx::NodeProto &n);
  LogicalResult importTrilu(const onnx::NodeProto &n);
  LogicalResult importDepthSpace(const onnx::NodeProto &n);
  LogicalResult importCast(const onnx::NodeProto &n);
  LogicalResult importCastLike(const onnx::NodeProto &n);
  LogicalResult importIdentity(const onnx::NodeProto &n);
  LogicalResult importDropout(const onnx::NodeProto &n);
  LogicalResult importConstant(const onnx::NodeProto &n);
  LogicalResult importShape(const onnx::NodeProto &n);
  LogicalResult importRange(const onnx::NodeProto &n);
  LogicalResult importPad(const onnx::NodeProto &n);
  LogicalResult importConstantOfShape(const onnx::NodeProto &n);
  // Logical.cpp
  LogicalResult importCompare(const onnx::NodeProto &n);
  LogicalResult importLogical(const onnx::NodeProto &n);
  LogicalResult importWhere(const onnx::NodeProto &n);
  // ControlFlow.cpp
  LogicalResult importIf(const onnx::NodeProto &n);
  /// Imports the nodes of a subgraph (a branch) in the current scope and
  /// returns its outputs.
  FailureOr<SmallVector<Value>> importSubgraph(const onnx::GraphProto &g);
  // Recurrent.cpp
  LogicalResult importLSTM(const onnx::NodeProto &n);
  LogicalResult importGRU(const onnx::NodeProto &n);
  LogicalResult importRNN(const onnx::NodeProto &n);
  // Resize.cpp
  LogicalResult importResize(const onnx::NodeProto &n);
  // Quantization.cpp
  LogicalResult importQuantizeLinear(const onnx::NodeProto &n);
  // Losses.cpp
  LogicalResult importNLLLoss(const onnx::NodeProto &n);
  LogicalResult importSoftmaxCrossEntropyLoss(const onnx::NodeProto &n);

private:
  /// Fails with the list of every op type that no importer handles.
  LogicalResult checkSupported(ArrayRef<onnx::NodeProto> nodes);
  LogicalResult node(const onnx::NodeProto &n);
};

} // namespace mlir::tq::onnx_import

#endif // TQ_LIB_IMPORTER_IMPORTER_H
