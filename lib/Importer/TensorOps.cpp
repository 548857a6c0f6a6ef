//===- TensorOps.cpp - Tensor ops -----------------------------------------===//
//
// Reshapes, squeezes, flatten, concatenation, split, slices, transpose, and the
// ops that pass a value through (Identity, Cast, Dropout at inference) or make
// one (Constant).
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tq::onnx_import;

LogicalResult Importer::importReshape(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"allowzero"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<std::optional<std::vector<float>>> dims = constantInput(n, 1);
  if (failed(dims))
    return failure();
  if (!*dims)
    return fail(nodeName(n) + ": the shape input is missing");
  int64_t known = 1, inferred = -1, total = 1;
  for (int64_t d : shapeOf(*x))
    total *= d;
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < (*dims)->size(); ++i) {
    int64_t d = int64_t((**dims)[i]);
    if (d == 0) {
      FailureOr<int64_t> allowZero = intAttr(n, "allowzero", 0);
      if (failed(allowZero))
        return failure();
      if (!*allowZero) {
        if (i >= shapeOf(*x).size())
          return fail(nodeName(n) + ": 0 copies a dimension the input lacks");
        d = shapeOf(*x)[i];
      }
    }
    if (d == -1) {
      if (inferred >= 0)
        return fail(nodeName(n) + ": more than one -1 in the shape");
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return fail(nodeName(n) + ": negative dimension in the shape");
    shape.push_back(d);
    known *= d;
  }
  if (inferred >= 0)
    shape[inferred] = known ? total / known : 0;
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (count != total)
    return fail(nodeName(n) + ": the shape does not hold the input's elements");
  return define(n, reshape(*x, shape));
}

LogicalResult Importer::importSqueeze(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  if (failed(onlyAttrs(n, {"axes"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<std::vector<int64_t>> axes = intsAttrOrInput(n, "axes", 1);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape(shapeOf(*x));
  if (op == "Squeeze") {
    int64_t rank = shape.size();
    SmallVector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d) {
      bool listed =
          axes->empty() ? shape[d] == 1 : llvm::any_of(*axes, [&](int64_t a) {
            return (a < 0 ? a + rank : a) == d;
          });
      if (listed && shape[d] != 1)
        return fail(nodeName(n) + ": squeezed dimension is not 1");
      if (!listed)
        out.push_back(shape[d]);
    }
    return define(n, reshape(*x, out));
  } else {
    int64_t rank = shape.size() + axes->size();
    SmallVector<int64_t> out;
    auto it = shape.begin();
    for (int64_t d = 0; d < rank; ++d) {
      bool listed = llvm::any_of(
          *axes, [&](int64_t a) { return (a < 0 ? a + rank : a) == d; });
      if (listed)
        out.push_back(1);
      else if (it != shape.end())
        out.push_back(*it++);
      else
        return fail(nodeName(n) + ": axes out of range");
    }
    return define(n, reshape(*x, out));
  }
}

LogicalResult Importer::importFlatten(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"axis"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size();
  FailureOr<int64_t> axis = axisAttr(n, "axis", 1, rank, /*end=*/true);
  if (failed(axis))
    return failure();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < *axis ? outer : inner) *= shapeOf(*x)[i];
  ReassociationIndices lhs, rhs;
  for (int64_t i = 0; i < rank; ++i)
    (i < *axis ? lhs : rhs).push_back(i);
  SmallVector<ReassociationIndices> groups;
  // collapse_shape needs non-empty groups: an empty side is a unit dim.
  Value v = *x;
  if (lhs.empty() || rhs.empty()) {
    SmallVector<int64_t> shape = {outer, inner};
    SmallVector<ReassociationIndices> all(1);
    for (int64_t i = 0; i < rank; ++i)
      all[0].push_back(i);
    Value flat = tensor::CollapseShapeOp::create(b, loc, *x, all);
    groups = {{0, 1}};
    v = tensor::ExpandShapeOp::create(b, loc, f32Tensor(shape), flat, groups);
  } else {
    groups = {lhs, rhs};
    v = tensor::CollapseShapeOp::create(b, loc, *x, groups);
  }
  return define(n, v);
}

LogicalResult Importer::importConcat(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"axis"})))
    return failure();
  FailureOr<Value> first = input(n, 0);
  if (failed(first))
    return failure();
  int64_t rank = shapeOf(*first).size();
  FailureOr<int64_t> axis = axisAttr(n, "axis", 0, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(shapeOf(*first));
  shape[*axis] = 0;
  for (int i = 0; i < n.input_size(); ++i) {
    FailureOr<Value> v = input(n, i);
    if (failed(v))
      return failure();
    ArrayRef<int64_t> s2 = shapeOf(*v);
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && (int64_t(s2.size()) != rank || s2[d] != shape[d]))
        return fail(nodeName(n) + ": inputs differ outside the axis");
    shape[*axis] += s2[*axis];
  }
  Value out = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  int64_t offset = 0;
  for (int i = 0; i < n.input_size(); ++i) {
    FailureOr<Value> v = input(n, i);
    if (failed(v))
      return failure();
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    offsets[*axis] = offset;
    out = tensor::InsertSliceOp::create(b, loc, *v, out, ValueRange{},
                                        ValueRange{}, ValueRange{}, offsets,
                                        shapeOf(*v), strides);
    offset += shapeOf(*v)[*axis];
  }
  return define(n, out);
}

LogicalResult Importer::importSplit(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"axis", "split", "num_outputs"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  int64_t rank = xs.size();
  FailureOr<int64_t> axis = axisAttr(n, "axis", 0, rank);
  if (failed(axis))
    return failure();
  int64_t parts = n.output_size();
  FailureOr<const onnx::AttributeProto *> numOutputsAttr =
      attr(n, "num_outputs", onnx::AttributeProto::INT);
  if (failed(numOutputsAttr))
    return failure();
  if (*numOutputsAttr) {
    FailureOr<int64_t> numOutputs = intAttr(n, "num_outputs", 0);
    if (failed(numOutputs))
      return failure();
    if (*numOutputs != parts)
      return fail(nodeName(n) + ": num_outputs is " +
                  std::to_string(*numOutputs) + " but the node has " +
                  std::to_string(parts) + " outputs");
  }
  // The sizes: the `split` attribute (before opset 13) or input, else
  // equal parts (the last one smaller when the dim does not divide).
  FailureOr<std::vector<int64_t>> sizes = intsAttrOrInput(n, "split", 1);
  if (failed(sizes))
    return failure();
  if (sizes->empty()) {
    int64_t chunk = (xs[*axis] + parts - 1) / parts;
    for (int64_t k = 0, left = xs[*axis]; k < parts; ++k, left -= chunk)
      sizes->push_back(std::min(chunk, left));
  }
  int64_t total = 0;
  for (int64_t v : *sizes) {
    if (v <= 0)
      return fail(nodeName(n) + ": empty parts are not supported");
    total += v;
  }
  if (int64_t(sizes->size()) != parts || total != xs[*axis])
    return fail(nodeName(n) + ": the parts do not split a dimension of " +
                std::to_string(xs[*axis]) + " into " + std::to_string(parts) +
                " outputs");
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
  for (int64_t k = 0; k < parts; ++k) {
    SmallVector<int64_t> size(xs);
    size[*axis] = (*sizes)[k];
    if (failed(define(n,
                      tensor::ExtractSliceOp::create(
                          b, loc, f32Tensor(size), *x, ValueRange{},
                          ValueRange{}, ValueRange{}, offsets, size, strides),
                      k)))
      return failure();
    offsets[*axis] += (*sizes)[k];
  }
  return success();
}

LogicalResult Importer::importSlice(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"starts", "ends", "axes"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  int64_t rank = xs.size();
  // Opset 1-9: attributes; 10 on: constant inputs (steps too).
  auto list = [&](const char *name, int i) -> FailureOr<std::vector<double>> {
    std::vector<double> v;
    FailureOr<const onnx::AttributeProto *> a =
        attr(n, name, onnx::AttributeProto::INTS);
    if (failed(a))
      return failure();
    if (*a)
      v.assign((*a)->ints().begin(), (*a)->ints().end());
    else if (i < n.input_size() && !n.input(i).empty()) {
      FailureOr<std::vector<float>> given = requiredConstant(n, i);
      if (failed(given))
        return failure();
      v.assign(given->begin(), given->end());
    }
    return v;
  };
  FailureOr<std::vector<double>> starts = list("starts", 1);
  if (failed(starts))
    return failure();
  FailureOr<std::vector<double>> ends = list("ends", 2);
  if (failed(ends))
    return failure();
  FailureOr<std::vector<double>> axes = list("axes", 3);
  if (failed(axes))
    return failure();
  FailureOr<std::vector<double>> steps = list("steps", 4);
  if (failed(steps))
    return failure();
  if (starts->empty() || ends->empty())
    return fail(nodeName(n) + ": starts and ends are required");
  if (starts->size() != ends->size() ||
      (!axes->empty() && axes->size() != starts->size()) ||
      (!steps->empty() && steps->size() != starts->size()))
    return fail(nodeName(n) +
                ": starts, ends, axes and steps differ in length");
  SmallVector<int64_t> offsets(rank, 0), sizes(xs), strides(rank, 1);
  SmallVector<int64_t> reversed;
  for (size_t k = 0; k < starts->size(); ++k) {
    int64_t axis = axes->empty() ? int64_t(k) : int64_t((*axes)[k]);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return fail(nodeName(n) + ": axis out of range");
    int64_t step = steps->empty() ? 1 : int64_t((*steps)[k]);
    if (step == 0)
      return fail(nodeName(n) + ": a step of 0 is not allowed");
    int64_t dim = xs[axis];
    // Negative values count from the end; huge ones (INT64_MAX for "to
    // the end") clamp: to [0, dim] going forward, to [-1, dim - 1]
    // backward, where -1 is "before the first".
    auto clampIndex = [&](double d, int64_t lo, int64_t hi) {
      double i = d < 0 ? d + double(dim) : d;
      return int64_t(std::clamp(i, double(lo), double(hi)));
    };
    int64_t begin, end, count;
    if (step > 0) {
      begin = clampIndex((*starts)[k], 0, dim);
      end = clampIndex((*ends)[k], 0, dim);
      count = end > begin ? (end - begin + step - 1) / step : 0;
    } else {
      begin = clampIndex((*starts)[k], 0, dim - 1);
      end = clampIndex((*ends)[k], -1, dim - 1);
      count = begin > end ? (begin - end - step - 1) / -step : 0;
    }
    if (count == 0)
      return fail(nodeName(n) + ": the slice is empty");
    // A backward slice reads the same elements forward, then reverses.
    offsets[axis] = step > 0 ? begin : begin + (count - 1) * step;
    sizes[axis] = count;
    strides[axis] = step > 0 ? step : -step;
    if (step < 0)
      reversed.push_back(axis);
  }
  Type element = cast<RankedTensorType>(x->getType()).getElementType();
  auto type = RankedTensorType::get(sizes, element);
  Value y = tensor::ExtractSliceOp::create(b, loc, type, *x, ValueRange{},
                                           ValueRange{}, ValueRange{}, offsets,
                                           sizes, strides);
  if (!reversed.empty()) {
    SmallVector<AffineExpr> from;
    for (int64_t d = 0; d < rank; ++d)
      from.push_back(llvm::is_contained(reversed, d)
                         ? sizes[d] - 1 - getAffineDimExpr(d, ctx)
                         : getAffineDimExpr(d, ctx));
    Value init = tensor::EmptyOp::create(b, loc, sizes, element);
    y = linalg::GenericOp::create(
            b, loc, TypeRange{type}, ValueRange{y}, ValueRange{init},
            ArrayRef<AffineMap>{AffineMap::get(rank, 0, from, ctx),
                                AffineMap::getMultiDimIdentityMap(rank, ctx)},
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [](OpBuilder &nb, Location l, ValueRange a) {
              linalg::YieldOp::create(nb, l, a[0]);
            })
            .getResult(0);
  }
  return define(n, y);
}

LogicalResult Importer::importTranspose(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"perm"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  SmallVector<int64_t> perm;
  FailureOr<const onnx::AttributeProto *> p =
      attr(n, "perm", onnx::AttributeProto::INTS);
  if (failed(p))
    return failure();
  if (*p)
    perm.assign((*p)->ints().begin(), (*p)->ints().end());
  else
    for (int64_t i = shapeOf(*x).size(); i-- > 0;)
      perm.push_back(i);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != int64_t(i) || perm.size() != shapeOf(*x).size())
      return fail(nodeName(n) + ": 'perm' is not a permutation of the dims");
  return define(n, transpose(*x, perm));
}

/// Cast between f32 and booleans (i1): f32 -> bool is x != 0 (NaN is
/// true), bool -> f32 is 0 or 1. Casts to the same type pass the value.
/// Integer casts of constants are folded (Fold.cpp); integer tensors at
/// run time are not supported yet.
LogicalResult Importer::importCast(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"to", "saturate"})))
    return failure();
  FailureOr<int64_t> toAttr = intAttr(n, "to", 0);
  if (failed(toAttr))
    return failure();
  int64_t to = *toAttr;
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  bool fromBool =
      cast<RankedTensorType>(x->getType()).getElementType().isInteger(1);
  bool toInteger =
      to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 ||
      to == onnx::TensorProto::INT16 || to == onnx::TensorProto::INT8 ||
      to == onnx::TensorProto::UINT8;
  auto map = [&](Type element, Value (*body)(OpBuilder &, Location, Value)) {
    return elementwise(
        {*x}, n,
        [&](OpBuilder &nb, Location l, ValueRange v) {
          return body(nb, l, v[0]);
        },
        element, /*anyInputElement=*/true);
  };
  if ((to == onnx::TensorProto::BOOL) == fromBool &&
      (to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::BOOL ||
       (toInteger && isInteger(n.input(0))))) {
    // Integers are carried as f32: nothing changes.
    return define(n, *x);
  } else if ((to == onnx::TensorProto::FLOAT || toInteger) && fromBool) {
    return define(
        n, map(b.getF32Type(), [](OpBuilder &nb, Location l, Value v) {
          return arith::UIToFPOp::create(nb, l, nb.getF32Type(), v).getResult();
        }));
  } else if (toInteger) {
    // Float to integer rounds toward zero.
    return define(n,
                  map(b.getF32Type(), [](OpBuilder &nb, Location l, Value v) {
                    return math::TruncOp::create(nb, l, v).getResult();
                  }));
  } else if (to == onnx::TensorProto::BOOL) {
    return define(n, map(b.getI1Type(), [](OpBuilder &nb, Location l, Value v) {
                    return arith::CmpFOp::create(nb, l,
                                                 arith::CmpFPredicate::UNE, v,
                                                 f32Constant(nb, l, 0))
                        .getResult();
                  }));
  } else {
    return fail(nodeName(n) + ": casts to data type " + std::to_string(to) +
                " of a value computed at run time are not supported (float, "
                "int64, int32, int16, int8, uint8 and bool are)");
  }
}

/// CastLike: Cast to the element type of input 1.
LogicalResult Importer::importCastLike(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"saturate"})) || failed(input(n, 1)))
    return failure();
  auto it = elementTypes.find(n.input(1));
  if (it == elementTypes.end())
    return fail(nodeName(n) + ": the type of input 1 is not known");
  onnx::NodeProto c = n;
  c.mutable_input()->RemoveLast();
  onnx::AttributeProto *to = c.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(it->second);
  return importCast(c);
}

LogicalResult Importer::importIdentity(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  return define(n, input(n, 0));
}

LogicalResult Importer::importDropout(const onnx::NodeProto &n) {
  // Inference: the identity (no mask).
  if (failed(onlyAttrs(n, {"ratio", "seed", "is_test"})))
    return failure();
  if (n.output_size() > 1 && !n.output(1).empty())
    return fail(nodeName(n) + ": the mask output is not supported (inference "
                              "only)");
  // Before opset 7, is_test = 0 (the default) is training mode.
  if (opsetBelow(7)) {
    FailureOr<int64_t> isTest = intAttr(n, "is_test", 0);
    if (failed(isTest))
      return failure();
    if (!*isTest)
      return fail(nodeName(n) + ": training mode is not supported (inference "
                                "only)");
  }
  if (n.input_size() > 2 && !n.input(2).empty()) {
    FailureOr<std::vector<float>> training = requiredConstant(n, 2);
    if (failed(training))
      return failure();
    if (training->size() != 1 || (*training)[0] != 0.0f)
      return fail(nodeName(n) + ": training mode is not supported (inference "
                                "only)");
  }
  return define(n, input(n, 0));
}

LogicalResult Importer::importConstant(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"value"})))
    return failure();
  FailureOr<const onnx::AttributeProto *> v =
      attr(n, "value", onnx::AttributeProto::TENSOR);
  if (failed(v))
    return failure();
  if (!*v)
    return fail(nodeName(n) + ": only the 'value' form is supported");
  initializers[n.output(0)] = (*v)->t();
  return define(n, constant((*v)->t(), nodeName(n)));
}

LogicalResult Importer::importConstantOfShape(const onnx::NodeProto &n) {
  // fold() makes it a constant when the shape is one.
  return fail(nodeName(n) + ": input 0 ('" + n.input(0) +
              "') must be a constant");
}

LogicalResult Importer::importRange(const onnx::NodeProto &n) {
  // fold() makes it a constant when its inputs are; shapes are static.
  if (n.input_size() != 3)
    return fail(nodeName(n) + ": needs start, limit and delta");
  for (int i = 0; i < 3; ++i)
    if (!initializers.count(n.input(i)))
      return fail(nodeName(n) + ": input " + std::to_string(i) + " ('" +
                  n.input(i) + "') must be a constant");
  return fail(nodeName(n) + ": expected exactly one output");
}

LogicalResult Importer::importShape(const onnx::NodeProto &n) {
  // Shapes are static: fold() has made every Shape and Size a constant
  // already.
  return fail(nodeName(n) + ": expected exactly one output");
}

/// Pad in its three modes: constant (a tensor.pad), reflect (mirrored
/// about the edge, the edge not repeated) and edge (the edge repeated),
/// the last two as one linalg.generic that reads the input at the
/// mirrored or clamped index. The pads, value and axes are attributes
/// (before opset 11) or constant inputs.
LogicalResult Importer::importPad(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"mode", "pads", "value"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  int64_t rank = xs.size();
  FailureOr<const onnx::AttributeProto *> m =
      attr(n, "mode", onnx::AttributeProto::STRING);
  if (failed(m))
    return failure();
  std::string mode = *m ? (*m)->s() : "constant";
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return fail(nodeName(n) + ": mode '" + mode +
                "' is not supported (constant, "
                "reflect and edge are)");
  FailureOr<std::vector<int64_t>> pads = intsAttrOrInput(n, "pads", 1);
  if (failed(pads))
    return failure();
  FailureOr<float> valueAttr = floatAttr(n, "value", 0.0f);
  if (failed(valueAttr))
    return failure();
  float value = *valueAttr;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    FailureOr<std::vector<float>> v = requiredConstant(n, 2);
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return fail(nodeName(n) + ": constant_value must be a scalar");
    value = (*v)[0];
  }
  std::vector<int64_t> axes;
  if (n.input_size() > 3 && !n.input(3).empty()) {
    FailureOr<std::vector<float>> given = requiredConstant(n, 3);
    if (failed(given))
      return failure();
    for (float a : *given)
      axes.push_back(int64_t(a) < 0 ? int64_t(a) + rank : int64_t(a));
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (pads->size() != 2 * axes.size())
    return fail(nodeName(n) + ": expected " + std::to_string(2 * axes.size()) +
                " pads, got " + std::to_string(pads->size()));
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [k, d] : llvm::enumerate(axes)) {
    if (d < 0 || d >= rank)
      return fail(nodeName(n) + ": axis out of range");
    low[d] = (*pads)[k];
    high[d] = (*pads)[k + axes.size()];
    if (low[d] < 0 || high[d] < 0)
      return fail(nodeName(n) + ": negative pads (cropping) are not supported");
    if (mode == "reflect" && (low[d] >= xs[d] || high[d] >= xs[d]))
      return fail(nodeName(n) + ": reflect pads must be smaller than the dim");
  }
  if (mode == "constant")
    return define(n, padConstant(*x, low, high, value));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(xs[d] + low[d] + high[d]);
  Type element = cast<RankedTensorType>(x->getType()).getElementType();
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  bool reflect = mode == "reflect";
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange) {
        auto index = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v).getResult();
        };
        SmallVector<Value> src;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(nb, l, d);
          if (low[d] == 0 && high[d] == 0) {
            src.push_back(i);
            continue;
          }
          Value s = arith::SubIOp::create(nb, l, i, index(low[d]));
          Value last = index(xs[d] - 1);
          if (reflect) {
            // |s|, then 2 (n - 1) - s past the end.
            s = arith::MaxSIOp::create(
                nb, l, s, arith::SubIOp::create(nb, l, index(0), s));
            s = arith::MinSIOp::create(
                nb, l, s,
                arith::SubIOp::create(nb, l, index(2 * (xs[d] - 1)), s));
          } else {
            s = arith::MinSIOp::create(
                nb, l, arith::MaxSIOp::create(nb, l, s, index(0)), last);
          }
          src.push_back(s);
        }
        linalg::YieldOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, *x, src).getResult());
      });
  return define(n, generic.getResult(0));
}

void mlir::tq::onnx_import::registerTensorOps(OpRegistry &r) {
  r["Pad"] = &Importer::importPad;
  r["ConstantOfShape"] = &Importer::importConstantOfShape;
  r["Reshape"] = &Importer::importReshape;
  r["Squeeze"] = &Importer::importSqueeze;
  r["Unsqueeze"] = &Importer::importSqueeze;
  r["Flatten"] = &Importer::importFlatten;
  r["Concat"] = &Importer::importConcat;
  r["Split"] = &Importer::importSplit;
  r["Slice"] = &Importer::importSlice;
  r["Transpose"] = &Importer::importTranspose;
  r["Cast"] = &Importer::importCast;
  r["CastLike"] = &Importer::importCastLike;
  r["Identity"] = &Importer::importIdentity;
  r["Dropout"] = &Importer::importDropout;
  r["Constant"] = &Importer::importConstant;
  r["Shape"] = &Importer::importShape;
  r["Size"] = &Importer::importShape;
  r["Range"] = &Importer::importRange;
}
