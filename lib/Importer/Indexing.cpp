//===- Indexing.cpp - Gathers, broadcasts and rearrangements --------------===//
//
// Gather (run-time indices, or many constant ones) and GatherElements as
// one linalg.generic over the output that reads each index and extracts
// the element, a few constant indices as slices; Expand and Tile as broadcasts;
// Trilu as a mask on the last two dims; DepthToSpace and SpaceToDepth as a
// reshape, a transpose and a reshape.
//
// Indices computed at run time are carried as f32 like other integers.
// Negative indices count from the end; an index still out of range reads
// the nearest element (ONNX leaves it undefined; reading memory outside
// the tensor is not an option).
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tq::onnx_import;

static Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// The index `v` (an f32 holding an integer) into a dim of `size`, as an
/// `index`: negative values count from the end, then clamped into range.
static Value toIndex(OpBuilder &b, Location l, Value v, int64_t size) {
  Value i = arith::FPToSIOp::create(b, l, b.getI64Type(), v);
  Value zero = arith::ConstantIntOp::create(b, l, 0, 64);
  Value n = arith::ConstantIntOp::create(b, l, size, 64);
  Value negative =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
  i = arith::SelectOp::create(b, l, negative, arith::AddIOp::create(b, l, i, n),
                              i);
  i = arith::MaxSIOp::create(b, l, i, zero);
  i = arith::MinSIOp::create(b, l, i,
                             arith::ConstantIntOp::create(b, l, size - 1, 64));
  return arith::IndexCastOp::create(b, l, b.getIndexType(), i);
}

/// out[o...] = x[at(o..., index)] with `index` = idx[idxMap(o...)]: the
/// shared body of Gather and GatherElements.
static Value gatherGeneric(
    OpBuilder &b, Location loc, Value x, Value idx, ArrayRef<int64_t> outShape,
    AffineMap idxMap,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value)> at) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = outShape.size();
  Value init = tensor::EmptyOp::create(b, loc, outShape, elementOf(x));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{idx},
             ValueRange{init},
             SmallVector<AffineMap>{
                 idxMap, AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value v =
                   tensor::ExtractOp::create(nb, l, x, at(nb, l, args[0]));
               linalg::YieldOp::create(nb, l, v);
             })
      .getResult(0);
}

/// x's slices at constant `indices` along `axis`, side by side, with
/// the indices' shape in place of that dim.
Value Importer::gatherSlices(Value x, ArrayRef<float> indices, int64_t axis,
                             ArrayRef<int64_t> indexShape) {
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  SmallVector<int64_t> picked(xs);
  picked[axis] = indices.size();
  Value out = tensor::EmptyOp::create(b, loc, picked, elementOf(x));
  SmallVector<int64_t> sizes(xs), strides(rank, 1);
  sizes[axis] = 1;
  for (auto [k, f] : llvm::enumerate(indices)) {
    int64_t i = int64_t(f) < 0 ? int64_t(f) + xs[axis] : int64_t(f);
    SmallVector<int64_t> from(rank, 0), to(rank, 0);
    from[axis] = i;
    to[axis] = k;
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sizes, elementOf(x)), x, ValueRange{},
        ValueRange{}, ValueRange{}, from, sizes, strides);
    out = tensor::InsertSliceOp::create(b, loc, slice, out, ValueRange{},
                                        ValueRange{}, ValueRange{}, to, sizes,
                                        strides);
  }
  SmallVector<int64_t> shape(xs.take_front(axis));
  shape.append(indexShape.begin(), indexShape.end());
  shape.append(xs.begin() + axis + 1, xs.end());
  return reshape(out, shape);
}

LogicalResult Importer::importGather(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"axis"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> idx = input(n, 1);
  if (failed(idx))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x), is = shapeOf(*idx);
  int64_t rank = xs.size(), q = is.size();
  FailureOr<int64_t> axis = axisAttr(n, "axis", 0, rank);
  if (failed(axis))
    return failure();
  if (!isInteger(n.input(1)))
    return fail(nodeName(n) + ": the indices must be integers");
  if (initializers.count(n.input(1))) {
    FailureOr<std::vector<float>> values = requiredConstant(n, 1);
    if (failed(values))
      return failure();
    for (float f : *values)
      if (int64_t(f) < -xs[*axis] || int64_t(f) >= xs[*axis])
        return fail(nodeName(n) + ": index " + std::to_string(int64_t(f)) +
                    " is out of range for a dimension of " +
                    std::to_string(xs[*axis]));
    // A few constant indices (channels, shape entries): slices, which
    // fold when the data is constant too.
    if (values->size() <= 16)
      return define(n, gatherSlices(*x, *values, *axis, is));
  }
  // out[pre, j..., post] = x[pre, idx[j...], post].
  SmallVector<int64_t> shape(xs.take_front(*axis));
  shape.append(is.begin(), is.end());
  shape.append(xs.begin() + *axis + 1, xs.end());
  int64_t outRank = shape.size();
  SmallVector<AffineExpr> idxDims;
  for (int64_t d = 0; d < q; ++d)
    idxDims.push_back(getAffineDimExpr(*axis + d, ctx));
  int64_t size = xs[*axis];
  return define(
      n, gatherGeneric(b, loc, *x, *idx, shape,
                       AffineMap::get(outRank, 0, idxDims, ctx),
                       [&](OpBuilder &nb, Location l, Value v) {
                         SmallVector<Value> at;
                         for (int64_t d = 0; d < *axis; ++d)
                           at.push_back(linalg::IndexOp::create(nb, l, d));
                         at.push_back(toIndex(nb, l, v, size));
                         for (int64_t d = *axis + q; d < outRank; ++d)
                           at.push_back(linalg::IndexOp::create(nb, l, d));
                         return at;
                       }));
}

LogicalResult Importer::importGatherElements(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"axis"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  FailureOr<Value> idx = input(n, 1);
  if (failed(idx))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x), is = shapeOf(*idx);
  int64_t rank = xs.size();
  FailureOr<int64_t> axis = axisAttr(n, "axis", 0, rank);
  if (failed(axis))
    return failure();
  if (!isInteger(n.input(1)))
    return fail(nodeName(n) + ": the indices must be integers");
  if (int64_t(is.size()) != rank)
    return fail(nodeName(n) + ": the indices must have the data's rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > xs[d])
      return fail(nodeName(n) + ": the indices' dim " + std::to_string(d) +
                  " is larger than the data's");
  int64_t size = xs[*axis];
  return define(
      n, gatherGeneric(
             b, loc, *x, *idx, is, AffineMap::getMultiDimIdentityMap(rank, ctx),
             [&](OpBuilder &nb, Location l, Value v) {
               SmallVector<Value> at;
               for (int64_t d = 0; d < rank; ++d)
                 at.push_back(d == *axis
                                  ? toIndex(nb, l, v, size)
                                  : Value(linalg::IndexOp::create(nb, l, d)));
               return at;
             }));
}

/// `x` broadcast (numpy rules) to `shape`, any element type.
FailureOr<Value> Importer::broadcastTo(const onnx::NodeProto &n, Value x,
                                       ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = std::max(xs.size(), shape.size());
  SmallVector<int64_t> out(rank, 1);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t a = i - (rank - int64_t(xs.size())), c = i - (rank - shape.size());
    int64_t da = a >= 0 ? xs[a] : 1, dc = c >= 0 ? shape[c] : 1;
    if (da != dc && da != 1 && dc != 1)
      return fail(nodeName(n) + ": the shapes cannot be broadcast together");
    out[i] = da == 1 ? dc : da;
  }
  if (failed(checkShape(out, nodeName(n))))
    return failure();
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t d = rank - xs.size() + i;
    exprs.push_back(xs[i] == 1 && out[d] != 1 ? getAffineConstantExpr(0, ctx)
                                              : getAffineDimExpr(d, ctx));
  }
  Value init = tensor::EmptyOp::create(b, loc, out, elementOf(x));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
             SmallVector<AffineMap>{
                 AffineMap::get(rank, 0, exprs, ctx),
                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

static SmallVector<int64_t> asInts(ArrayRef<float> v) {
  SmallVector<int64_t> r;
  for (float f : v)
    r.push_back(int64_t(f));
  return r;
}

LogicalResult Importer::importExpand(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  FailureOr<std::vector<float>> shapeValues = requiredConstant(n, 1);
  if (failed(shapeValues))
    return failure();
  SmallVector<int64_t> shape = asInts(*shapeValues);
  for (int64_t d : shape)
    if (d < 1)
      return fail(nodeName(n) + ": the shape must be positive");
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  return define(n, broadcastTo(n, *x, shape));
}

/// Tile: x [d0, d1, ...] read as [1, d0, 1, d1, ...], broadcast to
/// [r0, d0, r1, d1, ...] and collapsed to [r0·d0, r1·d1, ...].
LogicalResult Importer::importTile(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  FailureOr<std::vector<float>> repeatValues = requiredConstant(n, 1);
  if (failed(repeatValues))
    return failure();
  SmallVector<int64_t> repeats = asInts(*repeatValues);
  if (repeats.size() != xs.size())
    return fail(nodeName(n) + ": repeats must have one value per dim");
  SmallVector<int64_t> pairs, spread;
  SmallVector<ReassociationIndices> groups;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (repeats[d] < 1)
      return fail(nodeName(n) + ": repeats must be positive");
    spread.append({1, xs[d]});
    pairs.append({repeats[d], xs[d]});
    groups.push_back({int64_t(2 * d), int64_t(2 * d + 1)});
  }
  if (xs.empty())
    return define(n, *x);
  FailureOr<Value> wide = broadcastTo(
      n,
      tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(spread, elementOf(*x)), *x, groups),
      pairs);
  if (failed(wide))
    return failure();
  return define(n, tensor::CollapseShapeOp::create(b, loc, *wide, groups));
}

/// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of the
/// last two dims, zeros elsewhere.
LogicalResult Importer::importTrilu(const onnx::NodeProto &n) {
  if (failed(onlyAttrs(n, {"upper"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  if (xs.size() < 2)
    return fail(nodeName(n) + ": the input must have at least 2 dims");
  FailureOr<int64_t> upper = intAttr(n, "upper", 1);
  if (failed(upper))
    return failure();
  FailureOr<std::optional<std::vector<float>>> kv = constantInput(n, 1);
  if (failed(kv))
    return failure();
  if (*kv && (*kv)->size() != 1)
    return fail(nodeName(n) + ": k must be a scalar");
  int64_t k = *kv ? int64_t((**kv)[0]) : 0, rank = xs.size();
  return define(
      n, elementwise(
             {*x}, n,
             [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
               Value i = linalg::IndexOp::create(nb, l, rank - 2);
               Value j = linalg::IndexOp::create(nb, l, rank - 1);
               Value diff = arith::SubIOp::create(nb, l, j, i);
               Value kc = arith::ConstantIndexOp::create(nb, l, k);
               Value keep =
                   arith::CmpIOp::create(nb, l,
                                         *upper ? arith::CmpIPredicate::sge
                                                : arith::CmpIPredicate::sle,
                                         diff, kc);
               Value zero = arith::ConstantOp::create(
                   nb, l, nb.getZeroAttr(v[0].getType()));
               return arith::SelectOp::create(nb, l, keep, v[0], zero);
             },
             elementOf(*x), /*anyInputElement=*/true));
}

/// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW.
LogicalResult Importer::importDepthSpace(const onnx::NodeProto &n) {
  bool toSpace = n.op_type() == "DepthToSpace";
  if (failed(onlyAttrs(n, toSpace ? ArrayRef<const char *>{"blocksize", "mode"}
                                  : ArrayRef<const char *>{"blocksize"})))
    return failure();
  FailureOr<Value> x = input(n, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  FailureOr<int64_t> blocksize = intAttr(n, "blocksize", 0);
  if (failed(blocksize))
    return failure();
  int64_t bs = *blocksize;
  if (xs.size() != 4 || bs < 1 || bs > kMaxDim)
    return fail(nodeName(n) + ": needs an NCHW input and a blocksize from 1 to "
                              "2^31-1");
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  if (!toSpace) {
    if (H % bs || W % bs)
      return fail(nodeName(n) + ": H and W must be multiples of the blocksize");
    Value t = transpose(reshape(*x, {N, C, H / bs, bs, W / bs, bs}),
                        {0, 3, 5, 1, 2, 4});
    return define(n, reshape(t, {N, C * bs * bs, H / bs, W / bs}));
  }
  if (C % (bs * bs))
    return fail(nodeName(n) + ": C must be a multiple of blocksize²");
  std::string mode = "DCR";
  FailureOr<const onnx::AttributeProto *> a =
      attr(n, "mode", onnx::AttributeProto::STRING);
  if (failed(a))
    return failure();
  if (*a)
    mode = (*a)->s();
  if (mode != "DCR" && mode != "CRD")
    return fail(nodeName(n) + ": mode '" + mode + "' is not DCR or CRD");
  int64_t c = C / (bs * bs);
  Value t =
      mode == "DCR"
          ? transpose(reshape(*x, {N, bs, bs, c, H, W}), {0, 3, 4, 1, 5, 2})
          : transpose(reshape(*x, {N, c, bs, bs, H, W}), {0, 1, 4, 2, 5, 3});
  return define(n, reshape(t, {N, c, H * bs, W * bs}));
}

void mlir::tq::onnx_import::registerIndexingOps(OpRegistry &r) {
  r["Gather"] = &Importer::importGather;
  r["GatherElements"] = &Importer::importGatherElements;
  r["Expand"] = &Importer::importExpand;
  r["Tile"] = &Importer::importTile;
  r["Trilu"] = &Importer::importTrilu;
  r["DepthToSpace"] = &Importer::importDepthSpace;
  r["SpaceToDepth"] = &Importer::importDepthSpace;
}
