//===- ONNX.cpp - ONNX models to float MLIR -------------------------------===//
//
// Walks the graph in order, keeping an SSA value per ONNX tensor name.
// Shapes are static: graph inputs take theirs from the model or from
// ONNXImportOptions::inputShapes, and every node computes its result shape.
// Ordered: tensor data, the importer class (types, helpers, one method per
// op family), the entry point.
//
//===----------------------------------------------------------------------===//
#include "tq/Importer/ONNX.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

using namespace mlir;

namespace {

/// Constants of at least this many elements become dense resources.
constexpr size_t kResourceElements = 256;

/// An error with its message; the importer stops at the first.
struct ImportError {
  std::string message;
};

std::string nodeName(const onnx::NodeProto &n) {
  std::string s = "node '" + n.name() + "' (" + n.op_type() + ")";
  return s;
}

/// The float values of a tensor (FLOAT, or INT64 / INT32 converted).
bool tensorValues(const onnx::TensorProto &t, std::vector<float> &out,
                  std::string &why) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  out.clear();
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    why = "external tensor data is not supported";
    return false;
  }
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (!t.raw_data().empty()) {
      if (int64_t(t.raw_data().size()) != n * 4) {
        why = "raw data size does not match the shape";
        return false;
      }
      out.resize(n);
      std::memcpy(out.data(), t.raw_data().data(), n * 4);
    } else {
      out.assign(t.float_data().begin(), t.float_data().end());
    }
    break;
  case onnx::TensorProto::INT64:
    if (!t.raw_data().empty()) {
      if (int64_t(t.raw_data().size()) != n * 8) {
        why = "raw data size does not match the shape";
        return false;
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t v;
        std::memcpy(&v, t.raw_data().data() + 8 * i, 8);
        out.push_back(float(v));
      }
    } else {
      for (int64_t v : t.int64_data())
        out.push_back(float(v));
    }
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::INT32: {
    // Stored as raw little-endian bytes or widened in int32_data.
    int type = t.data_type();
    size_t width = type == onnx::TensorProto::INT32 ? 4
                   : (type == onnx::TensorProto::INT16 ||
                      type == onnx::TensorProto::UINT16)
                       ? 2
                       : 1;
    bool isSigned =
        type != onnx::TensorProto::UINT8 && type != onnx::TensorProto::UINT16;
    if (!t.raw_data().empty()) {
      if (int64_t(t.raw_data().size()) != n * int64_t(width)) {
        why = "raw data size does not match the shape";
        return false;
      }
      const char *p = t.raw_data().data();
      for (int64_t i = 0; i < n; ++i, p += width) {
        int64_t v = 0;
        if (width == 1)
          v = isSigned ? int64_t(int8_t(*p)) : int64_t(uint8_t(*p));
        else if (width == 2) {
          uint16_t u;
          std::memcpy(&u, p, 2);
          v = isSigned ? int64_t(int16_t(u)) : int64_t(u);
        } else {
          int32_t w;
          std::memcpy(&w, p, 4);
          v = w;
        }
        out.push_back(float(v));
      }
    } else {
      for (int32_t v : t.int32_data())
        out.push_back(float(v));
    }
    break;
  }
  default:
    why = "tensors of data type " + std::to_string(t.data_type()) +
          " are not supported (float, int64, int32, int16, uint16, int8 "
          "and uint8 are)";
    return false;
  }
  if (int64_t(out.size()) != n) {
    why = "tensor has " + std::to_string(out.size()) + " values for " +
          std::to_string(n) + " elements";
    return false;
  }
  return true;
}

/// The element-wise op OpT of one value.
template <typename OpT> Value oneOp(OpBuilder &b, Location loc, Value x) {
  return OpT::create(b, loc, x).getResult();
}

class Importer {
public:
  Importer(MLIRContext *ctx, const tq::ONNXImportOptions &options)
      : ctx(ctx), b(ctx), options(options) {}

  OwningOpRef<ModuleOp> run(const onnx::ModelProto &model);

private:
  MLIRContext *ctx;
  OpBuilder b;
  const tq::ONNXImportOptions &options;
  Location loc = UnknownLoc::get(ctx);
  std::map<std::string, Value> values;
  std::map<std::string, onnx::TensorProto> initializers;
  std::vector<int64_t> opsets;

  [[noreturn]] void fail(const std::string &message) {
    throw ImportError{message};
  }
  RankedTensorType f32Tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  Value input(const onnx::NodeProto &n, int i) {
    if (i >= n.input_size() || n.input(i).empty())
      fail(nodeName(n) + ": missing input " + std::to_string(i));
    auto it = values.find(n.input(i));
    if (it == values.end())
      fail(nodeName(n) + ": input '" + n.input(i) + "' is not defined");
    return it->second;
  }
  const onnx::AttributeProto *attr(const onnx::NodeProto &n,
                                   const std::string &name) {
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(const onnx::NodeProto &n, const std::string &name,
                  int64_t dflt) {
    const onnx::AttributeProto *a = attr(n, name);
    return a ? a->i() : dflt;
  }
  /// Attribute `name` as an axis of a rank-`rank` tensor: negative values
  /// count from the end; `end` allows `rank` itself (Flatten).
  int64_t axisAttr(const onnx::NodeProto &n, const std::string &name,
                   int64_t dflt, int64_t rank, bool end = false) {
    int64_t axis = intAttr(n, name, dflt);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank || (axis == rank && !end))
      fail(nodeName(n) + ": " + name + " out of range");
    return axis;
  }
  float floatAttr(const onnx::NodeProto &n, const std::string &name,
                  float dflt) {
    const onnx::AttributeProto *a = attr(n, name);
    return a ? a->f() : dflt;
  }
  /// Fails on attributes the importer does not know for this op.
  void onlyAttrs(const onnx::NodeProto &n, ArrayRef<const char *> known) {
    for (const onnx::AttributeProto &a : n.attribute())
      if (std::find_if(known.begin(), known.end(), [&](const char *k) {
            return a.name() == k;
          }) == known.end())
        fail(nodeName(n) + ": attribute '" + a.name() + "' is not supported");
  }

  Value constant(const onnx::TensorProto &t, const std::string &where);
  Value zeros(ArrayRef<int64_t> shape);
  Value matmul(Value a, Value c, const onnx::NodeProto &n);
  Value transpose(Value v, ArrayRef<int64_t> perm);
  Value
  elementwise(ValueRange inputs, const onnx::NodeProto &n,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  void node(const onnx::NodeProto &n);
  bool unary(const onnx::NodeProto &n);
  Value pad(Value x, ArrayRef<int64_t> pads, float value);
  bool spatial(const onnx::NodeProto &n);
  Value reduce(Value x, ArrayRef<int64_t> axes, bool keepdims,
               const std::string &kind);
  bool normalization(const onnx::NodeProto &n);
  Value reshape(Value x, ArrayRef<int64_t> shape);
  struct AlongAxis {
    SmallVector<int64_t> kept;
    AffineMap id, reduced;
    SmallVector<utils::IteratorType> iters, parallel;
  };
  AlongAxis alongAxis(Value x, int64_t axis);
  Value softmax(Value x, int64_t axis, bool log = false);
  Value hardmax(Value x, int64_t axis);
  bool fold(const onnx::NodeProto &n);
  void quantizeLinear(const onnx::NodeProto &n);
  void integerMatmul(const onnx::NodeProto &n);
  void convTranspose(const onnx::NodeProto &n);
  void resize(const onnx::NodeProto &n);
  Value nllLoss(const onnx::NodeProto &n, Value logProb, int targetInput,
                int weightInput);
  std::vector<onnx::NodeProto> foldBatchNorms(const onnx::GraphProto &g);
  /// The values of input `i`, which must be present and constant.
  std::vector<float> requiredConstant(const onnx::NodeProto &n, int i) {
    std::optional<std::vector<float>> v = constantInput(n, i);
    if (!v)
      fail(nodeName(n) + ": missing input " + std::to_string(i));
    return *v;
  }
  /// The values of a constant input (an initializer or a Constant node).
  std::optional<std::vector<float>> constantInput(const onnx::NodeProto &n,
                                                  int i);
};

std::optional<std::vector<float>>
Importer::constantInput(const onnx::NodeProto &n, int i) {
  if (i >= n.input_size() || n.input(i).empty())
    return std::nullopt;
  auto it = initializers.find(n.input(i));
  if (it == initializers.end())
    fail(nodeName(n) + ": input " + std::to_string(i) + " ('" + n.input(i) +
         "') must be a constant");
  std::vector<float> v;
  std::string why;
  if (!tensorValues(it->second, v, why))
    fail(nodeName(n) + ": " + why);
  return v;
}

/// A reshape between static shapes, through one collapse to 1-D and one
/// expand (either may be skipped).
Value Importer::reshape(Value x, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = shapeOf(x);
  if (from == shape)
    return x;
  // To and from rank 0 (all dims 1): empty reassociations.
  if (from.empty())
    return tensor::ExpandShapeOp::create(b, loc, f32Tensor(shape), x,
                                         ArrayRef<ReassociationIndices>{});
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, x,
                                           ArrayRef<ReassociationIndices>{});
  auto all = [](size_t rank) {
    SmallVector<ReassociationIndices> groups(1);
    for (size_t i = 0; i < rank; ++i)
      groups[0].push_back(i);
    return groups;
  };
  Value flat =
      from.size() == 1
          ? x
          : tensor::CollapseShapeOp::create(b, loc, x, all(from.size()))
                .getResult();
  if (shape.size() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, f32Tensor(shape), flat,
                                       all(shape.size()));
}

/// The shape without `axis`, and the maps and iterators of a generic over
/// x's dims that reduces `axis` (or, with `parallel`, maps element-wise).
Importer::AlongAxis Importer::alongAxis(Value x, int64_t axis) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  AlongAxis m;
  SmallVector<AffineExpr> keep;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) {
      m.kept.push_back(shape[d]);
      keep.push_back(getAffineDimExpr(d, ctx));
    }
  m.id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  m.reduced = AffineMap::get(rank, 0, keep, ctx);
  m.parallel.assign(rank, utils::IteratorType::parallel);
  m.iters = m.parallel;
  m.iters[axis] = utils::IteratorType::reduction;
  return m;
}

/// exp(x - max) / Σ exp(x - max) along `axis` (opset 13 semantics); with
/// `log`, (x - max) - log Σ exp(x - max).
Value Importer::softmax(Value x, int64_t axis, bool log) {
  ArrayRef<int64_t> shape = shapeOf(x);
  AlongAxis m = alongAxis(x, axis);
  SmallVector<int64_t> &reduced = m.kept;
  AffineMap id = m.id, red = m.reduced;
  SmallVector<utils::IteratorType> &iters = m.iters, &par = m.parallel;
  auto reduce = [&](Value in, Value initValue, bool sum) {
    Value empty = tensor::EmptyOp::create(b, loc, reduced, b.getF32Type());
    Value init = linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{in},
               ValueRange{init}, ArrayRef<AffineMap>{id, red}, iters,
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 Value r =
                     sum ? arith::AddFOp::create(nb, l, a[1], a[0]).getResult()
                         : arith::MaximumFOp::create(nb, l, a[1], a[0])
                               .getResult();
                 linalg::YieldOp::create(nb, l, r);
               })
        .getResult(0);
  };
  Value ninf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value mx = reduce(x, ninf, false);
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value e = linalg::GenericOp::create(
                b, loc, TypeRange{empty.getType()}, ValueRange{x, mx},
                ValueRange{empty}, ArrayRef<AffineMap>{id, red, id}, par,
                [&](OpBuilder &nb, Location l, ValueRange a) {
                  Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                  linalg::YieldOp::create(
                      nb, l, ValueRange{math::ExpOp::create(nb, l, d)});
                })
                .getResult(0);
  Value sum = reduce(e, zero, true);
  if (log)
    return linalg::GenericOp::create(
               b, loc, TypeRange{empty.getType()}, ValueRange{x, mx, sum},
               ValueRange{empty}, ArrayRef<AffineMap>{id, red, red, id}, par,
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                 Value ls = math::LogOp::create(nb, l, a[2]);
                 linalg::YieldOp::create(
                     nb, l, ValueRange{arith::SubFOp::create(nb, l, d, ls)});
               })
        .getResult(0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{e, sum},
             ValueRange{empty}, ArrayRef<AffineMap>{id, red, id}, par,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(
                   nb, l, ValueRange{arith::DivFOp::create(nb, l, a[0], a[1])});
             })
      .getResult(0);
}

/// 1 where the first maximum along `axis` is, 0 elsewhere: the maximum,
/// the first index holding it (a min-reduction of indices, as f32), then
/// the comparison with each element's index.
Value Importer::hardmax(Value x, int64_t axis) {
  ArrayRef<int64_t> shape = shapeOf(x);
  AlongAxis m = alongAxis(x, axis);
  SmallVector<int64_t> &kept = m.kept;
  AffineMap id = m.id, red = m.reduced;
  SmallVector<utils::IteratorType> &iters = m.iters, &par = m.parallel;
  Value mx = reduce(x, {axis}, /*keepdims=*/false, "max");
  Value big = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(std::numeric_limits<float>::infinity()));
  Value init =
      linalg::FillOp::create(
          b, loc, big,
          tensor::EmptyOp::create(b, loc, kept, b.getF32Type()).getResult())
          .getResult(0);
  auto indexAlong = [&](OpBuilder &nb, Location l) {
    Value i = linalg::IndexOp::create(nb, l, axis);
    Value i32 = arith::IndexCastOp::create(nb, l, nb.getI32Type(), i);
    return arith::SIToFPOp::create(nb, l, nb.getF32Type(), i32).getResult();
  };
  Value first =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{x, mx},
          ValueRange{init}, ArrayRef<AffineMap>{id, red, red}, iters,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value at = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                             a[0], a[1]);
            Value i = indexAlong(nb, l);
            Value lower = arith::MinimumFOp::create(nb, l, a[2], i);
            linalg::YieldOp::create(
                nb, l,
                ValueRange{arith::SelectOp::create(nb, l, at, lower, a[2])});
          })
          .getResult(0);
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{first},
             ValueRange{empty}, ArrayRef<AffineMap>{red, id}, par,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value hit = arith::CmpFOp::create(
                   nb, l, arith::CmpFPredicate::OEQ, indexAlong(nb, l), a[0]);
               linalg::YieldOp::create(nb, l,
                                       ValueRange{arith::UIToFPOp::create(
                                           nb, l, nb.getF32Type(), hit)});
             })
      .getResult(0);
}

/// NegativeLogLikelihoodLoss of `logProb` [N, C, d...] against the
/// constant targets of input `targetInput` [N, d...]: the class each
/// target selects becomes a constant one-hot mask at import, so the loss
/// is -Σ_c logProb · mask (· weight[c]), then reduced as `reduction`
/// says ("mean" divides by the selected weights, or the count).
Value Importer::nllLoss(const onnx::NodeProto &n, Value logProb,
                        int targetInput, int weightInput) {
  SmallVector<int64_t> shape(shapeOf(logProb));
  int64_t rank = shape.size();
  if (rank < 2)
    fail(nodeName(n) + ": the input needs a class dimension");
  std::string reduction = "mean";
  if (const onnx::AttributeProto *a = attr(n, "reduction"))
    reduction = a->s();
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    fail(nodeName(n) + ": reduction '" + reduction + "' is not supported");
  std::optional<int64_t> ignore;
  if (attr(n, "ignore_index"))
    ignore = intAttr(n, "ignore_index", 0);
  std::vector<float> target = requiredConstant(n, targetInput);
  int64_t C = shape[1], inner = 1;
  for (int64_t d = 2; d < rank; ++d)
    inner *= shape[d];
  if (int64_t(target.size()) != shape[0] * inner)
    fail(nodeName(n) + ": the target does not match the input's shape");
  std::vector<float> mask(shape[0] * C * inner, 0.0f);
  int64_t selected = 0;
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < inner; ++j) {
      int64_t t = int64_t(target[i * inner + j]);
      if (ignore && t == *ignore)
        continue;
      if (t < 0 || t >= C)
        fail(nodeName(n) + ": target " + std::to_string(t) +
             " is not a class in [0, " + std::to_string(C) + ")");
      mask[(i * C + t) * inner + j] = 1.0f;
      ++selected;
    }
  Value m = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(f32Tensor(shape), ArrayRef<float>(mask)));
  if (weightInput < n.input_size() && !n.input(weightInput).empty()) {
    Value w = input(n, weightInput);
    if (shapeOf(w) != ArrayRef<int64_t>{C})
      fail(nodeName(n) + ": the weight must have one value per class");
    SmallVector<int64_t> along(rank, 1);
    along[1] = C;
    m = elementwise(
        {m, reshape(w, along)}, n,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return arith::MulFOp::create(nb, l, a[0], a[1]).getResult();
        });
  }
  Value picked = elementwise(
      {logProb, m}, n, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value p = arith::MulFOp::create(nb, l, a[0], a[1]);
        return arith::NegFOp::create(nb, l, p).getResult();
      });
  Value loss = reduce(picked, {1}, /*keepdims=*/false, "sum");
  if (reduction == "none")
    return loss;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank - 1; ++d)
    all.push_back(d);
  Value total = reduce(loss, all, /*keepdims=*/false, "sum");
  if (reduction == "sum")
    return total;
  // The mean over the selected targets, weighted when weights are given.
  SmallVector<int64_t> every;
  for (int64_t d = 0; d < rank; ++d)
    every.push_back(d);
  Value count = weightInput < n.input_size() && !n.input(weightInput).empty()
                    ? reduce(m, every, /*keepdims=*/false, "sum")
                    : arith::ConstantOp::create(
                          b, loc,
                          DenseElementsAttr::get(
                              f32Tensor({}), ArrayRef<float>{float(selected)}))
                          .getResult();
  return elementwise(
      {total, count}, n, [&](OpBuilder &nb, Location l, ValueRange a) {
        return arith::DivFOp::create(nb, l, a[0], a[1]).getResult();
      });
}

/// A reduction over `axes` (sorted, non-negative): sum, mean, max, min,
/// prod, l1 (Σ|x|), l2 (√Σx²), sumsquare (Σx²), logsum (log Σx) or
/// logsumexp (log Σ exp x).
Value Importer::reduce(Value x, ArrayRef<int64_t> axes, bool keepdims,
                       const std::string &kind) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  SmallVector<int64_t> kept;
  SmallVector<AffineExpr> exprs;
  SmallVector<utils::IteratorType> iters;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    bool r = llvm::is_contained(axes, d);
    iters.push_back(r ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
    if (r) {
      count *= shape[d];
    } else {
      kept.push_back(shape[d]);
      exprs.push_back(getAffineDimExpr(d, ctx));
    }
  }
  float initV = kind == "max"    ? -std::numeric_limits<float>::infinity()
                : kind == "min"  ? std::numeric_limits<float>::infinity()
                : kind == "prod" ? 1.0f
                                 : 0.0f;
  Value empty = tensor::EmptyOp::create(b, loc, kept, b.getF32Type());
  Value initValue = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(initV));
  Value init = linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
  auto id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  auto red = AffineMap::get(rank, 0, exprs, ctx);
  Value r = linalg::GenericOp::create(
                b, loc, TypeRange{init.getType()}, ValueRange{x},
                ValueRange{init}, ArrayRef<AffineMap>{id, red}, iters,
                [&](OpBuilder &nb, Location l, ValueRange a) {
                  Value v, x = a[0];
                  if (kind == "l1")
                    x = math::AbsFOp::create(nb, l, x);
                  else if (kind == "l2" || kind == "sumsquare")
                    x = arith::MulFOp::create(nb, l, x, x);
                  else if (kind == "logsumexp")
                    x = math::ExpOp::create(nb, l, x);
                  if (kind == "max")
                    v = arith::MaximumFOp::create(nb, l, a[1], x);
                  else if (kind == "min")
                    v = arith::MinimumFOp::create(nb, l, a[1], x);
                  else if (kind == "prod")
                    v = arith::MulFOp::create(nb, l, a[1], x);
                  else
                    v = arith::AddFOp::create(nb, l, a[1], x);
                  linalg::YieldOp::create(nb, l, v);
                })
                .getResult(0);
  if (kind == "l2" || kind == "logsum" || kind == "logsumexp") {
    onnx::NodeProto none;
    r = elementwise({r}, none, [&](OpBuilder &nb, Location l, ValueRange v) {
      return kind == "l2" ? math::SqrtOp::create(nb, l, v[0]).getResult()
                          : math::LogOp::create(nb, l, v[0]).getResult();
    });
  }
  if (kind == "mean") {
    float c = float(count);
    onnx::NodeProto none;
    r = elementwise({r}, none, [&](OpBuilder &nb, Location l, ValueRange v) {
      return arith::DivFOp::create(
                 nb, l, v[0],
                 arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(c)))
          .getResult();
    });
  }
  if (!keepdims)
    return r;
  SmallVector<int64_t> withOnes;
  for (int64_t d = 0; d < rank; ++d)
    withOnes.push_back(llvm::is_contained(axes, d) ? 1 : shape[d]);
  return reshape(r, withOnes);
}

/// Reductions, BatchNormalization (inference) and LayerNormalization;
/// false if `n` is none of them.
bool Importer::normalization(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  auto f = [&](OpBuilder &nb, Location l, float v) {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v)).getResult();
  };
  auto axesOf = [&](Value x, bool allByDefault) {
    int64_t rank = shapeOf(x).size();
    std::vector<int64_t> axes;
    if (const onnx::AttributeProto *a = attr(n, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
    else if (auto v = constantInput(n, 1))
      for (float x : *v)
        axes.push_back(int64_t(x));
    if (axes.empty() && allByDefault)
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    for (int64_t &a : axes) {
      if (a < 0)
        a += rank;
      if (a < 0 || a >= rank)
        fail(nodeName(n) + ": axis out of range");
    }
    llvm::sort(axes);
    return axes;
  };
  static const llvm::StringMap<const char *> reductions = {
      {"ReduceMean", "mean"},     {"ReduceSum", "sum"},
      {"ReduceMax", "max"},       {"ReduceMin", "min"},
      {"ReduceProd", "prod"},     {"ReduceL1", "l1"},
      {"ReduceL2", "l2"},         {"ReduceSumSquare", "sumsquare"},
      {"ReduceLogSum", "logsum"}, {"ReduceLogSumExp", "logsumexp"}};
  if (auto it = reductions.find(op); it != reductions.end()) {
    onlyAttrs(n, {"axes", "keepdims", "noop_with_empty_axes"});
    Value x = input(n, 0);
    std::string kind = it->second;
    // No axes and noop_with_empty_axes: the input, unreduced.
    if (intAttr(n, "noop_with_empty_axes", 0) &&
        axesOf(x, /*allByDefault=*/false).empty()) {
      values[n.output(0)] = x;
      return true;
    }
    values[n.output(0)] =
        reduce(x, axesOf(x, true), intAttr(n, "keepdims", 1), kind);
    return true;
  }
  if (op == "BatchNormalization") {
    onlyAttrs(n, {"epsilon", "momentum", "training_mode", "spatial"});
    // Opsets 7 and 8: spatial = 0 normalizes each activation on its own.
    if (!intAttr(n, "spatial", 1))
      fail(nodeName(n) + ": spatial = 0 is not supported");
    if (intAttr(n, "training_mode", 0) ||
        (n.output_size() > 1 && !n.output(1).empty()))
      fail(nodeName(n) + ": only inference mode is supported");
    Value x = input(n, 0);
    int64_t rank = shapeOf(x).size();
    if (rank < 2)
      fail(nodeName(n) + ": the input needs a channel dimension");
    // [C] parameters broadcast along dim 1.
    auto channel = [&](int i) {
      SmallVector<int64_t> shape = {shapeOf(x)[1]};
      for (int64_t d = 2; d < rank; ++d)
        shape.push_back(1);
      return reshape(input(n, i), shape);
    };
    float eps = floatAttr(n, "epsilon", 1e-5f);
    values[n.output(0)] = elementwise(
        {x, channel(1), channel(2), channel(3), channel(4)}, n,
        [&](OpBuilder &nb, Location l, ValueRange v) {
          Value d = arith::SubFOp::create(nb, l, v[0], v[3]);
          Value s = math::SqrtOp::create(
              nb, l, arith::AddFOp::create(nb, l, v[4], f(nb, l, eps)));
          Value y = arith::DivFOp::create(nb, l, d, s);
          return arith::AddFOp::create(
                     nb, l, arith::MulFOp::create(nb, l, y, v[1]), v[2])
              .getResult();
        });
    return true;
  }
  if (op == "LayerNormalization") {
    onlyAttrs(n, {"axis", "epsilon", "stash_type"});
    Value x = input(n, 0);
    int64_t rank = shapeOf(x).size();
    int64_t axis = axisAttr(n, "axis", -1, rank);
    SmallVector<int64_t> axes;
    for (int64_t d = axis; d < rank; ++d)
      axes.push_back(d);
    float eps = floatAttr(n, "epsilon", 1e-5f);
    Value mean = reduce(x, axes, true, "mean");
    Value centered =
        elementwise({x, mean}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
          return arith::SubFOp::create(nb, l, v[0], v[1]).getResult();
        });
    Value sq = elementwise(
        {centered}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
          return arith::MulFOp::create(nb, l, v[0], v[0]).getResult();
        });
    Value var = reduce(sq, axes, true, "mean");
    SmallVector<Value> ins = {centered, var, input(n, 1)};
    bool bias = n.input_size() > 2 && !n.input(2).empty();
    if (bias)
      ins.push_back(input(n, 2));
    values[n.output(0)] =
        elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
          Value s = math::SqrtOp::create(
              nb, l, arith::AddFOp::create(nb, l, v[1], f(nb, l, eps)));
          Value y = arith::MulFOp::create(
              nb, l, arith::DivFOp::create(nb, l, v[0], s), v[2]);
          return bias ? arith::AddFOp::create(nb, l, y, v[3]).getResult() : y;
        });
    // Optional outputs: the mean and 1 / sqrt(var + epsilon).
    if (n.output_size() > 1 && !n.output(1).empty())
      values[n.output(1)] = mean;
    if (n.output_size() > 2 && !n.output(2).empty())
      values[n.output(2)] =
          elementwise({var}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
            Value s = math::SqrtOp::create(
                nb, l, arith::AddFOp::create(nb, l, v[0], f(nb, l, eps)));
            return arith::DivFOp::create(nb, l, f(nb, l, 1.0f), s).getResult();
          });
    return true;
  }
  return false;
}

/// NCHW `x` padded on H and W by pads = [top, left, bottom, right].
Value Importer::pad(Value x, ArrayRef<int64_t> pads, float value) {
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return x;
  ArrayRef<int64_t> s = shapeOf(x);
  SmallVector<int64_t> low = {0, 0, pads[0], pads[1]},
                       high = {0, 0, pads[2], pads[3]};
  SmallVector<int64_t> shape = {s[0], s[1], s[2] + pads[0] + pads[2],
                                s[3] + pads[1] + pads[3]};
  Value v = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  SmallVector<OpFoldResult> lo, hi;
  for (int64_t i = 0; i < 4; ++i) {
    lo.push_back(b.getIndexAttr(low[i]));
    hi.push_back(b.getIndexAttr(high[i]));
  }
  return tensor::PadOp::create(b, loc, f32Tensor(shape), x, lo, hi, v);
}

/// 2-D convolutions and pooling on NCHW tensors; false if `n` is neither.
bool Importer::spatial(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  if (op != "Conv" && op != "MaxPool" && op != "AveragePool" &&
      op != "GlobalAveragePool" && op != "GlobalMaxPool")
    return false;
  Value x = input(n, 0);
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() != 4)
    fail(nodeName(n) + ": only 2-D (NCHW) inputs are supported");
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    onlyAttrs(n, {});
    bool avg = op == "GlobalAveragePool";
    SmallVector<int64_t> outShape = {xs[0], xs[1], 1, 1};
    auto id = AffineMap::getMultiDimIdentityMap(4, ctx);
    auto red = AffineMap::get(
        4, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)}, ctx);
    Value empty = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{xs[0], xs[1]}, b.getF32Type());
    Value initV = arith::ConstantOp::create(
        b, loc,
        b.getF32FloatAttr(avg ? 0.0f
                              : -std::numeric_limits<float>::infinity()));
    Value init = linalg::FillOp::create(b, loc, initV, empty).getResult(0);
    SmallVector<utils::IteratorType> iters = {
        utils::IteratorType::parallel, utils::IteratorType::parallel,
        utils::IteratorType::reduction, utils::IteratorType::reduction};
    Value r =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
            ArrayRef<AffineMap>{id, red}, iters,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value v =
                  avg ? arith::AddFOp::create(nb, l, a[1], a[0]).getResult()
                      : arith::MaximumFOp::create(nb, l, a[1], a[0])
                            .getResult();
              linalg::YieldOp::create(nb, l, v);
            })
            .getResult(0);
    if (avg) {
      float count = float(xs[2] * xs[3]);
      r = elementwise({r}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return arith::DivFOp::create(
                   nb, l, v[0],
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(count)))
            .getResult();
      });
    }
    values[n.output(0)] = reshape(r, outShape);
    return true;
  }
  auto ints = [&](const char *name, SmallVector<int64_t> dflt) {
    if (const onnx::AttributeProto *a = attr(n, name))
      return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
    return dflt;
  };
  if (const onnx::AttributeProto *a = attr(n, "auto_pad"))
    if (a->s() != "NOTSET")
      fail(nodeName(n) + ": auto_pad '" + a->s() + "' is not supported");
  SmallVector<int64_t> strides = ints("strides", {1, 1});
  SmallVector<int64_t> dil = ints("dilations", {1, 1});
  SmallVector<int64_t> pads = ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    fail(nodeName(n) + ": strides, dilations and pads must be 2-D");
  // ONNX pads are [top, left, bottom, right] (begins, then ends).
  SmallVector<int64_t> kernel;
  Value w;
  if (op == "Conv") {
    onlyAttrs(n, {"strides", "dilations", "pads", "group", "kernel_shape",
                  "auto_pad"});
    w = input(n, 1);
    ArrayRef<int64_t> ws = shapeOf(w);
    int64_t groups = intAttr(n, "group", 1);
    if (groups < 1 || xs[1] % groups || (ws.size() == 4 && ws[0] % groups))
      fail(nodeName(n) + ": group " + std::to_string(groups) +
           " does not divide the channels");
    if (ws.size() != 4 || ws[1] * groups != xs[1])
      fail(nodeName(n) + ": the filter must be [K, C/group, R, S] with the "
                         "input's C");
    kernel = {ws[2], ws[3]};
  } else {
    onlyAttrs(n, {"strides", "dilations", "pads", "kernel_shape", "auto_pad",
                  "ceil_mode", "count_include_pad", "storage_order"});
    if (intAttr(n, "ceil_mode", 0))
      fail(nodeName(n) + ": ceil_mode is not supported");
    if (n.output_size() > 1 && !n.output(1).empty())
      fail(nodeName(n) + ": the Indices output is not supported");
    kernel = ints("kernel_shape", {});
    if (kernel.size() != 2)
      fail(nodeName(n) + ": kernel_shape must be 2-D");
  }
  int64_t P =
      (xs[2] + pads[0] + pads[2] - dil[0] * (kernel[0] - 1) - 1) / strides[0] +
      1;
  int64_t Q =
      (xs[3] + pads[1] + pads[3] - dil[1] * (kernel[1] - 1) - 1) / strides[1] +
      1;
  if (P < 1 || Q < 1)
    fail(nodeName(n) + ": the output would be empty");
  auto stridesAttr = b.getI64TensorAttr(strides);
  auto dilAttr = b.getI64TensorAttr(dil);
  if (op == "Conv") {
    ArrayRef<int64_t> ws = shapeOf(w);
    int64_t groups = intAttr(n, "group", 1);
    Value padded = pad(x, pads, 0.0f);
    // A grouped convolution is one convolution per group on its slice of
    // the channels and filters, concatenated along the channels.
    int64_t cg = xs[1] / groups, kg = ws[0] / groups;
    Value y = zeros({xs[0], ws[0], P, Q});
    for (int64_t g = 0; g < groups; ++g) {
      Value xg = padded, wg = w;
      if (groups > 1) {
        SmallVector<int64_t> xo = {0, g * cg, 0, 0}, one(4, 1);
        SmallVector<int64_t> xsz(shapeOf(padded));
        xsz[1] = cg;
        xg = tensor::ExtractSliceOp::create(b, loc, f32Tensor(xsz), padded,
                                            ValueRange{}, ValueRange{},
                                            ValueRange{}, xo, xsz, one);
        SmallVector<int64_t> wo = {g * kg, 0, 0, 0}, wsz(ws);
        wsz[0] = kg;
        if (initializers.count(n.input(1))) {
          std::vector<float> filter = requiredConstant(n, 1);
          // A constant filter is split here, so that its groups stay
          // constants (quantized at compile time).
          size_t per = filter.size() / ws[0];
          wg = arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(
                  f32Tensor(wsz),
                  ArrayRef<float>(filter.data() + g * kg * per, kg * per)));
        } else {
          wg = tensor::ExtractSliceOp::create(b, loc, f32Tensor(wsz), w,
                                              ValueRange{}, ValueRange{},
                                              ValueRange{}, wo, wsz, one);
        }
      }
      Value init = groups > 1 ? zeros({xs[0], kg, P, Q}) : y;
      Value yg = linalg::Conv2DNchwFchwOp::create(
                     b, loc, TypeRange{init.getType()}, ValueRange{xg, wg},
                     ValueRange{init}, stridesAttr, dilAttr)
                     .getResult(0);
      if (groups == 1) {
        y = yg;
        break;
      }
      SmallVector<int64_t> yo = {0, g * kg, 0, 0}, ysz = {xs[0], kg, P, Q};
      y = tensor::InsertSliceOp::create(b, loc, yg, y, ValueRange{},
                                        ValueRange{}, ValueRange{}, yo, ysz,
                                        SmallVector<int64_t>(4, 1));
    }
    if (n.input_size() > 2 && !n.input(2).empty()) {
      Value bias = reshape(input(n, 2), {ws[0], 1, 1});
      y = elementwise(
          {y, bias}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
            return arith::AddFOp::create(nb, l, v[0], v[1]).getResult();
          });
    }
    values[n.output(0)] = y;
    return true;
  }
  bool isMax = op == "MaxPool";
  if (!isMax && !intAttr(n, "count_include_pad", 0) &&
      llvm::any_of(pads, [](int64_t p) { return p != 0; }))
    fail(nodeName(n) + ": padding without count_include_pad is not "
                       "supported");
  Value window = tensor::EmptyOp::create(b, loc, kernel, b.getF32Type());
  Value empty = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{xs[0], xs[1], P, Q}, b.getF32Type());
  float initV = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  Value initValue = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(initV));
  Value init = linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
  Value padded = pad(x, pads, initV);
  Value y;
  if (isMax)
    y = linalg::PoolingNchwMaxOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{padded, window},
                                         ValueRange{init}, stridesAttr, dilAttr)
            .getResult(0);
  else {
    y = linalg::PoolingNchwSumOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{padded, window},
                                         ValueRange{init}, stridesAttr, dilAttr)
            .getResult(0);
    float count = float(kernel[0] * kernel[1]);
    y = elementwise({y}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
      return arith::DivFOp::create(
                 nb, l, v[0],
                 arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(count)))
          .getResult();
    });
  }
  values[n.output(0)] = y;
  return true;
}

/// Element-wise ops of one input (and their attributes); false if `n` is
/// not one.
bool Importer::unary(const onnx::NodeProto &n) {
  using Fn = std::function<Value(OpBuilder &, Location, Value)>;
  const std::string &op = n.op_type();
  auto f = [&](OpBuilder &nb, Location l, float v) {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v)).getResult();
  };
  Fn fn;
  SmallVector<const char *> attrs;
  // Ops that are one MLIR op of the element.
  static const llvm::StringMap<Fn> simple = {
      {"Abs", oneOp<math::AbsFOp>},        {"Neg", oneOp<arith::NegFOp>},
      {"Exp", oneOp<math::ExpOp>},         {"Log", oneOp<math::LogOp>},
      {"Sqrt", oneOp<math::SqrtOp>},       {"Tanh", oneOp<math::TanhOp>},
      {"Floor", oneOp<math::FloorOp>},     {"Ceil", oneOp<math::CeilOp>},
      {"Round", oneOp<math::RoundEvenOp>}, // halves to even, as ONNX
      {"Sin", oneOp<math::SinOp>},         {"Cos", oneOp<math::CosOp>},
      {"Tan", oneOp<math::TanOp>},         {"Asin", oneOp<math::AsinOp>},
      {"Acos", oneOp<math::AcosOp>},       {"Atan", oneOp<math::AtanOp>},
      {"Sinh", oneOp<math::SinhOp>},       {"Cosh", oneOp<math::CoshOp>},
      {"Asinh", oneOp<math::AsinhOp>},     {"Acosh", oneOp<math::AcoshOp>},
      {"Atanh", oneOp<math::AtanhOp>},     {"Erf", oneOp<math::ErfOp>},
  };
  if (auto it = simple.find(op); it != simple.end())
    fn = it->second;
  else if (op == "Reciprocal")
    fn = [&](OpBuilder &nb, Location l, Value x) {
      return arith::DivFOp::create(nb, l, f(nb, l, 1.0f), x).getResult();
    };
  else if (op == "Softsign") // x / (1 + |x|)
    fn = [&](OpBuilder &nb, Location l, Value x) {
      Value d = arith::AddFOp::create(nb, l, f(nb, l, 1.0f),
                                      math::AbsFOp::create(nb, l, x));
      return arith::DivFOp::create(nb, l, x, d).getResult();
    };
  else if (op == "Softplus") // log(exp(x) + 1)
    fn = [&](OpBuilder &nb, Location l, Value x) {
      Value e = math::ExpOp::create(nb, l, x);
      return math::LogOp::create(
                 nb, l, arith::AddFOp::create(nb, l, e, f(nb, l, 1.0f)))
          .getResult();
    };
  else if (op == "Elu" || op == "Selu") {
    // Elu: x < 0 ? alpha (e^x - 1) : x; Selu: gamma (x <= 0 ? alpha (e^x -
    // 1) : x).
    bool selu = op == "Selu";
    attrs = selu ? SmallVector<const char *>{"alpha", "gamma"}
                 : SmallVector<const char *>{"alpha"};
    float alpha =
        floatAttr(n, "alpha", selu ? 1.67326319217681884765625f : 1.0f);
    float gamma =
        selu ? floatAttr(n, "gamma", 1.05070102214813232421875f) : 1.0f;
    fn = [&, alpha, gamma, selu](OpBuilder &nb, Location l, Value x) {
      Value neg = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE, x,
                                        f(nb, l, 0.0f));
      Value em1 = arith::SubFOp::create(nb, l, math::ExpOp::create(nb, l, x),
                                        f(nb, l, 1.0f));
      Value y = arith::SelectOp::create(
          nb, l, neg, arith::MulFOp::create(nb, l, em1, f(nb, l, alpha)), x);
      return selu ? arith::MulFOp::create(nb, l, y, f(nb, l, gamma)).getResult()
                  : y;
    };
  } else if (op == "ThresholdedRelu") {
    attrs = {"alpha"};
    float alpha = floatAttr(n, "alpha", 1.0f);
    fn = [&, alpha](OpBuilder &nb, Location l, Value x) {
      Value above = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, x,
                                          f(nb, l, alpha));
      return arith::SelectOp::create(nb, l, above, x, f(nb, l, 0.0f))
          .getResult();
    };
  } else if (op == "Sigmoid")
    fn = [&](OpBuilder &nb, Location l, Value x) {
      Value e = math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, x));
      return arith::DivFOp::create(
                 nb, l, f(nb, l, 1.0f),
                 arith::AddFOp::create(nb, l, f(nb, l, 1.0f), e))
          .getResult();
    };
  else if (op == "LeakyRelu") {
    attrs = {"alpha"};
    float alpha = floatAttr(n, "alpha", 0.01f);
    fn = [&, alpha](OpBuilder &nb, Location l, Value x) {
      Value neg = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, x,
                                        f(nb, l, 0.0f));
      return arith::SelectOp::create(
                 nb, l, neg, arith::MulFOp::create(nb, l, x, f(nb, l, alpha)),
                 x)
          .getResult();
    };
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    attrs = {"alpha", "beta"};
    float alpha = op == "HardSwish" ? 1.0f / 6 : floatAttr(n, "alpha", 0.2f);
    float beta = op == "HardSwish" ? 0.5f : floatAttr(n, "beta", 0.5f);
    bool swish = op == "HardSwish";
    fn = [&, alpha, beta, swish](OpBuilder &nb, Location l, Value x) {
      Value y = arith::AddFOp::create(
          nb, l, arith::MulFOp::create(nb, l, x, f(nb, l, alpha)),
          f(nb, l, beta));
      y = arith::MinimumFOp::create(
          nb, l, arith::MaximumFOp::create(nb, l, y, f(nb, l, 0.0f)),
          f(nb, l, 1.0f));
      return swish ? arith::MulFOp::create(nb, l, x, y).getResult() : y;
    };
  } else if (op == "Clip") {
    attrs = {"min", "max"};
    float lo = -std::numeric_limits<float>::infinity(),
          hi = std::numeric_limits<float>::infinity();
    if (attr(n, "min"))
      lo = floatAttr(n, "min", lo);
    if (attr(n, "max"))
      hi = floatAttr(n, "max", hi);
    if (auto v = constantInput(n, 1))
      lo = v->at(0);
    if (auto v = constantInput(n, 2))
      hi = v->at(0);
    fn = [&, lo, hi](OpBuilder &nb, Location l, Value x) {
      return arith::MinimumFOp::create(
                 nb, l, arith::MaximumFOp::create(nb, l, x, f(nb, l, lo)),
                 f(nb, l, hi))
          .getResult();
    };
  } else {
    return false;
  }
  onlyAttrs(n, attrs);
  values[n.output(0)] = elementwise(
      {input(n, 0)}, n,
      [&](OpBuilder &nb, Location l, ValueRange v) { return fn(nb, l, v[0]); });
  return true;
}

Value Importer::constant(const onnx::TensorProto &t, const std::string &where) {
  std::vector<float> data;
  std::string why;
  if (!tensorValues(t, data, why))
    fail(where + ": " + why);
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  auto type = f32Tensor(shape);
  if (data.size() < kResourceElements)
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, ArrayRef<float>(data)));
  // Large weights are dense resources: a blob printed once in hex at the
  // end of the module, not a giant textual literal. The key is the
  // initializer's name (made unique by the blob manager).
  std::string key = t.name().empty() ? "weight" : t.name();
  for (char &ch : key)
    if (!llvm::isAlnum(ch) && ch != '_' && ch != '.')
      ch = '_';
  return arith::ConstantOp::create(
      b, loc,
      DenseResourceElementsAttr::get(
          type, key,
          HeapAsmResourceBlob::allocateAndCopyInferAlign(
              ArrayRef<float>(data))));
}

Value Importer::zeros(ArrayRef<int64_t> shape) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

Value Importer::transpose(Value v, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(shapeOf(v)[d]);
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

Value Importer::matmul(Value a, Value c, const onnx::NodeProto &n) {
  ArrayRef<int64_t> as = shapeOf(a), cs = shapeOf(c);
  if (as.size() == 2 && cs.size() == 2) {
    if (as[1] != cs[0])
      fail(nodeName(n) + ": inner dimensions differ (" + std::to_string(as[1]) +
           " vs " + std::to_string(cs[0]) + ")");
    Value init = zeros({as[0], cs[1]});
    return linalg::MatmulOp::create(b, loc, ValueRange{a, c}, ValueRange{init})
        .getResult(0);
  }
  if (as.size() > 2 && cs.size() == 2) {
    // [..., M, K] x [K, N]: one 2-D product over the flattened rows (a
    // weight applied to every token or image).
    int64_t rows = 1;
    for (int64_t d : as.drop_back())
      rows *= d;
    Value flat = matmul(reshape(a, {rows, as.back()}), c, n);
    SmallVector<int64_t> shape(as.drop_back());
    shape.push_back(cs[1]);
    return reshape(flat, shape);
  }
  if (as.size() == cs.size() && as.size() > 3 &&
      as.drop_back(2) == cs.drop_back(2)) {
    // Equal batch dims: one batch dim.
    int64_t batch = 1;
    for (int64_t d : as.drop_back(2))
      batch *= d;
    Value flat = matmul(reshape(a, {batch, as[as.size() - 2], as.back()}),
                        reshape(c, {batch, cs[cs.size() - 2], cs.back()}), n);
    SmallVector<int64_t> shape(as.drop_back());
    shape.push_back(cs.back());
    return reshape(flat, shape);
  }
  if (as.size() == 3 && cs.size() == 3 && as[0] == cs[0]) {
    if (as[2] != cs[1])
      fail(nodeName(n) + ": inner dimensions differ (" + std::to_string(as[2]) +
           " vs " + std::to_string(cs[1]) + ")");
    Value init = zeros({as[0], as[1], cs[2]});
    return linalg::BatchMatmulOp::create(b, loc, ValueRange{a, c},
                                         ValueRange{init})
        .getResult(0);
  }
  fail(nodeName(n) + ": operands of rank " + std::to_string(as.size()) +
       " and " + std::to_string(cs.size()) +
       " are not supported (2-D, N-D by 2-D, or N-D with equal batch "
       "dims)");
}

/// numpy broadcasting of the inputs into one linalg.generic.
Value Importer::elementwise(
    ValueRange inputs, const onnx::NodeProto &n,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  size_t rank = 0;
  for (Value v : inputs)
    rank = std::max(rank, shapeOf(v).size());
  SmallVector<int64_t> shape(rank, 1);
  for (Value v : inputs) {
    ArrayRef<int64_t> s = shapeOf(v);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &d = shape[rank - s.size() + i];
      if (d == 1)
        d = s[i];
      else if (s[i] != 1 && s[i] != d)
        fail(nodeName(n) + ": shapes cannot be broadcast together");
    }
  }
  SmallVector<AffineMap> maps;
  for (Value v : inputs) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<AffineExpr> exprs;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t d = rank - s.size() + i;
      exprs.push_back(s[i] == 1 && shape[d] != 1 ? getAffineConstantExpr(0, ctx)
                                                 : getAffineDimExpr(d, ctx));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
      });
  return op.getResult(0);
}

/// Evaluates at import time a node whose inputs are all constants, for
/// the shape arithmetic exporters emit (Shape -> Gather -> Unsqueeze ->
/// Concat -> Reshape): its output becomes a constant too. Shapes are
/// static, so Shape always folds. Returns false to import the node as
/// usual.
bool Importer::fold(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  static const std::set<std::string> foldable = {
      "Shape", "Gather", "Unsqueeze", "Squeeze", "Concat",   "Cast",
      "Add",   "Sub",    "Mul",       "Div",     "Identity", "Slice"};
  if (!foldable.count(op) || n.output_size() != 1)
    return false;
  struct Const {
    std::vector<int64_t> dims;
    std::vector<double> v;
    bool isInt;
  };
  std::vector<Const> in;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      in.push_back({{}, {}, true});
      continue;
    }
    if (op == "Shape" && i == 0)
      continue;
    auto it = initializers.find(n.input(i));
    if (it == initializers.end())
      return false;
    std::vector<float> f;
    std::string why;
    if (!tensorValues(it->second, f, why))
      return false;
    in.push_back({{it->second.dims().begin(), it->second.dims().end()},
                  {f.begin(), f.end()},
                  it->second.data_type() != onnx::TensorProto::FLOAT});
  }
  // Too few inputs: the value path reports the missing one.
  size_t need = op == "Shape" ? 0 : op == "Gather" ? 2 : 1;
  if (in.size() < need)
    return false;
  auto ints = [](const Const &c) {
    std::vector<int64_t> r;
    for (double d : c.v)
      r.push_back(int64_t(d));
    return r;
  };
  Const out;
  if (op == "Shape") {
    ArrayRef<int64_t> shape = shapeOf(input(n, 0));
    int64_t rank = shape.size();
    int64_t start = intAttr(n, "start", 0), end = intAttr(n, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    for (int64_t d = start; d < end; ++d)
      out.v.push_back(shape[d]);
    out.dims = {int64_t(out.v.size())};
    out.isInt = true;
  } else if (op == "Identity") {
    out = in[0];
  } else if (op == "Cast") {
    int64_t to = intAttr(n, "to", 0);
    if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::FLOAT)
      return false;
    out = in[0];
    out.isInt = to == onnx::TensorProto::INT64;
    if (out.isInt)
      for (double &d : out.v) {
        if (!std::isfinite(d))
          return false; // no integer for it: the value path decides
        d = std::trunc(d);
      }
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    std::vector<int64_t> axes;
    if (const onnx::AttributeProto *a = attr(n, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
    else if (in.size() > 1)
      axes = ints(in[1]);
    out = in[0];
    int64_t rank = in[0].dims.size();
    if (op == "Unsqueeze") {
      int64_t outRank = rank + axes.size();
      for (int64_t &a : axes)
        a = a < 0 ? a + outRank : a;
      llvm::sort(axes);
      for (int64_t a : axes) {
        if (a < 0 || a > int64_t(out.dims.size()))
          return false;
        out.dims.insert(out.dims.begin() + a, 1);
      }
    } else {
      out.dims.clear();
      for (int64_t d = 0; d < rank; ++d) {
        bool listed = axes.empty() ? in[0].dims[d] == 1
                                   : llvm::is_contained(axes, d) ||
                                         llvm::is_contained(axes, d - rank);
        if (!listed)
          out.dims.push_back(in[0].dims[d]);
        else if (in[0].dims[d] != 1)
          return false;
      }
    }
  } else if (op == "Gather") {
    if (in[0].dims.size() != 1 || intAttr(n, "axis", 0) != 0)
      return false;
    int64_t size = in[0].dims[0];
    for (int64_t i : ints(in[1])) {
      if (i < -size || i >= size)
        return false; // the value path reports it
      out.v.push_back(in[0].v[i < 0 ? i + size : i]);
    }
    out.dims = in[1].dims;
    out.isInt = in[0].isInt;
  } else if (op == "Concat") {
    for (const Const &c : in) {
      if (c.dims.size() != 1)
        return false;
      out.v.insert(out.v.end(), c.v.begin(), c.v.end());
    }
    out.dims = {int64_t(out.v.size())};
    out.isInt = in[0].isInt;
  } else if (op == "Slice") {
    if (in.size() < 3 || in[0].dims.size() != 1 ||
        (in.size() > 3 && !in[3].v.empty() && ints(in[3])[0] != 0))
      return false;
    int64_t size = in[0].dims[0];
    int64_t step = in.size() > 4 && !in[4].v.empty() ? ints(in[4])[0] : 1;
    if (step <= 0 || in[1].v.size() != 1 || in[2].v.size() != 1)
      return false;
    auto clampIndex = [&](double d) {
      int64_t i = d >= 9e18 ? size : int64_t(d);
      return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size);
    };
    for (int64_t i = clampIndex(in[1].v[0]), e = clampIndex(in[2].v[0]); i < e;
         i += step)
      out.v.push_back(in[0].v[i]);
    out.dims = {int64_t(out.v.size())};
    out.isInt = in[0].isInt;
  } else {
    // Elementwise arithmetic on equal shapes or with a scalar.
    if (in.size() != 2)
      return false;
    const Const &a = in[0], &c = in[1];
    if (a.v.size() != c.v.size() && a.v.size() != 1 && c.v.size() != 1)
      return false;
    out.dims = a.v.size() >= c.v.size() ? a.dims : c.dims;
    out.isInt = a.isInt && c.isInt;
    for (size_t i = 0, e = std::max(a.v.size(), c.v.size()); i < e; ++i) {
      double x = a.v[a.v.size() == 1 ? 0 : i], y = c.v[c.v.size() == 1 ? 0 : i];
      double r = op == "Add"   ? x + y
                 : op == "Sub" ? x - y
                 : op == "Mul" ? x * y
                               : x / y;
      if (op == "Div" && out.isInt) {
        if (y == 0)
          return false;    // integer division by zero is not folded
        r = std::trunc(r); // integer division truncates
      }
      out.v.push_back(r);
    }
  }
  onnx::TensorProto t;
  t.set_name(n.output(0));
  for (int64_t d : out.dims)
    t.add_dims(d);
  if (out.isInt) {
    t.set_data_type(onnx::TensorProto::INT64);
    for (double d : out.v)
      t.add_int64_data(int64_t(d));
  } else {
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (double d : out.v)
      t.add_float_data(float(d));
  }
  initializers[n.output(0)] = t;
  values[n.output(0)] = constant(t, nodeName(n));
  return true;
}

/// QuantizeLinear / DequantizeLinear (ONNX's own quantization, opsets
/// 10-21): per tensor, per axis, or in blocks along `axis` (opset 21's
/// `block_size`). Integer tensors are held as f32 values (exact: at most
/// 16 bits), so that
///   QuantizeLinear:   q = clamp(round_even(x / s) + zp, lo, hi)
///   DequantizeLinear: y = (q - zp) * s
/// are f32 arithmetic: a Q/DQ pair is the quantization it describes, which
/// tq-quantize then replaces by tiles like any float layer. A
/// DequantizeLinear of a constant (a stored integer weight) is evaluated
/// here into a float constant.
void Importer::quantizeLinear(const onnx::NodeProto &n) {
  bool quantize = n.op_type() == "QuantizeLinear";
  onlyAttrs(n, {"axis", "block_size", "saturate", "output_dtype"});
  // The scale and zero point must be constants (constantInput says so).
  std::vector<float> scale = requiredConstant(n, 1), zp(scale.size(), 0.0f);
  const onnx::TensorProto &st = initializers.at(n.input(1));
  int zpType = quantize ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT32;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    zp = requiredConstant(n, 2);
    zpType = initializers.at(n.input(2)).data_type();
    if (zp.size() != scale.size())
      fail(nodeName(n) + ": the zero point and the scale differ in shape");
  }
  if (int64_t t = intAttr(n, "output_dtype", 0))
    zpType = int(t);
  float lo, hi;
  switch (zpType) {
  case onnx::TensorProto::INT8:
    lo = -128, hi = 127;
    break;
  case onnx::TensorProto::UINT8:
    lo = 0, hi = 255;
    break;
  case onnx::TensorProto::INT16:
    lo = -32768, hi = 32767;
    break;
  case onnx::TensorProto::UINT16:
    lo = 0, hi = 65535;
    break;
  case onnx::TensorProto::INT32:
    if (quantize)
      fail(nodeName(n) + ": QuantizeLinear to int32 is not supported");
    lo = -2147483648.0f, hi = 2147483647.0f;
    break;
  default:
    fail(nodeName(n) + ": quantized type " + std::to_string(zpType) +
         " is not supported (int8, uint8, int16, uint16; int32 to "
         "dequantize)");
  }
  // The input's shape: a constant's dims, or the value's.
  bool constIn = !quantize && initializers.count(n.input(0));
  SmallVector<int64_t> xs;
  if (constIn) {
    const onnx::TensorProto &xt = initializers.at(n.input(0));
    xs.assign(xt.dims().begin(), xt.dims().end());
  } else {
    xs.assign(shapeOf(input(n, 0)).begin(), shapeOf(input(n, 0)).end());
  }
  int64_t rank = xs.size();
  int64_t block = intAttr(n, "block_size", 0);
  int64_t axis = 0;
  // Which parameter each element uses: scalar, per axis, or per block.
  SmallVector<int64_t> pshape;
  if (st.dims_size() == 0 || scale.size() == 1) {
    pshape.assign(rank, 1);
  } else {
    axis = axisAttr(n, "axis", 1, rank);
    pshape.assign(rank, 1);
    if (block > 0) {
      if (st.dims_size() != rank)
        fail(nodeName(n) + ": blocked scales need the input's rank");
      for (int64_t d = 0; d < rank; ++d) {
        pshape[d] = st.dims(d);
        int64_t want = d == axis ? (xs[d] + block - 1) / block : xs[d];
        if (pshape[d] != want)
          fail(nodeName(n) + ": the scale's shape does not match the blocks");
      }
    } else {
      if (st.dims_size() != 1 || st.dims(0) != xs[axis])
        fail(nodeName(n) + ": a per-axis scale needs one value per index of "
                           "the axis");
      pshape[axis] = xs[axis];
    }
  }
  auto paramIndex = [&](ArrayRef<int64_t> idx) {
    int64_t p = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t i = pshape[d] == 1
                      ? 0
                      : (block > 0 && d == axis ? idx[d] / block : idx[d]);
      p = p * pshape[d] + i;
    }
    return p;
  };
  if (constIn) {
    std::vector<float> q = requiredConstant(n, 0), y(q.size());
    SmallVector<int64_t> idx(rank, 0);
    for (size_t e = 0; e < q.size(); ++e) {
      int64_t p = paramIndex(idx);
      y[e] = (q[e] - zp[p]) * scale[p];
      for (int64_t d = rank; d-- > 0;)
        if (++idx[d] < xs[d])
          break;
        else
          idx[d] = 0;
    }
    onnx::TensorProto t;
    t.set_name(n.output(0));
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : xs)
      t.add_dims(d);
    for (float v : y)
      t.add_float_data(v);
    initializers[n.output(0)] = t;
    values[n.output(0)] = constant(t, nodeName(n));
    return;
  }
  if (block > 0)
    fail(nodeName(n) + ": blocked quantization of a non-constant tensor is "
                       "not supported");
  auto param = [&](const std::vector<float> &v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(f32Tensor(pshape), ArrayRef<float>(v)));
  };
  auto f = [&](OpBuilder &nb, Location l, float v) {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v));
  };
  values[n.output(0)] = elementwise(
      {input(n, 0), param(scale), param(zp)}, n,
      [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
        if (!quantize)
          return arith::MulFOp::create(
              nb, l, arith::SubFOp::create(nb, l, v[0], v[2]), v[1]);
        Value r = math::RoundEvenOp::create(
            nb, l, arith::DivFOp::create(nb, l, v[0], v[1]));
        Value q = arith::AddFOp::create(nb, l, r, v[2]);
        q = arith::MaximumFOp::create(nb, l, q, f(nb, l, lo));
        return arith::MinimumFOp::create(nb, l, q, f(nb, l, hi));
      });
}

/// MatMulInteger and QLinearMatMul on integers held as f32 values (exact
/// while the products' sums stay below 2^24):
///   MatMulInteger: Y = (A - a_zp) (B - b_zp)          (a_zp per row of A
///                  or scalar, b_zp per column of B or scalar)
///   QLinearMatMul: Y = sat(round_even(that * (a_s b_s / y_s)) + y_zp),
///                  the multiplier in f32 and the product in f64, as the
///                  ONNX reference computes them.
void Importer::integerMatmul(const onnx::NodeProto &n) {
  onlyAttrs(n, {});
  bool qlinear = n.op_type() == "QLinearMatMul";
  int ia = 0, iazp = 2, ib = qlinear ? 3 : 1, ibzp = qlinear ? 5 : 3;
  Value a = input(n, ia), c = input(n, ib);
  auto centered = [&](Value v, int zpIndex, bool rows) {
    if (zpIndex >= n.input_size() || n.input(zpIndex).empty())
      return v;
    std::vector<float> zp = requiredConstant(n, zpIndex);
    ArrayRef<int64_t> vs = shapeOf(v);
    SmallVector<int64_t> zshape;
    if (zp.size() > 1) {
      // Per row of A ([M] -> [M, 1]) or per column of B ([N] -> [1, N]).
      int64_t want = rows ? vs[vs.size() - 2] : vs.back();
      if (int64_t(zp.size()) != want)
        fail(nodeName(n) + ": a zero point has " + std::to_string(zp.size()) +
             " values for a dimension of " + std::to_string(want));
      zshape =
          rows ? SmallVector<int64_t>{want, 1} : SmallVector<int64_t>{1, want};
    }
    Value z = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(f32Tensor(zshape), ArrayRef<float>(zp)));
    return elementwise({v, z}, n, [&](OpBuilder &nb, Location l, ValueRange x) {
      return arith::SubFOp::create(nb, l, x[0], x[1]).getResult();
    });
  };
  Value y = matmul(centered(a, iazp, true), centered(c, ibzp, false), n);
  if (!qlinear) {
    values[n.output(0)] = y;
    return;
  }
  auto scalar = [&](int i) {
    std::vector<float> v = requiredConstant(n, i);
    if (v.size() != 1)
      fail(nodeName(n) + ": only per-tensor scales and zero points are "
                         "supported for the output");
    return double(v[0]);
  };
  // The multiplier in f32 (as the reference computes it), applied in f64.
  float as = float(scalar(1)), bs = float(scalar(4)), ys = float(scalar(6));
  float prod = as * bs;
  double mult = double(prod / ys);
  double yzp = n.input_size() > 7 && !n.input(7).empty() ? scalar(7) : 0.0;
  bool isSigned =
      n.input_size() > 7 && !n.input(7).empty() &&
      initializers.at(n.input(7)).data_type() == onnx::TensorProto::INT8;
  float lo = isSigned ? -128.0f : 0.0f, hi = isSigned ? 127.0f : 255.0f;
  values[n.output(0)] = elementwise(
      {y}, n, [&](OpBuilder &nb, Location l, ValueRange x) -> Value {
        Value w = arith::ExtFOp::create(nb, l, nb.getF64Type(), x[0]);
        w = arith::MulFOp::create(
            nb, l, w,
            arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(mult)));
        w = math::RoundEvenOp::create(nb, l, w);
        w = arith::AddFOp::create(
            nb, l, w,
            arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(yzp)));
        Value q = arith::TruncFOp::create(nb, l, nb.getF32Type(), w);
        q = arith::MaximumFOp::create(
            nb, l, q, arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(lo)));
        return arith::MinimumFOp::create(
            nb, l, q, arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(hi)));
      });
}

/// ConvTranspose (NCHW, group 1) as the convolution it equals: the input
/// with stride-1 zeros inserted between its pixels, padded by
/// dilation*(kernel-1) minus the pads (plus output_padding at the end),
/// convolved at stride 1 with the filter flipped in space and with its
/// channel dims swapped.
void Importer::convTranspose(const onnx::NodeProto &n) {
  onlyAttrs(n, {"strides", "dilations", "pads", "group", "kernel_shape",
                "output_padding", "auto_pad"});
  if (const onnx::AttributeProto *a = attr(n, "auto_pad"))
    if (a->s() != "NOTSET")
      fail(nodeName(n) + ": auto_pad '" + a->s() + "' is not supported");
  if (intAttr(n, "group", 1) != 1)
    fail(nodeName(n) + ": grouped ConvTranspose is not supported");
  Value x = input(n, 0), w = input(n, 1);
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w);
  if (xs.size() != 4 || ws.size() != 4 || ws[0] != xs[1])
    fail(nodeName(n) + ": needs an NCHW input and a [C, K, R, S] filter");
  auto ints = [&](const char *name, SmallVector<int64_t> dflt) {
    if (const onnx::AttributeProto *a = attr(n, name))
      return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
    return dflt;
  };
  SmallVector<int64_t> st = ints("strides", {1, 1}),
                       dil = ints("dilations", {1, 1}),
                       pads = ints("pads", {0, 0, 0, 0}),
                       outPad = ints("output_padding", {0, 0});
  if (st.size() != 2 || dil.size() != 2 || pads.size() != 4 ||
      outPad.size() != 2)
    fail(nodeName(n) + ": strides, dilations, pads and output_padding must "
                       "be 2-D");
  int64_t C = xs[1], K = ws[1], R = ws[2], S = ws[3];
  // Zeros between the input pixels.
  Value xd = x;
  SmallVector<int64_t> ds = {xs[0], C, (xs[2] - 1) * st[0] + 1,
                             (xs[3] - 1) * st[1] + 1};
  if (st[0] > 1 || st[1] > 1)
    xd = tensor::InsertSliceOp::create(
        b, loc, x, zeros(ds), ValueRange{}, ValueRange{}, ValueRange{},
        SmallVector<int64_t>{0, 0, 0, 0}, xs,
        SmallVector<int64_t>{1, 1, st[0], st[1]});
  SmallVector<int64_t> convPads = {dil[0] * (R - 1) - pads[0],
                                   dil[1] * (S - 1) - pads[1],
                                   dil[0] * (R - 1) - pads[2] + outPad[0],
                                   dil[1] * (S - 1) - pads[3] + outPad[1]};
  if (llvm::any_of(convPads, [](int64_t p) { return p < 0; }))
    fail(nodeName(n) + ": pads beyond the kernel's reach are not supported");
  // The filter: [C, K, R, S] -> [K, C, R, S], flipped in R and S.
  Value wf;
  if (initializers.count(n.input(1))) {
    std::vector<float> src = requiredConstant(n, 1), dst(src.size());
    for (int64_t c = 0; c < C; ++c)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t q = 0; q < S; ++q)
            dst[((k * C + c) * R + r) * S + q] =
                src[((c * K + k) * R + (R - 1 - r)) * S + (S - 1 - q)];
    wf = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(f32Tensor({K, C, R, S}), ArrayRef<float>(dst)));
  } else {
    MLIRContext *c = ctx;
    AffineExpr d0 = getAffineDimExpr(0, c), d1 = getAffineDimExpr(1, c),
               d2 = getAffineDimExpr(2, c), d3 = getAffineDimExpr(3, c);
    AffineMap in = AffineMap::get(4, 0, {d1, d0, R - 1 - d2, S - 1 - d3}, c);
    AffineMap out = AffineMap::getMultiDimIdentityMap(4, c);
    Value init = tensor::EmptyOp::create(
        b, loc, SmallVector<int64_t>{K, C, R, S}, b.getF32Type());
    wf = linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{w}, ValueRange{init},
             SmallVector<AffineMap>{in, out},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
             .getResult(0);
  }
  Value padded = pad(xd, convPads, 0.0f);
  ArrayRef<int64_t> ps = shapeOf(padded);
  int64_t P = ps[2] - dil[0] * (R - 1), Q = ps[3] - dil[1] * (S - 1);
  if (P < 1 || Q < 1)
    fail(nodeName(n) + ": the output would be empty");
  Value init = zeros({xs[0], K, P, Q});
  Value y =
      linalg::Conv2DNchwFchwOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{padded, wf},
          ValueRange{init}, b.getI64TensorAttr({1, 1}), b.getI64TensorAttr(dil))
          .getResult(0);
  if (n.input_size() > 2 && !n.input(2).empty()) {
    Value bias = reshape(input(n, 2), {K, 1, 1});
    y = elementwise({y, bias}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
      return arith::AddFOp::create(nb, l, v[0], v[1]).getResult();
    });
  }
  values[n.output(0)] = y;
}

/// Resize (opset 11 on) of the two spatial dims of an NCHW tensor, nearest
/// or linear, from constant scales or sizes. The source pixels and weights
/// of each output row and column are computed here (in double, with the
/// coordinate transformation and nearest-rounding modes of the spec;
/// indices clamped to the edge) and applied by one linalg.generic that
/// reads the input with tensor.extract.
void Importer::resize(const onnx::NodeProto &n) {
  onlyAttrs(n, {"mode", "coordinate_transformation_mode", "nearest_mode",
                "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                "antialias", "keep_aspect_ratio_policy", "axes"});
  if (llvm::any_of(opsets, [](int64_t v) { return v < 11; }))
    fail(nodeName(n) + ": Resize before opset 11 is not supported");
  auto str = [&](const char *name, const char *dflt) {
    const onnx::AttributeProto *a = attr(n, name);
    return a ? a->s() : std::string(dflt);
  };
  std::string mode = str("mode", "nearest"),
              coord = str("coordinate_transformation_mode", "half_pixel"),
              nearest = str("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    fail(nodeName(n) + ": mode '" + mode + "' is not supported");
  if (intAttr(n, "exclude_outside", 0) || intAttr(n, "antialias", 0) ||
      attr(n, "axes") ||
      str("keep_aspect_ratio_policy", "stretch") != "stretch")
    fail(nodeName(n) + ": only the default exclude_outside, antialias, axes "
                       "and keep_aspect_ratio_policy are supported");
  Value x = input(n, 0);
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() != 4)
    fail(nodeName(n) + ": only 4-D (NCHW) inputs are supported");
  std::vector<float> scales, sizes;
  if (n.input_size() > 2 && !n.input(2).empty())
    scales = requiredConstant(n, 2);
  if (n.input_size() > 3 && !n.input(3).empty())
    sizes = requiredConstant(n, 3);
  SmallVector<int64_t> out(xs);
  SmallVector<double> scale(4, 1.0);
  for (int d = 0; d < 4; ++d) {
    if (!sizes.empty()) {
      if (sizes.size() != 4)
        fail(nodeName(n) + ": sizes must have 4 values");
      out[d] = int64_t(sizes[d]);
      scale[d] = double(out[d]) / double(xs[d]);
    } else if (!scales.empty()) {
      if (scales.size() != 4)
        fail(nodeName(n) + ": scales must have 4 values");
      scale[d] = scales[d];
      out[d] = int64_t(std::floor(double(xs[d]) * scales[d]));
    } else {
      fail(nodeName(n) + ": needs constant scales or sizes");
    }
    if (out[d] < 1)
      fail(nodeName(n) + ": the output would be empty");
  }
  if (out[0] != xs[0] || out[1] != xs[1])
    fail(nodeName(n) + ": only the spatial dims (H, W) can be resized");
  // The source coordinate of output index i along dim d.
  auto source = [&](int d, int64_t i) -> double {
    // length_resized is input * scale (the unrounded size) per the spec.
    double in = xs[d], s = scale[d], o = in * s;
    if (coord == "half_pixel")
      return (i + 0.5) / s - 0.5;
    if (coord == "pytorch_half_pixel")
      return o > 1 ? (i + 0.5) / s - 0.5 : 0.0;
    if (coord == "align_corners")
      return o > 1 ? i * (in - 1) / (o - 1) : 0.0;
    if (coord == "asymmetric")
      return i / s;
    if (coord == "tf_half_pixel_for_nn")
      return (i + 0.5) / s;
    fail(nodeName(n) + ": coordinate_transformation_mode '" + coord +
         "' is not supported");
  };
  auto clampIndex = [&](int d, int64_t i) {
    return std::clamp<int64_t>(i, 0, xs[d] - 1);
  };
  // Per spatial dim: two source indices and their weights per output index.
  SmallVector<std::vector<int64_t>, 2> i0(2), i1(2);
  SmallVector<std::vector<float>, 2> w0(2), w1(2);
  for (int k = 0; k < 2; ++k) {
    int d = 2 + k;
    for (int64_t i = 0; i < out[d]; ++i) {
      double c = source(d, i);
      if (mode == "nearest") {
        double f = std::floor(c), frac = c - f;
        int64_t r;
        if (nearest == "round_prefer_floor")
          r = frac <= 0.5 ? int64_t(f) : int64_t(f) + 1;
        else if (nearest == "round_prefer_ceil")
          r = frac < 0.5 ? int64_t(f) : int64_t(f) + 1;
        else if (nearest == "floor")
          r = int64_t(f);
        else if (nearest == "ceil")
          r = int64_t(std::ceil(c));
        else
          fail(nodeName(n) + ": nearest_mode '" + nearest +
               "' is not supported");
        i0[k].push_back(clampIndex(d, r));
        i1[k].push_back(clampIndex(d, r));
        w0[k].push_back(1.0f);
        w1[k].push_back(0.0f);
      } else {
        double f = std::floor(c), r = c - f;
        i0[k].push_back(clampIndex(d, int64_t(f)));
        i1[k].push_back(clampIndex(d, int64_t(f) + 1));
        w0[k].push_back(float(1.0 - r));
        w1[k].push_back(float(r));
      }
    }
  }
  auto indexTable = [&](const std::vector<int64_t> &v) -> Value {
    auto type = RankedTensorType::get({int64_t(v.size())}, b.getIndexType());
    SmallVector<APInt> vals;
    for (int64_t i : v)
      vals.push_back(APInt(64, i));
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, vals));
  };
  auto weightTable = [&](const std::vector<float> &v) -> Value {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(f32Tensor({int64_t(v.size())}),
                               ArrayRef<float>(v)));
  };
  SmallVector<Value> ins = {indexTable(i0[0]),  indexTable(i1[0]),
                            weightTable(w0[0]), weightTable(w1[0]),
                            indexTable(i0[1]),  indexTable(i1[1]),
                            weightTable(w0[1]), weightTable(w1[1])};
  AffineMap rows = AffineMap::get(4, 0, {getAffineDimExpr(2, ctx)}, ctx),
            cols = AffineMap::get(4, 0, {getAffineDimExpr(3, ctx)}, ctx);
  SmallVector<AffineMap> maps = {
      rows, rows, rows,
      rows, cols, cols,
      cols, cols, AffineMap::getMultiDimIdentityMap(4, ctx)};
  Value init = tensor::EmptyOp::create(b, loc, out, b.getF32Type());
  bool linear = mode == "linear";
  values[n.output(0)] =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
          SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value nIdx = linalg::IndexOp::create(nb, l, 0);
            Value cIdx = linalg::IndexOp::create(nb, l, 1);
            auto at = [&](Value h, Value w) -> Value {
              return tensor::ExtractOp::create(nb, l, x,
                                               ValueRange{nIdx, cIdx, h, w});
            };
            if (!linear) {
              linalg::YieldOp::create(nb, l, at(a[0], a[4]));
              return;
            }
            // Along W on the two source rows, then along H.
            auto lerp = [&](Value p, Value q, Value wp, Value wq) -> Value {
              return arith::AddFOp::create(nb, l,
                                           arith::MulFOp::create(nb, l, p, wp),
                                           arith::MulFOp::create(nb, l, q, wq));
            };
            Value top = lerp(at(a[0], a[4]), at(a[0], a[5]), a[6], a[7]);
            Value bottom = lerp(at(a[1], a[4]), at(a[1], a[5]), a[6], a[7]);
            linalg::YieldOp::create(nb, l, lerp(top, bottom, a[2], a[3]));
          })
          .getResult(0);
}

void Importer::node(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  // Ops carry the node's name (or its first output's): diagnostics and
  // per-layer options (keep-float, calibration) refer to ONNX nodes.
  std::string name = !n.name().empty()     ? n.name()
                     : n.output_size() > 0 ? n.output(0)
                                           : op;
  loc = NameLoc::get(b.getStringAttr(name));
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    fail(nodeName(n) + ": domain '" + n.domain() + "' is not supported");
  auto define = [&](Value v, int i = 0) {
    if (i >= n.output_size())
      fail(nodeName(n) + ": missing output " + std::to_string(i));
    values[n.output(i)] = v;
  };
  auto binary = [&](auto make) {
    onlyAttrs(n, {});
    define(elementwise({input(n, 0), input(n, 1)}, n,
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         return make(nb, l, a[0], a[1]);
                       }));
  };
  if (fold(n) || unary(n) || spatial(n) || normalization(n))
    return;
  if (op == "MatMul") {
    onlyAttrs(n, {});
    define(matmul(input(n, 0), input(n, 1), n));
  } else if (op == "Gemm") {
    onlyAttrs(n, {"alpha", "beta", "transA", "transB"});
    Value a = input(n, 0), c = input(n, 1);
    if (shapeOf(a).size() != 2 || shapeOf(c).size() != 2)
      fail(nodeName(n) + ": A and B must be 2-D");
    if (intAttr(n, "transA", 0))
      a = transpose(a, {1, 0});
    if (intAttr(n, "transB", 0))
      c = transpose(c, {1, 0});
    Value y = matmul(a, c, n);
    float alpha = floatAttr(n, "alpha", 1.0f),
          beta = floatAttr(n, "beta", 1.0f);
    if (alpha != 1.0f)
      y = elementwise({y}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value s = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(alpha));
        return arith::MulFOp::create(nb, l, v[0], s);
      });
    if (n.input_size() > 2 && !n.input(2).empty()) {
      Value bias = input(n, 2);
      y = elementwise(
          {y, bias}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
            Value c2 = v[1];
            if (beta != 1.0f)
              c2 = arith::MulFOp::create(
                  nb, l, c2,
                  arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(beta)));
            return arith::AddFOp::create(nb, l, v[0], c2);
          });
    }
    define(y);
  } else if (op == "Add") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::AddFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Sub") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::SubFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Mul") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::MulFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Div") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return arith::DivFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Relu") {
    onlyAttrs(n, {});
    define(elementwise(
        {input(n, 0)}, n, [](OpBuilder &nb, Location l, ValueRange v) {
          Value zero =
              arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0f));
          return arith::MaximumFOp::create(nb, l, v[0], zero).getResult();
        }));
  } else if (op == "Pow") {
    binary([](OpBuilder &nb, Location l, Value x, Value y) {
      return math::PowFOp::create(nb, l, x, y).getResult();
    });
  } else if (op == "Max" || op == "Min") {
    onlyAttrs(n, {});
    SmallVector<Value> ins;
    for (int i = 0; i < n.input_size(); ++i)
      ins.push_back(input(n, i));
    bool isMax = op == "Max";
    define(elementwise(ins, n, [&](OpBuilder &nb, Location l, ValueRange v) {
      Value r = v[0];
      for (Value x : v.drop_front())
        r = isMax ? arith::MaximumFOp::create(nb, l, r, x).getResult()
                  : arith::MinimumFOp::create(nb, l, r, x).getResult();
      return r;
    }));
  } else if (op == "NegativeLogLikelihoodLoss") {
    onlyAttrs(n, {"reduction", "ignore_index"});
    define(nllLoss(n, input(n, 0), 1, 2));
  } else if (op == "SoftmaxCrossEntropyLoss") {
    onlyAttrs(n, {"reduction", "ignore_index"});
    Value logProb = softmax(input(n, 0), 1, /*log=*/true);
    define(nllLoss(n, logProb, 1, 2));
    if (n.output_size() > 1 && !n.output(1).empty())
      define(logProb, 1);
  } else if (op == "Hardmax") {
    onlyAttrs(n, {"axis"});
    Value x = input(n, 0);
    int64_t rank = shapeOf(x).size();
    int64_t axis = axisAttr(n, "axis", -1, rank);
    for (const auto &o : opsets)
      if (o < 13 && axis != rank - 1)
        fail(nodeName(n) + ": before opset 13, only the last axis is "
                           "supported (the 2-D coercion is not)");
    define(hardmax(x, axis));
  } else if (op == "Split") {
    onlyAttrs(n, {"axis", "split", "num_outputs"});
    Value x = input(n, 0);
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t rank = xs.size();
    int64_t axis = axisAttr(n, "axis", 0, rank);
    int64_t parts = n.output_size();
    if (attr(n, "num_outputs") && intAttr(n, "num_outputs", 0) != parts)
      fail(nodeName(n) + ": num_outputs is " +
           std::to_string(intAttr(n, "num_outputs", 0)) + " but the node has " +
           std::to_string(parts) + " outputs");
    // The sizes: the `split` attribute (before opset 13) or input, else
    // equal parts (the last one smaller when the dim does not divide).
    std::vector<int64_t> sizes;
    if (const onnx::AttributeProto *a = attr(n, "split"))
      sizes.assign(a->ints().begin(), a->ints().end());
    else if (n.input_size() > 1 && !n.input(1).empty())
      for (float v : requiredConstant(n, 1))
        sizes.push_back(int64_t(v));
    if (sizes.empty()) {
      int64_t chunk = (xs[axis] + parts - 1) / parts;
      for (int64_t k = 0, left = xs[axis]; k < parts; ++k, left -= chunk)
        sizes.push_back(std::min(chunk, left));
    }
    int64_t total = 0;
    for (int64_t v : sizes) {
      if (v <= 0)
        fail(nodeName(n) + ": empty parts are not supported");
      total += v;
    }
    if (int64_t(sizes.size()) != parts || total != xs[axis])
      fail(nodeName(n) + ": the parts do not split a dimension of " +
           std::to_string(xs[axis]) + " into " + std::to_string(parts) +
           " outputs");
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    for (int64_t k = 0; k < parts; ++k) {
      SmallVector<int64_t> size(xs);
      size[axis] = sizes[k];
      define(tensor::ExtractSliceOp::create(
                 b, loc, f32Tensor(size), x, ValueRange{}, ValueRange{},
                 ValueRange{}, offsets, size, strides),
             k);
      offsets[axis] += sizes[k];
    }
  } else if (op == "Dropout") {
    // Inference: the identity (no mask).
    onlyAttrs(n, {"ratio", "seed", "is_test"});
    if (n.output_size() > 1 && !n.output(1).empty())
      fail(nodeName(n) + ": the mask output is not supported (inference "
                         "only)");
    // Before opset 7, is_test = 0 (the default) is training mode.
    if (llvm::any_of(opsets, [](int64_t o) { return o < 7; }) &&
        !intAttr(n, "is_test", 0))
      fail(nodeName(n) + ": training mode is not supported (inference "
                         "only)");
    if (n.input_size() > 2 && !n.input(2).empty()) {
      std::vector<float> training = requiredConstant(n, 2);
      if (training.size() != 1 || training[0] != 0.0f)
        fail(nodeName(n) + ": training mode is not supported (inference "
                           "only)");
    }
    define(input(n, 0));
  } else if (op == "Softmax" || op == "LogSoftmax") {
    onlyAttrs(n, {"axis"});
    Value x = input(n, 0);
    int64_t rank = shapeOf(x).size();
    int64_t axis = axisAttr(n, "axis", -1, rank);
    bool opset13 = true;
    for (const auto &o : opsets)
      if (o < 13)
        opset13 = false;
    if (!opset13 && axis != rank - 1)
      fail(nodeName(n) + ": before opset 13, only the last axis is "
                         "supported (the 2-D coercion is not)");
    define(softmax(x, axis, op == "LogSoftmax"));
  } else if (op == "Reshape") {
    onlyAttrs(n, {"allowzero"});
    Value x = input(n, 0);
    std::optional<std::vector<float>> dims = constantInput(n, 1);
    if (!dims)
      fail(nodeName(n) + ": the shape input is missing");
    int64_t known = 1, inferred = -1, total = 1;
    for (int64_t d : shapeOf(x))
      total *= d;
    SmallVector<int64_t> shape;
    for (size_t i = 0; i < dims->size(); ++i) {
      int64_t d = int64_t((*dims)[i]);
      if (d == 0 && !intAttr(n, "allowzero", 0)) {
        if (i >= shapeOf(x).size())
          fail(nodeName(n) + ": 0 copies a dimension the input lacks");
        d = shapeOf(x)[i];
      }
      if (d == -1) {
        if (inferred >= 0)
          fail(nodeName(n) + ": more than one -1 in the shape");
        inferred = i;
        shape.push_back(1);
        continue;
      }
      if (d < 0)
        fail(nodeName(n) + ": negative dimension in the shape");
      shape.push_back(d);
      known *= d;
    }
    if (inferred >= 0)
      shape[inferred] = known ? total / known : 0;
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    if (count != total)
      fail(nodeName(n) + ": the shape does not hold the input's elements");
    define(reshape(x, shape));
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    onlyAttrs(n, {"axes"});
    Value x = input(n, 0);
    std::vector<int64_t> axes;
    if (const onnx::AttributeProto *a = attr(n, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
    else if (auto v = constantInput(n, 1))
      for (float f : *v)
        axes.push_back(int64_t(f));
    SmallVector<int64_t> shape(shapeOf(x));
    if (op == "Squeeze") {
      int64_t rank = shape.size();
      SmallVector<int64_t> out;
      for (int64_t d = 0; d < rank; ++d) {
        bool listed =
            axes.empty() ? shape[d] == 1 : llvm::any_of(axes, [&](int64_t a) {
              return (a < 0 ? a + rank : a) == d;
            });
        if (listed && shape[d] != 1)
          fail(nodeName(n) + ": squeezed dimension is not 1");
        if (!listed)
          out.push_back(shape[d]);
      }
      define(reshape(x, out));
    } else {
      int64_t rank = shape.size() + axes.size();
      SmallVector<int64_t> out;
      auto it = shape.begin();
      for (int64_t d = 0; d < rank; ++d) {
        bool listed = llvm::any_of(
            axes, [&](int64_t a) { return (a < 0 ? a + rank : a) == d; });
        if (listed)
          out.push_back(1);
        else if (it != shape.end())
          out.push_back(*it++);
        else
          fail(nodeName(n) + ": axes out of range");
      }
      define(reshape(x, out));
    }
  } else if (op == "Concat") {
    onlyAttrs(n, {"axis"});
    Value first = input(n, 0);
    int64_t rank = shapeOf(first).size();
    int64_t axis = axisAttr(n, "axis", 0, rank);
    SmallVector<int64_t> shape(shapeOf(first));
    shape[axis] = 0;
    for (int i = 0; i < n.input_size(); ++i) {
      ArrayRef<int64_t> s2 = shapeOf(input(n, i));
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && (int64_t(s2.size()) != rank || s2[d] != shape[d]))
          fail(nodeName(n) + ": inputs differ outside the axis");
      shape[axis] += s2[axis];
    }
    Value out = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
    int64_t offset = 0;
    for (int i = 0; i < n.input_size(); ++i) {
      Value v = input(n, i);
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      offsets[axis] = offset;
      out = tensor::InsertSliceOp::create(b, loc, v, out, ValueRange{},
                                          ValueRange{}, ValueRange{}, offsets,
                                          shapeOf(v), strides);
      offset += shapeOf(v)[axis];
    }
    define(out);
  } else if (op == "Slice") {
    onlyAttrs(n, {"starts", "ends", "axes"});
    Value x = input(n, 0);
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t rank = xs.size();
    // Opset 1-9: attributes; 10 on: constant inputs (steps too).
    auto list = [&](const char *name, int i) {
      std::vector<double> v;
      if (const onnx::AttributeProto *a = attr(n, name))
        v.assign(a->ints().begin(), a->ints().end());
      else if (i < n.input_size() && !n.input(i).empty()) {
        std::vector<float> given = requiredConstant(n, i);
        v.assign(given.begin(), given.end());
      }
      return v;
    };
    std::vector<double> starts = list("starts", 1), ends = list("ends", 2),
                        axes = list("axes", 3), steps = list("steps", 4);
    if (starts.empty() || ends.empty())
      fail(nodeName(n) + ": starts and ends are required");
    if (starts.size() != ends.size() ||
        (!axes.empty() && axes.size() != starts.size()) ||
        (!steps.empty() && steps.size() != starts.size()))
      fail(nodeName(n) + ": starts, ends, axes and steps differ in length");
    SmallVector<int64_t> offsets(rank, 0), sizes(xs), strides(rank, 1);
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t axis = axes.empty() ? int64_t(k) : int64_t(axes[k]);
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank)
        fail(nodeName(n) + ": axis out of range");
      int64_t step = steps.empty() ? 1 : int64_t(steps[k]);
      if (step <= 0)
        fail(nodeName(n) + ": only positive steps are supported");
      int64_t dim = xs[axis];
      // Huge values (INT64_MAX for "to the end") clamp to the dimension.
      auto clampIndex = [&](double d) {
        int64_t i = d >= double(dim) ? dim : d <= -double(dim) ? 0 : int64_t(d);
        return std::clamp<int64_t>(i < 0 ? i + dim : i, 0, dim);
      };
      int64_t begin = clampIndex(starts[k]), end = clampIndex(ends[k]);
      int64_t count = end > begin ? (end - begin + step - 1) / step : 0;
      if (count == 0)
        fail(nodeName(n) + ": the slice is empty");
      offsets[axis] = begin;
      sizes[axis] = count;
      strides[axis] = step;
    }
    define(tensor::ExtractSliceOp::create(
        b, loc, f32Tensor(sizes), x, ValueRange{}, ValueRange{}, ValueRange{},
        offsets, sizes, strides));
  } else if (op == "Gather") {
    onlyAttrs(n, {"axis"});
    Value x = input(n, 0);
    ArrayRef<int64_t> xs = shapeOf(x);
    int64_t rank = xs.size();
    int64_t axis = axisAttr(n, "axis", 0, rank);
    std::vector<float> indices = requiredConstant(n, 1);
    const onnx::TensorProto &it = initializers.at(n.input(1));
    // The selected slices side by side along `axis`, then the indices'
    // shape in place of that dim.
    SmallVector<int64_t> picked(xs);
    picked[axis] = indices.size();
    Value out = tensor::EmptyOp::create(b, loc, picked, b.getF32Type());
    SmallVector<int64_t> sizes(xs), strides(rank, 1);
    sizes[axis] = 1;
    for (auto [k, f] : llvm::enumerate(indices)) {
      int64_t i = int64_t(f);
      if (i < 0)
        i += xs[axis];
      if (i < 0 || i >= xs[axis])
        fail(nodeName(n) + ": index " + std::to_string(int64_t(f)) +
             " is out of range for a dimension of " + std::to_string(xs[axis]));
      SmallVector<int64_t> from(rank, 0), to(rank, 0);
      from[axis] = i;
      to[axis] = k;
      Value slice = tensor::ExtractSliceOp::create(
          b, loc, f32Tensor(sizes), x, ValueRange{}, ValueRange{}, ValueRange{},
          from, sizes, strides);
      out = tensor::InsertSliceOp::create(b, loc, slice, out, ValueRange{},
                                          ValueRange{}, ValueRange{}, to, sizes,
                                          strides);
    }
    SmallVector<int64_t> shape(xs.take_front(axis));
    shape.append(it.dims().begin(), it.dims().end());
    shape.append(xs.begin() + axis + 1, xs.end());
    define(reshape(out, shape));
  } else if (op == "Resize") {
    resize(n);
  } else if (op == "ConvTranspose") {
    convTranspose(n);
  } else if (op == "MatMulInteger" || op == "QLinearMatMul") {
    integerMatmul(n);
  } else if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    quantizeLinear(n);
  } else if (op == "Cast") {
    onlyAttrs(n, {"to", "saturate"});
    if (intAttr(n, "to", 0) != onnx::TensorProto::FLOAT)
      fail(nodeName(n) + ": only casts to float are supported");
    define(input(n, 0));
  } else if (op == "Identity") {
    onlyAttrs(n, {});
    define(input(n, 0));
  } else if (op == "Constant") {
    onlyAttrs(n, {"value"});
    const onnx::AttributeProto *v = attr(n, "value");
    if (!v)
      fail(nodeName(n) + ": only the 'value' form is supported");
    initializers[n.output(0)] = v->t();
    define(constant(v->t(), nodeName(n)));
  } else if (op == "Transpose") {
    onlyAttrs(n, {"perm"});
    Value x = input(n, 0);
    SmallVector<int64_t> perm;
    if (const onnx::AttributeProto *p = attr(n, "perm"))
      perm.assign(p->ints().begin(), p->ints().end());
    else
      for (int64_t i = shapeOf(x).size(); i-- > 0;)
        perm.push_back(i);
    SmallVector<int64_t> sorted(perm);
    llvm::sort(sorted);
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != int64_t(i) || perm.size() != shapeOf(x).size())
        fail(nodeName(n) + ": 'perm' is not a permutation of the dims");
    define(transpose(x, perm));
  } else if (op == "Flatten") {
    onlyAttrs(n, {"axis"});
    Value x = input(n, 0);
    int64_t rank = shapeOf(x).size();
    int64_t axis = axisAttr(n, "axis", 1, rank, /*end=*/true);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= shapeOf(x)[i];
    ReassociationIndices lhs, rhs;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? lhs : rhs).push_back(i);
    SmallVector<ReassociationIndices> groups;
    // collapse_shape needs non-empty groups: an empty side is a unit dim.
    Value v = x;
    if (lhs.empty() || rhs.empty()) {
      SmallVector<int64_t> shape = {outer, inner};
      SmallVector<ReassociationIndices> all(1);
      for (int64_t i = 0; i < rank; ++i)
        all[0].push_back(i);
      Value flat = tensor::CollapseShapeOp::create(b, loc, x, all);
      groups = {{0, 1}};
      v = tensor::ExpandShapeOp::create(b, loc, f32Tensor(shape), flat, groups);
    } else {
      groups = {lhs, rhs};
      v = tensor::CollapseShapeOp::create(b, loc, x, groups);
    }
    define(v);
  } else {
    fail(nodeName(n) + ": op type '" + op + "' is not supported");
  }
}

/// The graph's nodes with each inference BatchNormalization that follows a
/// Conv with constant weights (and nothing else reading the Conv) folded
/// into that Conv's weights and bias:
///   W' = W * gamma / sqrt(var + eps)   (per output channel)
///   B' = (B - mean) * gamma / sqrt(var + eps) + beta
std::vector<onnx::NodeProto>
Importer::foldBatchNorms(const onnx::GraphProto &g) {
  std::vector<onnx::NodeProto> nodes(g.node().begin(), g.node().end());
  std::map<std::string, int> uses, producer;
  for (const onnx::ValueInfoProto &out : g.output())
    ++uses[out.name()];
  for (auto [i, n] : llvm::enumerate(nodes)) {
    for (const std::string &in : n.input())
      ++uses[in];
    for (const std::string &out : n.output())
      producer[out] = i;
  }
  auto values = [&](const std::string &name, std::vector<float> &out) {
    auto it = initializers.find(name);
    std::string why;
    return it != initializers.end() &&
           it->second.data_type() == onnx::TensorProto::FLOAT &&
           tensorValues(it->second, out, why);
  };
  std::vector<bool> dropped(nodes.size(), false);
  for (auto [i, bn] : llvm::enumerate(nodes)) {
    if (bn.op_type() != "BatchNormalization" || bn.input_size() != 5 ||
        bn.output_size() != 1 || uses[bn.input(0)] != 1 ||
        !producer.count(bn.input(0)))
      continue;
    bool training = false;
    float eps = 1e-5f;
    for (const onnx::AttributeProto &a : bn.attribute()) {
      if (a.name() == "training_mode" && a.i())
        training = true;
      if (a.name() == "epsilon")
        eps = a.f();
    }
    onnx::NodeProto &conv = nodes[producer[bn.input(0)]];
    std::vector<float> w, bias, gamma, beta, mean, var;
    if (training || conv.op_type() != "Conv" || conv.input_size() < 2 ||
        !values(conv.input(1), w) || !values(bn.input(1), gamma) ||
        !values(bn.input(2), beta) || !values(bn.input(3), mean) ||
        !values(bn.input(4), var))
      continue;
    const onnx::TensorProto &wt = initializers.at(conv.input(1));
    int64_t k = wt.dims_size() ? wt.dims(0) : 0;
    bool hasBias = conv.input_size() > 2 && !conv.input(2).empty();
    if (hasBias && !values(conv.input(2), bias))
      continue;
    if (!hasBias)
      bias.assign(k, 0.0f);
    if (k == 0 || int64_t(gamma.size()) != k || int64_t(beta.size()) != k ||
        int64_t(mean.size()) != k || int64_t(var.size()) != k ||
        int64_t(bias.size()) != k || w.size() % k)
      continue;
    size_t per = w.size() / k;
    for (int64_t c = 0; c < k; ++c) {
      float f = gamma[c] / std::sqrt(var[c] + eps);
      for (size_t j = 0; j < per; ++j)
        w[c * per + j] *= f;
      bias[c] = (bias[c] - mean[c]) * f + beta[c];
    }
    auto store = [&](const std::string &name, ArrayRef<int64_t> dims,
                     const std::vector<float> &data) {
      onnx::TensorProto t;
      t.set_name(name);
      t.set_data_type(onnx::TensorProto::FLOAT);
      for (int64_t d : dims)
        t.add_dims(d);
      for (float v : data)
        t.add_float_data(v);
      initializers[name] = t;
    };
    std::string base = bn.output(0) + "/folded_";
    store(base + "W", SmallVector<int64_t>(wt.dims().begin(), wt.dims().end()),
          w);
    store(base + "B", {k}, bias);
    conv.set_input(1, base + "W");
    if (hasBias)
      conv.set_input(2, base + "B");
    else
      conv.add_input(base + "B");
    conv.set_output(0, bn.output(0));
    dropped[i] = true;
  }
  std::vector<onnx::NodeProto> kept;
  for (auto [i, n] : llvm::enumerate(nodes))
    if (!dropped[i])
      kept.push_back(n);
  return kept;
}

OwningOpRef<ModuleOp> Importer::run(const onnx::ModelProto &model) {
  const onnx::GraphProto &g = model.graph();
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") &&
        (o.version() < 6 || o.version() > 21))
      fail("opset " + std::to_string(o.version()) +
           " is not supported (6 to 21 are)");
    else if (o.domain().empty() || o.domain() == "ai.onnx")
      opsets.push_back(o.version());
  for (const onnx::TensorProto &t : g.initializer())
    initializers[t.name()] = t;
  for (const auto &[name, c] : options.constants) {
    if (llvm::none_of(g.input(), [&, &name = name](const auto &in) {
          return in.name() == name;
        }))
      fail("--constant-input '" + name + "' is not an input of the graph");
    onnx::TensorProto t;
    t.set_name(name);
    for (int64_t d : c.shape)
      t.add_dims(d);
    t.set_data_type(c.dataType);
    for (double v : c.values)
      if (c.dataType == onnx::TensorProto::FLOAT)
        t.add_float_data(float(v));
      else if (c.dataType == onnx::TensorProto::INT64)
        t.add_int64_data(int64_t(v));
      else
        t.add_int32_data(int32_t(v));
    initializers[name] = t;
  }

  // The function's arguments: graph inputs that are not initializers.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &in : g.input()) {
    if (initializers.count(in.name()))
      continue;
    const onnx::TypeProto &t = in.type();
    if (!t.has_tensor_type() ||
        t.tensor_type().elem_type() != onnx::TensorProto::FLOAT)
      fail("input '" + in.name() + "': only float tensors are supported");
    SmallVector<int64_t> shape;
    auto given = options.inputShapes.find(in.name());
    if (given != options.inputShapes.end()) {
      shape.assign(given->second.begin(), given->second.end());
    } else {
      for (const onnx::TensorShapeProto::Dimension &d :
           t.tensor_type().shape().dim()) {
        if (!d.has_dim_value())
          fail("input '" + in.name() + "' has a symbolic dimension '" +
               d.dim_param() + "': fix it with --input-shape=" + in.name() +
               ":<d0>x<d1>...");
        shape.push_back(d.dim_value());
      }
    }
    argTypes.push_back(f32Tensor(shape));
    argNames.push_back(in.name());
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, options.function,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    entry->getArgument(i).setLoc(NameLoc::get(b.getStringAttr(name)));
    values[name] = entry->getArgument(i);
  }
  std::vector<onnx::NodeProto> nodes = foldBatchNorms(g);
  for (auto &[name, t] : initializers) {
    loc = NameLoc::get(b.getStringAttr(name));
    values[name] = constant(t, "initializer '" + name + "'");
  }
  for (const onnx::NodeProto &n : nodes)
    node(n);

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : g.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      fail("output '" + out.name() + "' is not computed by the graph");
    results.push_back(it->second);
  }
  func::ReturnOp::create(b, module->getLoc(), results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  return module;
}

} // namespace

OwningOpRef<ModuleOp> mlir::tq::importONNX(const std::string &bytes,
                                           const std::string &name,
                                           MLIRContext *ctx,
                                           const ONNXImportOptions &options,
                                           std::string &error) {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                   linalg::LinalgDialect, math::MathDialect,
                   tensor::TensorDialect>();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    // Not a binary model: the ONNX text syntax?
    onnx::ModelProto text;
    onnx::OnnxParser parser(bytes.c_str());
    onnx::Status status = parser.Parse(text);
    if (!status.IsOK() || !text.has_graph()) {
      error = name + ": not an ONNX model (binary: invalid protobuf; text: " +
              status.ErrorMessage() + ")";
      return nullptr;
    }
    model = std::move(text);
  }
  try {
    Importer importer(ctx, options);
    return importer.run(model);
  } catch (const ImportError &e) {
    error = name + ": " + e.message;
    return nullptr;
  }
}
