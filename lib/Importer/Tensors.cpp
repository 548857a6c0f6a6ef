//===- Tensors.cpp - Tensor data, attributes and shape builders -----------===//
//
// Reading TensorProto data, node inputs and attributes, constants (dense
// resources from kResourceElements on), reshape and transpose.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::tq::onnx_import;

std::string mlir::tq::onnx_import::nodeName(const onnx::NodeProto &n) {
  std::string s = "node '" + n.name() + "' (" + n.op_type() + ")";
  return s;
}

/// The float values of a tensor (FLOAT, FLOAT16, or an integer type
/// converted). Its dims come from the file: each is checked, and so is
/// their product, before any size is computed from them.
bool mlir::tq::onnx_import::tensorValues(const onnx::TensorProto &t,
                                         std::vector<float> &out,
                                         std::string &why) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      why = "tensor has a negative dimension (" + std::to_string(d) + ")";
      return false;
    }
    if (d != 0 && n > kMaxElements / d) {
      why = "tensor has more than 2^32 elements";
      return false;
    }
    n *= d;
  }
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
  case onnx::TensorProto::FLOAT16: {
    // Half floats, widened exactly to f32: raw bytes, or one per int32.
    auto widen = [](uint16_t bits) {
      APFloat h(APFloat::IEEEhalf(), APInt(16, bits));
      bool lost;
      h.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      return h.convertToFloat();
    };
    if (!t.raw_data().empty()) {
      if (int64_t(t.raw_data().size()) != n * 2) {
        why = "raw data size does not match the shape";
        return false;
      }
      for (int64_t i = 0; i < n; ++i) {
        uint16_t u;
        std::memcpy(&u, t.raw_data().data() + 2 * i, 2);
        out.push_back(widen(u));
      }
    } else {
      for (int32_t v : t.int32_data())
        out.push_back(widen(uint16_t(v)));
    }
    break;
  }
  case onnx::TensorProto::BOOL:
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
    bool isSigned = type != onnx::TensorProto::UINT8 &&
                    type != onnx::TensorProto::UINT16 &&
                    type != onnx::TensorProto::BOOL;
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
          " are not supported (float, float16, int64, int32, int16, uint16, "
          "int8, uint8 and bool are)";
    return false;
  }
  if (int64_t(out.size()) != n) {
    why = "tensor has " + std::to_string(out.size()) + " values for " +
          std::to_string(n) + " elements";
    return false;
  }
  return true;
}

FailureOr<Value> Importer::input(const onnx::NodeProto &n, int i) {
  if (i >= n.input_size() || n.input(i).empty())
    return fail(nodeName(n) + ": missing input " + std::to_string(i));
  auto it = values.find(n.input(i));
  if (it == values.end())
    return fail(nodeName(n) + ": input '" + n.input(i) + "' is not defined");
  return it->second;
}

LogicalResult Importer::checkShape(ArrayRef<int64_t> shape,
                                   const std::string &what) {
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxDim)
      return fail(what + " would have a dimension of " + std::to_string(d) +
                  " (at most 2^31-1)");
    if (d != 0 && elements > kMaxElements / d)
      return fail(what + " would have more than 2^32 elements");
    elements *= d;
  }
  return success();
}

LogicalResult Importer::define(const onnx::NodeProto &n, Value v, int i) {
  if (i >= n.output_size())
    return fail(nodeName(n) + ": missing output " + std::to_string(i));
  // Sizes computed from attributes and shapes in the file are checked once
  // here, before a later node computes with them.
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    if (failed(checkShape(t.getShape(),
                          nodeName(n) + ": output '" + n.output(i) + "'")))
      return failure();
  values[n.output(i)] = v;
  return success();
}

FailureOr<const onnx::AttributeProto *>
Importer::attr(const onnx::NodeProto &n, const std::string &name,
               onnx::AttributeProto::AttributeType type) {
  for (const onnx::AttributeProto &a : n.attribute()) {
    if (a.name() != name)
      continue;
    // Files from before IR version 2 leave the type unset.
    if (a.type() != type && a.type() != onnx::AttributeProto::UNDEFINED)
      return fail(nodeName(n) + ": attribute '" + name + "' is " +
                  onnx::AttributeProto::AttributeType_Name(a.type()) +
                  ", expected " +
                  onnx::AttributeProto::AttributeType_Name(type));
    return &a;
  }
  return static_cast<const onnx::AttributeProto *>(nullptr);
}

FailureOr<int64_t> Importer::intAttr(const onnx::NodeProto &n,
                                     const std::string &name, int64_t dflt) {
  FailureOr<const onnx::AttributeProto *> a =
      attr(n, name, onnx::AttributeProto::INT);
  if (failed(a))
    return failure();
  return *a ? (*a)->i() : dflt;
}

FailureOr<int64_t> Importer::axisAttr(const onnx::NodeProto &n,
                                      const std::string &name, int64_t dflt,
                                      int64_t rank, bool end) {
  FailureOr<int64_t> axis = intAttr(n, name, dflt);
  if (failed(axis))
    return failure();
  if (*axis < 0)
    *axis += rank;
  if (*axis < 0 || *axis > rank || (*axis == rank && !end))
    return fail(nodeName(n) + ": " + name + " out of range");
  return axis;
}

FailureOr<float> Importer::floatAttr(const onnx::NodeProto &n,
                                     const std::string &name, float dflt) {
  FailureOr<const onnx::AttributeProto *> a =
      attr(n, name, onnx::AttributeProto::FLOAT);
  if (failed(a))
    return failure();
  return *a ? (*a)->f() : dflt;
}

FailureOr<SmallVector<int64_t>> Importer::intsAttr(const onnx::NodeProto &n,
                                                   const char *name,
                                                   SmallVector<int64_t> dflt) {
  FailureOr<const onnx::AttributeProto *> a =
      attr(n, name, onnx::AttributeProto::INTS);
  if (failed(a))
    return failure();
  if (!*a)
    return dflt;
  return SmallVector<int64_t>((*a)->ints().begin(), (*a)->ints().end());
}

FailureOr<std::vector<int64_t>>
Importer::intsAttrOrInput(const onnx::NodeProto &n, const char *name, int i) {
  FailureOr<const onnx::AttributeProto *> a =
      attr(n, name, onnx::AttributeProto::INTS);
  if (failed(a))
    return failure();
  std::vector<int64_t> v;
  if (*a) {
    v.assign((*a)->ints().begin(), (*a)->ints().end());
    return v;
  }
  FailureOr<std::optional<std::vector<float>>> c = constantInput(n, i);
  if (failed(c))
    return failure();
  if (*c)
    for (float f : **c)
      v.push_back(int64_t(f));
  return v;
}

LogicalResult Importer::onlyAttrs(const onnx::NodeProto &n,
                                  ArrayRef<const char *> known) {
  for (const onnx::AttributeProto &a : n.attribute())
    if (std::find_if(known.begin(), known.end(), [&](const char *k) {
          return a.name() == k;
        }) == known.end())
      return fail(nodeName(n) + ": attribute '" + a.name() +
                  "' is not supported");
  return success();
}

bool Importer::opsetBelow(int64_t version) const {
  return llvm::any_of(opsets, [&](int64_t o) { return o < version; });
}

FailureOr<std::vector<float>>
Importer::requiredConstant(const onnx::NodeProto &n, int i) {
  FailureOr<std::optional<std::vector<float>>> v = constantInput(n, i);
  if (failed(v))
    return failure();
  if (!*v)
    return fail(nodeName(n) + ": missing input " + std::to_string(i));
  return std::move(**v);
}

FailureOr<std::optional<std::vector<float>>>
Importer::constantInput(const onnx::NodeProto &n, int i) {
  if (i >= n.input_size() || n.input(i).empty())
    return std::optional<std::vector<float>>();
  auto it = initializers.find(n.input(i));
  if (it == initializers.end())
    return fail(nodeName(n) + ": input " + std::to_string(i) + " ('" +
                n.input(i) + "') must be a constant");
  std::vector<float> v;
  std::string why;
  if (!tensorValues(it->second, v, why))
    return fail(nodeName(n) + ": " + why);
  return std::optional<std::vector<float>>(std::move(v));
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

FailureOr<Value> Importer::constant(const onnx::TensorProto &t,
                                    const std::string &where) {
  std::vector<float> data;
  std::string why;
  if (!tensorValues(t, data, why))
    return fail(where + ": " + why);
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (t.data_type() == onnx::TensorProto::BOOL) {
    // Booleans stay i1 (a condition, a mask).
    SmallVector<bool> bits;
    for (float v : data)
      bits.push_back(v != 0);
    return arith::ConstantOp::create(
               b, loc,
               DenseElementsAttr::get(
                   RankedTensorType::get(shape, b.getI1Type()),
                   ArrayRef<bool>(bits)))
        .getResult();
  }
  auto type = f32Tensor(shape);
  if (data.size() < kResourceElements)
    return arith::ConstantOp::create(
               b, loc, DenseElementsAttr::get(type, ArrayRef<float>(data)))
        .getResult();
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
                     ArrayRef<float>(data))))
      .getResult();
}

Value Importer::padConstant(Value x, ArrayRef<int64_t> low,
                            ArrayRef<int64_t> high, float value) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return x;
  ArrayRef<int64_t> s = shapeOf(x);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> lo, hi;
  for (size_t i = 0; i < s.size(); ++i) {
    shape.push_back(s[i] + low[i] + high[i]);
    lo.push_back(b.getIndexAttr(low[i]));
    hi.push_back(b.getIndexAttr(high[i]));
  }
  Value v = f32Constant(b, loc, value);
  return tensor::PadOp::create(b, loc, f32Tensor(shape), x, lo, hi, v);
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
