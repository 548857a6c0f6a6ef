//===- ConvNhwcKernel.cpp - f32 NHWC convolution of few taps --------------===//
//
// See the description of tq-cpu-float-kernels in tq/Conversion/Passes.td.
//
// linalg.conv_2d_nhwc_hwcf on f32 buffers with few taps (C·R·S), the form
// tq-cpu-channels-last gives a network's first, single-channel
// convolution: vectors of L filters per output pixel, a block of pixels'
// accumulators in registers, each tap one broadcast input per pixel and
// one filter vector shared by the block.
//
//===----------------------------------------------------------------------===//
#include "FloatKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::floatkernels;

namespace {

/// The most taps (C·R·S) the kernel unrolls.
constexpr int64_t kMaxTaps = 64;
/// Accumulators a block of pixels holds (of the 32 vector registers of
/// AVX-512, the rest for filter vectors and broadcasts).
constexpr int64_t kAccumulators = 24;

/// linalg.conv_2d_nhwc_hwcf on f32 buffers of at most kMaxTaps taps: for
/// each (image, output row), shared among the threads, blocks of up to
/// kAccumulators / ceil(F / L) output pixels, each pixel's F outputs as
/// vectors of L filters (the last masked), from the fill or else the
/// output's values, then each tap in (c, r, s) order: acc = multiplyAdd(acc,
/// x broadcast, filter vector), as the NCHW kernels sum the same taps (the
/// same bits), the epilogue applied as each vector is stored.
struct ConvNhwcKernel : FloatKernelPattern<linalg::Conv2DNhwcHwcfOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNhwcHwcfOp op,
                                PatternRewriter &rw) const override {
    FailureOr<WindowOperands> operands = matchWindowOperands(op, 4, rw);
    if (failed(operands))
      return failure();
    Value x = operands->x, w = operands->w, y = operands->y;
    ArrayRef<int64_t> xs = operands->xs, ws = operands->ws, ys = operands->ys;
    SmallVector<int64_t> st(op.getStrides().getValues<int64_t>()),
        dl(op.getDilations().getValues<int64_t>());
    int64_t N = xs[0], C = xs[3], R = ws[0], S = ws[1], F = ws[3], P = ys[1],
            Q = ys[2], L = o.lanes;
    if (C * R * S > kMaxTaps)
      return rw.notifyMatchFailure(op, "too many taps to unroll");
    int64_t vectors = llvm::divideCeil(F, L);
    int64_t block = std::clamp<int64_t>(kAccumulators / vectors, 1, 8);

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fillValue = takeFill(op, y, rw);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, y, 1, b);
    Value to = epi ? epi->target() : y;
    auto vF32 = VectorType::get({L}, b.getF32Type());
    // A max pooling of the output next: each image goes to a scratch
    // buffer of one image, pooled while it is in cache; the whole output is
    // never written.
    Value result = epi ? epi->target() : y;
    std::optional<FollowingPool<linalg::PoolingNhwcMaxOp>> pool;
    if (fillValue)
      pool = FollowingPool<linalg::PoolingNhwcMaxOp>::match(
          epi ? epi->op() : op, result);
    // Pixels [q0, q0 + count) of output row p of image n, stored at
    // (image, p, q) of `dst`.
    auto pixels = [&](ImplicitLocOpBuilder &kb, Value n, Value p, Value q0,
                      int64_t count, Value dst, Value image) {
      SmallVector<Value> qs, masks;
      for (int64_t j = 0; j < count; ++j)
        qs.push_back(arith::AddIOp::create(kb, q0, idx(kb, j)));
      for (int64_t v = 0; v < vectors; ++v)
        masks.push_back(tailMask(kb, L, v * L, F));
      Value fillV =
          fillValue
              ? vector::BroadcastOp::create(kb, vF32, fillValue).getResult()
              : Value();
      // acc[j · vectors + v]: pixel j, filters [v·L, v·L + L).
      SmallVector<Value> acc;
      for (int64_t j = 0; j < count; ++j)
        for (int64_t v = 0; v < vectors; ++v)
          acc.push_back(fillV
                            ? fillV
                            : loadF32(kb, vF32, y,
                                      {n, p, qs[j], idx(kb, v * L)}, masks[v]));
      Value h0 = arith::MulIOp::create(kb, p, idx(kb, st[0]));
      SmallVector<Value> w0;
      for (int64_t j = 0; j < count; ++j)
        w0.push_back(arith::MulIOp::create(kb, qs[j], idx(kb, st[1])));
      for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t s = 0; s < S; ++s) {
            SmallVector<Value> filters;
            for (int64_t v = 0; v < vectors; ++v)
              filters.push_back(
                  loadF32(kb, vF32, w,
                          {idx(kb, r), idx(kb, s), idx(kb, c), idx(kb, v * L)},
                          masks[v]));
            Value h = arith::AddIOp::create(kb, h0, idx(kb, r * dl[0]));
            for (int64_t j = 0; j < count; ++j) {
              Value col = arith::AddIOp::create(kb, w0[j], idx(kb, s * dl[1]));
              Value in = vector::BroadcastOp::create(
                  kb, vF32,
                  memref::LoadOp::create(kb, x,
                                         ValueRange{n, h, col, idx(kb, c)}));
              for (int64_t v = 0; v < vectors; ++v)
                acc[j * vectors + v] = multiplyAdd(kb, acc[j * vectors + v], in,
                                                   filters[v], o.fma);
            }
          }
      for (int64_t j = 0; j < count; ++j)
        for (int64_t v = 0; v < vectors; ++v) {
          Value out = acc[j * vectors + v], f = idx(kb, v * L);
          if (epi)
            out = epi->apply(kb, out, ValueRange{n, p, qs[j]}, f, masks[v]);
          SmallVector<Value> at = {image, p, qs[j], f};
          if (masks[v])
            vector::MaskedStoreOp::create(kb, dst, at, masks[v], out);
          else
            vector::StoreOp::create(kb, out, dst, at);
        }
    };
    int64_t full = Q / block * block;
    // Row p of image n into (image, p) of dst.
    auto row = [&](ImplicitLocOpBuilder &rb, Value n, Value p, Value dst,
                   Value image) {
      if (full > 0)
        scf::buildLoopNest(rb, rb.getLoc(), ValueRange{idx(rb, 0)},
                           ValueRange{idx(rb, full)},
                           ValueRange{idx(rb, block)},
                           [&](OpBuilder &qb, Location ql, ValueRange q) {
                             ImplicitLocOpBuilder kb(ql, qb);
                             pixels(kb, n, p, q[0], block, dst, image);
                           });
      if (full < Q)
        pixels(rb, n, p, idx(rb, full), Q - full, dst, image);
    };
    if (pool) {
      pool->hoist(b, epi ? epi->op() : op);
      forEachImageWithScratch(
          b, N, o.threads, {MemRefType::get({1, P, Q, F}, b.getF32Type())},
          [&](ImplicitLocOpBuilder &ib, Value n, ValueRange scratch) {
            scf::buildLoopNest(ib, ib.getLoc(), ValueRange{idx(ib, 0)},
                               ValueRange{idx(ib, P)}, ValueRange{idx(ib, 1)},
                               [&](OpBuilder &pb, Location l, ValueRange p) {
                                 ImplicitLocOpBuilder rb(l, pb);
                                 row(rb, n, p[0], scratch[0], idx(rb, 0));
                               });
            pool->emit(ib, scratch[0], n);
          });
      eraseWithEpilogue(op, epi, rw);
      pool->erase(result, rw);
      return success();
    }
    cpu::buildIndependentLoops(b, b.getLoc(), ValueRange{idx(b, 0), idx(b, 0)},
                               ValueRange{idx(b, N), idx(b, P)},
                               ValueRange{idx(b, 1), idx(b, 1)}, o.threads,
                               [&](OpBuilder &nb, Location l, ValueRange np) {
                                 ImplicitLocOpBuilder rb(l, nb);
                                 row(rb, np[0], np[1], to, np[0]);
                               });
    eraseWithEpilogue(op, epi, rw);
    return success();
  }
};

} // namespace

void mlir::tq::floatkernels::populateConvNhwcKernelPatterns(
    RewritePatternSet &patterns, KernelOptions o) {
  patterns.add<ConvNhwcKernel>(patterns.getContext(), o);
}
