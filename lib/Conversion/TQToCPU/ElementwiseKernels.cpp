//===- ElementwiseKernels.cpp - f32 elementwise ops and row reductions ---===//
//
// See the description of tq-cpu-float-kernels in tq/Conversion/Passes.td.
//
// The all-parallel generics left once the kernels have taken their
// epilogues (a bias add on rows of 32, a residual add, a layer norm's
// steps) become loops over their leading dims around vectors along their
// trailing ones. Given the scalar loops of such an op with a short
// innermost dim, LLVM's loop vectorizer unrolls that dim and vectorizes the
// outer one, with a gather and a scatter per element. The reductions over a
// row get vectors of rows, one per lane; those over the first dim (a bias
// gradient's sums over the batch) or over middle dims (an NHWC global
// pooling, once per image) blocks of columns held in registers.
//
//===----------------------------------------------------------------------===//
#include "FloatKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::floatkernels;

namespace {

/// An elementwise generic on an f32 buffer: loops over its leading dims
/// (shared among the threads), and along the trailing dims that every
/// operand reads contiguously, flattened, vectors of L lanes, the last one
/// masked. Each element gets the body's ops on the same values, in vector
/// form: the same bits as the scalar loops.
struct ElementwiseKernel : FloatKernelPattern<linalg::GenericOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
      return rw.notifyMatchFailure(op, "not on buffers");
    Value out = op.getDpsInits()[0];
    auto type = dyn_cast<MemRefType>(out.getType());
    if (!type || type.getRank() == 0)
      return rw.notifyMatchFailure(op, "no dims to vectorize");
    // A vector of the output is written after all its inputs are read, and
    // the inputs read once per row (loadScalars) before any of its vectors:
    // only an input that is the output itself, element for element, may
    // share its buffer.
    for (OpOperand *in : op.getDpsInputOperands())
      if (isa<MemRefType>(in->get().getType()) &&
          rootOf(in->get()) == rootOf(out) &&
          (in->get() != out || !op.getMatchingIndexingMap(in).isIdentity()))
        return rw.notifyMatchFailure(op, "an input aliases the output");
    // As many trailing dims as every operand reads contiguously; with
    // threads, the leading dim stays a loop to share.
    int64_t rank = type.getRank();
    int64_t most = o.threads > 1 && rank > 1 ? rank - 1 : rank;
    std::optional<VectorEpilogue> epi;
    int64_t dims = most;
    for (; dims >= 1 && !epi; --dims)
      epi = VectorEpilogue::matchElementwise(op, dims);
    if (!epi)
      return rw.notifyMatchFailure(op, "not an elementwise f32 body");
    ++dims;

    ArrayRef<int64_t> shape = type.getShape();
    int64_t outer = rank - dims, extent = 1;
    for (int64_t d = outer; d < rank; ++d)
      extent *= shape[d];
    int64_t L = rowLanes(o.lanes, extent);
    bool readsOut =
        !op.getBody()->getArgument(op.getNumDpsInputs()).use_empty();

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    epi->prepare(b);
    Value dst = out;
    if (dims > 1)
      dst = collapse(b, out, cpu::mergeTrailingDims(rank, outer));
    auto vF32 = VectorType::get({L}, b.getF32Type());
    auto vMask = VectorType::get({L}, b.getI1Type());
    // The scalar inputs of the row being built (loaded at its start).
    SmallVector<Value> scalars;
    // The `n` values at `col` of the row at `ivs`: one vector, masked when
    // `n` is short of L.
    auto vectorAt = [&](ImplicitLocOpBuilder &vb, ValueRange ivs, Value col,
                        int64_t n) {
      SmallVector<Value> at(ivs);
      at.push_back(col);
      Value mask;
      if (n < L)
        mask = vector::CreateMaskOp::create(vb, vMask, ValueRange{idx(vb, n)});
      Value zero = zeros(vb, vF32);
      Value acc = zero;
      if (readsOut)
        acc = mask ? vector::MaskedLoadOp::create(vb, vF32, dst, at, mask, zero)
                         .getResult()
                   : vector::LoadOp::create(vb, vF32, dst, at).getResult();
      storeThroughEpilogue(vb, epi, acc, dst, ivs, col, mask, scalars);
    };
    forEachRowVector(b, shape.take_front(outer), extent, L, o.threads, vectorAt,
                     [&](ImplicitLocOpBuilder &rb, ValueRange ivs) {
                       scalars = epi->loadScalars(rb, ivs);
                     });
    rw.eraseOp(op);
    return success();
  }
};

/// How a reduction kernel reads each input of its generic: along the
/// reduction (`element`), like the output (`alongOutput`: a row's or a
/// column's value), by the dims after the reduced ones alone
/// (`alongColumns`: a bias per channel before an NHWC pooling), or one
/// value for all (`scalar`).
enum class ReductionInput { element, alongOutput, alongColumns, scalar };

/// The output of a reduction generic over the `count` loop dims from
/// `first` (all its reductions), on buffers, with one f32 output read
/// through the other dims in order and a vectorizable body, and how it
/// reads each input; `extent` gets the reduced dims' size. Failure, with
/// the reason, otherwise.
FailureOr<SmallVector<ReductionInput>>
matchReduction(linalg::GenericOp op, unsigned first, unsigned count,
               int64_t &extent, PatternRewriter &rw) {
  int64_t loops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || loops < 2 ||
      count < 1 || first + count > loops ||
      op.getNumReductionLoops() != count ||
      llvm::any_of(ArrayRef(iterators).slice(first, count),
                   [](auto t) { return t != utils::IteratorType::reduction; }))
    return rw.notifyMatchFailure(op, "not a reduction over those dims");
  Value out = op.getDpsInits()[0];
  auto ot = dyn_cast<MemRefType>(out.getType());
  SmallVector<unsigned> kept;
  for (unsigned d = 0; d < loops; ++d)
    if (d < first || d >= first + count)
      kept.push_back(d);
  AffineMap outMap =
      AffineMap::getMultiDimMapWithTargets(loops, kept, op.getContext());
  if (!ot || !ot.hasStaticShape() || !ot.getLayout().isIdentity() ||
      !ot.getElementType().isF32() ||
      op.getMatchingIndexingMap(op.getDpsInitOperand(0)) != outMap ||
      !isVectorizableBody(op.getBody()))
    return rw.notifyMatchFailure(op, "not an f32 reduction");
  extent = 0;
  SmallVector<ReductionInput> kinds;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto t = dyn_cast<MemRefType>(in->get().getType());
    AffineMap m = op.getMatchingIndexingMap(in);
    if (!t) {
      if (!in->get().getType().isIntOrFloat())
        return rw.notifyMatchFailure(op, "an operand of another type");
      kinds.push_back(ReductionInput::scalar);
      continue;
    }
    if (!t.hasStaticShape() || !t.getLayout().isIdentity() ||
        !t.getElementType().isIntOrFloat() ||
        t.getElementType().getIntOrFloatBitWidth() % 8 != 0 ||
        rootOf(in->get()) == rootOf(out))
      return rw.notifyMatchFailure(op, "an operand not read as vectors");
    ArrayRef<int64_t> shape = t.getShape();
    SmallVector<int64_t> rest;
    for (unsigned d : kept)
      rest.push_back(d < shape.size() ? shape[d] : 0);
    if (m.isIdentity() && ArrayRef(rest) == ot.getShape()) {
      extent = 1;
      for (int64_t n : shape.slice(first, count))
        extent *= n;
      kinds.push_back(ReductionInput::element);
    } else if (m == outMap && shape == ot.getShape()) {
      kinds.push_back(ReductionInput::alongOutput);
    } else if (first > 0 && first + count < loops &&
               m == AffineMap::getMultiDimMapWithTargets(
                        loops,
                        llvm::to_vector(
                            llvm::seq<unsigned>(first + count, loops)),
                        op.getContext()) &&
               shape == ot.getShape().drop_front(first)) {
      kinds.push_back(ReductionInput::alongColumns);
    } else if (m.getNumResults() == 0) {
      kinds.push_back(ReductionInput::scalar);
    } else {
      return rw.notifyMatchFailure(op, "an operand read otherwise");
    }
  }
  if (extent == 0)
    return rw.notifyMatchFailure(op, "no operand along the reduction");
  return kinds;
}

/// A reduction over the last dim of an f32 buffer into its leading dims
/// (layer norm's means, softmax's maximum and sum, an NCHW global average
/// pooling): L rows at a time, one per lane. Each step loads the rows' next
/// L elements (L row loads, transposed in registers) and applies the body
/// to the L columns one after the other, so that each row's reduction
/// keeps its order: the same bits as the scalar loops. Rows past the last
/// repeat it and are not stored.
struct RowReductionKernel : FloatKernelPattern<linalg::GenericOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    int64_t P = op.getNumLoops() - 1, K;
    FailureOr<SmallVector<ReductionInput>> matched =
        matchReduction(op, P, 1, K, rw);
    if (failed(matched))
      return failure();
    SmallVector<ReductionInput> kinds = std::move(*matched);
    Value out = op.getDpsInits()[0];
    auto ot = cast<MemRefType>(out.getType());
    int64_t R = ot.getNumElements(), L = o.lanes;

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    auto flat = [&](Value v, bool withK) {
      int64_t rank = cast<MemRefType>(v.getType()).getRank();
      if (rank == 1 + withK)
        return v;
      SmallVector<ReassociationIndices> groups(1);
      for (int64_t d = 0; d < P; ++d)
        groups[0].push_back(d);
      if (withK)
        groups.push_back({P});
      return collapse(b, v, groups);
    };
    SmallVector<Value> views;
    for (auto [in, kind] : llvm::zip(op.getDpsInputs(), kinds))
      views.push_back(kind == ReductionInput::scalar
                          ? in
                          : flat(in, kind == ReductionInput::element));
    Value dst = flat(out, false);
    auto vF32 = VectorType::get({L}, b.getF32Type());
    auto vMask = VectorType::get({L}, b.getI1Type());
    Block *body = op.getBody();
    unsigned numInputs = op.getNumDpsInputs();

    // Rows [r0, r0 + rows) of the output.
    auto block = [&](ImplicitLocOpBuilder &kb, Value r0, int64_t rows) {
      Value rowMask = rows == L ? Value()
                                : vector::CreateMaskOp::create(
                                      kb, vMask, ValueRange{idx(kb, rows)});
      auto loadRows = [&](Value v, Type et) -> Value {
        auto vt = VectorType::get({L}, et);
        if (!rowMask)
          return vector::LoadOp::create(kb, vt, v, ValueRange{r0});
        Value pass = arith::ConstantOp::create(kb, vt, kb.getZeroAttr(vt));
        return vector::MaskedLoadOp::create(kb, vt, v, ValueRange{r0}, rowMask,
                                            pass);
      };
      IRMapping fixed;
      for (auto [i, view, kind] : llvm::enumerate(views, kinds)) {
        Value arg = body->getArgument(i);
        if (kind == ReductionInput::alongOutput) {
          fixed.map(arg, loadRows(view, arg.getType()));
        } else if (kind == ReductionInput::scalar) {
          Value v = view;
          if (isa<MemRefType>(v.getType()))
            v = memref::LoadOp::create(kb, v, ValueRange{});
          fixed.map(arg, vector::BroadcastOp::create(
                             kb, VectorType::get({L}, arg.getType()), v));
        }
      }
      // Columns [k0, k0 + cols) of the rows, applied to `acc` in order.
      auto step = [&](ImplicitLocOpBuilder &sb, Value k0, int64_t cols,
                      Value acc) {
        Value colMask = cols == L ? Value()
                                  : vector::CreateMaskOp::create(
                                        sb, vMask, ValueRange{idx(sb, cols)});
        SmallVector<SmallVector<Value>> columns(views.size());
        for (auto [i, view, kind] : llvm::enumerate(views, kinds)) {
          if (kind != ReductionInput::element)
            continue;
          Type et = body->getArgument(i).getType();
          auto vt = VectorType::get({L}, et);
          SmallVector<Value> rowsIn;
          for (int64_t r = 0; r < L; ++r) {
            Value row =
                arith::AddIOp::create(sb, r0, idx(sb, std::min(r, rows - 1)));
            rowsIn.push_back(
                colMask
                    ? vector::MaskedLoadOp::create(
                          sb, vt, view, ValueRange{row, k0}, colMask,
                          arith::ConstantOp::create(sb, vt, sb.getZeroAttr(vt)))
                          .getResult()
                    : vector::LoadOp::create(sb, vt, view, ValueRange{row, k0})
                          .getResult());
          }
          columns[i] = transposeBlock(sb, rowsIn);
        }
        for (int64_t j = 0; j < cols; ++j) {
          IRMapping map = fixed;
          for (auto [i, kind] : llvm::enumerate(kinds))
            if (kind == ReductionInput::element)
              map.map(body->getArgument(i), columns[i][j]);
          map.map(body->getArgument(numInputs), acc);
          acc = applyBodyToVectors(sb, body, map, vF32);
        }
        return acc;
      };
      Value acc = loadRows(dst, b.getF32Type());
      int64_t whole = K / L * L;
      if (whole > 0) {
        auto loop = scf::ForOp::create(
            kb, idx(kb, 0), idx(kb, whole), idx(kb, L), ValueRange{acc},
            [&](OpBuilder &lb, Location l, Value k0, ValueRange it) {
              ImplicitLocOpBuilder sb(l, lb);
              scf::YieldOp::create(sb, step(sb, k0, L, it[0]));
            });
        acc = loop.getResult(0);
      }
      if (whole < K)
        acc = step(kb, idx(kb, whole), K - whole, acc);
      if (rowMask)
        vector::MaskedStoreOp::create(kb, dst, ValueRange{r0}, rowMask, acc);
      else
        vector::StoreOp::create(kb, acc, dst, ValueRange{r0});
    };
    int64_t wholeRows = R / L;
    if (wholeRows > 0)
      cpu::buildIndependentLoops(
          b, b.getLoc(), ValueRange{idx(b, 0)}, ValueRange{idx(b, wholeRows)},
          ValueRange{idx(b, 1)}, o.threads,
          [&](OpBuilder &nb, Location l, ValueRange iv) {
            ImplicitLocOpBuilder kb(l, nb);
            block(kb, arith::MulIOp::create(kb, iv[0], idx(kb, L)), L);
          });
    if (R % L != 0)
      block(b, idx(b, wholeRows * L), R % L);
    rw.eraseOp(op);
    return success();
  }
};

/// A reduction over leading dims of an f32 buffer into the others (a bias
/// gradient: the sums over the batch), or over middle dims, once per index
/// of the dims before them (an NHWC global average pooling: the sums over
/// each image's pixels): blocks of up to kMostColumnVectors vectors of
/// columns (as the registers allow), each held in registers while the rows
/// go by in order, so that each column's reduction keeps its order (the
/// same bits as the scalar loops) and the output is read and written once,
/// not once per row. The blocks (and the leading dims) are shared among the
/// threads.
struct ColumnReductionKernel : FloatKernelPattern<linalg::GenericOp> {
  using FloatKernelPattern::FloatKernelPattern;
  static constexpr int64_t kMostColumnVectors = 8;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    // The reduced dims: a run followed by at least one kept dim.
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    int64_t first = llvm::find(iterators, utils::IteratorType::reduction) -
                    iterators.begin();
    int64_t count = op.getNumReductionLoops();
    if (first + count >= int64_t(iterators.size()))
      return rw.notifyMatchFailure(op, "no column after the reduction");
    int64_t N;
    FailureOr<SmallVector<ReductionInput>> matched =
        matchReduction(op, first, count, N, rw);
    if (failed(matched))
      return failure();
    SmallVector<ReductionInput> kinds = std::move(*matched);
    Value out = op.getDpsInits()[0];
    auto ot = cast<MemRefType>(out.getType());
    if (ot.getNumElements() == 0)
      return rw.notifyMatchFailure(op, "an empty output");
    // B batches (the dims before the reduction) of M columns.
    int64_t B = 1, M, L = o.lanes;
    for (int64_t n : ot.getShape().take_front(first))
      B *= n;
    M = ot.getNumElements() / B;

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    // Element operands as [B ×] N × M, the others as [B ×] M.
    auto flat = [&](Value v, bool rows) {
      int64_t rank = cast<MemRefType>(v.getType()).getRank();
      SmallVector<ReassociationIndices> groups;
      int64_t d = 0;
      auto group = [&](int64_t dims) {
        groups.emplace_back();
        for (int64_t end = d + dims; d < end; ++d)
          groups.back().push_back(d);
      };
      if (first > 0)
        group(first);
      if (rows)
        group(count);
      group(rank - d);
      return int64_t(groups.size()) == rank ? v : collapse(b, v, groups);
    };
    SmallVector<Value> views;
    for (auto [in, kind] : llvm::zip(op.getDpsInputs(), kinds)) {
      int64_t rank = isa<MemRefType>(in.getType())
                         ? cast<MemRefType>(in.getType()).getRank()
                         : 0;
      if (kind == ReductionInput::scalar)
        views.push_back(in);
      else if (kind == ReductionInput::alongColumns)
        views.push_back(
            rank == 1 ? in : collapse(b, in, cpu::mergeTrailingDims(rank, 0)));
      else
        views.push_back(flat(in, kind == ReductionInput::element));
    }
    Value dst = flat(out, false);
    auto vF32 = VectorType::get({L}, b.getF32Type());
    Block *body = op.getBody();
    unsigned numInputs = op.getNumDpsInputs();

    // Columns from j0 of batch `batch` (null without): `vectors` vectors,
    // the last of `lastLanes` lanes.
    auto block = [&](ImplicitLocOpBuilder &kb, Value batch, Value j0,
                     int64_t vectors, int64_t lastLanes) {
      // The index of a column vector in a [B ×] M view, or of a row's in
      // an element operand's [B ×] N × M view.
      auto column = [&](Value j) {
        return batch ? SmallVector<Value>{batch, j} : SmallVector<Value>{j};
      };
      auto element = [&](Value row, Value j) {
        return batch ? SmallVector<Value>{batch, row, j}
                     : SmallVector<Value>{row, j};
      };
      SmallVector<Value> at, masks;
      for (int64_t v = 0; v < vectors; ++v) {
        at.push_back(arith::AddIOp::create(kb, j0, idx(kb, v * L)));
        masks.push_back(v == vectors - 1 && lastLanes < L
                            ? vector::CreateMaskOp::create(
                                  kb, VectorType::get({L}, kb.getI1Type()),
                                  ValueRange{idx(kb, lastLanes)})
                                  .getResult()
                            : Value());
      }
      auto load = [&](ImplicitLocOpBuilder &lb, Value view, ValueRange index,
                      Type et, Value mask) -> Value {
        auto vt = VectorType::get({L}, et);
        if (!mask)
          return vector::LoadOp::create(lb, vt, view, index);
        Value pass = arith::ConstantOp::create(lb, vt, lb.getZeroAttr(vt));
        return vector::MaskedLoadOp::create(lb, vt, view, index, mask, pass);
      };
      SmallVector<IRMapping> fixed(vectors);
      SmallVector<Value> init;
      for (int64_t v = 0; v < vectors; ++v) {
        for (auto [i, view, kind] : llvm::enumerate(views, kinds)) {
          Value arg = body->getArgument(i);
          if (kind == ReductionInput::alongOutput) {
            fixed[v].map(
                arg, load(kb, view, column(at[v]), arg.getType(), masks[v]));
          } else if (kind == ReductionInput::alongColumns) {
            fixed[v].map(arg, load(kb, view, at[v], arg.getType(), masks[v]));
          } else if (kind == ReductionInput::scalar) {
            Value s = view;
            if (isa<MemRefType>(s.getType()))
              s = memref::LoadOp::create(kb, s, ValueRange{});
            fixed[v].map(arg, vector::BroadcastOp::create(
                                  kb, VectorType::get({L}, arg.getType()), s));
          }
        }
        init.push_back(load(kb, dst, column(at[v]), kb.getF32Type(), masks[v]));
      }
      auto rows = scf::ForOp::create(
          kb, idx(kb, 0), idx(kb, N), idx(kb, 1), init,
          [&](OpBuilder &nb, Location l, Value row, ValueRange acc) {
            ImplicitLocOpBuilder rb(l, nb);
            SmallVector<Value> next;
            for (int64_t v = 0; v < vectors; ++v) {
              IRMapping map = fixed[v];
              for (auto [i, view, kind] : llvm::enumerate(views, kinds))
                if (kind == ReductionInput::element)
                  map.map(body->getArgument(i),
                          load(rb, view, element(row, at[v]),
                               body->getArgument(i).getType(), masks[v]));
              map.map(body->getArgument(numInputs), acc[v]);
              next.push_back(applyBodyToVectors(rb, body, map, vF32));
            }
            scf::YieldOp::create(rb, next);
          });
      for (int64_t v = 0; v < vectors; ++v) {
        Value r = rows.getResult(v);
        if (masks[v])
          vector::MaskedStoreOp::create(kb, dst, column(at[v]), masks[v], r);
        else
          vector::StoreOp::create(kb, r, dst, column(at[v]));
      }
    };
    // Each vector of the block holds its accumulator and, live over the
    // rows, one vector per input read along the output or the columns.
    int64_t perVector = 1 + llvm::count(kinds, ReductionInput::alongOutput) +
                        llvm::count(kinds, ReductionInput::alongColumns);
    int64_t vectors = std::clamp<int64_t>((o.registers - 2) / perVector, 1,
                                          kMostColumnVectors);
    int64_t span = vectors * L, whole = M / span, rest = M - whole * span;
    // Per batch (none without leading dims): the whole blocks, then the
    // rest of the columns.
    auto columns = [&](ImplicitLocOpBuilder &cb, Value batch, int64_t threads) {
      if (whole > 0)
        cpu::buildIndependentLoops(
            cb, cb.getLoc(), ValueRange{idx(cb, 0)}, ValueRange{idx(cb, whole)},
            ValueRange{idx(cb, 1)}, threads,
            [&](OpBuilder &nb, Location l, ValueRange iv) {
              ImplicitLocOpBuilder kb(l, nb);
              block(kb, batch, arith::MulIOp::create(kb, iv[0], idx(kb, span)),
                    vectors, L);
            });
      if (rest > 0)
        block(cb, batch, idx(cb, whole * span), llvm::divideCeil(rest, L),
              rest - (llvm::divideCeil(rest, L) - 1) * L);
    };
    if (first == 0)
      columns(b, Value(), o.threads);
    else
      cpu::buildIndependentLoops(b, b.getLoc(), ValueRange{idx(b, 0)},
                                 ValueRange{idx(b, B)}, ValueRange{idx(b, 1)},
                                 o.threads,
                                 [&](OpBuilder &nb, Location l, ValueRange iv) {
                                   ImplicitLocOpBuilder kb(l, nb);
                                   columns(kb, iv[0], 1);
                                 });
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tq::floatkernels::populateElementwiseKernelPatterns(
    RewritePatternSet &patterns, KernelOptions o) {
  patterns.add<ElementwiseKernel, RowReductionKernel, ColumnReductionKernel>(
      patterns.getContext(), o);
}
