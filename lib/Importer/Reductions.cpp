//===- Reductions.cpp - Reductions and softmax ----------------------------===//
//
// Reduce* (ten kinds), Softmax, LogSoftmax, Hardmax, ArgMax, ArgMin and
// CumSum along axes.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::tq::onnx_import;

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

/// The index of the current element along `axis`, as f32.
static Value indexAlong(OpBuilder &nb, Location l, int64_t axis) {
  Value i = linalg::IndexOp::create(nb, l, axis);
  Value i32 = arith::IndexCastOp::create(nb, l, nb.getI32Type(), i);
  return arith::SIToFPOp::create(nb, l, nb.getF32Type(), i32).getResult();
}

/// The index along `axis` of the first (or `last`) maximum (or minimum),
/// as f32, with `axis` dropped. A NaN counts as the extreme, as in numpy.
Value Importer::argExtreme(Value x, int64_t axis, bool max, bool last) {
  AlongAxis m = alongAxis(x, axis);
  AffineMap id = m.id, red = m.reduced;
  // A max or min reduction builds no element-wise op, so it cannot fail.
  FailureOr<Value> extreme =
      reduce(x, {axis}, /*keepdims=*/false, max ? "max" : "min");
  assert(succeeded(extreme) && "a max or min reduction failed");
  float none = last ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity();
  Value noneV = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(none));
  Value empty = tensor::EmptyOp::create(b, loc, m.kept, b.getF32Type());
  Value init = linalg::FillOp::create(b, loc, noneV, empty).getResult(0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x, *extreme},
             ValueRange{init}, ArrayRef<AffineMap>{id, red, red}, m.iters,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value at = arith::OrIOp::create(
                   nb, l,
                   arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a[0],
                                         a[1]),
                   arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, a[0],
                                         a[0]));
               Value i = indexAlong(nb, l, axis);
               Value pick =
                   last ? arith::MaximumFOp::create(nb, l, a[2], i).getResult()
                        : arith::MinimumFOp::create(nb, l, a[2], i).getResult();
               linalg::YieldOp::create(
                   nb, l,
                   ValueRange{arith::SelectOp::create(nb, l, at, pick, a[2])});
             })
      .getResult(0);
}

/// 1 where the first maximum along `axis` is, 0 elsewhere: its index
/// (argExtreme), compared with each element's index.
Value Importer::hardmax(Value x, int64_t axis) {
  ArrayRef<int64_t> shape = shapeOf(x);
  AlongAxis m = alongAxis(x, axis);
  AffineMap id = m.id, red = m.reduced;
  SmallVector<utils::IteratorType> &par = m.parallel;
  Value first = argExtreme(x, axis, /*max=*/true, /*last=*/false);
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{first},
             ValueRange{empty}, ArrayRef<AffineMap>{red, id}, par,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value hit =
                   arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                         indexAlong(nb, l, axis), a[0]);
               linalg::YieldOp::create(nb, l,
                                       ValueRange{arith::UIToFPOp::create(
                                           nb, l, nb.getF32Type(), hit)});
             })
      .getResult(0);
}

/// A reduction over `axes` (sorted, non-negative): sum, mean, max, min,
/// prod, l1 (Σ|x|), l2 (√Σx²), sumsquare (Σx²), logsum (log Σx) or
/// logsumexp (log Σ exp x).
FailureOr<Value> Importer::reduce(Value x, ArrayRef<int64_t> axes,
                                  bool keepdims, const std::string &kind) {
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
    FailureOr<Value> e =
        elementwise({r}, none, [&](OpBuilder &nb, Location l, ValueRange v) {
          return kind == "l2" ? math::SqrtOp::create(nb, l, v[0]).getResult()
                              : math::LogOp::create(nb, l, v[0]).getResult();
        });
    if (failed(e))
      return failure();
    r = *e;
  }
  if (kind == "mean") {
    float c = float(count);
    onnx::NodeProto none;
    FailureOr<Value> mean =
        elementwise({r}, none, [&](OpBuilder &nb, Location l, ValueRange v) {
          return arith::DivFOp::create(
                     nb, l, v[0],
                     arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(c)))
              .getResult();
        });
    if (failed(mean))
      return failure();
    r = *mean;
  }
  if (!keepdims)
    return r;
  SmallVector<int64_t> withOnes;
  for (int64_t d = 0; d < rank; ++d)
    withOnes.push_back(llvm::is_contained(axes, d) ? 1 : shape[d]);
  return reshape(r, withOnes);
}

/// A reduction of the kind its op type names, over the `axes` attribute
/// (before opset 18) or input (all dims by default).
LogicalResult Importer::importReduce(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  auto axesOf = [&](Value x,
                    bool allByDefault) -> FailureOr<std::vector<int64_t>> {
    int64_t rank = shapeOf(x).size();
    FailureOr<std::vector<int64_t>> axes = intsAttrOrInput(n, "axes", 1);
    if (failed(axes))
      return failure();
    if (axes->empty() && allByDefault)
      for (int64_t d = 0; d < rank; ++d)
        axes->push_back(d);
    for (int64_t &a : *axes) {
      if (a < 0)
        a += rank;
      if (a < 0 || a >= rank)
        return fail(nodeName(n) + ": axis out of range");
    }
    llvm::sort(*axes);
    return axes;
  };
  static const llvm::StringMap<const char *> reductions = {
      {"ReduceMean", "mean"},     {"ReduceSum", "sum"},
      {"ReduceMax", "max"},       {"ReduceMin", "min"},
      {"ReduceProd", "prod"},     {"ReduceL1", "l1"},
      {"ReduceL2", "l2"},         {"ReduceSumSquare", "sumsquare"},
      {"ReduceLogSum", "logsum"}, {"ReduceLogSumExp", "logsumexp"}};
  auto it = reductions.find(op);
  if (it == reductions.end())
    return fail(nodeName(n) + ": not a reduction (an importer bug)");
  if (failed(onlyAttrs(n, {"axes", "keepdims", "noop_with_empty_axes"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  std::string kind = it->second;
  // No axes and noop_with_empty_axes: the input, unreduced.
  FailureOr<int64_t> noop = intAttr(n, "noop_with_empty_axes", 0);
  if (failed(noop))
    return failure();
  if (*noop) {
    FailureOr<std::vector<int64_t>> given = axesOf(*x, /*allByDefault=*/false);
    if (failed(given))
      return failure();
    if (given->empty())
      return define(n, *x);
  }
  FailureOr<std::vector<int64_t>> axes = axesOf(*x, true);
  if (failed(axes))
    return failure();
  FailureOr<int64_t> keepdims = intAttr(n, "keepdims", 1);
  if (failed(keepdims))
    return failure();
  return define(n, reduce(*x, *axes, *keepdims, kind));
}

/// The input and axis of Softmax, LogSoftmax and Hardmax.
static FailureOr<std::pair<Value, int64_t>>
inputAndAxis(Importer &im, const onnx::NodeProto &n) {
  if (failed(im.onlyAttrs(n, {"axis"})))
    return failure();
  FailureOr<Value> x = im.input(n, 0);
  if (failed(x))
    return failure();
  int64_t rank = Importer::shapeOf(*x).size();
  FailureOr<int64_t> axis = im.axisAttr(n, "axis", -1, rank);
  if (failed(axis))
    return failure();
  if (im.opsetBelow(13) && *axis != rank - 1)
    return im.fail(nodeName(n) + ": before opset 13, only the last axis is "
                                 "supported (the 2-D coercion is not)");
  return std::make_pair(*x, *axis);
}

LogicalResult Importer::importSoftmax(const onnx::NodeProto &n) {
  FailureOr<std::pair<Value, int64_t>> xAxis = inputAndAxis(*this, n);
  if (failed(xAxis))
    return failure();
  auto [x, axis] = *xAxis;
  return define(n, softmax(x, axis, n.op_type() == "LogSoftmax"));
}

/// ArgMax and ArgMin: int64 indices, carried as f32.
LogicalResult Importer::importArgExtreme(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"axis", "keepdims", "select_last_index"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  SmallVector<int64_t> shape(shapeOf(*x));
  FailureOr<int64_t> axis = axisAttr(n, "axis", 0, shape.size());
  if (failed(axis))
    return failure();
  FailureOr<int64_t> last = intAttr(n, "select_last_index", 0);
  if (failed(last))
    return failure();
  Value r = argExtreme(*x, *axis, n.op_type() == "ArgMax", *last);
  FailureOr<int64_t> keepdims = intAttr(n, "keepdims", 1);
  if (failed(keepdims))
    return failure();
  if (*keepdims) {
    shape[*axis] = 1;
    r = reshape(r, shape);
  }
  return define(n, r);
}

/// CumSum along a constant axis: y[i] = Σ x[j] over j ≤ i (j < i when
/// exclusive; j ≥ i or j > i when reverse), one linalg.generic with j as a
/// reduction dim (quadratic along the axis).
LogicalResult Importer::importCumSum(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"exclusive", "reverse"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  int64_t rank = xs.size();
  FailureOr<std::vector<float>> axisV = requiredConstant(n, 1);
  if (failed(axisV))
    return failure();
  if (axisV->size() != 1)
    return fail(nodeName(n) + ": axis must be a scalar");
  int64_t axis = int64_t((*axisV)[0]);
  if (axis < -rank || axis >= rank)
    return fail(nodeName(n) + ": axis " + std::to_string(axis) +
                " is out of range");
  if (axis < 0)
    axis += rank;
  FailureOr<int64_t> exclusiveAttr = intAttr(n, "exclusive", 0);
  if (failed(exclusiveAttr))
    return failure();
  FailureOr<int64_t> reverseAttr = intAttr(n, "reverse", 0);
  if (failed(reverseAttr))
    return failure();
  bool exclusive = *exclusiveAttr, reverse = *reverseAttr;
  SmallVector<AffineExpr> in, out;
  for (int64_t d = 0; d < rank; ++d) {
    out.push_back(getAffineDimExpr(d, ctx));
    in.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
  }
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value init = linalg::FillOp::create(
                   b, loc, zero,
                   Value(tensor::EmptyOp::create(b, loc, xs, b.getF32Type())))
                   .getResult(0);
  arith::CmpIPredicate keep =
      reverse
          ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
          : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
  return define(
      n,
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{*x}, ValueRange{init},
          SmallVector<AffineMap>{AffineMap::get(rank + 1, 0, in, ctx),
                                 AffineMap::get(rank + 1, 0, out, ctx)},
          iters,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value j = linalg::IndexOp::create(nb, l, rank);
            Value i = linalg::IndexOp::create(nb, l, axis);
            Value take = arith::CmpIOp::create(nb, l, keep, j, i);
            Value v = arith::SelectOp::create(nb, l, take, a[0],
                                              f32Constant(nb, l, 0));
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::AddFOp::create(nb, l, a[1], v)});
          })
          .getResult(0));
}

LogicalResult Importer::importHardmax(const onnx::NodeProto &n) {
  FailureOr<std::pair<Value, int64_t>> xAxis = inputAndAxis(*this, n);
  if (failed(xAxis))
    return failure();
  auto [x, axis] = *xAxis;
  return define(n, hardmax(x, axis));
}

void mlir::tq::onnx_import::registerReductionOps(OpRegistry &r) {
  for (const char *op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                         "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    r[op] = &Importer::importReduce;
  r["Softmax"] = &Importer::importSoftmax;
  r["LogSoftmax"] = &Importer::importSoftmax;
  r["Hardmax"] = &Importer::importHardmax;
  r["ArgMax"] = &Importer::importArgExtreme;
  r["ArgMin"] = &Importer::importArgExtreme;
  r["CumSum"] = &Importer::importCumSum;
}
