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
/// Accumulators a block of pixels holds: of the 32 vector registers of
/// AVX-512, the rest for filter vectors and broadcasts; of 16 (AVX2,
/// AVX-VNNI and the generic target's plan), half, for LLVM keeps the
/// filter vectors of all taps (loop invariants) in registers or on the
/// stack too. On AVX2 the Fashion CNN's first
/// convolution (16 filters, 3 × 3 taps, 64 images) took 0.32 ms with 16
/// accumulators, 0.26 with 12, 0.19 with 8 and 0.20 with 6.
int64_t accumulators(int64_t registers) {
  return registers >= 32 ? 24 : registers / 2;
}

/// Image n of the padded NHWC input `pp` into `img` (1 × H × W × C, H and
/// W padded): rows of W·C values, the border the pad value, the interior
/// the source's row, L values at a time (the last of a run masked).
void padImage(ImplicitLocOpBuilder &b, const PaddedPlanes &pp, Value n,
              Value img, int64_t L) {
  ArrayRef<int64_t> is = cast<MemRefType>(img.getType()).getShape(),
                    ss = cast<MemRefType>(pp.source.getType()).getShape();
  int64_t H = is[1], WC = is[2] * is[3], srcH = ss[1], srcWC = ss[2] * ss[3],
          C = is[3];
  Value rows = collapse(b, img, {{0, 1}, {2, 3}});
  Value src = collapse(b, slice(b, pp.source, n), {{0}, {1, 2}});
  auto vF32 = VectorType::get({L}, b.getF32Type());
  Value padV = vector::BroadcastOp::create(b, vF32, pp.padValue);
  // Values [e0, e1) of rows [h0, h1): `body` with the row, the first value
  // of a vector and its mask (none when whole).
  auto runs =
      [&](int64_t h0, int64_t h1, int64_t e0, int64_t e1,
          llvm::function_ref<void(ImplicitLocOpBuilder &, Value, Value, Value)>
              body) {
        if (h0 >= h1 || e0 >= e1)
          return;
        int64_t whole = e0 + (e1 - e0) / L * L;
        scf::buildLoopNest(
            b, b.getLoc(), ValueRange{idx(b, h0)}, ValueRange{idx(b, h1)},
            ValueRange{idx(b, 1)},
            [&](OpBuilder &hb, Location l, ValueRange h) {
              ImplicitLocOpBuilder kb(l, hb);
              if (whole > e0)
                scf::buildLoopNest(
                    kb, l, ValueRange{idx(kb, e0)}, ValueRange{idx(kb, whole)},
                    ValueRange{idx(kb, L)},
                    [&](OpBuilder &eb, Location el, ValueRange e) {
                      ImplicitLocOpBuilder vb(el, eb);
                      body(vb, h[0], e[0], Value());
                    });
              if (whole < e1)
                body(kb, h[0], idx(kb, whole), tailMask(kb, L, whole, e1));
            });
      };
  auto fill = [&](ImplicitLocOpBuilder &kb, Value h, Value e, Value mask) {
    if (mask)
      vector::MaskedStoreOp::create(kb, rows, ValueRange{h, e}, mask, padV);
    else
      vector::StoreOp::create(kb, padV, rows, ValueRange{h, e});
  };
  int64_t top = pp.top, left = pp.left * C;
  runs(0, top, 0, WC, fill);
  runs(top + srcH, H, 0, WC, fill);
  runs(top, top + srcH, 0, left, fill);
  runs(top, top + srcH, left + srcWC, WC, fill);
  runs(0, srcH, 0, srcWC,
       [&](ImplicitLocOpBuilder &kb, Value h, Value e, Value mask) {
         Value v = loadF32(kb, vF32, src, ValueRange{h, e}, mask);
         SmallVector<Value> at = {arith::AddIOp::create(kb, h, idx(kb, top)),
                                  arith::AddIOp::create(kb, e, idx(kb, left))};
         if (mask)
           vector::MaskedStoreOp::create(kb, rows, at, mask, v);
         else
           vector::StoreOp::create(kb, v, rows, at);
       });
}

/// linalg.conv_2d_nhwc_hwcf on f32 buffers of at most kMaxTaps taps: for
/// each (image, output row), shared among the threads, blocks of up to
/// accumulators() / ceil(F / L) output pixels, each pixel's F outputs as
/// vectors of L filters (the last masked), from the fill or else the
/// output's values, then each tap in the op's (r, s, c) order: acc =
/// multiplyAdd(acc, x broadcast, filter vector); on one channel the order
/// in which the NCHW kernels sum the same taps (the same bits). The
/// epilogue is applied as each vector is stored. With a max pooling next
/// (FollowingPool) or a padded input (PaddedPlanes), image by image in
/// scratch buffers: the output pooled, the input padded, in cache. With
/// fewer images than threads, the rows are shared instead and the pooling
/// is left on its own. Row-major operands only, as ConvKernel.
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
    // As ConvKernel: row-major operands only (a view of a batch's share
    // stays with the loops, as its NCHW form did).
    for (Value v : {x, w, y})
      if (!cast<MemRefType>(v.getType()).getLayout().isIdentity())
        return rw.notifyMatchFailure(op, "operand is not row-major");
    int64_t vectors = llvm::divideCeil(F, L);
    int64_t block =
        std::clamp<int64_t>(accumulators(o.registers) / vectors, 1, 8);

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fillValue = takeFill(op, y, rw);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, y, 1, b);
    Value to = epi ? epi->target() : y;
    auto vF32 = VectorType::get({L}, b.getF32Type());
    // A padded input: each image padded into a scratch buffer instead.
    std::optional<PaddedPlanes> padded =
        PaddedPlanes::match(op, x, /*channelsLast=*/true);
    if (padded && epi && !padded->onlyOwnPlanes(*epi, ys))
      padded.reset();
    // A max pooling of the output next: each image goes to a scratch
    // buffer of one image, pooled while it is in cache; the whole output is
    // never written.
    Value result = epi ? epi->target() : y;
    std::optional<FollowingPool<linalg::PoolingNhwcMaxOp>> pool;
    // Images are shared among the threads: with fewer images than threads
    // (batch 1), the rows are instead, and the pooling stays on its own.
    bool perImage = N >= o.threads;
    if (fillValue && perImage)
      pool = FollowingPool<linalg::PoolingNhwcMaxOp>::match(
          epi ? epi->op() : op, result);
    // Pixels [q0, q0 + count) of output row p of image n, stored at
    // (image, dstP, q) of `dst`.
    // Input pixels are read from (srcImage, h, w) of `src`: x's image n, or
    // the padded scratch image.
    auto pixels = [&](ImplicitLocOpBuilder &kb, Value n, Value p, Value q0,
                      int64_t count, Value dst, Value image, Value dstP,
                      Value src, Value srcImage) {
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
      for (int64_t r = 0; r < R; ++r)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t c = 0; c < C; ++c) {
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
                  memref::LoadOp::create(
                      kb, src, ValueRange{srcImage, h, col, idx(kb, c)}));
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
          SmallVector<Value> at = {image, dstP, qs[j], f};
          if (masks[v])
            vector::MaskedStoreOp::create(kb, dst, at, masks[v], out);
          else
            vector::StoreOp::create(kb, out, dst, at);
        }
    };
    int64_t full = Q / block * block;
    // Row p of image n into row dstP (p by default) of image `image` of
    // dst.
    auto row = [&](ImplicitLocOpBuilder &rb, Value n, Value p, Value dst,
                   Value image, Value in, Value inImage, Value dstP = Value()) {
      if (!dstP)
        dstP = p;
      if (full > 0)
        scf::buildLoopNest(
            rb, rb.getLoc(), ValueRange{idx(rb, 0)}, ValueRange{idx(rb, full)},
            ValueRange{idx(rb, block)},
            [&](OpBuilder &qb, Location ql, ValueRange q) {
              ImplicitLocOpBuilder kb(ql, qb);
              pixels(kb, n, p, q[0], block, dst, image, dstP, in, inImage);
            });
      if (full < Q)
        pixels(rb, n, p, idx(rb, full), Q - full, dst, image, dstP, in,
               inImage);
    };
    if (padded && !perImage) {
      // One image at a time, padded into one scratch buffer, its rows
      // shared among the threads.
      Value img = memref::AllocOp::create(
          b, MemRefType::get({1, xs[1], xs[2], C}, b.getF32Type()),
          b.getI64IntegerAttr(64));
      scf::buildLoopNest(
          b, b.getLoc(), ValueRange{idx(b, 0)}, ValueRange{idx(b, N)},
          ValueRange{idx(b, 1)}, [&](OpBuilder &nb, Location l, ValueRange n) {
            ImplicitLocOpBuilder ib(l, nb);
            padImage(ib, *padded, n[0], img, L);
            cpu::buildIndependentLoops(
                ib, l, ValueRange{idx(ib, 0)}, ValueRange{idx(ib, P)},
                ValueRange{idx(ib, 1)}, o.threads,
                [&](OpBuilder &pb, Location pl, ValueRange p) {
                  ImplicitLocOpBuilder rb(pl, pb);
                  row(rb, n[0], p[0], to, n[0], img, idx(rb, 0));
                });
          });
      memref::DeallocOp::create(b, img);
    } else if (pool || padded) {
      if (pool)
        pool->hoist(b, epi ? epi->op() : op);
      // Pooling windows that do not overlap down the rows: each window's
      // rows of output are computed into a scratch of those rows (in L1)
      // and pooled at once.
      std::optional<std::pair<int64_t, int64_t>> windows =
          pool ? pool->rowWindows() : std::nullopt;
      SmallVector<MemRefType> scratch;
      if (pool)
        scratch.push_back(MemRefType::get(
            {1, windows ? windows->first : P, Q, F}, b.getF32Type()));
      if (padded)
        scratch.push_back(
            MemRefType::get({1, xs[1], xs[2], C}, b.getF32Type()));
      forEachImageWithScratch(
          b, N, o.threads, scratch,
          [&](ImplicitLocOpBuilder &ib, Value n, ValueRange buffers) {
            Value in = x, inImage = n;
            if (padded) {
              in = buffers.back();
              inImage = idx(ib, 0);
              padImage(ib, *padded, n, in, L);
            }
            Value dst = pool ? buffers[0] : to;
            Value image = pool ? idx(ib, 0) : n;
            if (windows) {
              auto [rows, stride] = *windows;
              scf::buildLoopNest(
                  ib, ib.getLoc(), ValueRange{idx(ib, 0)},
                  ValueRange{idx(ib, pool->outputRows())},
                  ValueRange{idx(ib, 1)},
                  [&](OpBuilder &pb, Location l, ValueRange pw) {
                    ImplicitLocOpBuilder rb(l, pb);
                    Value p0 =
                        arith::MulIOp::create(rb, pw[0], idx(rb, stride));
                    // The window's rows, a loop (a tall window would
                    // otherwise unroll the row's code that many times).
                    scf::buildLoopNest(
                        rb, l, ValueRange{idx(rb, 0)},
                        ValueRange{idx(rb, rows)}, ValueRange{idx(rb, 1)},
                        [&](OpBuilder &ob, Location il, ValueRange i) {
                          ImplicitLocOpBuilder wb(il, ob);
                          row(wb, n, arith::AddIOp::create(wb, p0, i[0]), dst,
                              image, in, inImage, i[0]);
                        });
                    pool->emit(rb, dst, n, pw[0]);
                  });
              return;
            }
            scf::buildLoopNest(ib, ib.getLoc(), ValueRange{idx(ib, 0)},
                               ValueRange{idx(ib, P)}, ValueRange{idx(ib, 1)},
                               [&](OpBuilder &pb, Location l, ValueRange p) {
                                 ImplicitLocOpBuilder rb(l, pb);
                                 row(rb, n, p[0], dst, image, in, inImage);
                               });
            if (pool)
              pool->emit(ib, buffers[0], n);
          });
    }
    if (pool || padded) {
      if (padded && padded->sourceDealloc)
        rw.moveOpBefore(padded->sourceDealloc, op);
      eraseWithEpilogue(op, epi, rw);
      if (pool)
        pool->erase(result, rw);
      if (padded)
        for (Operation *padOp : padded->ops)
          rw.eraseOp(padOp);
      return success();
    }
    cpu::buildIndependentLoops(b, b.getLoc(), ValueRange{idx(b, 0), idx(b, 0)},
                               ValueRange{idx(b, N), idx(b, P)},
                               ValueRange{idx(b, 1), idx(b, 1)}, o.threads,
                               [&](OpBuilder &nb, Location l, ValueRange np) {
                                 ImplicitLocOpBuilder rb(l, nb);
                                 row(rb, np[0], np[1], to, np[0], x, np[0]);
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
