//===- Recurrent.cpp - LSTM -----------------------------------------------===//
//
// LSTM (layout 0: X is [T, B, I]) as a loop over time. The input
// projection of every step is one matmul before the loop,
// [T·B, I] x [I, 4H], plus both biases; the loop (an scf.for carrying h, c
// and Y) adds the recurrent product h x Rᵀ and applies the gates (ONNX
// order i, o, f, c):
//
//   i = σ(xw_i + h·R_iᵀ)   o = σ(xw_o + h·R_oᵀ)   f = σ(xw_f + h·R_fᵀ)
//   c' = f ⊙ c + i ⊙ tanh(xw_c + h·R_cᵀ)          h' = o ⊙ tanh(c')
//
// W and R must be constants: they are transposed here, and tq-quantize
// quantizes both products (W and R at compile time, h at each step).
// Directions forward, reverse and bidirectional; initial_h and initial_c
// optional; the default activations only; no peepholes, clip,
// input_forget or sequence_lens shorter than T.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

/// Rows [d·rows, (d+1)·rows) of a constant [D, rows, cols] tensor,
/// transposed to [cols, rows], as an f32 constant.
static Value transposedDirection(Importer &im, const std::vector<float> &v,
                                 int64_t d, int64_t rows, int64_t cols) {
  std::vector<float> t(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[c * rows + r] = v[(d * rows + r) * cols + c];
  return arith::ConstantOp::create(
      im.b, im.loc,
      DenseElementsAttr::get(im.f32Tensor({cols, rows}), ArrayRef<float>(t)));
}

/// `v` [rows, cols] columns [offset, offset + size).
static Value columns(Importer &im, Value v, int64_t offset, int64_t size) {
  ArrayRef<int64_t> s = Importer::shapeOf(v);
  return tensor::ExtractSliceOp::create(
      im.b, im.loc, im.f32Tensor({s[0], size}), v, ValueRange{}, ValueRange{},
      ValueRange{}, ArrayRef<int64_t>{0, offset}, ArrayRef<int64_t>{s[0], size},
      ArrayRef<int64_t>{1, 1});
}

static Value sigmoid(OpBuilder &b, Location l, Value x) {
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return arith::DivFOp::create(
      b, l, f32Constant(b, l, 1.0f),
      arith::AddFOp::create(b, l, f32Constant(b, l, 1.0f), e));
}

void Importer::importLSTM(const onnx::NodeProto &n) {
  onlyAttrs(n, {"hidden_size", "direction", "layout", "activations",
                "activation_alpha", "activation_beta", "clip", "input_forget"});
  if (intAttr(n, "layout", 0) != 0)
    fail(nodeName(n) + ": only layout 0 ([T, B, I]) is supported");
  if (attr(n, "clip", onnx::AttributeProto::FLOAT))
    fail(nodeName(n) + ": clip is not supported");
  if (intAttr(n, "input_forget", 0))
    fail(nodeName(n) + ": input_forget is not supported");
  if (const onnx::AttributeProto *a =
          attr(n, "activations", onnx::AttributeProto::STRINGS)) {
    for (int i = 0; i < a->strings_size(); ++i)
      if (a->strings(i) != (i % 3 == 0 ? "Sigmoid" : "Tanh"))
        fail(nodeName(n) + ": only the default activations (Sigmoid, Tanh, "
                           "Tanh) are supported");
  }
  if (n.input_size() > 7 && !n.input(7).empty())
    fail(nodeName(n) + ": peepholes (input P) are not supported");
  const onnx::AttributeProto *dirAttr =
      attr(n, "direction", onnx::AttributeProto::STRING);
  std::string direction = dirAttr ? dirAttr->s() : "forward";
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    fail(nodeName(n) + ": direction '" + direction +
         "' is not forward, "
         "reverse or bidirectional");
  int64_t D = direction == "bidirectional" ? 2 : 1;

  Value x = input(n, 0);
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() != 3)
    fail(nodeName(n) + ": X must be [T, B, I]");
  int64_t T = xs[0], B = xs[1], I = xs[2];
  int64_t H = intAttr(n, "hidden_size", 0);
  std::vector<float> w = requiredConstant(n, 1), r = requiredConstant(n, 2);
  if (H <= 0 || int64_t(w.size()) != D * 4 * H * I ||
      int64_t(r.size()) != D * 4 * H * H)
    fail(nodeName(n) + ": W must be [" + std::to_string(D) + ", 4·" +
         std::to_string(H) + ", " + std::to_string(I) + "] and R [" +
         std::to_string(D) + ", 4·" + std::to_string(H) + ", " +
         std::to_string(H) + "] (constants)");
  if (n.input_size() > 4 && !n.input(4).empty()) {
    std::vector<float> lens = requiredConstant(n, 4);
    if (llvm::any_of(lens, [&](float v) { return int64_t(v) != T; }))
      fail(nodeName(n) + ": sequence_lens shorter than the sequence are "
                         "not supported");
  }
  std::vector<float> bias(D * 8 * H, 0.0f);
  if (n.input_size() > 3 && !n.input(3).empty()) {
    bias = requiredConstant(n, 3);
    if (int64_t(bias.size()) != D * 8 * H)
      fail(nodeName(n) + ": B must be [" + std::to_string(D) + ", 8·" +
           std::to_string(H) + "]");
  }
  auto initialState = [&](int i, int64_t d) {
    if (n.input_size() <= i || n.input(i).empty())
      return zeros({B, H});
    Value s = input(n, i);
    if (shapeOf(s) != ArrayRef<int64_t>{D, B, H})
      fail(nodeName(n) + ": initial states must be [" + std::to_string(D) +
           ", " + std::to_string(B) + ", " + std::to_string(H) + "]");
    return Value(tensor::ExtractSliceOp::create(
        b, loc, f32Tensor({B, H}), s, ValueRange{}, ValueRange{}, ValueRange{},
        ArrayRef<int64_t>{d, 0, 0}, ArrayRef<int64_t>{1, B, H},
        ArrayRef<int64_t>{1, 1, 1}));
  };

  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < D; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    // The input projection of all steps, with both biases.
    std::vector<float> bd(4 * H);
    for (int64_t k = 0; k < 4 * H; ++k)
      bd[k] = bias[d * 8 * H + k] + bias[d * 8 * H + 4 * H + k];
    Value biasV = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(f32Tensor({4 * H}), ArrayRef<float>(bd)));
    Value xw = matmul(reshape(x, {T * B, I}),
                      transposedDirection(*this, w, d, 4 * H, I), n);
    xw = elementwise(
        {xw, biasV}, n, [](OpBuilder &nb, Location l, ValueRange v) {
          return arith::AddFOp::create(nb, l, v[0], v[1]).getResult();
        });
    xw = reshape(xw, {T, B, 4 * H});
    Value rT = transposedDirection(*this, r, d, 4 * H, H);

    Value lb = arith::ConstantIndexOp::create(b, loc, 0);
    Value ub = arith::ConstantIndexOp::create(b, loc, T);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value y0 = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{T, B, H},
                                       b.getF32Type());
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, one,
        ValueRange{initialState(5, d), initialState(6, d), y0});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      if (reverse)
        t = arith::SubIOp::create(
            b, loc, arith::ConstantIndexOp::create(b, loc, T - 1), t);
      Value h = loop.getRegionIterArgs()[0], c = loop.getRegionIterArgs()[1],
            y = loop.getRegionIterArgs()[2];
      SmallVector<OpFoldResult> at = {t, b.getIndexAttr(0), b.getIndexAttr(0)};
      SmallVector<OpFoldResult> ones(3, b.getIndexAttr(1));
      Value xwt = tensor::ExtractSliceOp::create(
          b, loc, f32Tensor({B, 4 * H}), xw, at,
          SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(B),
                                    b.getIndexAttr(4 * H)},
          ones);
      Value g = elementwise(
          {xwt, matmul(h, rT, n)}, n,
          [](OpBuilder &nb, Location l, ValueRange v) {
            return arith::AddFOp::create(nb, l, v[0], v[1]).getResult();
          });
      Value gi = columns(*this, g, 0, H), go = columns(*this, g, H, H),
            gf = columns(*this, g, 2 * H, H), gc = columns(*this, g, 3 * H, H);
      Value c2 = elementwise(
          {gf, c, gi, gc}, n, [](OpBuilder &nb, Location l, ValueRange v) {
            Value keep =
                arith::MulFOp::create(nb, l, sigmoid(nb, l, v[0]), v[1]);
            Value add = arith::MulFOp::create(
                nb, l, sigmoid(nb, l, v[2]), math::TanhOp::create(nb, l, v[3]));
            return arith::AddFOp::create(nb, l, keep, add).getResult();
          });
      Value h2 =
          elementwise({go, c2}, n, [](OpBuilder &nb, Location l, ValueRange v) {
            return arith::MulFOp::create(nb, l, sigmoid(nb, l, v[0]),
                                         math::TanhOp::create(nb, l, v[1]))
                .getResult();
          });
      Value y2 = tensor::InsertSliceOp::create(
          b, loc, h2, y, at,
          SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(B),
                                    b.getIndexAttr(H)},
          ones);
      scf::YieldOp::create(b, loc, ValueRange{h2, c2, y2});
    }
    hs.push_back(loop.getResult(0));
    cs.push_back(loop.getResult(1));
    ys.push_back(loop.getResult(2));
  }
  // Y [T, D, B, H], Y_h and Y_c [D, B, H].
  auto stack = [&](ArrayRef<Value> parts, SmallVector<int64_t> shape,
                   int64_t axis) {
    Value out = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
    for (auto [k, p] : llvm::enumerate(parts)) {
      SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape);
      offsets[axis] = k;
      sizes[axis] = 1;
      out = tensor::InsertSliceOp::create(
          b, loc, p, out, ValueRange{}, ValueRange{}, ValueRange{}, offsets,
          sizes, SmallVector<int64_t>(shape.size(), 1));
    }
    return out;
  };
  Value outputs[3] = {stack(ys, {T, D, B, H}, 1), stack(hs, {D, B, H}, 0),
                      stack(cs, {D, B, H}, 0)};
  for (int i = 0; i < 3 && i < n.output_size(); ++i)
    if (!n.output(i).empty())
      define(n, outputs[i], i);
}

void mlir::tq::onnx_import::registerRecurrentOps(OpRegistry &r) {
  r["LSTM"] = &Importer::importLSTM;
}
