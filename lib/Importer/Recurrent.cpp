//===- Recurrent.cpp - LSTM, GRU and RNN ----------------------------------===//
//
// LSTM, GRU and RNN as a loop over time. The input projection of every step is
// one matmul before the loop, [T·B, I] x [I, G·H] (G gates), plus the
// biases that can be added there; the loop (an scf.for carrying the
// states and Y) adds the recurrent products and applies the gates.
//
// LSTM (gate order i, o, f, c; peepholes P_i, P_o, P_f, zero if absent):
//
//   i = σ(xw_i + h·R_iᵀ + P_i ⊙ c)   f = σ(xw_f + h·R_fᵀ + P_f ⊙ c)
//   c' = f ⊙ c + i ⊙ tanh(xw_c + h·R_cᵀ)
//   o = σ(xw_o + h·R_oᵀ + P_o ⊙ c')  h' = o ⊙ tanh(c')
//
// GRU (gate order z, r, h), with linear_before_reset 0 or 1:
//
//   z = σ(xw_z + h·R_zᵀ)   r = σ(xw_r + h·R_rᵀ)
//   ĥ = tanh(xw_h + (r ⊙ h)·R_hᵀ)          (linear_before_reset = 0)
//   ĥ = tanh(xw_h + r ⊙ (h·R_hᵀ + Rb_h))   (linear_before_reset = 1)
//   h' = (1 - z) ⊙ ĥ + z ⊙ h
//
// RNN: h' = tanh(xw + h·Rᵀ).
//
// W and R must be constants: they are transposed here, and tq-quantize
// quantizes every product (W and R at compile time, h at each step).
// Directions forward, reverse and bidirectional; layout 0 (X [T, B, I])
// and 1 (X [B, T, I]); initial states optional; the default activations
// only; LSTM peepholes; no clip, input_forget or sequence_lens shorter
// than T.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

namespace {
/// A loop body: the step's input projection [B, G·H] and the states
/// (h first) to the new states.
using StepBody = function_ref<FailureOr<SmallVector<Value>>(Value, ValueRange)>;

/// What the recurrent ops share, checked once: direction, layout, shapes and
/// the constant weights.
struct Recurrence {
  Recurrence(Importer &im, const onnx::NodeProto &n, int64_t gates)
      : im(im), n(n), G(gates) {}
  /// Reads and checks the attributes, X, W, R, sequence_lens and B.
  LogicalResult init(ArrayRef<StringRef> activations);

  /// Rows [first, first + count) of direction d of R (or W when `ofW`),
  /// transposed to [cols, count], as an f32 constant.
  Value transposed(bool ofW, int64_t d, int64_t first, int64_t count);
  /// Columns [offset, offset + size) of `v` [rows, cols].
  Value columns(Value v, int64_t offset, int64_t size);
  /// X·W_dᵀ for every step plus `bias` [G·H], as [T, B, G·H].
  FailureOr<Value> inputProjection(int64_t d, ArrayRef<float> bias);
  /// Initial state input `i` of direction d as [B, H], zeros if absent.
  FailureOr<Value> initialState(int i, int64_t d);
  /// The loop over time of direction d from `initial` states; returns Y_d
  /// [T, B, H] followed by the final states.
  FailureOr<SmallVector<Value>> loop(int64_t d, Value xw, ValueRange initial,
                                     StepBody body);
  /// Defines Y, then one output per state kind, from every direction's
  /// loop results.
  LogicalResult defineOutputs(ArrayRef<SmallVector<Value>> perDirection);
  bool reversed(int64_t d) const { return direction == "reverse" || d == 1; }
  FailureOr<Value> add(Value x, Value y);

  Importer &im;
  const onnx::NodeProto &n;
  int64_t G, D = 1, T = 0, B = 0, I = 0, H = 0;
  bool batchMajor = false;
  std::string direction = "forward";
  Value x; ///< [T, B, I]
  std::vector<float> w, r, bias;
};
} // namespace

LogicalResult Recurrence::init(ArrayRef<StringRef> activations) {
  std::string where = nodeName(n);
  FailureOr<int64_t> layout = im.intAttr(n, "layout", 0);
  if (failed(layout))
    return failure();
  if (*layout != 0 && *layout != 1)
    return im.fail(where + ": layout must be 0 ([T, B, I]) or 1 ([B, T, I])");
  batchMajor = *layout == 1;
  FailureOr<const onnx::AttributeProto *> clip =
      im.attr(n, "clip", onnx::AttributeProto::FLOAT);
  if (failed(clip))
    return failure();
  if (*clip)
    return im.fail(where + ": clip is not supported");
  FailureOr<const onnx::AttributeProto *> acts =
      im.attr(n, "activations", onnx::AttributeProto::STRINGS);
  if (failed(acts))
    return failure();
  if (const onnx::AttributeProto *a = *acts) {
    for (int i = 0; i < a->strings_size(); ++i)
      if (a->strings(i) != activations[i % activations.size()]) {
        std::string list;
        for (StringRef s : activations)
          list += (list.empty() ? "" : ", ") + s.str();
        return im.fail(where + ": only the default activations (" + list +
                       ") are supported");
      }
  }
  FailureOr<const onnx::AttributeProto *> dir =
      im.attr(n, "direction", onnx::AttributeProto::STRING);
  if (failed(dir))
    return failure();
  if (const onnx::AttributeProto *a = *dir)
    direction = a->s();
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return im.fail(where + ": direction '" + direction +
                   "' is not forward, reverse or bidirectional");
  D = direction == "bidirectional" ? 2 : 1;

  FailureOr<Value> xIn = im.input(n, 0);
  if (failed(xIn))
    return failure();
  x = *xIn;
  ArrayRef<int64_t> xs = Importer::shapeOf(x);
  if (xs.size() != 3)
    return im.fail(where + (batchMajor ? ": X must be [B, T, I]"
                                       : ": X must be [T, B, I]"));
  if (batchMajor)
    x = im.transpose(x, {1, 0, 2});
  xs = Importer::shapeOf(x);
  T = xs[0], B = xs[1], I = xs[2];
  FailureOr<int64_t> hidden = im.intAttr(n, "hidden_size", 0);
  if (failed(hidden))
    return failure();
  H = *hidden;
  FailureOr<std::vector<float>> wIn = im.requiredConstant(n, 1);
  if (failed(wIn))
    return failure();
  w = std::move(*wIn);
  FailureOr<std::vector<float>> rIn = im.requiredConstant(n, 2);
  if (failed(rIn))
    return failure();
  r = std::move(*rIn);
  std::string gh = std::to_string(G) + "·" + std::to_string(H);
  if (H <= 0 || int64_t(w.size()) != D * G * H * I ||
      int64_t(r.size()) != D * G * H * H)
    return im.fail(where + ": W must be [" + std::to_string(D) + ", " + gh +
                   ", " + std::to_string(I) + "] and R [" + std::to_string(D) +
                   ", " + gh + ", " + std::to_string(H) + "] (constants)");
  if (n.input_size() > 4 && !n.input(4).empty()) {
    FailureOr<std::vector<float>> lens = im.requiredConstant(n, 4);
    if (failed(lens))
      return failure();
    if (llvm::any_of(*lens, [&](float v) { return int64_t(v) != T; }))
      return im.fail(where + ": sequence_lens shorter than the sequence are "
                             "not supported");
  }
  bias.assign(D * 2 * G * H, 0.0f);
  if (n.input_size() > 3 && !n.input(3).empty()) {
    FailureOr<std::vector<float>> bIn = im.requiredConstant(n, 3);
    if (failed(bIn))
      return failure();
    bias = std::move(*bIn);
    if (int64_t(bias.size()) != D * 2 * G * H)
      return im.fail(where + ": B must be [" + std::to_string(D) + ", 2·" + gh +
                     "]");
  }
  return success();
}

Value Recurrence::transposed(bool ofW, int64_t d, int64_t first,
                             int64_t count) {
  const std::vector<float> &v = ofW ? w : r;
  int64_t cols = ofW ? I : H;
  std::vector<float> t(count * cols);
  for (int64_t row = 0; row < count; ++row)
    for (int64_t c = 0; c < cols; ++c)
      t[c * count + row] = v[(d * G * H + first + row) * cols + c];
  return arith::ConstantOp::create(
      im.b, im.loc,
      DenseElementsAttr::get(im.f32Tensor({cols, count}), ArrayRef<float>(t)));
}

Value Recurrence::columns(Value v, int64_t offset, int64_t size) {
  ArrayRef<int64_t> s = Importer::shapeOf(v);
  return tensor::ExtractSliceOp::create(
      im.b, im.loc, im.f32Tensor({s[0], size}), v, ValueRange{}, ValueRange{},
      ValueRange{}, ArrayRef<int64_t>{0, offset}, ArrayRef<int64_t>{s[0], size},
      ArrayRef<int64_t>{1, 1});
}

FailureOr<Value> Recurrence::add(Value a, Value c) {
  return im.elementwise({a, c}, n, [](OpBuilder &b, Location l, ValueRange v) {
    return arith::AddFOp::create(b, l, v[0], v[1]).getResult();
  });
}

FailureOr<Value> Recurrence::inputProjection(int64_t d, ArrayRef<float> b) {
  Value biasV = arith::ConstantOp::create(
      im.b, im.loc, DenseElementsAttr::get(im.f32Tensor({G * H}), b));
  FailureOr<Value> xw =
      im.matmul(im.reshape(x, {T * B, I}), transposed(true, d, 0, G * H), n);
  if (failed(xw))
    return failure();
  FailureOr<Value> sum = add(*xw, biasV);
  if (failed(sum))
    return failure();
  return im.reshape(*sum, {T, B, G * H});
}

FailureOr<Value> Recurrence::initialState(int i, int64_t d) {
  if (n.input_size() <= i || n.input(i).empty())
    return im.zeros({B, H});
  FailureOr<Value> sIn = im.input(n, i);
  if (failed(sIn))
    return failure();
  Value s = *sIn;
  SmallVector<int64_t> want = batchMajor ? SmallVector<int64_t>{B, D, H}
                                         : SmallVector<int64_t>{D, B, H};
  if (Importer::shapeOf(s) != ArrayRef<int64_t>(want))
    return im.fail(nodeName(n) + ": initial states must be [" +
                   std::to_string(want[0]) + ", " + std::to_string(want[1]) +
                   ", " + std::to_string(want[2]) + "]");
  if (batchMajor)
    s = im.transpose(s, {1, 0, 2});
  return tensor::ExtractSliceOp::create(
             im.b, im.loc, im.f32Tensor({B, H}), s, ValueRange{}, ValueRange{},
             ValueRange{}, ArrayRef<int64_t>{d, 0, 0},
             ArrayRef<int64_t>{1, B, H}, ArrayRef<int64_t>{1, 1, 1})
      .getResult();
}

FailureOr<SmallVector<Value>>
Recurrence::loop(int64_t d, Value xw, ValueRange initial, StepBody body) {
  OpBuilder &b = im.b;
  Location loc = im.loc;
  SmallVector<Value> iterArgs(initial);
  iterArgs.push_back(tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{T, B, H},
                                             b.getF32Type()));
  auto forOp =
      scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                         arith::ConstantIndexOp::create(b, loc, T),
                         arith::ConstantIndexOp::create(b, loc, 1), iterArgs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    Value t = forOp.getInductionVar();
    if (reversed(d))
      t = arith::SubIOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, T - 1), t);
    ValueRange args = forOp.getRegionIterArgs();
    SmallVector<OpFoldResult> at = {t, b.getIndexAttr(0), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> ones(3, b.getIndexAttr(1));
    Value xwt = tensor::ExtractSliceOp::create(
        b, loc, im.f32Tensor({B, G * H}), xw, at,
        SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(B),
                                  b.getIndexAttr(G * H)},
        ones);
    FailureOr<SmallVector<Value>> next = body(xwt, args.drop_back());
    if (failed(next))
      return failure();
    next->push_back(tensor::InsertSliceOp::create(
        b, loc, next->front(), args.back(), at,
        SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(B),
                                  b.getIndexAttr(H)},
        ones));
    scf::YieldOp::create(b, loc, *next);
  }
  SmallVector<Value> results(forOp.getResults());
  std::rotate(results.begin(), results.end() - 1, results.end());
  return results;
}

LogicalResult
Recurrence::defineOutputs(ArrayRef<SmallVector<Value>> perDirection) {
  // Y [T, D, B, H] (Y_d stacked on axis 1); each state [D, B, H].
  auto stack = [&](size_t k, SmallVector<int64_t> shape, int64_t axis) {
    Value out = tensor::EmptyOp::create(im.b, im.loc, shape, im.b.getF32Type());
    for (auto [d, results] : llvm::enumerate(perDirection)) {
      SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape);
      offsets[axis] = d;
      sizes[axis] = 1;
      out = tensor::InsertSliceOp::create(
          im.b, im.loc, results[k], out, ValueRange{}, ValueRange{},
          ValueRange{}, offsets, sizes, SmallVector<int64_t>(shape.size(), 1));
    }
    return out;
  };
  for (int k = 0; k < n.output_size() && k < int(perDirection[0].size()); ++k) {
    if (n.output(k).empty())
      continue;
    Value out = k == 0 ? stack(0, {T, D, B, H}, 1) : stack(k, {D, B, H}, 0);
    // Layout 1: Y [B, T, D, H] and the states [B, D, H].
    if (batchMajor)
      out = k == 0 ? im.transpose(out, {2, 0, 1, 3})
                   : im.transpose(out, {1, 0, 2});
    if (failed(im.define(n, out, k)))
      return failure();
  }
  return success();
}

static Value sigmoid(OpBuilder &b, Location l, Value x) {
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return arith::DivFOp::create(
      b, l, f32Constant(b, l, 1.0f),
      arith::AddFOp::create(b, l, f32Constant(b, l, 1.0f), e));
}

LogicalResult Importer::importLSTM(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"hidden_size", "direction", "layout", "activations",
                           "activation_alpha", "activation_beta", "clip",
                           "input_forget"})))
    return failure();
  FailureOr<int64_t> inputForget = intAttr(n, "input_forget", 0);
  if (failed(inputForget))
    return failure();
  if (*inputForget)
    return fail(nodeName(n) + ": input_forget is not supported");
  Recurrence rec(*this, n, 4);
  if (failed(rec.init({"Sigmoid", "Tanh", "Tanh"})))
    return failure();
  int64_t H = rec.H;
  // Peepholes P [D, 3·H] (order i, o, f), zeros if absent.
  std::vector<float> peepholes(rec.D * 3 * H, 0.0f);
  if (n.input_size() > 7 && !n.input(7).empty()) {
    FailureOr<std::vector<float>> p = requiredConstant(n, 7);
    if (failed(p))
      return failure();
    peepholes = std::move(*p);
    if (int64_t(peepholes.size()) != rec.D * 3 * H)
      return fail(nodeName(n) + ": P must be [" + std::to_string(rec.D) +
                  ", 3·" + std::to_string(H) + "]");
  }
  SmallVector<SmallVector<Value>> results;
  for (int64_t d = 0; d < rec.D; ++d) {
    // Both biases go into the input projection.
    std::vector<float> bd(4 * H);
    for (int64_t k = 0; k < 4 * H; ++k)
      bd[k] = rec.bias[d * 8 * H + k] + rec.bias[d * 8 * H + 4 * H + k];
    FailureOr<Value> xw = rec.inputProjection(d, bd);
    if (failed(xw))
      return failure();
    Value rT = rec.transposed(false, d, 0, 4 * H);
    auto peephole = [&](int64_t k) -> Value {
      return arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              f32Tensor({H}),
              ArrayRef<float>(peepholes.data() + (d * 3 + k) * H, H)));
    };
    Value pI = peephole(0), pO = peephole(1), pF = peephole(2);
    auto step = [&](Value xwt, ValueRange s) -> FailureOr<SmallVector<Value>> {
      FailureOr<Value> hr = matmul(s[0], rT, n);
      if (failed(hr))
        return failure();
      FailureOr<Value> g = rec.add(xwt, *hr);
      if (failed(g))
        return failure();
      Value gi = rec.columns(*g, 0, H), go = rec.columns(*g, H, H),
            gf = rec.columns(*g, 2 * H, H), gc = rec.columns(*g, 3 * H, H);
      // With peepholes, the input and forget gates see c and the output
      // gate sees c'.
      FailureOr<Value> c2 = elementwise(
          {gf, s[1], gi, gc, pI, pF}, n,
          [](OpBuilder &nb, Location l, ValueRange v) {
            auto peep = [&](Value g, Value p) {
              return sigmoid(
                  nb, l,
                  arith::AddFOp::create(nb, l, g,
                                        arith::MulFOp::create(nb, l, p, v[1])));
            };
            Value keep = arith::MulFOp::create(nb, l, peep(v[0], v[5]), v[1]);
            Value add = arith::MulFOp::create(
                nb, l, peep(v[2], v[4]), math::TanhOp::create(nb, l, v[3]));
            return arith::AddFOp::create(nb, l, keep, add).getResult();
          });
      if (failed(c2))
        return failure();
      FailureOr<Value> h2 = elementwise(
          {go, *c2, pO}, n, [](OpBuilder &nb, Location l, ValueRange v) {
            Value o = sigmoid(
                nb, l,
                arith::AddFOp::create(
                    nb, l, v[0], arith::MulFOp::create(nb, l, v[2], v[1])));
            return arith::MulFOp::create(nb, l, o,
                                         math::TanhOp::create(nb, l, v[1]))
                .getResult();
          });
      if (failed(h2))
        return failure();
      return SmallVector<Value>{*h2, *c2};
    };
    FailureOr<Value> h0 = rec.initialState(5, d);
    if (failed(h0))
      return failure();
    FailureOr<Value> c0 = rec.initialState(6, d);
    if (failed(c0))
      return failure();
    FailureOr<SmallVector<Value>> out =
        rec.loop(d, *xw, ValueRange{*h0, *c0}, step);
    if (failed(out))
      return failure();
    results.push_back(std::move(*out));
  }
  return rec.defineOutputs(results);
}

LogicalResult Importer::importGRU(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"hidden_size", "direction", "layout", "activations",
                           "activation_alpha", "activation_beta", "clip",
                           "linear_before_reset"})))
    return failure();
  FailureOr<int64_t> lbr = intAttr(n, "linear_before_reset", 0);
  if (failed(lbr))
    return failure();
  int64_t linearBeforeReset = *lbr;
  if (linearBeforeReset != 0 && linearBeforeReset != 1)
    return fail(nodeName(n) + ": linear_before_reset must be 0 or 1");
  Recurrence rec(*this, n, 3);
  if (failed(rec.init({"Sigmoid", "Tanh"})))
    return failure();
  int64_t H = rec.H;
  SmallVector<SmallVector<Value>> results;
  for (int64_t d = 0; d < rec.D; ++d) {
    // Wb goes into the input projection, and so does Rb except Rb_h when
    // it is added before the reset gate.
    const float *wb = &rec.bias[d * 6 * H], *rb = wb + 3 * H;
    std::vector<float> bd(3 * H);
    for (int64_t k = 0; k < 3 * H; ++k)
      bd[k] = wb[k] + (linearBeforeReset && k >= 2 * H ? 0.0f : rb[k]);
    FailureOr<Value> xw = rec.inputProjection(d, bd);
    if (failed(xw))
      return failure();
    Value rbH = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(f32Tensor({H}), ArrayRef<float>(rb + 2 * H, H)));
    // linear_before_reset: one product h·Rᵀ; otherwise h·R_zrᵀ, then
    // (r ⊙ h)·R_hᵀ.
    Value rT = linearBeforeReset ? rec.transposed(false, d, 0, 3 * H)
                                 : rec.transposed(false, d, 0, 2 * H);
    Value rhT =
        linearBeforeReset ? Value() : rec.transposed(false, d, 2 * H, H);
    auto step = [&](Value xwt, ValueRange s) -> FailureOr<SmallVector<Value>> {
      Value h = s[0];
      FailureOr<Value> g = matmul(h, rT, n);
      if (failed(g))
        return failure();
      auto gate = [&](int64_t k) {
        return elementwise(
            {rec.columns(xwt, k * H, H), rec.columns(*g, k * H, H)}, n,
            [](OpBuilder &nb, Location l, ValueRange v) {
              return sigmoid(nb, l, arith::AddFOp::create(nb, l, v[0], v[1]));
            });
      };
      FailureOr<Value> z = gate(0);
      if (failed(z))
        return failure();
      FailureOr<Value> rg = gate(1);
      if (failed(rg))
        return failure();
      Value xh = rec.columns(xwt, 2 * H, H);
      FailureOr<Value> candidate = failure();
      if (linearBeforeReset) {
        candidate = elementwise(
            {xh, *rg, rec.columns(*g, 2 * H, H), rbH}, n,
            [](OpBuilder &nb, Location l, ValueRange v) {
              Value rh = arith::MulFOp::create(
                  nb, l, v[1], arith::AddFOp::create(nb, l, v[2], v[3]));
              return math::TanhOp::create(
                         nb, l, arith::AddFOp::create(nb, l, v[0], rh))
                  .getResult();
            });
      } else {
        FailureOr<Value> reset = elementwise(
            {*rg, h}, n, [](OpBuilder &nb, Location l, ValueRange v) {
              return arith::MulFOp::create(nb, l, v[0], v[1]).getResult();
            });
        if (failed(reset))
          return failure();
        FailureOr<Value> rh = matmul(*reset, rhT, n);
        if (failed(rh))
          return failure();
        candidate = elementwise(
            {xh, *rh}, n, [](OpBuilder &nb, Location l, ValueRange v) {
              return math::TanhOp::create(
                         nb, l, arith::AddFOp::create(nb, l, v[0], v[1]))
                  .getResult();
            });
      }
      if (failed(candidate))
        return failure();
      FailureOr<Value> h2 = elementwise(
          {*z, *candidate, h}, n, [](OpBuilder &nb, Location l, ValueRange v) {
            Value oneMinusZ =
                arith::SubFOp::create(nb, l, f32Constant(nb, l, 1.0f), v[0]);
            return arith::AddFOp::create(
                       nb, l, arith::MulFOp::create(nb, l, oneMinusZ, v[1]),
                       arith::MulFOp::create(nb, l, v[0], v[2]))
                .getResult();
          });
      if (failed(h2))
        return failure();
      return SmallVector<Value>{*h2};
    };
    FailureOr<Value> h0 = rec.initialState(5, d);
    if (failed(h0))
      return failure();
    FailureOr<SmallVector<Value>> out = rec.loop(d, *xw, ValueRange{*h0}, step);
    if (failed(out))
      return failure();
    results.push_back(std::move(*out));
  }
  return rec.defineOutputs(results);
}

LogicalResult Importer::importRNN(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"hidden_size", "direction", "layout", "activations",
                           "activation_alpha", "activation_beta", "clip"})))
    return failure();
  Recurrence rec(*this, n, 1);
  if (failed(rec.init({"Tanh"})))
    return failure();
  int64_t H = rec.H;
  SmallVector<SmallVector<Value>> results;
  for (int64_t d = 0; d < rec.D; ++d) {
    std::vector<float> bd(H);
    for (int64_t k = 0; k < H; ++k)
      bd[k] = rec.bias[d * 2 * H + k] + rec.bias[d * 2 * H + H + k];
    FailureOr<Value> xw = rec.inputProjection(d, bd);
    if (failed(xw))
      return failure();
    Value rT = rec.transposed(false, d, 0, H);
    auto step = [&](Value xwt, ValueRange s) -> FailureOr<SmallVector<Value>> {
      FailureOr<Value> hr = matmul(s[0], rT, n);
      if (failed(hr))
        return failure();
      FailureOr<Value> h2 = elementwise(
          {xwt, *hr}, n, [](OpBuilder &nb, Location l, ValueRange v) {
            return math::TanhOp::create(
                       nb, l, arith::AddFOp::create(nb, l, v[0], v[1]))
                .getResult();
          });
      if (failed(h2))
        return failure();
      return SmallVector<Value>{*h2};
    };
    FailureOr<Value> h0 = rec.initialState(5, d);
    if (failed(h0))
      return failure();
    FailureOr<SmallVector<Value>> out = rec.loop(d, *xw, ValueRange{*h0}, step);
    if (failed(out))
      return failure();
    results.push_back(std::move(*out));
  }
  return rec.defineOutputs(results);
}

void mlir::tq::onnx_import::registerRecurrentOps(OpRegistry &r) {
  r["RNN"] = &Importer::importRNN;
  r["LSTM"] = &Importer::importLSTM;
  r["GRU"] = &Importer::importGRU;
}
