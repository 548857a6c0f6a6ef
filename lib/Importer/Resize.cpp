//===- Resize.cpp - Resize ------------------------------------------------===//
//
// Nearest and linear Resize of the spatial dims of an NCHW tensor.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// Resize (opset 11 on) of the two spatial dims of an NCHW tensor, nearest
/// or linear, from constant scales or sizes. The source pixels and weights
/// of each output row and column are computed here (in double, with the
/// coordinate transformation and nearest-rounding modes of the spec;
/// indices clamped to the edge) and applied by one linalg.generic that
/// reads the input with tensor.extract.
LogicalResult Importer::importResize(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"mode", "coordinate_transformation_mode",
                           "nearest_mode", "cubic_coeff_a", "exclude_outside",
                           "extrapolation_value", "antialias",
                           "keep_aspect_ratio_policy", "axes"})))
    return failure();
  if (opsetBelow(11))
    return fail(nodeName(n) + ": Resize before opset 11 is not supported");
  auto str = [&](const char *name, const char *dflt) -> FailureOr<std::string> {
    FailureOr<const onnx::AttributeProto *> a =
        attr(n, name, onnx::AttributeProto::STRING);
    if (failed(a))
      return failure();
    return *a ? (*a)->s() : std::string(dflt);
  };
  FailureOr<std::string> modeOr = str("mode", "nearest");
  if (failed(modeOr))
    return failure();
  FailureOr<std::string> coordOr =
      str("coordinate_transformation_mode", "half_pixel");
  if (failed(coordOr))
    return failure();
  FailureOr<std::string> nearestOr = str("nearest_mode", "round_prefer_floor");
  if (failed(nearestOr))
    return failure();
  std::string mode = *modeOr, coord = *coordOr, nearest = *nearestOr;
  if (mode != "nearest" && mode != "linear")
    return fail(nodeName(n) + ": mode '" + mode + "' is not supported");
  // Whether the options below have their defaults; stops at the first that
  // does not, like a chain of ||.
  auto defaultOptions = [&]() -> FailureOr<bool> {
    FailureOr<int64_t> excludeOutside = intAttr(n, "exclude_outside", 0);
    if (failed(excludeOutside))
      return failure();
    if (*excludeOutside)
      return false;
    FailureOr<int64_t> antialias = intAttr(n, "antialias", 0);
    if (failed(antialias))
      return failure();
    if (*antialias)
      return false;
    FailureOr<const onnx::AttributeProto *> axes =
        attr(n, "axes", onnx::AttributeProto::INTS);
    if (failed(axes))
      return failure();
    if (*axes)
      return false;
    FailureOr<std::string> policy = str("keep_aspect_ratio_policy", "stretch");
    if (failed(policy))
      return failure();
    return *policy == "stretch";
  };
  FailureOr<bool> defaults = defaultOptions();
  if (failed(defaults))
    return failure();
  if (!*defaults)
    return fail(nodeName(n) +
                ": only the default exclude_outside, antialias, axes "
                "and keep_aspect_ratio_policy are supported");
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  if (xs.size() != 4)
    return fail(nodeName(n) + ": only 4-D (NCHW) inputs are supported");
  std::vector<float> scales, sizes;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    FailureOr<std::vector<float>> c = requiredConstant(n, 2);
    if (failed(c))
      return failure();
    scales = std::move(*c);
  }
  if (n.input_size() > 3 && !n.input(3).empty()) {
    FailureOr<std::vector<float>> c = requiredConstant(n, 3);
    if (failed(c))
      return failure();
    sizes = std::move(*c);
  }
  SmallVector<int64_t> out(xs);
  SmallVector<double> scale(4, 1.0);
  for (int d = 0; d < 4; ++d) {
    if (!sizes.empty()) {
      if (sizes.size() != 4)
        return fail(nodeName(n) + ": sizes must have 4 values");
      out[d] = int64_t(sizes[d]);
      scale[d] = double(out[d]) / double(xs[d]);
    } else if (!scales.empty()) {
      if (scales.size() != 4)
        return fail(nodeName(n) + ": scales must have 4 values");
      scale[d] = scales[d];
      out[d] = int64_t(std::floor(double(xs[d]) * scales[d]));
    } else {
      return fail(nodeName(n) + ": needs constant scales or sizes");
    }
    if (out[d] < 1)
      return fail(nodeName(n) + ": the output would be empty");
  }
  if (out[0] != xs[0] || out[1] != xs[1])
    return fail(nodeName(n) + ": only the spatial dims (H, W) can be resized");
  // The source coordinate of output index i along dim d.
  auto source = [&](int d, int64_t i) -> FailureOr<double> {
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
    return fail(nodeName(n) + ": coordinate_transformation_mode '" + coord +
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
      FailureOr<double> sourceOr = source(d, i);
      if (failed(sourceOr))
        return failure();
      double c = *sourceOr;
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
          return fail(nodeName(n) + ": nearest_mode '" + nearest +
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
              return tensor::ExtractOp::create(nb, l, *x,
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
  return success();
}

void mlir::tq::onnx_import::registerResizeOps(OpRegistry &r) {
  r["Resize"] = &Importer::importResize;
}
