//===- SmallOutputConv.cpp - f32 convolutions with few output pixels ------===//
//
// A convolution whose output image has few pixels (at most two vectors'
// lanes, and fewer than its filters would fill of a vector's lanes): the
// weight gradient of a layer left in float, dW = conv(Xᵀ, dYᵀ), whose
// "image" is the forward's R × S taps. The output pixels are the rows of
// the product and its filters (at most a vector of them) the lanes:
//
//   y[n, f, p, q] = Σ_(c, r, s) x[n, c, p·sh + r·dh, q·sw + s·dw] · w[f, c, r,
//   s]
//
// - the filter is read L values of s at a time from each filter's row,
//   the L × L block transposed in registers into L vectors of filters;
//   when the filter is a copy of another buffer with its dims permuted
//   that keeps s last (tq-training-step's dYᵀ), it is read from that
//   buffer and the copy is not made;
// - the pixels' accumulators stay in registers over the whole reduction;
//   per (c, r, s), one broadcast of x per pixel and a multiply-add each;
// - each output's sum is taken in increasing (c, r, s), from the fill or
//   the output's value, with the multiply-add of the convolution kernel:
//   the same bits as that kernel and as the linalg op's loops (NaN
//   payloads aside).
//
// The convolution kernel (FloatKernels.cpp) would put the P·Q pixels on
// the lanes, mostly masked, and copy R·S shifted images (im2col).
//
// Each (image, group of pixels) rereads and transposes the filter: as few
// groups as the pixels' accumulators fit in the registers. The threads
// share several (image, group) pairs; with one image, they share the
// filters instead, half a vector of them each.
//
//===----------------------------------------------------------------------===//
#include "FloatKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::floatkernels;

namespace {

/// A copy of a buffer into `w` with its dims permuted (a linalg.transpose,
/// or the generic it generalizes to) that `conv` can read through instead:
/// w[i] = source[at] with at[j] = i[fromW[j]].
struct PermutedCopy {
  Operation *op = nullptr;
  Value source;
  SmallVector<int64_t, 4> fromW;
};

std::optional<PermutedCopy> matchPermutedCopy(Operation *op, Value w) {
  PermutedCopy copy;
  copy.op = op;
  if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    if (t.getInit() != w)
      return std::nullopt;
    copy.source = t.getInput();
    copy.fromW.resize(4);
    for (auto [i, p] : llvm::enumerate(t.getPermutation()))
      copy.fromW[p] = i;
    return copy;
  }
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getDpsInits()[0] != w || g.getNumReductionLoops() != 0 ||
      !g.getIndexingMapsArray()[1].isIdentity())
    return std::nullopt;
  AffineMap in = g.getIndexingMapsArray()[0];
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  if (!in.isPermutation() || g.getBody()->getOperations().size() != 1 ||
      yield.getOperand(0) != g.getBody()->getArgument(0))
    return std::nullopt;
  copy.source = g.getDpsInputs()[0];
  for (unsigned j = 0; j < in.getNumResults(); ++j)
    copy.fromW.push_back(in.getDimPosition(j));
  return copy;
}

/// Whether a deallocation of `v` or of a view of it lies between `from`
/// and `to` (in their block), other than one of `v` itself in that block
/// (with `direct`).
bool freedBetween(Value v, Operation *from, Operation *to, bool direct) {
  Block *block = from->getBlock();
  for (Operation *user : v.getUsers()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(user))
      if (freedBetween(view->getResult(0), from, to, /*direct=*/false))
        return true;
    if (!isa<memref::DeallocOp>(user) || (direct && user->getBlock() == block))
      continue;
    Operation *top = block->findAncestorOpInBlock(*user);
    if (top && from->isBeforeInBlock(top) && top->isBeforeInBlock(to))
      return true;
  }
  return false;
}

/// The permuted copy that alone writes `w`, a buffer that only `conv`
/// reads, as its filter (deallocations aside), when `conv` can read its
/// source instead: in `conv`'s block, keeping the last dim last; the
/// source a kernel operand, a view of an allocation or of an argument of
/// the function, which neither the image nor the output of `conv` views,
/// and which nothing uses or frees in between but its own deallocation in
/// that block (moved after `conv`).
std::optional<PermutedCopy> foldableCopy(Value w, linalg::LinalgOp conv) {
  if (!w.getDefiningOp<memref::AllocOp>() || conv.getDpsInputs()[0] == w ||
      conv.getDpsInits()[0] == w)
    return std::nullopt;
  std::optional<PermutedCopy> copy;
  for (Operation *user : w.getUsers()) {
    if (user == conv || isa<memref::DeallocOp>(user))
      continue;
    if (copy || user->getBlock() != conv->getBlock() ||
        !user->isBeforeInBlock(conv))
      return std::nullopt;
    copy = matchPermutedCopy(user, w);
    if (!copy)
      return std::nullopt;
  }
  if (!copy || copy->fromW[3] != 3 || !isKernelOperand(copy->source, 4))
    return std::nullopt;
  Value root = rootOf(copy->source);
  auto arg = dyn_cast<BlockArgument>(root);
  bool isArgument = arg && arg.getOwner()->isEntryBlock() &&
                    isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if ((!root.getDefiningOp<memref::AllocOp>() && !isArgument) ||
      rootOf(conv.getDpsInputs()[0]) == root ||
      rootOf(conv.getDpsInits()[0]) == root ||
      usedBetween(root, copy->op, conv) ||
      freedBetween(root, copy->op, conv, /*direct=*/true))
    return std::nullopt;
  return copy;
}

struct SmallOutputConvKernel : FloatKernelPattern<linalg::Conv2DNchwFchwOp> {
  // Before the convolution kernel, which takes every convolution.
  SmallOutputConvKernel(MLIRContext *ctx, KernelOptions o)
      : FloatKernelPattern(ctx, o, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp op,
                                PatternRewriter &rw) const override {
    FailureOr<WindowOperands> operands = matchWindowOperands(op, 4, rw);
    if (failed(operands))
      return failure();
    Value x = operands->x, w = operands->w, y = operands->y;
    if (!cast<MemRefType>(y.getType()).getLayout().isIdentity())
      return rw.notifyMatchFailure(op, "output is not row-major");
    ArrayRef<int64_t> xs = operands->xs, ws = operands->ws, ys = operands->ys;
    SmallVector<int64_t> st(op.getStrides().getValues<int64_t>()),
        dl(op.getDilations().getValues<int64_t>());
    int64_t N = xs[0], C = xs[1], F = ws[0], R = ws[2], S = ws[3], P = ys[2],
            Q = ys[3], PQ = P * Q, L = o.lanes;
    // The filters fill more of a vector than the pixels would fill of the
    // convolution kernel's two, over a reduction of a few blocks or more.
    if (F > L || PQ > 2 * L || C * R * S < 4 * L ||
        F * llvm::divideCeilSigned(PQ, 2 * L) * 2 <= PQ)
      return rw.notifyMatchFailure(op, "the pixels fill the lanes as well");
    // Groups of pixels whose accumulators fit the registers beside the
    // block and a broadcast. Every group reads and transposes the whole
    // filter, so the threads get more groups than that only as images:
    // split for the threads, the Fashion CNN's first weight gradient (one
    // image, 9 pixels) took 0.30 ms on 2 threads against 0.21 on 1.
    int64_t rowsPerGroup = o.registers - L - 2;
    if (rowsPerGroup < 1)
      return rw.notifyMatchFailure(op, "no registers for the accumulators");
    // With threads and one image, the filters are shared instead, in half
    // vectors: each thread transposes and multiplies half of each block, and
    // a 256-bit multiply-add costs half a 512-bit one.
    int64_t filterGroups = 1;
    if (o.threads > 1 && N == 1 && L >= 16 && F > L / 2) {
      L /= 2;
      filterGroups = llvm::divideCeilSigned(F, L);
    }
    int64_t groups = llvm::divideCeilSigned(PQ, rowsPerGroup);
    int64_t G = llvm::divideCeilSigned(PQ, groups);
    groups = llvm::divideCeilSigned(PQ, G);

    // The filter as read: w[i] = source[at], at[j] = i[fromW[j]].
    std::optional<PermutedCopy> copy =
        foldableCopy(w, cast<linalg::LinalgOp>(op.getOperation()));
    Value source = copy ? copy->source : w;
    SmallVector<int64_t, 4> fromW =
        copy ? copy->fromW : SmallVector<int64_t, 4>{0, 1, 2, 3};

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fill = takeFill(op, y, rw);
    auto vF32 = VectorType::get({L}, b.getF32Type());
    auto vMask = VectorType::get({L}, b.getI1Type());
    auto vIdx = VectorType::get({L}, b.getIndexType());
    Value zero = zeros(b, vF32);
    // Lane f of a pixel's vector is at f·P·Q in the output image viewed
    // flat.
    Value yFlat = collapse(b, y, {{0}, {1, 2, 3}});
    SmallVector<int64_t> laneOffsets;
    for (int64_t f = 0; f < L; ++f)
      laneOffsets.push_back(f * PQ);
    Value lanes = arith::ConstantOp::create(
        b, vIdx, DenseElementsAttr::get(vIdx, ArrayRef<int64_t>(laneOffsets)));

    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{idx(b, 0), idx(b, 0), idx(b, 0)},
        ValueRange{idx(b, N), idx(b, filterGroups), idx(b, groups)},
        ValueRange{idx(b, 1), idx(b, 1), idx(b, 1)},
        N * filterGroups * groups > 1 ? o.threads : 1,
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder gb(loc, nb);
          Value n = iv[0];
          // The group's filters f0 .. f0 + L - 1, those below F on.
          Value f0 = arith::MulIOp::create(gb, iv[1], idx(gb, L));
          Value filters = vector::CreateMaskOp::create(
              gb, vMask, ValueRange{arith::SubIOp::create(gb, idx(gb, F), f0)});
          Value f0Offset = arith::MulIOp::create(gb, f0, idx(gb, PQ));
          // The group's pixels (past P·Q, the last one again, not stored),
          // where each reads the image at (r, s) = 0, and where lane 0 of
          // its vector is in the output viewed flat.
          SmallVector<Value> first, pixel, h0, w0, at;
          for (int64_t i = 0; i < G; ++i) {
            first.push_back(arith::AddIOp::create(
                gb, arith::MulIOp::create(gb, iv[2], idx(gb, G)), idx(gb, i)));
            Value pq = arith::MinUIOp::create(gb, first[i], idx(gb, PQ - 1));
            pixel.push_back(pq);
            at.push_back(arith::AddIOp::create(gb, pq, f0Offset));
            h0.push_back(arith::MulIOp::create(
                gb, arith::DivUIOp::create(gb, pq, idx(gb, Q)),
                idx(gb, st[0])));
            w0.push_back(arith::MulIOp::create(
                gb, arith::RemUIOp::create(gb, pq, idx(gb, Q)),
                idx(gb, st[1])));
          }
          SmallVector<Value> init;
          for (int64_t i = 0; i < G; ++i)
            init.push_back(
                fill ? vector::BroadcastOp::create(gb, vF32, fill).getResult()
                     : vector::GatherOp::create(gb, vF32, yFlat,
                                                ValueRange{n, at[i]}, lanes,
                                                filters, zero)
                           .getResult());
          // The taps s0 .. s0 + count - 1 of filter row (c, r): count
          // multiply-adds per pixel, in increasing s.
          auto block = [&](ImplicitLocOpBuilder &kb, Value c, Value r, Value s0,
                           int64_t count, ValueRange acc) {
            Value mask = count < L ? vector::CreateMaskOp::create(
                                         kb, vMask, ValueRange{idx(kb, count)})
                                         .getResult()
                                   : Value();
            SmallVector<Value> rows;
            for (int64_t f = 0; f < L; ++f) {
              // Filters past F: zeros, or (in a group of a split) the last
              // filter again, dropped when stored.
              if (filterGroups == 1 && f >= F) {
                rows.push_back(zero);
                continue;
              }
              Value filter = idx(kb, f);
              if (filterGroups > 1)
                filter = arith::MinUIOp::create(
                    kb, arith::AddIOp::create(kb, f0, filter), idx(kb, F - 1));
              Value wAt[4] = {filter, c, r, s0};
              SmallVector<Value> at;
              for (int64_t d : fromW)
                at.push_back(wAt[d]);
              rows.push_back(mask ? vector::MaskedLoadOp::create(
                                        kb, vF32, source, at, mask, zero)
                                        .getResult()
                                  : vector::LoadOp::create(kb, vF32, source, at)
                                        .getResult());
            }
            SmallVector<Value> taps = transposeBlock(kb, rows);
            SmallVector<Value> next(acc);
            Value h = arith::MulIOp::create(kb, r, idx(kb, dl[0]));
            for (int64_t t = 0; t < count; ++t) {
              Value s = arith::AddIOp::create(kb, s0, idx(kb, t));
              Value dw = arith::MulIOp::create(kb, s, idx(kb, dl[1]));
              for (int64_t i = 0; i < G; ++i) {
                Value a = vector::BroadcastOp::create(
                    kb, vF32,
                    memref::LoadOp::create(
                        kb, x,
                        ValueRange{n, c, arith::AddIOp::create(kb, h0[i], h),
                                   arith::AddIOp::create(kb, w0[i], dw)}));
                next[i] = multiplyAdd(kb, next[i], a, taps[t], o.fma);
              }
            }
            return next;
          };
          auto rows = [&](OpBuilder &rb, Location rl, Value c, Value r,
                          ValueRange acc) {
            ImplicitLocOpBuilder kb(rl, rb);
            SmallVector<Value> cur(acc);
            int64_t whole = S / L * L;
            if (whole > 0) {
              auto sLoop = scf::ForOp::create(
                  kb, idx(kb, 0), idx(kb, whole), idx(kb, L), cur,
                  [&](OpBuilder &sb, Location sl, Value s0, ValueRange sAcc) {
                    ImplicitLocOpBuilder bb(sl, sb);
                    scf::YieldOp::create(bb, block(bb, c, r, s0, L, sAcc));
                  });
              cur.assign(sLoop.getResults().begin(), sLoop.getResults().end());
            }
            if (whole < S)
              cur = block(kb, c, r, idx(kb, whole), S - whole, cur);
            scf::YieldOp::create(kb, cur);
          };
          auto cLoop = scf::ForOp::create(
              gb, idx(gb, 0), idx(gb, C), idx(gb, 1), init,
              [&](OpBuilder &cb, Location cl, Value c, ValueRange cAcc) {
                auto rLoop = scf::ForOp::create(
                    cb, cl, idx(gb, 0), idx(gb, R), idx(gb, 1), cAcc,
                    [&](OpBuilder &rb, Location rl, Value r, ValueRange rAcc) {
                      rows(rb, rl, c, r, rAcc);
                    });
                scf::YieldOp::create(cb, cl, rLoop.getResults());
              });
          // Only the group's own pixels are stored (a mask, not an scf.if:
          // the loop body stays one nest for tq-cpu-outline-kernels).
          for (int64_t i = 0; i < G; ++i) {
            Value own = arith::CmpIOp::create(gb, arith::CmpIPredicate::ult,
                                              first[i], idx(gb, PQ));
            Value mask = arith::AndIOp::create(
                gb, filters, vector::BroadcastOp::create(gb, vMask, own));
            vector::ScatterOp::create(gb, Type(), yFlat, ValueRange{n, at[i]},
                                      lanes, mask, cLoop.getResult(i));
          }
        });
    if (copy) {
      // The source is read here now: it is freed after. The filter's
      // buffer is not needed.
      Value root = rootOf(source);
      for (Operation *user : llvm::make_early_inc_range(root.getUsers()))
        if (isa<memref::DeallocOp>(user) &&
            user->getBlock() == op->getBlock() &&
            copy->op->isBeforeInBlock(user) && user->isBeforeInBlock(op))
          rw.moveOpAfter(user, op);
      rw.eraseOp(copy->op);
    }
    rw.eraseOp(op);
    if (copy) {
      for (Operation *user : llvm::make_early_inc_range(w.getUsers()))
        rw.eraseOp(user);
      rw.eraseOp(w.getDefiningOp());
    }
    return success();
  }
};

} // namespace

void mlir::tq::floatkernels::populateSmallOutputConvPatterns(
    RewritePatternSet &patterns, KernelOptions o) {
  patterns.add<SmallOutputConvKernel>(patterns.getContext(), o);
}
