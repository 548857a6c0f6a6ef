//===- FloatKernels.cpp - register-blocked f32 matmuls and convolutions ---===//
//
// See the description of tq-cpu-float-kernels in tq/Conversion/Passes.td.
//
// C[i, j] += Σ_k A[i, k] · B[k, j], each output's sum taken in increasing k,
// multiply then add (the order and the roundings of the linalg op's loops):
//
// - the columns of C are split into panels of NR = 2 vectors of L lanes,
//   shared among the threads;
// - MR rows × NR columns of C are held in MR·2 vector registers for all of
//   K: per k, two vectors of B's row k and one broadcast A value per row;
// - rows past M read row M-1 and are not stored; the last panel's columns
//   past N are masked.
//
// A convolution (NCHW, FCHW) is one such product per image: A the filter
// as F × (C·R·S), B the image's columns (im2col, or the image itself for a
// 1×1 convolution with unit strides), C the image's output as F × (P·Q).
//
//===----------------------------------------------------------------------===//
#include "FloatKernels.h"
#include "Epilogue.h"
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_TQCPUFLOATKERNELS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::floatkernels;

// The helpers that the window kernels (WindowKernels.cpp) share.
namespace mlir::tq::floatkernels {

/// Whether `v` is a static f32 memref of `rank` whose last dim has unit
/// stride.
bool isKernelOperand(Value v, int64_t rank) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getElementType().isF32() ||
      t.getRank() != rank)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1 && llvm::none_of(strides, ShapedType::isDynamic);
}

FailureOr<WindowOperands> matchWindowOperands(linalg::LinalgOp op, int64_t rank,
                                              PatternRewriter &rw,
                                              int64_t filterRank) {
  if (!op.hasPureBufferSemantics())
    return rw.notifyMatchFailure(op, "not on buffers");
  WindowOperands v;
  v.x = op.getDpsInputs()[0];
  v.w = op.getDpsInputs()[1];
  v.y = op.getDpsInits()[0];
  if (!isKernelOperand(v.x, rank) ||
      !isKernelOperand(v.w, filterRank ? filterRank : rank) ||
      !isKernelOperand(v.y, rank))
    return rw.notifyMatchFailure(op, "operands are not static f32 views");
  v.xs = cast<MemRefType>(v.x.getType()).getShape();
  v.ws = cast<MemRefType>(v.w.getType()).getShape();
  v.ys = cast<MemRefType>(v.y.getType()).getShape();
  return v;
}

Value idx(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// An f32 vector of zeros.
Value zeros(ImplicitLocOpBuilder &b, VectorType t) {
  return arith::ConstantOp::create(b, t,
                                   DenseElementsAttr::get(t, APFloat(0.0f)));
}

Value tailMask(ImplicitLocOpBuilder &b, int64_t L, int64_t first,
               int64_t extent) {
  if (first + L <= extent)
    return Value();
  return vector::ConstantMaskOp::create(b, VectorType::get({L}, b.getI1Type()),
                                        ArrayRef<int64_t>{extent - first});
}

Value loadF32(ImplicitLocOpBuilder &b, VectorType t, Value from, ValueRange at,
              Value mask) {
  if (mask)
    return vector::MaskedLoadOp::create(b, t, from, at, mask, zeros(b, t));
  return vector::LoadOp::create(b, t, from, at);
}

/// A 2-D view of `v` with its dims grouped as `groups`.
Value collapse(ImplicitLocOpBuilder &b, Value v,
               ArrayRef<ReassociationIndices> groups) {
  return memref::CollapseShapeOp::create(b, v, groups).getResult();
}

/// `v[i]` of a memref with a leading dim, rank-reduced, or with that dim
/// kept (of size 1) with `keepDim`.
Value slice(ImplicitLocOpBuilder &b, Value v, Value i, bool keepDim) {
  auto t = cast<MemRefType>(v.getType());
  int64_t rank = t.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  offsets[0] = i;
  sizes.push_back(b.getIndexAttr(1));
  for (int64_t d : t.getShape().drop_front())
    sizes.push_back(b.getIndexAttr(d));
  if (keepDim)
    return memref::SubViewOp::create(b, v, offsets, sizes, strides).getResult();
  auto type = memref::SubViewOp::inferRankReducedResultType(
      t.getShape().drop_front(), t, offsets, sizes, strides);
  return memref::SubViewOp::create(b, cast<MemRefType>(type), v, offsets, sizes,
                                   strides)
      .getResult();
}

/// The value of a `linalg.fill` of `c` just before `op` (past allocations
/// and deallocations), which the kernel
/// then does itself (erasing the fill): the output is not written twice.
Value takeFill(Operation *op, Value c, PatternRewriter &rw) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(previousPastAllocations(op));
  if (!fill || !fill.hasPureBufferSemantics() || fill.getDpsInits()[0] != c ||
      !fill.getInputs()[0].getType().isF32())
    return Value();
  Value v = fill.getInputs()[0];
  rw.eraseOp(fill);
  return v;
}

/// The elementwise generic after `op` that its kernel applies as it stores
/// `out` (vectors along its trailing `vectorDims` dims), with its views
/// built at `b`, whose location then names both layers; none if there is
/// no such generic.
std::optional<VectorEpilogue> takeEpilogue(Operation *op, Value out,
                                           int64_t vectorDims,
                                           ImplicitLocOpBuilder &b) {
  std::optional<VectorEpilogue> epi =
      VectorEpilogue::match(op, out, vectorDims);
  if (epi) {
    b.setLoc(epi->fusedLoc(op));
    epi->prepare(b);
  }
  return epi;
}

void storeThroughEpilogue(ImplicitLocOpBuilder &b,
                          const std::optional<VectorEpilogue> &epi, Value v,
                          Value to, ValueRange outer, Value col, Value mask,
                          ArrayRef<Value> scalars) {
  if (epi)
    v = epi->apply(b, v, outer, col, mask, scalars);
  SmallVector<Value> at(outer);
  at.push_back(col);
  if (mask)
    vector::MaskedStoreOp::create(b, to, at, mask, v);
  else
    vector::StoreOp::create(b, v, to, at);
}

/// Erases a kernel's op and the epilogue it took.
void eraseWithEpilogue(Operation *op, const std::optional<VectorEpilogue> &epi,
                       PatternRewriter &rw) {
  rw.eraseOp(op);
  if (epi)
    rw.eraseOp(epi->op());
}

void forEachRowVector(ImplicitLocOpBuilder &b, ArrayRef<int64_t> outer,
                      int64_t extent, int64_t L, int64_t threads,
                      RowVectorBody body, RowBody atRow) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t size : outer) {
    lbs.push_back(idx(b, 0));
    ubs.push_back(idx(b, size));
    steps.push_back(idx(b, 1));
  }
  cpu::buildIndependentLoops(
      b, b.getLoc(), lbs, ubs, steps, threads,
      [&](OpBuilder &nb, Location l, ValueRange ivs) {
        ImplicitLocOpBuilder rb(l, nb);
        if (atRow)
          atRow(rb, ivs);
        int64_t whole = extent / L * L;
        if (whole > 0)
          scf::buildLoopNest(rb, l, ValueRange{idx(rb, 0)},
                             ValueRange{idx(rb, whole)}, ValueRange{idx(rb, L)},
                             [&](OpBuilder &cb, Location cl, ValueRange c) {
                               ImplicitLocOpBuilder vb(cl, cb);
                               body(vb, ivs, c[0], L);
                             });
        if (whole < extent)
          body(rb, ivs, idx(rb, whole), extent - whole);
      });
}

int64_t rowLanes(int64_t lanes, int64_t Q) {
  return std::min<int64_t>(lanes, std::max<int64_t>(4, llvm::PowerOf2Ceil(Q)));
}

bool usedBetween(Value v, Operation *from, Operation *to) {
  Block *block = from->getBlock();
  for (Operation *user : v.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user))
      if (usedBetween(view->getResult(0), from, to))
        return true;
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top || (from->isBeforeInBlock(top) && top->isBeforeInBlock(to)))
      return true;
  }
  return false;
}

KernelOptions kernelOptions(const CPUCodegenOptions &options) {
  KernelOptions o;
  o.lanes = options.target == CPUTarget::avx512 ? 16 : 8;
  o.registers = options.target == CPUTarget::avx512 ? 32 : 16;
  o.threads = options.threads;
  o.fma = options.target != CPUTarget::generic;
  o.x86 = options.target != CPUTarget::generic;
  return o;
}

Value multiplyAdd(ImplicitLocOpBuilder &b, Value acc, Value x, Value y,
                  bool fma) {
  if (fma)
    return math::FmaOp::create(b, x, y, acc);
  return arith::AddFOp::create(b, acc, arith::MulFOp::create(b, x, y));
}

SmallVector<Value> transposeBlock(ImplicitLocOpBuilder &b, ArrayRef<Value> in) {
  SmallVector<Value> rows(in);
  int64_t L = rows.size();
  for (int64_t h = L / 2; h >= 1; h /= 2) {
    SmallVector<Value> next(rows);
    for (int64_t i = 0; i < L; ++i) {
      if (i & h)
        continue;
      SmallVector<int64_t> lo, hi;
      for (int64_t j = 0; j < L; ++j) {
        int64_t block = j / (2 * h) * (2 * h), pos = j % (2 * h);
        lo.push_back(pos < h ? block + pos : L + block + pos - h);
        hi.push_back(pos < h ? block + h + pos : L + block + pos);
      }
      next[i] = vector::ShuffleOp::create(b, rows[i], rows[i + h], lo);
      next[i + h] = vector::ShuffleOp::create(b, rows[i], rows[i + h], hi);
    }
    rows = std::move(next);
  }
  return rows;
}

/// [0, extent) in blocks of L, as forEachBlock takes each dim.
static void forEachBlock1D(
    ImplicitLocOpBuilder &b, int64_t extent, int64_t L,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, int64_t)> body) {
  if (extent / L > 0)
    scf::buildLoopNest(b, b.getLoc(), ValueRange{idx(b, 0)},
                       ValueRange{idx(b, extent / L * L)},
                       ValueRange{idx(b, L)},
                       [&](OpBuilder &nb, Location l, ValueRange iv) {
                         ImplicitLocOpBuilder lb(l, nb);
                         body(lb, iv[0], L);
                       });
  if (extent % L != 0)
    body(b, idx(b, extent / L * L), extent % L);
}

void forEachBlock(ImplicitLocOpBuilder &b, int64_t channels, int64_t pixels,
                  int64_t L, BlockBody body) {
  forEachBlock1D(
      b, channels, L, [&](ImplicitLocOpBuilder &cb, Value c0, int64_t cn) {
        forEachBlock1D(cb, pixels, L,
                       [&](ImplicitLocOpBuilder &pb, Value p0, int64_t pn) {
                         body(pb, c0, cn, p0, pn);
                       });
      });
}

} // namespace mlir::tq::floatkernels

namespace {

/// Rows of the micro-tile: MR·2 accumulators, two B vectors, the A
/// broadcast and a product fit in 16 vector registers (AVX2), or up to 12
/// rows in the 32 of AVX-512.
constexpr int64_t kRows = 6;

/// The micro-tile's rows for M rows and a reduction of K: up to the
/// registers' limit, those that waste the fewest rows in the last tile,
/// the closest to kRows among them (M = 32 takes 8 rows on AVX-512, 4
/// tiles, instead of 6 tiles of 6 with 4 rows wasted; M = 48 keeps 6). A short
/// reduction (K < 32), whose time goes to storing the output, keeps kRows.
int64_t microTileRows(int64_t M, int64_t K, int64_t L) {
  int64_t most = L >= 16 ? 2 * kRows : kRows;
  if (M <= kRows || (M <= most && K >= 32))
    return M;
  if (K < 32)
    return kRows;
  // The fewest rows wasted, then the closest to kRows (the larger of two).
  auto cost = [&](int64_t mr) {
    return std::make_pair(llvm::alignTo(M, mr) - M,
                          2 * std::abs(mr - kRows) - (mr > kRows));
  };
  int64_t best = kRows;
  for (int64_t mr = 4; mr <= most; ++mr)
    if (cost(mr) < cost(best))
      best = mr;
  return best;
}

struct GemmShape {
  int64_t M, N, K;
  int64_t L;           // f32 lanes per vector
  int64_t threads = 1; // > 1: the panels are shared out (scf.parallel)
  bool fma = false;    // see KernelOptions
  int64_t NR() const { return 2 * L; }
};

/// What a kernel applies to a vector of its output (at row `row`, columns
/// from `col`, lanes in range marked by `mask` or all) before storing it.
using StoreEpilogue = llvm::function_ref<Value(
    ImplicitLocOpBuilder &, Value acc, Value row, Value col, Value mask)>;

/// C (M×N) += A (M×K) · B (K×N), on 2-D memrefs with unit inner strides.
/// With `fill` (an f32), C's elements all start as that value instead of
/// being read. The results go to `to` (C if null) through `epilogue`.
void emitGemm(ImplicitLocOpBuilder &b, const GemmShape &s, Value A, Value B,
              Value C, Value fill = Value(), StoreEpilogue epilogue = nullptr,
              Value to = Value()) {
  if (!to)
    to = C;
  int64_t L = s.L, NR = s.NR(), MR = microTileRows(s.M, s.K, s.L);
  auto vF32 = VectorType::get({L}, b.getF32Type());
  auto vMask = VectorType::get({L}, b.getI1Type());
  int64_t full = s.N / NR, panels = llvm::divideCeil(s.N, NR);

  // One micro-tile: rows [i0, i0+MR), columns [j0, j0+NC·L).
  auto microTile = [&](ImplicitLocOpBuilder &ib, Value i0, Value j0,
                       bool masked, int64_t NC) {
    SmallVector<Value> rows, cols, masks;
    for (int64_t r = 0; r < MR; ++r)
      rows.push_back(arith::MinUIOp::create(
          ib, arith::AddIOp::create(ib, i0, idx(ib, r)), idx(ib, s.M - 1)));
    Value zero = zeros(ib, vF32);
    for (int64_t c = 0; c < NC; ++c) {
      Value j = arith::AddIOp::create(ib, j0, idx(ib, c * L));
      cols.push_back(j);
      if (masked)
        masks.push_back(vector::CreateMaskOp::create(
            ib, vMask,
            ValueRange{arith::SubIOp::create(
                ib, idx(ib, s.N),
                arith::MinUIOp::create(ib, j, idx(ib, s.N)))}));
    }
    auto load = [&](ImplicitLocOpBuilder &lb, Value m, Value r, int64_t c) {
      if (!masked)
        return vector::LoadOp::create(lb, vF32, m, ValueRange{r, cols[c]})
            .getResult();
      return vector::MaskedLoadOp::create(lb, vF32, m, ValueRange{r, cols[c]},
                                          masks[c], zero)
          .getResult();
    };
    SmallVector<Value> init;
    Value splat = fill ? vector::BroadcastOp::create(ib, vF32, fill).getResult()
                       : Value();
    for (int64_t r = 0; r < MR; ++r)
      for (int64_t c = 0; c < NC; ++c)
        init.push_back(splat ? splat : load(ib, C, rows[r], c));
    auto kLoop = scf::ForOp::create(
        ib, idx(ib, 0), idx(ib, s.K), idx(ib, 1), init,
        [&](OpBuilder &nb, Location loc, Value k, ValueRange acc) {
          ImplicitLocOpBuilder kb(loc, nb);
          SmallVector<Value> bv;
          for (int64_t c = 0; c < NC; ++c)
            bv.push_back(load(kb, B, k, c));
          SmallVector<Value> next;
          for (int64_t r = 0; r < MR; ++r) {
            Value a = vector::BroadcastOp::create(
                kb, vF32,
                memref::LoadOp::create(kb, A, ValueRange{rows[r], k}));
            for (int64_t c = 0; c < NC; ++c)
              next.push_back(multiplyAdd(kb, acc[r * NC + c], a, bv[c], s.fma));
          }
          scf::YieldOp::create(kb, next);
        });
    for (int64_t r = 0; r < MR; ++r) {
      Value i = arith::AddIOp::create(ib, i0, idx(ib, r));
      auto inRows = scf::IfOp::create(
          ib,
          arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, i, idx(ib, s.M)),
          /*withElse=*/false);
      ImplicitLocOpBuilder tb(ib.getLoc(), inRows.getThenBodyBuilder());
      for (int64_t c = 0; c < NC; ++c) {
        Value v = kLoop.getResult(r * NC + c);
        if (epilogue)
          v = epilogue(tb, v, i, cols[c], masked ? masks[c] : Value());
        if (masked)
          vector::MaskedStoreOp::create(tb, to, ValueRange{i, cols[c]},
                                        masks[c], v);
        else
          vector::StoreOp::create(tb, v, to, ValueRange{i, cols[c]});
      }
    }
  };
  // The row micro-tiles of one panel.
  auto panel = [&](ImplicitLocOpBuilder &pb, Value jp, bool masked,
                   int64_t NC) {
    Value j0 = arith::MulIOp::create(pb, jp, idx(pb, NR));
    auto rowLoop =
        scf::ForOp::create(pb, idx(pb, 0), idx(pb, s.M), idx(pb, MR));
    ImplicitLocOpBuilder rb(pb.getLoc(),
                            OpBuilder::atBlockBegin(rowLoop.getBody()));
    rb.setInsertionPoint(rowLoop.getBody()->getTerminator());
    microTile(rb, rowLoop.getInductionVar(), j0, masked, NC);
  };
  auto panelLoop = [&](int64_t begin, int64_t end, bool masked, int64_t NC) {
    if (begin >= end)
      return;
    Operation *loop;
    Value jp;
    if (s.threads > 1 && end - begin > 1) {
      auto par = scf::ParallelOp::create(b, ValueRange{idx(b, begin)},
                                         ValueRange{idx(b, end)},
                                         ValueRange{idx(b, 1)});
      jp = par.getInductionVars()[0];
      loop = par;
    } else {
      auto f = scf::ForOp::create(b, idx(b, begin), idx(b, end), idx(b, 1));
      jp = f.getInductionVar();
      loop = f;
    }
    ImplicitLocOpBuilder pb(b.getLoc(), b.getContext());
    pb.setInsertionPoint(loop->getRegion(0).front().getTerminator());
    panel(pb, jp, masked, NC);
  };
  panelLoop(0, full, /*masked=*/false, 2);
  // The last panel, partial: one vector when its columns fit in one.
  panelLoop(full, panels, /*masked=*/true, s.N - full * NR <= L ? 1 : 2);
}

/// The most taps (C·R·S) a convolution computes directly (emitDirectConv)
/// rather than as im2col and a GEMM, whose micro-tiles store their output
/// after every reduction of so few terms.
constexpr int64_t kDirectTaps = 16;

/// The shape of a convolution of unit width stride on `N` images.
struct DirectConvShape {
  int64_t N, F, C, R, S, P, Q;
  int64_t strideH, dilationH, dilationW;
  int64_t L;           // lanes along an output row
  int64_t threads = 1; // > 1: the (image, output row) pairs are shared out
  bool fma = false;
};

/// One image of a direct convolution: its input (C × H × W), its output
/// (F × P·Q) and where the results go (the output, or an epilogue's
/// target).
struct DirectConvImage {
  Value x, C, to;
};
using DirectConvImages =
    llvm::function_ref<DirectConvImage(ImplicitLocOpBuilder &, Value n)>;
/// What a direct convolution applies to a vector of image n's output
/// (filter `row`, columns from `col`) before storing it.
using DirectConvEpilogue =
    llvm::function_ref<Value(ImplicitLocOpBuilder &, Value acc, Value n,
                             Value row, Value col, Value mask)>;

/// C (F × P·Q) += w (F×C×R×S) ⋆ x (C × H × W) for each image, directly: for
/// each vector of an output row, the C·R·S input vectors under its taps
/// are loaded once, then each filter's output is their sum weighted by its
/// taps in (c, r, s) order, as emitGemm sums the im2col rows, with the same
/// bits. `fill` and `epilogue` are as emitGemm's; `images` gives each
/// image's views.
void emitDirectConv(ImplicitLocOpBuilder &b, const DirectConvShape &s,
                    DirectConvImages images, Value w, Value fill,
                    DirectConvEpilogue epilogue) {
  int64_t L = s.L, full = s.Q / L * L;
  auto vF32 = VectorType::get({L}, b.getF32Type());
  // Columns [q, q + n) of output row p of image `image`.
  auto vectorAt = [&](ImplicitLocOpBuilder &vb, Value image, Value p, Value q,
                      int64_t n) {
    DirectConvImage views = images(vb, image);
    Value x = views.x, C = views.C, to = views.to ? views.to : views.C;
    Value mask;
    if (n < L)
      mask = vector::CreateMaskOp::create(
          vb, VectorType::get({L}, vb.getI1Type()), ValueRange{idx(vb, n)});
    Value zero = zeros(vb, vF32);
    auto load = [&](Value m, ValueRange at) -> Value {
      if (mask)
        return vector::MaskedLoadOp::create(vb, vF32, m, at, mask, zero);
      return vector::LoadOp::create(vb, vF32, m, at);
    };
    SmallVector<Value> taps;
    Value h0 = arith::MulIOp::create(vb, p, idx(vb, s.strideH));
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t r = 0; r < s.R; ++r)
        for (int64_t t = 0; t < s.S; ++t)
          taps.push_back(load(
              x, {idx(vb, c),
                  arith::AddIOp::create(vb, h0, idx(vb, r * s.dilationH)),
                  arith::AddIOp::create(vb, q, idx(vb, t * s.dilationW))}));
    Value col = arith::AddIOp::create(
        vb, arith::MulIOp::create(vb, p, idx(vb, s.Q)), q);
    Value splat = fill ? vector::BroadcastOp::create(vb, vF32, fill).getResult()
                       : Value();
    scf::buildLoopNest(
        vb, vb.getLoc(), ValueRange{idx(vb, 0)}, ValueRange{idx(vb, s.F)},
        ValueRange{idx(vb, 1)}, [&](OpBuilder &fb, Location l, ValueRange f) {
          ImplicitLocOpBuilder ib(l, fb);
          Value acc = splat ? splat : load(C, {f[0], col});
          int64_t k = 0;
          for (int64_t c = 0; c < s.C; ++c)
            for (int64_t r = 0; r < s.R; ++r)
              for (int64_t t = 0; t < s.S; ++t, ++k) {
                Value a = vector::BroadcastOp::create(
                    ib, vF32,
                    memref::LoadOp::create(
                        ib, w,
                        ValueRange{f[0], idx(ib, c), idx(ib, r), idx(ib, t)}));
                acc = multiplyAdd(ib, acc, a, taps[k], s.fma);
              }
          if (epilogue)
            acc = epilogue(ib, acc, image, f[0], col, mask);
          if (mask)
            vector::MaskedStoreOp::create(ib, to, ValueRange{f[0], col}, mask,
                                          acc);
          else
            vector::StoreOp::create(ib, acc, to, ValueRange{f[0], col});
        });
  };
  // (image, row) pairs, shared out together: one fork and join per call.
  SmallVector<Value> lbs = {idx(b, 0), idx(b, 0)},
                     ubs = {idx(b, s.N), idx(b, s.P)},
                     steps = {idx(b, 1), idx(b, 1)};
  cpu::buildIndependentLoops(
      b, b.getLoc(), lbs, ubs, steps, s.threads,
      [&](OpBuilder &nb, Location l, ValueRange np) {
        ImplicitLocOpBuilder rb(l, nb);
        if (full > 0)
          scf::buildLoopNest(rb, l, ValueRange{idx(rb, 0)},
                             ValueRange{idx(rb, full)}, ValueRange{idx(rb, L)},
                             [&](OpBuilder &qb, Location ql, ValueRange q) {
                               ImplicitLocOpBuilder vb(ql, qb);
                               vectorAt(vb, np[0], np[1], q[0], L);
                             });
        if (full < s.Q)
          vectorAt(rb, np[0], np[1], idx(rb, full), s.Q - full);
      });
}

/// linalg.matmul and linalg.batch_matmul on f32 memrefs.
template <typename OpT> struct MatmulKernel : FloatKernelPattern<OpT> {
  using FloatKernelPattern<OpT>::FloatKernelPattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    int64_t rank = std::is_same_v<OpT, linalg::BatchMatmulOp> ? 3 : 2;
    if (!op.hasPureBufferSemantics() || op.hasUserDefinedMaps())
      return rw.notifyMatchFailure(op, "not a plain product on buffers");
    Value A = op.getDpsInputs()[0], B = op.getDpsInputs()[1],
          C = op.getDpsInits()[0];
    if (!isKernelOperand(A, rank) || !isKernelOperand(B, rank) ||
        !isKernelOperand(C, rank))
      return rw.notifyMatchFailure(op, "operands are not static f32 views");
    ArrayRef<int64_t> cs = cast<MemRefType>(C.getType()).getShape();
    GemmShape s;
    s.M = cs[rank - 2];
    s.N = cs[rank - 1];
    s.K = cast<MemRefType>(A.getType()).getShape()[rank - 1];
    s.L = this->o.lanes;
    s.threads = this->o.threads;
    s.fma = this->o.fma;
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fill = takeFill(op, C, rw);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, C, 1, b);
    Value batch;
    auto store = [&](ImplicitLocOpBuilder &ib, Value acc, Value row, Value col,
                     Value mask) {
      SmallVector<Value> outer = {row};
      if (batch)
        outer.insert(outer.begin(), batch);
      return epi->apply(ib, acc, outer, col, mask);
    };
    StoreEpilogue applied = epi ? StoreEpilogue(store) : nullptr;
    Value to = epi ? epi->target() : C;
    if (rank == 2) {
      emitGemm(b, s, A, B, C, fill, applied, to);
    } else {
      auto loop = scf::ForOp::create(b, arith::ConstantIndexOp::create(b, 0),
                                     arith::ConstantIndexOp::create(b, cs[0]),
                                     arith::ConstantIndexOp::create(b, 1));
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value i = loop.getInductionVar();
      batch = i;
      emitGemm(b, s, slice(b, A, i), slice(b, B, i), slice(b, C, i), fill,
               applied, slice(b, to, i));
    }
    eraseWithEpilogue(op, epi, rw);
    return success();
  }
};

/// linalg.conv_2d_nchw_fchw on f32 memrefs (the importer pads the input
/// beforehand).
struct ConvKernel : FloatKernelPattern<linalg::Conv2DNchwFchwOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp op,
                                PatternRewriter &rw) const override {
    FailureOr<WindowOperands> operands = matchWindowOperands(op, 4, rw);
    if (failed(operands))
      return failure();
    Value x = operands->x, w = operands->w, y = operands->y;
    // Collapsing needs contiguous row-major dims.
    for (Value v : {x, w, y})
      if (!cast<MemRefType>(v.getType()).getLayout().isIdentity())
        return rw.notifyMatchFailure(op, "operand is not row-major");
    ArrayRef<int64_t> xs = operands->xs, ws = operands->ws, ys = operands->ys;
    SmallVector<int64_t> st(op.getStrides().getValues<int64_t>()),
        dl(op.getDilations().getValues<int64_t>());
    int64_t N = xs[0], C = xs[1], W = xs[3];
    int64_t F = ws[0], R = ws[2], S = ws[3], P = ys[2], Q = ys[3];
    GemmShape s;
    s.M = F;
    s.N = P * Q;
    s.K = C * R * S;
    s.L = o.lanes;
    s.threads = o.threads;
    s.fma = o.fma;
    bool inPlace =
        R == 1 && S == 1 && st[0] == 1 && st[1] == 1 && xs[2] == P && W == Q;
    // Few taps (a first layer's one or three channels): each output vector
    // directly from the input vectors under it, no im2col.
    bool direct =
        !inPlace && st[1] == 1 && s.K <= kDirectTaps && s.K + 3 <= o.registers;
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fill = takeFill(op, y, rw);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, y, 2, b);
    Value A = direct ? Value() : collapse(b, w, {{0}, {1, 2, 3}});
    Value cols;
    if (!inPlace && !direct)
      cols = memref::AllocOp::create(
          b, MemRefType::get({s.K, s.N}, b.getF32Type()));
    // A max pooling of the output next: each image goes to a buffer of one
    // image, pooled while it is in cache; the whole output is never
    // written.
    Value result = epi ? epi->target() : y;
    std::optional<FollowingPool<linalg::PoolingNchwMaxOp>> pool;
    if (fill)
      pool = FollowingPool<linalg::PoolingNchwMaxOp>::match(
          epi ? epi->op() : op, result);
    Value one;
    if (pool) {
      pool->hoist(b, epi ? epi->op() : op);
      one = memref::AllocOp::create(
          b, MemRefType::get({1, F, P, Q}, b.getF32Type()));
    }
    DirectConvShape d{N,
                      F,
                      C,
                      R,
                      S,
                      P,
                      Q,
                      st[0],
                      dl[0],
                      dl[1],
                      rowLanes(o.lanes, Q),
                      o.threads,
                      o.fma};
    auto directStore = [&](ImplicitLocOpBuilder &ib, Value acc, Value n,
                           Value row, Value col, Value mask) {
      return epi->apply(ib, acc, ValueRange{n, row}, col, mask);
    };
    DirectConvEpilogue directEpilogue =
        epi ? DirectConvEpilogue(directStore) : nullptr;
    if (direct && !pool) {
      // All images' rows in one loop nest (each image's own would fork and
      // join per image).
      emitDirectConv(
          b, d,
          [&](ImplicitLocOpBuilder &ib, Value n) {
            auto rows = [&](Value v) {
              return collapse(ib, slice(ib, v, n), {{0}, {1, 2}});
            };
            return DirectConvImage{slice(ib, x, n), rows(y),
                                   epi ? rows(epi->target()) : Value()};
          },
          w, fill, directEpilogue);
      eraseWithEpilogue(op, epi, rw);
      return success();
    }
    auto loop = scf::ForOp::create(b, idx(b, 0), idx(b, N), idx(b, 1));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value n = loop.getInductionVar();
      Value xn = slice(b, x, n);
      Value Bm;
      if (inPlace) {
        Bm = collapse(b, xn, {{0}, {1, 2}});
      } else if (!direct) {
        // cols[(c·R + r)·S + s][p·Q + q] = x[n, c, p·sh + r·dh, q·sw + s·dw],
        // q innermost: L at a time for a unit W stride, the last masked.
        int64_t L = o.lanes, fullQ = st[1] == 1 ? Q / L * L : 0;
        auto vF32 = VectorType::get({L}, b.getF32Type());
        auto vMask = VectorType::get({L}, b.getI1Type());
        Value zeroV = zeros(b, vF32);
        scf::buildLoopNest(
            b, b.getLoc(),
            ValueRange{idx(b, 0), idx(b, 0), idx(b, 0), idx(b, 0)},
            ValueRange{idx(b, C), idx(b, R), idx(b, S), idx(b, P)},
            ValueRange{idx(b, 1), idx(b, 1), idx(b, 1), idx(b, 1)},
            [&](OpBuilder &nb, Location loc, ValueRange iv) {
              ImplicitLocOpBuilder ib(loc, nb);
              auto mul = [&](Value v, int64_t k) -> Value {
                return arith::MulIOp::create(ib, v, idx(ib, k));
              };
              auto add = [&](Value u, Value v) -> Value {
                return arith::AddIOp::create(ib, u, v);
              };
              Value h = add(mul(iv[3], st[0]), mul(iv[1], dl[0]));
              Value w0 = mul(iv[2], dl[1]);
              Value k = add(mul(add(mul(iv[0], R), iv[1]), S), iv[2]);
              Value row = mul(iv[3], Q);
              auto copy = [&](ImplicitLocOpBuilder &qb, Value q, bool masked) {
                SmallVector<Value> from = {iv[0], h, add(q, w0)},
                                   to = {k, add(row, q)};
                if (!masked) {
                  Value v = vector::LoadOp::create(qb, vF32, xn, from);
                  vector::StoreOp::create(qb, v, cols, to);
                  return;
                }
                Value m = vector::CreateMaskOp::create(
                    qb, vMask, ValueRange{idx(qb, Q - fullQ)});
                Value v =
                    vector::MaskedLoadOp::create(qb, vF32, xn, from, m, zeroV);
                vector::MaskedStoreOp::create(qb, cols, to, m, v);
              };
              if (fullQ > 0)
                scf::buildLoopNest(
                    ib, loc, ValueRange{idx(ib, 0)}, ValueRange{idx(ib, fullQ)},
                    ValueRange{idx(ib, L)},
                    [&](OpBuilder &qb, Location l, ValueRange q) {
                      ImplicitLocOpBuilder vb(l, qb);
                      copy(vb, q[0], false);
                    });
              if (st[1] == 1 && fullQ < Q)
                copy(ib, idx(ib, fullQ), true);
              if (st[1] == 1)
                return;
              scf::buildLoopNest(
                  ib, loc, ValueRange{idx(ib, 0)}, ValueRange{idx(ib, Q)},
                  ValueRange{idx(ib, 1)},
                  [&](OpBuilder &qb, Location l, ValueRange q) {
                    ImplicitLocOpBuilder sb(l, qb);
                    Value v = memref::LoadOp::create(
                        sb, xn,
                        ValueRange{
                            iv[0], h,
                            arith::AddIOp::create(
                                sb,
                                arith::MulIOp::create(sb, q[0], idx(sb, st[1])),
                                w0)});
                    memref::StoreOp::create(
                        sb, v, cols,
                        ValueRange{k, arith::AddIOp::create(sb, row, q[0])});
                  });
            });
        Bm = cols;
      }
      auto store = [&](ImplicitLocOpBuilder &ib, Value acc, Value row,
                       Value col, Value mask) {
        return epi->apply(ib, acc, ValueRange{n, row}, col, mask);
      };
      Value Cm, to;
      if (pool) {
        Cm = to = collapse(b, one, {{0, 1}, {2, 3}});
      } else {
        Cm = collapse(b, slice(b, y, n), {{0}, {1, 2}});
        if (epi)
          to = collapse(b, slice(b, epi->target(), n), {{0}, {1, 2}});
      }
      if (direct) {
        // One image, into the buffer the pool reads.
        d.N = 1;
        emitDirectConv(
            b, d,
            [&](ImplicitLocOpBuilder &, Value) {
              return DirectConvImage{xn, Cm, to};
            },
            w, fill,
            epi ? DirectConvEpilogue([&](ImplicitLocOpBuilder &ib, Value acc,
                                         Value, Value row, Value col,
                                         Value mask) {
              return epi->apply(ib, acc, ValueRange{n, row}, col, mask);
            })
                : nullptr);
      } else {
        emitGemm(b, s, A, Bm, Cm, fill, epi ? StoreEpilogue(store) : nullptr,
                 to);
      }
      if (pool)
        pool->emit(b, one, n);
    }
    if (cols)
      memref::DeallocOp::create(b, cols);
    if (pool)
      memref::DeallocOp::create(b, one);
    eraseWithEpilogue(op, epi, rw);
    if (pool)
      pool->erase(result, rw);
    return success();
  }
};

/// An all-parallel linalg.generic that writes an NCHW buffer from an NHWC
/// one: the layout transpose after tq.conv2d, with the bias, the
/// activation and a residual add fused into it (the NHWC input may be any
/// of its inputs; the residual may be the target, in place). Per image, blocks
/// of L channels × L pixels: L loads of L channels (one per pixel), transposed
/// in registers, then the body on each channel's L pixels (VectorEpilogue) and
/// one store. Each element gets the body's ops on the same values: the same
/// bits.
struct NhwcToNchwKernel : FloatKernelPattern<linalg::GenericOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rw) const override {
    if (op.getNumLoops() != 4)
      return rw.notifyMatchFailure(op, "not 4-D");
    AffineMap nhwc = AffineMap::getPermutationMap(
        ArrayRef<unsigned>{0, 2, 3, 1}, op.getContext());
    std::optional<VectorEpilogue> epi =
        VectorEpilogue::matchTransposed(op, nhwc, 2);
    Value x = epi ? epi->source() : Value();
    if (!epi || !isKernelOperand(x, 4) ||
        !cast<MemRefType>(x.getType()).getLayout().isIdentity())
      return rw.notifyMatchFailure(op, "not an NHWC to NCHW elementwise op");
    ArrayRef<int64_t> xs = cast<MemRefType>(x.getType()).getShape();
    int64_t N = xs[0], HW = xs[1] * xs[2], C = xs[3], L = o.lanes;
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    epi->prepare(b);
    Value src = collapse(b, x, {{0}, {1, 2}, {3}});
    Value dst = collapse(b, epi->target(), {{0}, {1}, {2, 3}});
    auto vF32 = VectorType::get({L}, b.getF32Type());
    auto vMask = VectorType::get({L}, b.getI1Type());
    auto maskOf = [&](ImplicitLocOpBuilder &mb, int64_t valid) -> Value {
      if (valid == L)
        return Value();
      return vector::CreateMaskOp::create(mb, vMask,
                                          ValueRange{idx(mb, valid)});
    };
    // Channels [c0, c0 + cValid) × pixels [hw0, hw0 + hwValid) of image n;
    // rows past the image repeat its last pixel and are not stored.
    auto block = [&](ImplicitLocOpBuilder &kb, Value n, Value c0, Value hw0,
                     int64_t cValid, int64_t hwValid) {
      Value cMask = maskOf(kb, cValid), hwMask = maskOf(kb, hwValid);
      Value zero = zeros(kb, vF32);
      SmallVector<Value> rows;
      for (int64_t i = 0; i < L; ++i) {
        Value p =
            arith::AddIOp::create(kb, hw0, idx(kb, std::min(i, hwValid - 1)));
        rows.push_back(
            cMask ? vector::MaskedLoadOp::create(
                        kb, vF32, src, ValueRange{n, p, c0}, cMask, zero)
                        .getResult()
                  : vector::LoadOp::create(kb, vF32, src, ValueRange{n, p, c0})
                        .getResult());
      }
      SmallVector<Value> cols = transposeBlock(kb, rows);
      for (int64_t j = 0; j < cValid; ++j) {
        Value c = arith::AddIOp::create(kb, c0, idx(kb, j));
        storeThroughEpilogue(kb, epi, cols[j], dst, ValueRange{n, c}, hw0,
                             hwMask);
      }
    };
    // The images are independent (shared among the threads).
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{idx(b, 0)}, ValueRange{idx(b, N)},
        ValueRange{idx(b, 1)}, o.threads,
        [&](OpBuilder &nb, Location l, ValueRange iv) {
          ImplicitLocOpBuilder ib(l, nb);
          forEachBlock(
              ib, C, HW, L,
              [&](ImplicitLocOpBuilder &kb, Value c0, int64_t cn, Value hw0,
                  int64_t hwn) { block(kb, iv[0], c0, hw0, cn, hwn); });
        });
    rw.eraseOp(op);
    return success();
  }
};

/// The first dim of `t` from which on its dims are contiguous (row-major
/// with static strides); its rank if not even the last one is.
int64_t contiguousFrom(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  int64_t rank = t.getRank();
  if (!t.hasStaticShape() || failed(t.getStridesAndOffset(strides, offset)))
    return rank;
  int64_t expected = 1, d = rank;
  while (d > 0 && strides[d - 1] == expected) {
    --d;
    expected *= t.getDimSize(d);
  }
  return d;
}

/// A memref.copy between buffers that are not both contiguous (a tensor.pad
/// or insert_slice writing into a subview, a share of a batch into the
/// whole) becomes a linalg.copy over the dims that are not contiguous in
/// both and one merged dim of those that are: loops whose innermost one is
/// as long as it can be, instead of the runtime's generic element-by-element
/// memrefCopy. Copies between contiguous buffers (a dynamic offset
/// included) stay memref.copy: a memcpy.
struct StridedCopy : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rw) const override {
    auto from = dyn_cast<MemRefType>(op.getSource().getType());
    auto to = dyn_cast<MemRefType>(op.getTarget().getType());
    if (!from || !to || !from.hasStaticShape() || from.getRank() == 0)
      return rw.notifyMatchFailure(op, "not a static copy");
    int64_t rank = from.getRank();
    int64_t merged = std::max(contiguousFrom(from), contiguousFrom(to));
    if (merged == 0)
      return rw.notifyMatchFailure(op, "a plain memcpy");
    Value src = op.getSource(), dst = op.getTarget();
    if (merged < rank - 1) {
      SmallVector<ReassociationIndices> groups =
          cpu::mergeTrailingDims(rank, merged);
      src = memref::CollapseShapeOp::create(rw, op.getLoc(), src, groups);
      dst = memref::CollapseShapeOp::create(rw, op.getLoc(), dst, groups);
    }
    linalg::CopyOp::create(rw, op.getLoc(), ValueRange{src}, ValueRange{dst});
    rw.eraseOp(op);
    return success();
  }
};

/// A linalg.copy between contiguous buffers (a share of a batch copied out
/// of the whole, with a dynamic offset) becomes a memref.copy: a memcpy
/// instead of a loop nest.
struct ContiguousCopy : OpRewritePattern<linalg::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::CopyOp op,
                                PatternRewriter &rw) const override {
    if (!op.hasPureBufferSemantics())
      return rw.notifyMatchFailure(op, "not on buffers");
    auto from = cast<MemRefType>(op.getInputs()[0].getType());
    auto to = cast<MemRefType>(op.getOutputs()[0].getType());
    if (from.getElementType() != to.getElementType() ||
        contiguousFrom(from) != 0 || contiguousFrom(to) != 0)
      return rw.notifyMatchFailure(op, "not between contiguous buffers");
    rw.replaceOpWithNewOp<memref::CopyOp>(op, op.getInputs()[0],
                                          op.getOutputs()[0]);
    return success();
  }
};

struct TQCPUFloatKernelsPass
    : mlir::tq::impl::TQCPUFloatKernelsBase<TQCPUFloatKernelsPass> {
  using TQCPUFloatKernelsBase::TQCPUFloatKernelsBase;
  void runOnOperation() override {
    std::optional<CPUTarget> t = parseCPUTarget(target);
    if (!t) {
      mlir::emitError(getOperation()->getLoc(),
                      "tq-cpu-float-kernels: unknown target '")
          << target << "' (expected " << cpuTargetNames() << ")";
      return signalPassFailure();
    }
    if (threads < 1) {
      mlir::emitError(getOperation()->getLoc(),
                      "tq-cpu-float-kernels: threads must be at "
                      "least 1, got ")
          << int64_t(threads);
      return signalPassFailure();
    }
    CPUCodegenOptions o;
    o.target = *t;
    o.threads = threads;
    // The convolutions first: one takes the max pooling after it, which
    // the driver (bottom-up) would otherwise lower on its own before.
    RewritePatternSet convs(&getContext());
    convs.add<ConvKernel>(&getContext(), kernelOptions(o));
    populateConvNhwcKernelPatterns(convs, kernelOptions(o));
    populateSmallOutputConvPatterns(convs, kernelOptions(o));
    if (failed(applyPatternsGreedily(getOperation(), std::move(convs),
                                     mlir::tq::loopNestRewriteConfig())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateCPUFloatKernelPatterns(patterns, o);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     mlir::tq::loopNestRewriteConfig())))
      return signalPassFailure();
    // Last, the elementwise generics that no kernel took as its epilogue.
    RewritePatternSet elementwise(&getContext());
    populateElementwiseKernelPatterns(elementwise, kernelOptions(o));
    populateStridedKernelPatterns(elementwise, kernelOptions(o));
    if (failed(applyPatternsGreedily(getOperation(), std::move(elementwise),
                                     mlir::tq::loopNestRewriteConfig())))
      return signalPassFailure();
  }
};

} // namespace

namespace mlir::tq::floatkernels {
template <typename PoolOp>
std::optional<FollowingPool<PoolOp>>
FollowingPool<PoolOp>::match(Operation *last, Value out) {
  FollowingPool f;
  Operation *next = nextPastAllocations(last);
  f.fill = dyn_cast_or_null<linalg::FillOp>(next);
  f.pool = dyn_cast_or_null<PoolOp>(f.fill ? f.fill->getNextNode() : next);
  if (!f.fill || !f.pool || !f.pool.hasPureBufferSemantics() ||
      f.pool.getDpsInputs()[0] != out ||
      f.fill.getDpsInits()[0] != f.pool.getDpsInits()[0] ||
      !out.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  for (Value v : f.pool->getOperands())
    if (v != out &&
        !isKernelOperand(v, cast<MemRefType>(v.getType()).getRank()))
      return std::nullopt;
  // The pool's buffers must exist before the kernel: allocations with no
  // operands (moved there), or values from before.
  for (Value v : f.pool->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == last->getBlock() &&
        last->isBeforeInBlock(def) &&
        !(isa<memref::AllocOp>(def) && def->getNumOperands() == 0))
      return std::nullopt;
  }
  for (Operation *user : out.getUsers())
    if (user != f.pool.getOperation() && !isa<memref::DeallocOp>(user) &&
        (user->getBlock() != f.pool->getBlock() ||
         !user->isBeforeInBlock(f.pool)))
      return std::nullopt;
  return f;
}

template <typename PoolOp>
void FollowingPool<PoolOp>::hoist(ImplicitLocOpBuilder &b, Operation *last) {
  for (Value v : pool->getOperands())
    if (auto alloc = v.getDefiningOp<memref::AllocOp>();
        alloc && alloc->getBlock() == last->getBlock() &&
        last->isBeforeInBlock(alloc))
      alloc->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
}

/// The dim of the rows: H of NCHW or NHWC.
template <typename PoolOp> static constexpr int64_t rowDim() {
  return std::is_same_v<PoolOp, linalg::PoolingNhwcMaxOp> ? 1 : 2;
}

template <typename PoolOp>
std::optional<std::pair<int64_t, int64_t>> FollowingPool<PoolOp>::rowWindows() {
  int64_t window =
      cast<MemRefType>(pool.getDpsInputs()[1].getType()).getShape()[0];
  int64_t stride = *pool.getStrides().template getValues<int64_t>().begin(),
          dilation = *pool.getDilations().template getValues<int64_t>().begin();
  int64_t rows = (window - 1) * dilation + 1;
  if (rows > stride)
    return std::nullopt;
  return std::make_pair(rows, stride);
}

template <typename PoolOp> int64_t FollowingPool<PoolOp>::outputRows() {
  return cast<MemRefType>(pool.getDpsInits()[0].getType())
      .getShape()[rowDim<PoolOp>()];
}

template <typename PoolOp>
void FollowingPool<PoolOp>::emit(ImplicitLocOpBuilder &b, Value from, Value n,
                                 Value row) {
  Value to = slice(b, pool.getDpsInits()[0], n, /*keepDim=*/true);
  if (row) {
    auto t = cast<MemRefType>(to.getType());
    SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)),
        sizes = getAsIndexOpFoldResult(b.getContext(), t.getShape()),
        strides(t.getRank(), b.getIndexAttr(1));
    offsets[rowDim<PoolOp>()] = row;
    sizes[rowDim<PoolOp>()] = b.getIndexAttr(1);
    to = memref::SubViewOp::create(b, to, offsets, sizes, strides);
  }
  linalg::FillOp::create(b, fill.getInputs()[0], to);
  auto perImage =
      PoolOp::create(b, TypeRange{}, ValueRange{from, pool.getDpsInputs()[1]},
                     ValueRange{to}, pool.getStrides(), pool.getDilations());
  if (pool->hasAttr(cpu::kNonNegativeInputAttr))
    perImage->setAttr(cpu::kNonNegativeInputAttr,
                      UnitAttr::get(b.getContext()));
}

template <typename PoolOp>
void FollowingPool<PoolOp>::erase(Value out, PatternRewriter &rw) {
  rw.eraseOp(pool);
  rw.eraseOp(fill);
  if (llvm::all_of(out.getUsers(),
                   [](Operation *u) { return isa<memref::DeallocOp>(u); })) {
    for (Operation *u : llvm::make_early_inc_range(out.getUsers()))
      rw.eraseOp(u);
    rw.eraseOp(out.getDefiningOp());
  }
}

template struct FollowingPool<linalg::PoolingNchwMaxOp>;
template struct FollowingPool<linalg::PoolingNhwcMaxOp>;

} // namespace mlir::tq::floatkernels

void mlir::tq::populateCPUFloatKernelPatterns(
    RewritePatternSet &patterns, const CPUCodegenOptions &options) {
  KernelOptions o = kernelOptions(options);
  patterns
      .add<MatmulKernel<linalg::MatmulOp>, MatmulKernel<linalg::BatchMatmulOp>,
           ConvKernel, NhwcToNchwKernel>(patterns.getContext(), o);
  populateSmallOutputConvPatterns(patterns, o);
  populateConvNhwcKernelPatterns(patterns, o);
  populateWindowKernelPatterns(patterns, o);
  patterns.add<StridedCopy, ContiguousCopy>(patterns.getContext());
}
