//===- Conv.cpp - Conv, ConvTranspose and the BatchNormalization fold -----===//
//
// 2-D convolutions on NCHW tensors (grouped and depthwise as one op),
// ConvTranspose as the convolution it equals, the window geometry that
// pooling shares, and the fold of an inference BatchNormalization into the
// Conv before it.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// `y` [N, K, P, Q] plus the per-channel bias of input 2, if there is one.
static FailureOr<Value> addBias(Importer &im, const onnx::NodeProto &n, Value y,
                                int64_t channels) {
  if (n.input_size() <= 2 || n.input(2).empty())
    return y;
  FailureOr<Value> bias = im.input(n, 2);
  if (failed(bias))
    return failure();
  Value bias3 = im.reshape(*bias, {channels, 1, 1});
  return im.elementwise(
      {y, bias3}, n, [&](OpBuilder &nb, Location l, ValueRange v) {
        return arith::AddFOp::create(nb, l, v[0], v[1]).getResult();
      });
}

/// NCHW `x` padded on H and W by pads = [top, left, bottom, right].
Value Importer::pad(Value x, ArrayRef<int64_t> pads, float value) {
  return padConstant(x, {0, 0, pads[0], pads[1]}, {0, 0, pads[2], pads[3]},
                     value);
}

FailureOr<Importer::Window> Importer::windowAttrs(const onnx::NodeProto &n) {
  Window w;
  FailureOr<const onnx::AttributeProto *> autoPad =
      attr(n, "auto_pad", onnx::AttributeProto::STRING);
  if (failed(autoPad))
    return failure();
  if (const onnx::AttributeProto *a = *autoPad) {
    w.autoPad = a->s();
    if (w.autoPad != "NOTSET" && w.autoPad != "SAME_UPPER" &&
        w.autoPad != "SAME_LOWER" && w.autoPad != "VALID")
      return fail(nodeName(n) + ": auto_pad '" + w.autoPad +
                  "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
    if (w.autoPad != "NOTSET") {
      FailureOr<const onnx::AttributeProto *> pads =
          attr(n, "pads", onnx::AttributeProto::INTS);
      if (failed(pads))
        return failure();
      if (*pads)
        return fail(nodeName(n) + ": pads and auto_pad '" + w.autoPad +
                    "' cannot be given together");
    }
  }
  FailureOr<SmallVector<int64_t>> strides = intsAttr(n, "strides", {1, 1});
  if (failed(strides))
    return failure();
  w.strides = *strides;
  FailureOr<SmallVector<int64_t>> dilations = intsAttr(n, "dilations", {1, 1});
  if (failed(dilations))
    return failure();
  w.dilations = *dilations;
  FailureOr<SmallVector<int64_t>> pads = intsAttr(n, "pads", {0, 0, 0, 0});
  if (failed(pads))
    return failure();
  w.pads = *pads;
  if (w.strides.size() != 2 || w.dilations.size() != 2 || w.pads.size() != 4)
    return fail(nodeName(n) + ": strides, dilations and pads must be 2-D");
  auto check = [&](ArrayRef<int64_t> v, int64_t low,
                   const char *what) -> LogicalResult {
    for (int64_t x : v)
      if (x < low || x > kMaxDim)
        return fail(nodeName(n) + ": " + what + " " + std::to_string(x) +
                    " is out of range (" + std::to_string(low) + " to 2^31-1)");
    return success();
  };
  if (failed(check(w.strides, 1, "stride")) ||
      failed(check(w.dilations, 1, "dilation")) ||
      failed(check(w.pads, 0, "pad")))
    return failure();
  return w;
}

FailureOr<SmallVector<int64_t>>
Importer::windowOutput(const onnx::NodeProto &n, Window &w,
                       ArrayRef<int64_t> xs, ArrayRef<int64_t> kernel) {
  // SAME_*: the output keeps ceil(in / stride) positions; the padding that
  // needs is split evenly, the odd one at the end (UPPER) or the start.
  if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER") {
    for (int d = 0; d < 2; ++d) {
      int64_t in = xs[2 + d], out = (in + w.strides[d] - 1) / w.strides[d];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] +
                                   w.dilations[d] * (kernel[d] - 1) + 1 - in);
      int64_t small = total / 2, large = total - small;
      w.pads[d] = w.autoPad == "SAME_UPPER" ? small : large;
      w.pads[d + 2] = w.autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (w.autoPad == "VALID") {
    w.pads.assign(4, 0);
  }
  // ONNX pads are [top, left, bottom, right] (begins, then ends).
  SmallVector<int64_t> out;
  for (int d = 0; d < 2; ++d)
    out.push_back((xs[2 + d] + w.pads[d] + w.pads[d + 2] -
                   w.dilations[d] * (kernel[d] - 1) - 1) /
                      w.strides[d] +
                  1);
  if (out[0] < 1 || out[1] < 1)
    return fail(nodeName(n) + ": the output would be empty");
  return out;
}

std::optional<LogicalResult> Importer::importAs2D(const onnx::NodeProto &n,
                                                  OpImporter twoD) {
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  if (xs.size() != 3)
    return std::nullopt;
  // The 2-D node reads renamed copies of its inputs and writes a renamed
  // output; its attributes get a leading unit dim (pads: [0, b, 0, e]).
  onnx::NodeProto m = n;
  auto renamed = [&](const std::string &name) { return name + "/as-2d"; };
  m.set_input(0, renamed(n.input(0)));
  values[m.input(0)] = reshape(*x, {xs[0], xs[1], 1, xs[2]});
  if (n.op_type() != "MaxPool" && n.op_type() != "AveragePool") {
    FailureOr<Value> w = input(n, 1);
    if (failed(w))
      return failure();
    ArrayRef<int64_t> ws = shapeOf(*w);
    if (ws.size() != 3)
      return fail(nodeName(n) + ": a 1-D convolution needs a 3-D filter");
    m.set_input(1, renamed(n.input(1)));
    if (auto it = initializers.find(n.input(1)); it != initializers.end()) {
      // A constant filter stays a constant (quantized at compile time).
      onnx::TensorProto t = it->second;
      t.set_name(m.input(1));
      t.clear_dims();
      for (int64_t d : {ws[0], ws[1], int64_t(1), ws[2]})
        t.add_dims(d);
      initializers[m.input(1)] = t;
      FailureOr<Value> c = constant(t, nodeName(n));
      if (failed(c))
        return failure();
      values[m.input(1)] = *c;
    } else {
      values[m.input(1)] = reshape(*w, {ws[0], ws[1], 1, ws[2]});
    }
  }
  for (onnx::AttributeProto &a : *m.mutable_attribute()) {
    const std::string &name = a.name();
    if (name != "kernel_shape" && name != "strides" && name != "dilations" &&
        name != "pads" && name != "output_padding" && name != "output_shape")
      continue;
    SmallVector<int64_t> v(a.ints().begin(), a.ints().end());
    bool isPads = name == "pads";
    if (v.size() != (isPads ? 2u : 1u))
      return fail(nodeName(n) + ": " + name + " must have " +
                  (isPads ? "2 values" : "1 value") + " for a 1-D input");
    // The unit H dim: kernel 1, stride 1, dilation 1, output padding 0.
    int64_t lead = name == "output_padding" ? 0 : 1;
    SmallVector<int64_t> w2 = isPads ? SmallVector<int64_t>{0, v[0], 0, v[1]}
                                     : SmallVector<int64_t>{lead, v[0]};
    a.clear_ints();
    for (int64_t d : w2)
      a.add_ints(d);
  }
  m.set_output(0, renamed(n.output(0)));
  if (failed((this->*twoD)(m)))
    return failure();
  ArrayRef<int64_t> ys = shapeOf(values.at(m.output(0)));
  return define(n, reshape(values.at(m.output(0)), {ys[0], ys[1], ys[3]}));
}

FailureOr<Value> Importer::convolution(
    Value padded, Value w, int64_t groups, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> dilations, ArrayRef<int64_t> outShape,
    function_ref<FailureOr<Value>(ArrayRef<int64_t>)> constantFilter) {
  auto stridesAttr = b.getI64TensorAttr(strides);
  auto dilAttr = b.getI64TensorAttr(dilations);
  if (groups == 1) {
    Value init = zeros(outShape);
    return linalg::Conv2DNchwFchwOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{padded, w},
               ValueRange{init}, stridesAttr, dilAttr)
        .getResult(0);
  }
  // A grouped (or depthwise) convolution is one op on the channels and
  // filters viewed per group: [N, G, C/G, H, W] * [G, K/G, C/G, R, S].
  // tq-quantize splits it per group when the groups are wide enough to be
  // tiled (tq-split-grouped-convs).
  ArrayRef<int64_t> ps = shapeOf(padded), ws = shapeOf(w);
  int64_t cg = ps[1] / groups, kg = ws[0] / groups;
  SmallVector<ReassociationIndices> split = {{0}, {1, 2}, {3}, {4}};
  Value xg = tensor::ExpandShapeOp::create(
      b, loc, f32Tensor({ps[0], groups, cg, ps[2], ps[3]}), padded, split);
  SmallVector<int64_t> wgs = {groups, kg, cg, ws[2], ws[3]};
  FailureOr<Value> constantWg = constantFilter(wgs);
  if (failed(constantWg))
    return failure();
  Value wg = *constantWg;
  if (!wg)
    wg = tensor::ExpandShapeOp::create(
        b, loc, f32Tensor(wgs), w,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  Value init = zeros({outShape[0], groups, kg, outShape[2], outShape[3]});
  Value yg = linalg::Conv2DNgchwGfchwOp::create(
                 b, loc, TypeRange{init.getType()}, ValueRange{xg, wg},
                 ValueRange{init}, stridesAttr, dilAttr)
                 .getResult(0);
  return tensor::CollapseShapeOp::create(b, loc, yg, split).getResult();
}

LogicalResult Importer::importConv(const onnx::NodeProto &n) {
  if (std::optional<LogicalResult> r = importAs2D(n, &Importer::importConv))
    return *r;
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  if (xs.size() != 4)
    return fail(nodeName(n) +
                ": only 1-D (NCL) and 2-D (NCHW) inputs are supported");
  FailureOr<Window> win = windowAttrs(n);
  if (failed(win) ||
      failed(onlyAttrs(n, {"strides", "dilations", "pads", "group",
                           "kernel_shape", "auto_pad"})))
    return failure();
  FailureOr<Value> w = input(n, 1);
  if (failed(w))
    return failure();
  ArrayRef<int64_t> ws = shapeOf(*w);
  FailureOr<int64_t> groups = intAttr(n, "group", 1);
  if (failed(groups))
    return failure();
  if (*groups < 1 || xs[1] % *groups || (ws.size() == 4 && ws[0] % *groups))
    return fail(nodeName(n) + ": group " + std::to_string(*groups) +
                " does not divide the channels");
  if (ws.size() != 4 || ws[1] * *groups != xs[1])
    return fail(nodeName(n) + ": the filter must be [K, C/group, R, S] with "
                              "the input's C");
  FailureOr<SmallVector<int64_t>> kernel =
      intsAttr(n, "kernel_shape", {ws[2], ws[3]});
  if (failed(kernel))
    return failure();
  if (*kernel != ArrayRef<int64_t>{ws[2], ws[3]})
    return fail(nodeName(n) +
                ": kernel_shape does not match the filter's [R, S] (" +
                std::to_string(ws[2]) + "x" + std::to_string(ws[3]) + ")");
  FailureOr<SmallVector<int64_t>> pq =
      windowOutput(n, *win, xs, {ws[2], ws[3]});
  if (failed(pq))
    return failure();
  int64_t P = (*pq)[0], Q = (*pq)[1];
  Value padded = pad(*x, win->pads, 0.0f);
  auto it = initializers.find(n.input(1));
  auto constantFilter = [&](ArrayRef<int64_t> shape) -> FailureOr<Value> {
    if (it == initializers.end())
      return Value();
    // The same data with other dims: still a constant (a dense resource
    // when large), quantized at compile time.
    onnx::TensorProto t = it->second;
    t.clear_dims();
    for (int64_t d : shape)
      t.add_dims(d);
    return constant(t, nodeName(n));
  };
  FailureOr<Value> conv =
      convolution(padded, *w, *groups, win->strides, win->dilations,
                  {xs[0], ws[0], P, Q}, constantFilter);
  if (failed(conv))
    return failure();
  return define(n, addBias(*this, n, *conv, ws[0]));
}

/// ConvTranspose (NCHW) as the convolution it equals: the input with
/// stride-1 zeros inserted between its pixels, padded by
/// dilation*(kernel-1) minus the pads (plus output_padding at the end),
/// convolved at stride 1 with the filter flipped in space and with its
/// channel dims swapped within each group. The pads come from `pads`, or
/// from `output_shape` or a SAME auto_pad (the odd pixel at the end for
/// SAME_UPPER, at the start otherwise).
LogicalResult Importer::importConvTranspose(const onnx::NodeProto &n) {
  if (std::optional<LogicalResult> r =
          importAs2D(n, &Importer::importConvTranspose))
    return *r;
  if (failed(
          onlyAttrs(n, {"strides", "dilations", "pads", "group", "kernel_shape",
                        "output_padding", "output_shape", "auto_pad"})))
    return failure();
  FailureOr<Window> win = windowAttrs(n);
  if (failed(win))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> w = input(n, 1);
  if (failed(w))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x), ws = shapeOf(*w);
  FailureOr<int64_t> groups = intAttr(n, "group", 1);
  if (failed(groups))
    return failure();
  if (xs.size() != 4 || ws.size() != 4)
    return fail(nodeName(n) +
                ": needs an NCHW input and a [C, K/group, R, S] filter");
  if (*groups < 1 || xs[1] % *groups || ws[0] != xs[1])
    return fail(nodeName(n) + ": group " + std::to_string(*groups) +
                " does not divide the channels, or the filter is not [C, "
                "K/group, R, S] with the input's C");
  int64_t C = xs[1], Kg = ws[1], K = Kg * *groups, R = ws[2], S = ws[3];
  int64_t Cg = C / *groups;
  FailureOr<SmallVector<int64_t>> kernel = intsAttr(n, "kernel_shape", {R, S});
  if (failed(kernel))
    return failure();
  if (*kernel != ArrayRef<int64_t>{R, S})
    return fail(nodeName(n) +
                ": kernel_shape does not match the filter's [R, S] (" +
                std::to_string(R) + "x" + std::to_string(S) + ")");
  SmallVector<int64_t> &st = win->strides, &dil = win->dilations,
                       &pads = win->pads;
  FailureOr<SmallVector<int64_t>> outPad =
      intsAttr(n, "output_padding", {0, 0});
  if (failed(outPad))
    return failure();
  if (outPad->size() != 2)
    return fail(nodeName(n) + ": output_padding must be 2-D");
  for (int d = 0; d < 2; ++d)
    if ((*outPad)[d] < 0 || (*outPad)[d] >= std::max(st[d], dil[d]))
      return fail(nodeName(n) + ": output_padding " +
                  std::to_string((*outPad)[d]) +
                  " must be below the stride or the dilation");
  // output_shape (spatial, or with N and C) or a SAME auto_pad fixes the
  // output size; the total padding follows from it.
  FailureOr<SmallVector<int64_t>> outShape = intsAttr(n, "output_shape", {});
  if (failed(outShape))
    return failure();
  if (outShape->size() == 4)
    outShape->erase(outShape->begin(), outShape->begin() + 2);
  if (!outShape->empty() && outShape->size() != 2)
    return fail(nodeName(n) + ": output_shape must be 2-D");
  for (int64_t d : *outShape)
    if (d < 1 || d > kMaxDim)
      return fail(nodeName(n) + ": output_shape " + std::to_string(d) +
                  " is out of range (1 to 2^31-1)");
  if (outShape->empty() &&
      (win->autoPad == "SAME_UPPER" || win->autoPad == "SAME_LOWER"))
    *outShape = {xs[2] * st[0], xs[3] * st[1]};
  if (win->autoPad == "VALID")
    pads.assign(4, 0);
  if (!outShape->empty()) {
    for (int d = 0; d < 2; ++d) {
      int64_t full = st[d] * (xs[2 + d] - 1) + (*outPad)[d] +
                     ((*kernel)[d] - 1) * dil[d] + 1;
      // A negative total (an output larger than the input reaches) pads
      // the convolution's input further; halves round down, as in ONNX's
      // reference.
      int64_t total = full - (*outShape)[d];
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      bool upper = win->autoPad == "SAME_UPPER";
      pads[d] = upper ? half : total - half;
      pads[d + 2] = total - pads[d];
    }
  }
  // Zeros between the input pixels.
  Value xd = *x;
  SmallVector<int64_t> ds = {xs[0], C, (xs[2] - 1) * st[0] + 1,
                             (xs[3] - 1) * st[1] + 1};
  if (st[0] > 1 || st[1] > 1)
    xd = tensor::InsertSliceOp::create(
        b, loc, *x, zeros(ds), ValueRange{}, ValueRange{}, ValueRange{},
        SmallVector<int64_t>{0, 0, 0, 0}, xs,
        SmallVector<int64_t>{1, 1, st[0], st[1]});
  SmallVector<int64_t> convPads = {dil[0] * (R - 1) - pads[0],
                                   dil[1] * (S - 1) - pads[1],
                                   dil[0] * (R - 1) - pads[2] + (*outPad)[0],
                                   dil[1] * (S - 1) - pads[3] + (*outPad)[1]};
  if (llvm::any_of(convPads, [](int64_t p) { return p < 0; }))
    return fail(nodeName(n) +
                ": pads beyond the kernel's reach are not supported");
  // The filter: [C, K/G, R, S] -> [K, C/G, R, S] (k = g·K/G + kk reads
  // channel g·C/G + cc), flipped in R and S.
  Value wf;
  auto flipped = [&](ArrayRef<int64_t> shape) -> FailureOr<Value> {
    FailureOr<std::vector<float>> src = requiredConstant(n, 1);
    if (failed(src))
      return failure();
    std::vector<float> dst(src->size());
    for (int64_t g = 0; g < *groups; ++g)
      for (int64_t kk = 0; kk < Kg; ++kk)
        for (int64_t cc = 0; cc < Cg; ++cc)
          for (int64_t r = 0; r < R; ++r)
            for (int64_t q = 0; q < S; ++q)
              dst[(((g * Kg + kk) * Cg + cc) * R + r) * S + q] =
                  (*src)[(((g * Cg + cc) * Kg + kk) * R + (R - 1 - r)) * S +
                         (S - 1 - q)];
    return Value(arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(f32Tensor(shape), ArrayRef<float>(dst))));
  };
  bool constantW = initializers.count(n.input(1));
  if (constantW) {
    FailureOr<Value> f = flipped({K, Cg, R, S});
    if (failed(f))
      return failure();
    wf = *f;
  } else {
    // wf[g·K/G + kk, cc, r, q] = w[g·C/G + cc, kk, R-1-r, S-1-q], on the
    // filter viewed as [G, C/G, K/G, R, S].
    MLIRContext *c = ctx;
    AffineExpr d0 = getAffineDimExpr(0, c), d1 = getAffineDimExpr(1, c),
               d2 = getAffineDimExpr(2, c), d3 = getAffineDimExpr(3, c),
               d4 = getAffineDimExpr(4, c);
    Value wv = tensor::ExpandShapeOp::create(
        b, loc, f32Tensor({*groups, Cg, Kg, R, S}), *w,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
    AffineMap in =
        AffineMap::get(5, 0, {d0, d2, d1, R - 1 - d3, S - 1 - d4}, c);
    AffineMap out = AffineMap::getMultiDimIdentityMap(5, c);
    Value init = tensor::EmptyOp::create(
        b, loc, SmallVector<int64_t>{*groups, Kg, Cg, R, S}, b.getF32Type());
    Value g5 =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{wv}, ValueRange{init},
            SmallVector<AffineMap>{in, out},
            SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(nb, l, args[0]);
            })
            .getResult(0);
    wf = tensor::CollapseShapeOp::create(
        b, loc, g5, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  }
  Value padded = pad(xd, convPads, 0.0f);
  ArrayRef<int64_t> ps = shapeOf(padded);
  int64_t P = ps[2] - dil[0] * (R - 1), Q = ps[3] - dil[1] * (S - 1);
  if (P < 1 || Q < 1)
    return fail(nodeName(n) + ": the output would be empty");
  FailureOr<Value> conv =
      convolution(padded, wf, *groups, {1, 1}, dil, {xs[0], K, P, Q},
                  [&](ArrayRef<int64_t> shape) -> FailureOr<Value> {
                    if (!constantW)
                      return Value();
                    return flipped(shape);
                  });
  if (failed(conv))
    return failure();
  return define(n, addBias(*this, n, *conv, K));
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

void mlir::tq::onnx_import::registerConvOps(OpRegistry &r) {
  r["Conv"] = &Importer::importConv;
  r["ConvTranspose"] = &Importer::importConvTranspose;
}
