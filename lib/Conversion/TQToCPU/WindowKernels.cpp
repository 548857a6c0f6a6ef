//===- WindowKernels.cpp - f32 depthwise convolution and pooling ----------===//
//
// See the description of tq-cpu-float-kernels in tq/Conversion/Passes.td.
//
// Ops with a small window per output (a depthwise convolution, max and sum
// pooling) on NCHW f32 buffers: per output row, vectors of L outputs held
// in registers over the window, each tap's inputs one load (or, along a W
// stride, one load of L·stride inputs with every stride-th lane picked).
//
//===----------------------------------------------------------------------===//
#include "FloatKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::floatkernels;

namespace {

/// Loops over the output rows `ubs` = (N, C, P) of an NCHW-like op, the
/// first two shared among the threads, calling `body` with (n, c, p).
void emitRowLoops(
    ImplicitLocOpBuilder &b, std::array<int64_t, 3> ubs, int64_t threads,
    llvm::function_ref<void(ImplicitLocOpBuilder &, ValueRange)> body) {
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  Value c0 = idx(0), c1 = idx(1);
  auto inner = [&](OpBuilder &nb, Location loc, ValueRange ivs) {
    ImplicitLocOpBuilder ib(loc, nb);
    body(ib, ivs);
  };
  if (threads > 1 && ubs[0] * ubs[1] > 1) {
    auto par = scf::ParallelOp::create(b, ValueRange{c0, c0},
                                       ValueRange{idx(ubs[0]), idx(ubs[1])},
                                       ValueRange{c1, c1});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(par.getBody()->getTerminator());
    scf::buildLoopNest(b, b.getLoc(), ValueRange{c0}, ValueRange{idx(ubs[2])},
                       ValueRange{c1},
                       [&](OpBuilder &nb, Location loc, ValueRange p) {
                         inner(nb, loc,
                               ValueRange{par.getInductionVars()[0],
                                          par.getInductionVars()[1], p[0]});
                       });
    return;
  }
  scf::buildLoopNest(b, b.getLoc(), ValueRange{c0, c0, c0},
                     ValueRange{idx(ubs[0]), idx(ubs[1]), idx(ubs[2])},
                     ValueRange{c1, c1, c1}, inner);
}

/// The vectors of L outputs of a row of Q: a loop over those before
/// `unmasked`, then each one left, masked.
void emitRowVectors(
    ImplicitLocOpBuilder &b, int64_t L, int64_t unmasked, int64_t Q,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, bool)> vectorAt) {
  if (unmasked > 0)
    scf::buildLoopNest(b, b.getLoc(), ValueRange{idx(b, 0)},
                       ValueRange{idx(b, unmasked)}, ValueRange{idx(b, L)},
                       [&](OpBuilder &nb, Location l, ValueRange q) {
                         ImplicitLocOpBuilder qb(l, nb);
                         vectorAt(qb, q[0], false);
                       });
  for (int64_t q0 = unmasked; q0 < Q; q0 += L)
    vectorAt(b, idx(b, q0), true);
}

/// The L inputs of one window tap for L outputs of a row along a W stride
/// sw: columns col, col + sw, ... of the row `at` (its last index is col),
/// from one load of L·sw contiguous ones, every sw-th lane picked
/// (vector.shuffle) when sw > 1. With `masked`, the lanes past the row's W
/// columns read 0.
Value loadTap(ImplicitLocOpBuilder &b, Value x, ArrayRef<Value> at, int64_t L,
              int64_t sw, int64_t W, bool masked) {
  auto vIn = VectorType::get({L * sw}, b.getF32Type());
  Value v;
  if (masked) {
    Value left = arith::SubIOp::create(
        b, idx(b, W), arith::MinUIOp::create(b, at.back(), idx(b, W)));
    Value m = vector::CreateMaskOp::create(
        b, VectorType::get({L * sw}, b.getI1Type()), ValueRange{left});
    v = vector::MaskedLoadOp::create(b, vIn, x, at, m, zeros(b, vIn));
  } else {
    v = vector::LoadOp::create(b, vIn, x, at);
  }
  if (sw == 1)
    return v;
  SmallVector<int64_t> pick;
  for (int64_t l = 0; l < L; ++l)
    pick.push_back(l * sw);
  return vector::ShuffleOp::create(b, v, v, pick);
}

/// Stores the vector `padV` over the border of the padded image `in`
/// (H x W pixels of `channels` channels, a multiple of L), whose interior is
/// the srcH x srcW pixels from (top, left): one loop nest over the pixels
/// with an scf.if, so that a loop around it stays one kernel to
/// tq-cpu-outline-kernels.
void fillBorder(ImplicitLocOpBuilder &b, Value in, Value padV, int64_t H,
                int64_t W, int64_t top, int64_t srcH, int64_t left,
                int64_t srcW, int64_t channels, int64_t L) {
  scf::buildLoopNest(
      b, b.getLoc(), ValueRange{idx(b, 0), idx(b, 0)},
      ValueRange{idx(b, H), idx(b, W)}, ValueRange{idx(b, 1), idx(b, 1)},
      [&](OpBuilder &hb, Location l, ValueRange hw) {
        ImplicitLocOpBuilder kb(l, hb);
        auto outside = [&](Value v, int64_t lo, int64_t hi) {
          return arith::OrIOp::create(
              kb,
              arith::CmpIOp::create(kb, arith::CmpIPredicate::ult, v,
                                    idx(kb, lo)),
              arith::CmpIOp::create(kb, arith::CmpIPredicate::uge, v,
                                    idx(kb, hi)));
        };
        Value border = arith::OrIOp::create(kb, outside(hw[0], top, top + srcH),
                                            outside(hw[1], left, left + srcW));
        auto ifBorder = scf::IfOp::create(kb, border, false);
        ImplicitLocOpBuilder tb(l, ifBorder.getThenBodyBuilder());
        for (int64_t c0 = 0; c0 < channels; c0 += L)
          vector::StoreOp::create(tb, padV, in,
                                  ValueRange{hw[0], hw[1], idx(tb, c0)});
      });
}

/// The value every element of `op`'s output gets, if `op` is a fill: a
/// linalg.fill, or an op with no inputs whose body yields a value defined
/// outside it (the `linalg.map` a bufferized `tensor.pad` fills with).
Value fillValueOf(Operation *op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getInputs()[0];
  auto lin = dyn_cast<linalg::LinalgOp>(op);
  if (!lin || lin.getNumDpsInputs() != 0 || lin.getNumDpsInits() != 1 ||
      op->getNumRegions() != 1 || op->getRegion(0).empty())
    return Value();
  auto yield =
      dyn_cast<linalg::YieldOp>(op->getRegion(0).front().getTerminator());
  if (!yield || yield.getNumOperands() != 1 ||
      op->isAncestor(yield.getOperand(0).getParentRegion()->getParentOp()))
    return Value();
  return yield.getOperand(0);
}

} // namespace

bool mlir::tq::floatkernels::PaddedPlanes::onlyOwnPlanes(
    const VectorEpilogue &epi, ArrayRef<int64_t> outShape) const {
  for (Value v : epi.op()->getOperands())
    if (rootOf(v) == root &&
        !((v == source || v == root) && v.getType() == source.getType() &&
          cast<MemRefType>(v.getType()).getShape() == outShape))
      return false;
  return true;
}

std::optional<PaddedPlanes>
mlir::tq::floatkernels::PaddedPlanes::match(Operation *conv, Value x,
                                            bool channelsLast) {
  memref::ExpandShapeOp expand;
  memref::AllocOp alloc;
  if (channelsLast) {
    alloc = x.getDefiningOp<memref::AllocOp>();
  } else {
    expand = x.getDefiningOp<memref::ExpandShapeOp>();
    if (!expand || !x.hasOneUse() || expand.getSrcType().getRank() != 4)
      return std::nullopt;
    alloc = expand.getSrc().getDefiningOp<memref::AllocOp>();
  }
  Block *block = conv->getBlock();
  if (!alloc || alloc->getBlock() != block)
    return std::nullopt;
  PaddedPlanes pp;
  Operation *fill = nullptr, *copy = nullptr, *dealloc = nullptr;
  memref::SubViewOp interior;
  for (Operation *user : alloc->getUsers()) {
    if (user == expand || user == conv)
      continue;
    if (isa<memref::DeallocOp>(user) && !dealloc) {
      dealloc = user;
    } else if (auto sv = dyn_cast<memref::SubViewOp>(user); sv && !interior) {
      interior = sv;
    } else if (Value v = fillValueOf(user); v && !fill && v.getType().isF32()) {
      fill = user;
      pp.padValue = v;
    } else {
      return std::nullopt;
    }
  }
  if (!fill || !interior || !interior->hasOneUse() ||
      fill->getBlock() != block || (dealloc && dealloc->getBlock() != block))
    return std::nullopt;
  copy = *interior->getUsers().begin();
  if (auto c = dyn_cast<memref::CopyOp>(copy);
      c && c.getTarget() == interior.getResult())
    pp.source = c.getSource();
  else if (auto c = dyn_cast<linalg::CopyOp>(copy);
           c && c.getDpsInits()[0] == interior.getResult())
    pp.source = c.getInputs()[0];
  if (!pp.source || copy->getBlock() != block)
    return std::nullopt;
  // The interior: unit strides, a static offset in H and W only, the
  // source's whole shape.
  // The pad only in H and W: N and C (or G) as the source's.
  auto src = dyn_cast<MemRefType>(pp.source.getType());
  auto padded = cast<MemRefType>(alloc.getType());
  int64_t cDim = channelsLast ? 3 : 1;
  if (!src || !src.getLayout().isIdentity() ||
      src.getShape() != interior.getType().getShape() || src.getRank() != 4 ||
      padded.getRank() != 4 || src.getDimSize(0) != padded.getDimSize(0) ||
      src.getDimSize(cDim) != padded.getDimSize(cDim) ||
      !interior.hasUnitStride() ||
      llvm::any_of(interior.getStaticOffsets(), ShapedType::isDynamic))
    return std::nullopt;
  ArrayRef<int64_t> off = interior.getStaticOffsets();
  int64_t hDim = channelsLast ? 1 : 2;
  if (off[0] != 0 || off[channelsLast ? 3 : 1] != 0)
    return std::nullopt;
  pp.top = off[hDim];
  pp.left = off[hDim + 1];
  // Fill, then copy, then the convolution, the source's buffer untouched
  // between the copy and the convolution (the kernel reads it instead),
  // the padded buffer freed after the convolution.
  pp.root = rootOf(pp.source);
  if (!fill->isBeforeInBlock(copy) || !copy->isBeforeInBlock(conv) ||
      (dealloc && !conv->isBeforeInBlock(dealloc)) ||
      usedBetween(pp.root, copy, conv))
    return std::nullopt;
  // A dealloc of the source's buffer before the convolution moves after
  // it.
  for (Operation *user : pp.root.getUsers())
    if (isa<memref::DeallocOp>(user)) {
      if (user->getBlock() != block)
        return std::nullopt;
      if (user->isBeforeInBlock(conv))
        pp.sourceDealloc = user;
    }
  pp.ops = {copy, interior, fill};
  if (dealloc)
    pp.ops.push_back(dealloc);
  if (expand)
    pp.ops.push_back(expand);
  pp.ops.push_back(alloc);
  return pp;
}

namespace {

/// A depthwise convolution of small planes, whose rows hold at most 4
/// outputs, computed in channels-last order image by image, in
/// scratch buffers that stay in cache: the image's planes are transposed (L × L
/// blocks in registers) into an H × W × C buffer (padded with the pad value
/// when the input is a PaddedPlanes), each output pixel is computed as
/// vectors of L channels over the window (kh, kw in order, from the op's
/// fill value), and the H·W × C result is transposed back, the epilogue
/// (vectors along the flattened plane) applied as each channel's pixels are
/// stored. Each output is the same sum in the same order as in the row
/// kernel: the same bits. Fails, changing nothing, where it does not apply.
LogicalResult rewriteChannelsLast(linalg::Conv2DNgchwGfchwOp op,
                                  std::optional<PaddedPlanes> padded,
                                  const KernelOptions &o, PatternRewriter &rw) {
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1],
        y = op.getDpsInits()[0];
  ArrayRef<int64_t> xs = cast<MemRefType>(x.getType()).getShape(),
                    ws = cast<MemRefType>(w.getType()).getShape(),
                    ys = cast<MemRefType>(y.getType()).getShape();
  SmallVector<int64_t> st(op.getStrides().getValues<int64_t>()),
      dl(op.getDilations().getValues<int64_t>());
  int64_t N = xs[0], G = xs[1], H = xs[3], W = xs[4], R = ws[3], S = ws[4],
          P = ys[3], Q = ys[4], L = o.lanes;
  int64_t GP = llvm::alignTo(G, L);
  // Rows of at most 4 outputs (a quarter of a vector of 16, half of one of
  // 8), channels for at least half a vector.
  if (Q > 4 || 2 * G < L)
    return failure();
  // Both scratch buffers (per thread) stay in cache: at most 256 KiB.
  if ((H * W + P * Q) * GP * 4 > 256 * 1024)
    return failure();
  // The planes are read and written flattened: H and W of the input, P and
  // Q of the output (strided views of rows stay with the row kernel).
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
          cast<MemRefType>(x.getType()), {{0}, {1, 2}, {3, 4}}) ||
      !memref::CollapseShapeOp::isGuaranteedCollapsible(
          cast<MemRefType>(y.getType()), {{0}, {1}, {2}, {3, 4}}))
    return failure();
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() || fill.getDpsInits()[0] != y ||
      !fill.getInputs()[0].getType().isF32())
    return failure();
  // The view that drops the unit group dim, if the generic after the op
  // reads the output through it; not one it writes in place.
  memref::CollapseShapeOp groupView;
  if (auto view =
          dyn_cast_or_null<memref::CollapseShapeOp>(nextPastAllocations(op));
      view && view.getSrc() == y && view->hasOneUse() &&
      view.getReassociationIndices() ==
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}}) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(*view->user_begin());
    if (!dps || !llvm::is_contained(dps.getDpsInits(), view.getResult()))
      groupView = view;
  }

  // From here on the op is rewritten. The epilogue is matched once the fill
  // is gone (the kernel must be the output's only writer), as vectors along
  // the flattened plane; a generic that only fits rows stays on its own.
  ImplicitLocOpBuilder b(op.getLoc(), rw);
  Value fillValue = fill.getInputs()[0];
  rw.eraseOp(fill);
  std::optional<VectorEpilogue> epi = VectorEpilogue::match(op, y, 2);
  bool throughView = false;
  if (!epi && groupView)
    throughView =
        bool(epi = VectorEpilogue::match(groupView, groupView.getResult(), 2));
  // The epilogue may read the padded source's buffer only as the output's
  // own planes (as in the row kernel); else the planes are read from the
  // padded buffer.
  if (padded && epi && !padded->onlyOwnPlanes(*epi, {N, G, P, Q}))
    padded.reset();
  if (epi) {
    b.setLoc(epi->fusedLoc(op));
    epi->prepare(b);
  }
  Type f32 = b.getF32Type();
  auto vF32 = VectorType::get({L}, f32);
  auto vMask = VectorType::get({L}, b.getI1Type());
  Value zeroV = zeros(b, vF32);
  auto maskOf = [&](ImplicitLocOpBuilder &mb, int64_t valid) -> Value {
    if (valid == L)
      return Value();
    return vector::ConstantMaskOp::create(mb, vMask, ArrayRef<int64_t>{valid});
  };

  // The filter as [tap][channel], channels past G zero.
  Value wT = memref::AllocOp::create(b, MemRefType::get({R * S, GP}, f32),
                                     b.getI64IntegerAttr(64));
  linalg::FillOp::create(b,
                         ValueRange{arith::ConstantFloatOp::create(
                             b, b.getF32Type(), APFloat(0.0f))},
                         ValueRange{wT});
  scf::buildLoopNest(
      b, b.getLoc(), ValueRange{idx(b, 0), idx(b, 0), idx(b, 0)},
      ValueRange{idx(b, G), idx(b, R), idx(b, S)},
      ValueRange{idx(b, 1), idx(b, 1), idx(b, 1)},
      [&](OpBuilder &nb, Location l, ValueRange iv) {
        ImplicitLocOpBuilder ib(l, nb);
        Value c0 = idx(ib, 0);
        Value v = memref::LoadOp::create(
            ib, w, ValueRange{iv[0], c0, c0, iv[1], iv[2]});
        Value tap = arith::AddIOp::create(
            ib, arith::MulIOp::create(ib, iv[1], idx(ib, S)), iv[2]);
        memref::StoreOp::create(ib, v, wT, ValueRange{tap, iv[0]});
      });

  // The planes read: the padded source's, or x's, as [n][g][h·w].
  Value src = padded ? collapse(b, padded->source, {{0}, {1}, {2, 3}})
                     : collapse(b, x, {{0}, {1, 2}, {3, 4}});
  int64_t srcH = H, srcW = W, top = 0, left = 0;
  if (padded) {
    ArrayRef<int64_t> ss =
        cast<MemRefType>(padded->source.getType()).getShape();
    srcH = ss[2];
    srcW = ss[3];
    top = padded->top;
    left = padded->left;
  }
  Value to = epi ? epi->target() : y;
  int64_t toRank = cast<MemRefType>(to.getType()).getRank();
  SmallVector<ReassociationIndices> toGroups;
  for (int64_t d = 0; d < toRank - 2; ++d)
    toGroups.push_back({d});
  toGroups.push_back({toRank - 2, toRank - 1});
  Value dst = collapse(b, to, toGroups);

  forEachImageWithScratch(
      b, N, o.threads,
      {MemRefType::get({H, W, GP}, f32), MemRefType::get({P * Q, GP}, f32)},
      [&](ImplicitLocOpBuilder &ib, Value n, ValueRange scratch) {
        Location loc = ib.getLoc();
        Value in = scratch[0], res = scratch[1];
        // The border, with the pad value.
        if (padded) {
          fillBorder(ib, in,
                     vector::BroadcastOp::create(ib, vF32, padded->padValue), H,
                     W, top, srcH, left, srcW, GP, L);
        }
        // The planes, transposed into the interior: rows past the last
        // channel repeat it, and land in the channels past G.
        forEachBlock(ib, G, srcH * srcW, L,
                     [&](ImplicitLocOpBuilder &kb, Value c0, int64_t cn,
                         Value hw0, int64_t hwn) {
                       Value hwMask = maskOf(kb, hwn);
                       SmallVector<Value> rows;
                       for (int64_t i = 0; i < L; ++i) {
                         Value c = arith::AddIOp::create(
                             kb, c0, idx(kb, std::min(i, cn - 1)));
                         SmallVector<Value> at{n, c, hw0};
                         rows.push_back(
                             hwMask ? vector::MaskedLoadOp::create(
                                          kb, vF32, src, at, hwMask, zeroV)
                                          .getResult()
                                    : vector::LoadOp::create(kb, vF32, src, at)
                                          .getResult());
                       }
                       SmallVector<Value> pixels = transposeBlock(kb, rows);
                       for (int64_t j = 0; j < hwn; ++j) {
                         Value pix = arith::AddIOp::create(kb, hw0, idx(kb, j));
                         Value h = arith::AddIOp::create(
                             kb, arith::DivUIOp::create(kb, pix, idx(kb, srcW)),
                             idx(kb, top));
                         Value wc = arith::AddIOp::create(
                             kb, arith::RemUIOp::create(kb, pix, idx(kb, srcW)),
                             idx(kb, left));
                         vector::StoreOp::create(kb, pixels[j], in,
                                                 ValueRange{h, wc, c0});
                       }
                     });
        // Each output pixel, L channels at a time.
        Value fillV = vector::BroadcastOp::create(ib, vF32, fillValue);
        scf::buildLoopNest(
            ib, loc, ValueRange{idx(ib, 0), idx(ib, 0), idx(ib, 0)},
            ValueRange{idx(ib, P), idx(ib, Q), idx(ib, GP)},
            ValueRange{idx(ib, 1), idx(ib, 1), idx(ib, L)},
            [&](OpBuilder &pb, Location l, ValueRange pqc) {
              ImplicitLocOpBuilder kb(l, pb);
              Value h0 = arith::MulIOp::create(kb, pqc[0], idx(kb, st[0]));
              Value w0 = arith::MulIOp::create(kb, pqc[1], idx(kb, st[1]));
              Value acc = fillV;
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s) {
                  Value h = arith::AddIOp::create(kb, h0, idx(kb, r * dl[0]));
                  Value wc = arith::AddIOp::create(kb, w0, idx(kb, s * dl[1]));
                  Value xv = vector::LoadOp::create(kb, vF32, in,
                                                    ValueRange{h, wc, pqc[2]});
                  Value wv = vector::LoadOp::create(
                      kb, vF32, wT, ValueRange{idx(kb, r * S + s), pqc[2]});
                  acc = multiplyAdd(kb, acc, wv, xv, o.fma);
                }
              Value pix = arith::AddIOp::create(
                  kb, arith::MulIOp::create(kb, pqc[0], idx(kb, Q)), pqc[1]);
              vector::StoreOp::create(kb, acc, res, ValueRange{pix, pqc[2]});
            });
        // Back to planes, with the epilogue.
        forEachBlock(ib, G, P * Q, L,
                     [&](ImplicitLocOpBuilder &kb, Value c0, int64_t cn,
                         Value hw0, int64_t hwn) {
                       Value hwMask = maskOf(kb, hwn);
                       SmallVector<Value> rows;
                       for (int64_t i = 0; i < L; ++i) {
                         Value pix = arith::AddIOp::create(
                             kb, hw0, idx(kb, std::min(i, hwn - 1)));
                         rows.push_back(vector::LoadOp::create(
                             kb, vF32, res, ValueRange{pix, c0}));
                       }
                       SmallVector<Value> planes = transposeBlock(kb, rows);
                       for (int64_t j = 0; j < cn; ++j) {
                         Value c = arith::AddIOp::create(kb, c0, idx(kb, j));
                         SmallVector<Value> outer{n, c};
                         if (toRank == 5)
                           outer.push_back(idx(kb, 0));
                         storeThroughEpilogue(kb, epi, planes[j], dst, outer,
                                              hw0, hwMask);
                       }
                     });
      });
  memref::DeallocOp::create(b, wT);

  if (padded && padded->sourceDealloc)
    rw.moveOpBefore(padded->sourceDealloc, op);
  eraseWithEpilogue(op, epi, rw);
  if (throughView)
    rw.eraseOp(groupView);
  if (padded)
    for (Operation *pad : padded->ops)
      rw.eraseOp(pad);
  return success();
}

/// A depthwise linalg.conv_2d_ngchw_gfchw (one channel per group, one
/// filter per group): per output row, vectors of L outputs held in
/// registers over the window (kh, kw in order), the last vector of a row
/// masked. Along a W stride sw > 1 each tap's inputs come from loadTap,
/// and the vectors that could read past the row are masked. A padded
/// input (PaddedPlanes) is padded one plane at a time into a scratch
/// buffer, read as the padded plane.
struct DepthwiseKernel : FloatKernelPattern<linalg::Conv2DNgchwGfchwOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNgchwGfchwOp op,
                                PatternRewriter &rw) const override {
    FailureOr<WindowOperands> operands = matchWindowOperands(op, 5, rw);
    if (failed(operands))
      return failure();
    Value x = operands->x, w = operands->w, y = operands->y;
    ArrayRef<int64_t> xs = cast<MemRefType>(x.getType()).getShape(),
                      ws = cast<MemRefType>(w.getType()).getShape(),
                      ys = cast<MemRefType>(y.getType()).getShape();
    SmallVector<int64_t> st(op.getStrides().getValues<int64_t>()),
        dl(op.getDilations().getValues<int64_t>());
    if (xs[2] != 1 || ws[1] != 1)
      return rw.notifyMatchFailure(op, "not depthwise");
    int64_t N = xs[0], G = xs[1], W = xs[4], R = ws[3], S = ws[4], P = ys[3],
            Q = ys[4], sw = st[1];
    int64_t L = rowLanes(o.lanes, Q);
    std::optional<PaddedPlanes> padded = PaddedPlanes::match(op, x);
    if (succeeded(rewriteChannelsLast(op, padded, o, rw)))
      return success();
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fill = takeFill(op, y, rw);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, y, 1, b);
    // Or the one that reads the output as NCHW, through the collapse_shape
    // that drops the unit group dim (the importer's grouped convolution):
    // it is then stored at (n, g, p, q). Not one that writes the view in
    // place: the view comes after the kernel's stores.
    memref::CollapseShapeOp groupView;
    auto writesInPlace = [](memref::CollapseShapeOp view) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(*view->user_begin());
      return dps && llvm::is_contained(dps.getDpsInits(), view.getResult());
    };
    if (!epi)
      if (auto view = dyn_cast_or_null<memref::CollapseShapeOp>(
              nextPastAllocations(op));
          view && view.getSrc() == y && view->hasOneUse() &&
          view.getReassociationIndices() ==
              SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}} &&
          !writesInPlace(view)) {
        epi = takeEpilogue(view, view.getResult(), 1, b);
        if (epi) {
          groupView = view;
          b.setLoc(epi->fusedLoc(op));
        }
      }
    // The epilogue runs as each plane is computed, so it may use the
    // source's buffer (reused in place for its output) only as the output's
    // own planes, already copied: the source, or its buffer of the same
    // type, of the output's shape.
    if (padded && epi && !padded->onlyOwnPlanes(*epi, {N, G, P, Q}))
      padded.reset();
    Value to = epi ? epi->target() : y;
    auto vF32 = VectorType::get({L}, b.getF32Type());
    auto vMask = VectorType::get({L}, b.getI1Type());
    Value zeroV = zeros(b, vF32);
    // Strided, vectors [0, full·L) read only inside the row: the last reads
    // column (k+1)·L·sw - 1 + (S-1)·dw.
    int64_t full =
        sw == 1 ? Q / L
                : std::min(Q / L, std::max<int64_t>(0, W - (S - 1) * dl[1]) /
                                      (L * sw));
    // The padded plane being read, with padding: its (h, col), else x's
    // (n, g, 0, h, col).
    Value plane;
    auto inputAt = [&](ImplicitLocOpBuilder &ib, Value n, Value g, Value h,
                       Value col) -> SmallVector<Value> {
      if (plane)
        return {h, col};
      return {n, g, idx(ib, 0), h, col};
    };
    // Outputs [q0, q0 + L) of row (n, g, p); masked past Q.
    auto vectorAt = [&](ImplicitLocOpBuilder &ib, ValueRange npg, Value q0,
                        bool masked) {
      Value n = npg[0], g = npg[1], p = npg[2];
      Value from = plane ? plane : x;
      Value mask;
      if (masked)
        mask = vector::CreateMaskOp::create(
            ib, vMask, ValueRange{arith::SubIOp::create(ib, idx(ib, Q), q0)});
      Value c0 = idx(ib, 0);
      auto load = [&](Value m, ValueRange at) -> Value {
        if (!masked)
          return vector::LoadOp::create(ib, vF32, m, at);
        return vector::MaskedLoadOp::create(ib, vF32, m, at, mask, zeroV);
      };
      Value acc = fill ? vector::BroadcastOp::create(ib, vF32, fill).getResult()
                       : load(y, ValueRange{n, g, c0, p, q0});
      Value h0 = arith::MulIOp::create(ib, p, idx(ib, st[0]));
      for (int64_t r = 0; r < R; ++r) {
        Value h = arith::AddIOp::create(ib, h0, idx(ib, r * dl[0]));
        for (int64_t s = 0; s < S; ++s) {
          Value wv = vector::BroadcastOp::create(
              ib, vF32,
              memref::LoadOp::create(
                  ib, w, ValueRange{g, c0, c0, idx(ib, r), idx(ib, s)}));
          Value xv;
          if (sw == 1) {
            Value col = arith::AddIOp::create(ib, q0, idx(ib, s * dl[1]));
            xv = load(from, inputAt(ib, n, g, h, col));
          } else {
            Value col = arith::AddIOp::create(
                ib, arith::MulIOp::create(ib, q0, idx(ib, sw)),
                idx(ib, s * dl[1]));
            xv = loadTap(ib, from, inputAt(ib, n, g, h, col), L, sw, W, masked);
          }
          acc = multiplyAdd(ib, acc, wv, xv, o.fma);
        }
      }
      SmallVector<Value> outer{n, g, c0, p};
      if (groupView)
        outer.erase(outer.begin() + 2);
      storeThroughEpilogue(ib, epi, acc, to, outer, q0, mask);
    };
    // The kernel and what it took: the epilogue, the group view.
    auto eraseKernel = [&] {
      eraseWithEpilogue(op, epi, rw);
      if (groupView)
        rw.eraseOp(groupView);
    };
    auto rows = [&](ImplicitLocOpBuilder &ib, ValueRange npg) {
      emitRowVectors(ib, L, full * L, Q,
                     [&](ImplicitLocOpBuilder &vb, Value q0, bool masked) {
                       vectorAt(vb, npg, q0, masked);
                     });
    };
    if (!padded) {
      emitRowLoops(b, {N, G, P}, o.threads, rows);
      eraseKernel();
      return success();
    }
    // Per image n: a scratch plane (one per thread) whose border is
    // filled with the pad value; per group g
    // the source plane is copied into its interior (vectors of L, the
    // last of a row masked), then the plane's rows are computed.
    int64_t H = xs[3], top = padded->top, left = padded->left;
    ArrayRef<int64_t> srcShape =
        cast<MemRefType>(padded->source.getType()).getShape();
    int64_t srcH = srcShape[2], srcW = srcShape[3];
    forEachImageWithScratch(
        b, N, o.threads, {MemRefType::get({H, W}, b.getF32Type())},
        [&](ImplicitLocOpBuilder &ib, Value image, ValueRange scratches) {
          Location loc = ib.getLoc();
          Value scratch = scratches[0];
          SmallVector<Value> nIv{image};
          linalg::FillOp::create(ib, ValueRange{padded->padValue},
                                 ValueRange{scratch});
          scf::buildLoopNest(
              ib, loc, ValueRange{idx(ib, 0)}, ValueRange{idx(ib, G)},
              ValueRange{idx(ib, 1)},
              [&](OpBuilder &gb, Location l, ValueRange g) {
                ImplicitLocOpBuilder cb(l, gb);
                // Rows in a loop, each row's vectors unrolled.
                scf::buildLoopNest(
                    cb, l, ValueRange{idx(cb, 0)}, ValueRange{idx(cb, srcH)},
                    ValueRange{idx(cb, 1)},
                    [&](OpBuilder &hb, Location hl, ValueRange h) {
                      ImplicitLocOpBuilder rb(hl, hb);
                      Value toRow =
                          arith::AddIOp::create(rb, h[0], idx(rb, top));
                      for (int64_t w0 = 0; w0 < srcW; w0 += L) {
                        int64_t n = std::min(L, srcW - w0);
                        SmallVector<Value> from{nIv[0], g[0], h[0],
                                                idx(rb, w0)},
                            to{toRow, idx(rb, left + w0)};
                        if (n == L) {
                          Value v = vector::LoadOp::create(
                              rb, vF32, padded->source, from);
                          vector::StoreOp::create(rb, v, scratch, to);
                          continue;
                        }
                        Value mask = vector::ConstantMaskOp::create(
                            rb, vMask, ArrayRef<int64_t>{n});
                        Value v = vector::MaskedLoadOp::create(
                            rb, vF32, padded->source, from, mask, zeroV);
                        vector::MaskedStoreOp::create(rb, scratch, to, mask, v);
                      }
                    });
                plane = scratch;
                scf::buildLoopNest(
                    cb, l, ValueRange{idx(cb, 0)}, ValueRange{idx(cb, P)},
                    ValueRange{idx(cb, 1)},
                    [&](OpBuilder &pb, Location pl, ValueRange p) {
                      ImplicitLocOpBuilder rb(pl, pb);
                      rows(rb, ValueRange{nIv[0], g[0], p[0]});
                    });
                plane = Value();
              });
        });
    if (padded->sourceDealloc)
      rw.moveOpBefore(padded->sourceDealloc, op);
    eraseKernel();
    for (Operation *pad : padded->ops)
      rw.eraseOp(pad);
    return success();
  }
};

/// Whether `op` is a pooling on buffers the kernels take: static f32
/// operands of rank 4 with a unit-stride last dim, a static window, and the
/// body `maximumf(acc, x)` (`isMax`) or `addf(acc, x)`.
LogicalResult matchPooling(linalg::LinalgOp op, bool isMax,
                           PatternRewriter &rw) {
  if (!op.hasPureBufferSemantics())
    return rw.notifyMatchFailure(op, "not on buffers");
  auto wt = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  if (!isKernelOperand(op.getDpsInputs()[0], 4) ||
      !isKernelOperand(op.getDpsInits()[0], 4) || !wt || !wt.hasStaticShape())
    return rw.notifyMatchFailure(op, "operands are not static f32 views");
  // The body must be the combination the kernel emits.
  Block &block = op->getRegion(0).front();
  Operation *body = &block.front();
  if (!isa<arith::MaximumFOp, arith::AddFOp>(body) ||
      body->getOperand(0) != block.getArgument(2) ||
      isa<arith::MaximumFOp>(body) != isMax)
    return rw.notifyMatchFailure(op, "unexpected body");
  return success();
}

/// Whether `v` is -Inf (a constant, a splat, or one broadcast).
static bool isNegativeInfinity(Value v) {
  if (auto broadcast = v.getDefiningOp<vector::BroadcastOp>())
    v = broadcast.getSource();
  return matchPattern(v, m_NegInfFloat());
}

/// linalg.pooling_nchw_max and pooling_nchw_sum on f32: per output row,
/// vectors of L outputs combined over the window (kh, kw in order), as
/// `combine(acc, x)` like the op's body, each tap's inputs from loadTap.
/// Vectors that could read past the row are masked. A max pooling marked
/// tq.nonnegative_input and filled with a constant other than -0 meets no
/// -0, so maximumf is `x > acc ? x : acc`, or x where x is NaN (three
/// instructions for LLVM's six).
template <typename OpT> struct PoolKernel : FloatKernelPattern<OpT> {
  using FloatKernelPattern<OpT>::FloatKernelPattern;
  static Value combine(ImplicitLocOpBuilder &b, Value acc, Value x,
                       bool noNegativeZero, bool x86) {
    if constexpr (std::is_same_v<OpT, linalg::PoolingNchwMaxOp>) {
      // maximumf(-Inf, x) and the forms below are x for every x.
      if (isNegativeInfinity(acc))
        return x;
      if (!noNegativeZero)
        return arith::MaximumFOp::create(b, acc, x);
      Value larger;
      auto vt = cast<VectorType>(x.getType());
      if (x86 && (vt.getNumElements() == 16 || vt.getNumElements() == 8)) {
        // `maxps x, acc` is x > acc ? x : acc for every input, NaN too:
        // the compare off the chain through acc, which LLVM would
        // otherwise merge into the NaN select's mask.
        SmallVector<Value> args = {x, acc};
        if (vt.getNumElements() == 16)
          args.push_back(arith::ConstantIntOp::create(b, b.getI32Type(), 4));
        larger = LLVM::CallIntrinsicOp::create(
                     b, vt,
                     b.getStringAttr(vt.getNumElements() == 16
                                         ? "llvm.x86.avx512.max.ps.512"
                                         : "llvm.x86.avx.max.ps.256"),
                     args)
                     .getResult(0);
      } else {
        larger = arith::SelectOp::create(
            b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, acc), x,
            acc);
      }
      return arith::SelectOp::create(
          b, arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x), x,
          larger);
    } else {
      return arith::AddFOp::create(b, acc, x);
    }
  }
  /// Whether `fill` is a constant other than -0.
  static bool isNotNegativeZero(Value fill) {
    FloatAttr c;
    return fill && matchPattern(fill, m_Constant(&c)) &&
           !(c.getValue().isZero() && c.getValue().isNegative());
  }
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    if (failed(matchPooling(op, std::is_same_v<OpT, linalg::PoolingNchwMaxOp>,
                            rw)))
      return failure();
    Value x = op.getDpsInputs()[0], y = op.getDpsInits()[0];
    auto wt = cast<MemRefType>(op.getDpsInputs()[1].getType());
    ArrayRef<int64_t> xs = cast<MemRefType>(x.getType()).getShape(),
                      ys = cast<MemRefType>(y.getType()).getShape();
    SmallVector<int64_t> st(op.getStrides().template getValues<int64_t>()),
        dl(op.getDilations().template getValues<int64_t>());
    int64_t N = xs[0], C = xs[1], W = xs[3], R = wt.getShape()[0],
            S = wt.getShape()[1], P = ys[2], Q = ys[3], sw = st[1];
    if (R * S > 64)
      return rw.notifyMatchFailure(op, "window too large to unroll");
    int64_t L = rowLanes(this->o.lanes, Q);
    int64_t wide = L * sw;
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fill = takeFill(op, y, rw);
    bool noNegativeZero =
        op->hasAttr(cpu::kNonNegativeInputAttr) && isNotNegativeZero(fill);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, y, 1, b);
    Value to = epi ? epi->target() : y;
    auto vOut = VectorType::get({L}, b.getF32Type());
    auto mOut = VectorType::get({L}, b.getI1Type());
    Value zeroOut = zeros(b, vOut);
    // Vectors [0, safe·L) read only inside the row: the last reads column
    // (k+1)·L·sw - 1 + (S-1)·dw.
    int64_t safe =
        std::min(Q / L, std::max<int64_t>(0, W - (S - 1) * dl[1]) / wide);
    auto vectorAt = [&](ImplicitLocOpBuilder &ib, ValueRange ncp, Value q0,
                        bool masked) {
      Value n = ncp[0], c = ncp[1], p = ncp[2];
      Value outMask;
      if (masked)
        outMask = vector::CreateMaskOp::create(
            ib, mOut, ValueRange{arith::SubIOp::create(ib, idx(ib, Q), q0)});
      Value acc;
      if (fill)
        acc = vector::BroadcastOp::create(ib, vOut, fill);
      else if (masked)
        acc = vector::MaskedLoadOp::create(ib, vOut, y, ValueRange{n, c, p, q0},
                                           outMask, zeroOut);
      else
        acc = vector::LoadOp::create(ib, vOut, y, ValueRange{n, c, p, q0});
      Value h0 = arith::MulIOp::create(ib, p, idx(ib, st[0]));
      Value w0 = arith::MulIOp::create(ib, q0, idx(ib, sw));
      for (int64_t r = 0; r < R; ++r) {
        Value h = arith::AddIOp::create(ib, h0, idx(ib, r * dl[0]));
        for (int64_t s = 0; s < S; ++s) {
          Value col = arith::AddIOp::create(ib, w0, idx(ib, s * dl[1]));
          acc =
              combine(ib, acc, loadTap(ib, x, {n, c, h, col}, L, sw, W, masked),
                      noNegativeZero, this->o.x86);
        }
      }
      storeThroughEpilogue(ib, epi, acc, to, ValueRange{n, c, p}, q0, outMask);
    };
    auto rows = [&](ImplicitLocOpBuilder &ib, ValueRange ncp) {
      emitRowVectors(ib, L, safe * L, Q,
                     [&](ImplicitLocOpBuilder &vb, Value q0, bool masked) {
                       vectorAt(vb, ncp, q0, masked);
                     });
    };
    emitRowLoops(b, {N, C, P}, this->o.threads, rows);
    eraseWithEpilogue(op, epi, rw);
    return success();
  }
};

/// Output pixels of a row the NHWC depthwise kernel computes together.
constexpr int64_t kDepthwisePixels = 4;

/// A linalg.depthwise_conv_2d_nhwc_hwc (from tq-cpu-channels-last), image
/// by image, each output pixel as vectors of L channels over the window
/// (kh, kw in order, from the op's fill value or else the output's values,
/// each step multiplyAdd), kDepthwisePixels pixels of a row at a time (each
/// tap's filter vector loaded once for them), the epilogue applied as each
/// vector is stored. The taps are read where they are: a padded input's
/// source is read directly, the pixels whose window reaches into the
/// border taking the pad value there (so that the padded tensor is never
/// made, nor a copy of the image). The same sums in the same order as the
/// NCHW depthwise kernels.
struct DepthwiseNhwcKernel
    : FloatKernelPattern<linalg::DepthwiseConv2DNhwcHwcOp> {
  using FloatKernelPattern::FloatKernelPattern;
  LogicalResult matchAndRewrite(linalg::DepthwiseConv2DNhwcHwcOp op,
                                PatternRewriter &rw) const override {
    FailureOr<WindowOperands> operands = matchWindowOperands(op, 4, rw, 3);
    if (failed(operands))
      return failure();
    Value x = operands->x, w = operands->w, y = operands->y;
    ArrayRef<int64_t> xs = operands->xs, ws = operands->ws, ys = operands->ys;
    SmallVector<int64_t> st(op.getStrides().getValues<int64_t>()),
        dl(op.getDilations().getValues<int64_t>());
    int64_t N = xs[0], C = xs[3], R = ws[0], S = ws[1], P = ys[1], Q = ys[2],
            L = o.lanes;
    int64_t CP = llvm::alignTo(C, L);
    if (!cast<MemRefType>(w.getType()).getLayout().isIdentity())
      return rw.notifyMatchFailure(op, "filter not contiguous");
    std::optional<PaddedPlanes> padded = PaddedPlanes::match(op, x, true);

    // From the fill just before, or else from the output's values.
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fillValue = takeFill(op, y, rw);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, y, 1, b);
    if (padded && epi && !padded->onlyOwnPlanes(*epi, {N, P, Q, C}))
      padded.reset();
    Value src = padded ? padded->source : x;
    ArrayRef<int64_t> ss = cast<MemRefType>(src.getType()).getShape();
    int64_t srcH = ss[1], srcW = ss[2];
    int64_t top = padded ? padded->top : 0, left = padded ? padded->left : 0;
    Type f32 = b.getF32Type();
    auto vF32 = VectorType::get({L}, f32);
    Value to = epi ? epi->target() : y;
    // The output rows [pLo, pHi) and columns [qLo, qHi) read the source
    // only (no tap in the border): their taps are loaded where they are.
    // The others check each tap and take the pad value outside.
    auto inner = [&](int64_t pad, int64_t stride, int64_t dil, int64_t taps,
                     int64_t extent, int64_t out) {
      int64_t lo = std::min<int64_t>(llvm::divideCeil(pad, stride), out);
      int64_t last = extent - 1 + pad - (taps - 1) * dil;
      int64_t hi = last < 0 ? 0 : std::min(last / stride + 1, out);
      return std::make_pair(lo, std::max(lo, hi));
    };
    int64_t pLo, pHi, qLo, qHi;
    std::tie(pLo, pHi) = inner(top, st[0], dl[0], R, srcH, P);
    std::tie(qLo, qHi) = inner(left, st[1], dl[1], S, srcW, Q);
    assert((padded || (pLo == 0 && pHi == P && qLo == 0 && qHi == Q)) &&
           "an input without padding has every tap inside");
    Value padV =
        padded
            ? vector::BroadcastOp::create(b, vF32, padded->padValue).getResult()
            : Value();
    // Where more than 40% of the pixels reach into the border (3 x 3 over
    // 7 x 7, 5 x 5 over 14 x 14), checking their taps, one pixel at a time,
    // costs more than a copy of the image (measured on the MobileNet-style
    // CNN: 25 of 49 inside, 0.084 ms copied, 0.093 checked): it is copied
    // into a scratch buffer of H x W x C' (C rounded up to whole vectors,
    // the border with the pad value), whose taps are all inside.
    ArrayRef<int64_t> xs4 = cast<MemRefType>(x.getType()).getShape();
    // An epilogue that stores into the buffer the taps are read from (the
    // source reused in place for its output) would overwrite taps other
    // pixels still read: then each image is copied first, whatever its
    // size, as it is read before any of its outputs is stored.
    bool aliased = epi && (rootOf(epi->target()) == rootOf(src) ||
                           rootOf(epi->target()) == rootOf(x));
    bool copy =
        aliased || (padded && 5 * (pHi - pLo) * (qHi - qLo) < 3 * P * Q &&
                    xs4[1] * xs4[2] * CP * 4 <= 256 * 1024);
    if (copy) {
      pLo = qLo = 0;
      pHi = P;
      qHi = Q;
    }
    SmallVector<MemRefType> scratchTypes;
    if (copy)
      scratchTypes.push_back(MemRefType::get({xs4[1], xs4[2], CP}, f32));
    int64_t H = xs4[1], W = xs4[2];
    // The border of `in` with the pad value, once per scratch buffer: the
    // images copied into it overwrite its interior only.
    auto fillPadding = [&](ImplicitLocOpBuilder &ib, Value in) {
      if (padded)
        fillBorder(ib, in, padV, H, W, top, srcH, left, srcW, CP, L);
    };
    // Image n into the interior of `in`, channels past C zero.
    auto copyImage = [&](ImplicitLocOpBuilder &ib, Value in, Value n) {
      Location loc = ib.getLoc();
      scf::buildLoopNest(
          ib, loc, ValueRange{idx(ib, 0), idx(ib, 0)},
          ValueRange{idx(ib, srcH), idx(ib, srcW)},
          ValueRange{idx(ib, 1), idx(ib, 1)},
          [&](OpBuilder &hb, Location l, ValueRange hw) {
            ImplicitLocOpBuilder kb(l, hb);
            Value h = arith::AddIOp::create(kb, hw[0], idx(kb, top));
            Value wc = arith::AddIOp::create(kb, hw[1], idx(kb, left));
            for (int64_t c0 = 0; c0 < CP; c0 += L) {
              Value v = loadF32(kb, vF32, src,
                                ValueRange{n, hw[0], hw[1], idx(kb, c0)},
                                tailMask(kb, L, c0, C));
              vector::StoreOp::create(kb, v, in,
                                      ValueRange{h, wc, idx(kb, c0)});
            }
          });
    };
    Value fillV =
        fillValue ? vector::BroadcastOp::create(b, vF32, fillValue).getResult()
                  : Value();
    forEachImageWithScratch(
        b, N, o.threads, scratchTypes,
        [&](ImplicitLocOpBuilder &ib, Value n, ValueRange scratch) {
          Location loc = ib.getLoc();
          if (copy)
            copyImage(ib, scratch[0], n);
          // The tap at padded row h, column wc (channels from c): from the
          // copy, from the source, or with `guarded` the pad value where it
          // is outside.
          auto tap = [&](ImplicitLocOpBuilder &kb, Value h, Value wc, Value c,
                         Value mask, bool guarded) -> Value {
            if (copy)
              return vector::LoadOp::create(kb, vF32, scratch[0],
                                            ValueRange{h, wc, c});
            Value hs = arith::SubIOp::create(kb, h, idx(kb, top));
            Value ws = arith::SubIOp::create(kb, wc, idx(kb, left));
            if (!guarded)
              return loadF32(kb, vF32, src, ValueRange{n, hs, ws, c}, mask);
            auto within = [&](Value v, int64_t extent) {
              return arith::CmpIOp::create(kb, arith::CmpIPredicate::ult, v,
                                           idx(kb, extent));
            };
            // Unsigned: a negative coordinate is outside too.
            Value inside =
                arith::AndIOp::create(kb, within(hs, srcH), within(ws, srcW));
            auto clampTo = [&](Value v, int64_t extent) {
              return arith::MinSIOp::create(
                  kb, arith::MaxSIOp::create(kb, v, idx(kb, 0)),
                  idx(kb, extent - 1));
            };
            Value v = loadF32(
                kb, vF32, src,
                ValueRange{n, clampTo(hs, srcH), clampTo(ws, srcW), c}, mask);
            return arith::SelectOp::create(kb, inside, v, padV);
          };
          // Pixels [q0, q0 + count) of output row p: each tap's filter
          // vector loaded once for them, their sums independent.
          auto pixels = [&](ImplicitLocOpBuilder &kb, Value p, Value q0,
                            int64_t count, bool guarded) {
            Value h0 = arith::MulIOp::create(kb, p, idx(kb, st[0]));
            SmallVector<Value> qs, w0;
            for (int64_t j = 0; j < count; ++j) {
              qs.push_back(arith::AddIOp::create(kb, q0, idx(kb, j)));
              w0.push_back(arith::MulIOp::create(kb, qs[j], idx(kb, st[1])));
            }
            for (int64_t c0 = 0; c0 < CP; c0 += L) {
              Value mask = tailMask(kb, L, c0, C), c = idx(kb, c0);
              SmallVector<Value> acc;
              for (int64_t j = 0; j < count; ++j)
                acc.push_back(fillV
                                  ? fillV
                                  : loadF32(kb, vF32, y,
                                            ValueRange{n, p, qs[j], c}, mask));
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s) {
                  Value h = arith::AddIOp::create(kb, h0, idx(kb, r * dl[0]));
                  Value wv = loadF32(
                      kb, vF32, w, ValueRange{idx(kb, r), idx(kb, s), c}, mask);
                  for (int64_t j = 0; j < count; ++j) {
                    Value wc =
                        arith::AddIOp::create(kb, w0[j], idx(kb, s * dl[1]));
                    acc[j] =
                        multiplyAdd(kb, acc[j], wv,
                                    tap(kb, h, wc, c, mask, guarded), o.fma);
                  }
                }
              for (int64_t j = 0; j < count; ++j)
                storeThroughEpilogue(kb, epi, acc[j], to,
                                     ValueRange{n, p, qs[j]}, c, mask);
            }
          };
          // Columns [q0, q1) of row p: kDepthwisePixels at a time, or one
          // at a time where the taps are checked (the border's few pixels,
          // in less code).
          auto columns = [&](ImplicitLocOpBuilder &rb, Value p, int64_t q0,
                             int64_t q1, bool guarded) {
            int64_t group = guarded ? 1 : kDepthwisePixels;
            int64_t full = q0 + (q1 - q0) / group * group;
            if (full - q0 == group)
              pixels(rb, p, idx(rb, q0), group, guarded);
            else if (full > q0)
              scf::buildLoopNest(rb, rb.getLoc(), ValueRange{idx(rb, q0)},
                                 ValueRange{idx(rb, full)},
                                 ValueRange{idx(rb, group)},
                                 [&](OpBuilder &qb, Location ql, ValueRange q) {
                                   ImplicitLocOpBuilder kb(ql, qb);
                                   pixels(kb, p, q[0], group, guarded);
                                 });
            if (full < q1)
              pixels(rb, p, idx(rb, full), q1 - full, guarded);
          };
          auto rows = [&](int64_t p0, int64_t p1, bool border) {
            if (p0 >= p1)
              return;
            scf::buildLoopNest(ib, loc, ValueRange{idx(ib, p0)},
                               ValueRange{idx(ib, p1)}, ValueRange{idx(ib, 1)},
                               [&](OpBuilder &pb, Location l, ValueRange p) {
                                 ImplicitLocOpBuilder rb(l, pb);
                                 if (border) {
                                   columns(rb, p[0], 0, Q, true);
                                   return;
                                 }
                                 columns(rb, p[0], 0, qLo, true);
                                 columns(rb, p[0], qLo, qHi, false);
                                 columns(rb, p[0], qHi, Q, true);
                               });
          };
          rows(0, pLo, true);
          rows(pLo, pHi, false);
          rows(pHi, P, true);
        },
        [&](ImplicitLocOpBuilder &ib, ValueRange scratch) {
          if (copy)
            fillPadding(ib, scratch[0]);
        });
    if (padded && padded->sourceDealloc)
      rw.moveOpBefore(padded->sourceDealloc, op);
    eraseWithEpilogue(op, epi, rw);
    if (padded)
      for (Operation *pad : padded->ops)
        rw.eraseOp(pad);
    return success();
  }
};

/// linalg.pooling_nhwc_max and pooling_nhwc_sum on f32 (from
/// tq-cpu-channels-last): per output pixel, vectors of L channels combined
/// over the window (kh, kw in order) as PoolKernel combines them, from the
/// fill or else the output's values, the last vector masked, the epilogue
/// applied as each is stored.
template <typename OpT> struct PoolNhwcKernel : FloatKernelPattern<OpT> {
  using FloatKernelPattern<OpT>::FloatKernelPattern;
  static constexpr bool isMax = std::is_same_v<OpT, linalg::PoolingNhwcMaxOp>;
  using Nchw = std::conditional_t<isMax, linalg::PoolingNchwMaxOp,
                                  linalg::PoolingNchwSumOp>;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    if (failed(matchPooling(op, isMax, rw)))
      return failure();
    Value x = op.getDpsInputs()[0], y = op.getDpsInits()[0];
    auto wt = cast<MemRefType>(op.getDpsInputs()[1].getType());
    ArrayRef<int64_t> ys = cast<MemRefType>(y.getType()).getShape();
    SmallVector<int64_t> st(op.getStrides().template getValues<int64_t>()),
        dl(op.getDilations().template getValues<int64_t>());
    int64_t N = ys[0], P = ys[1], Q = ys[2], C = ys[3], R = wt.getShape()[0],
            S = wt.getShape()[1], L = this->o.lanes;
    if (R * S > 64)
      return rw.notifyMatchFailure(op, "window too large to unroll");
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Value fill = takeFill(op, y, rw);
    bool noNegativeZero = op->hasAttr(cpu::kNonNegativeInputAttr) &&
                          PoolKernel<Nchw>::isNotNegativeZero(fill);
    std::optional<VectorEpilogue> epi = takeEpilogue(op, y, 1, b);
    Value to = epi ? epi->target() : y;
    auto vF32 = VectorType::get({L}, b.getF32Type());
    Value fillV =
        fill ? vector::BroadcastOp::create(b, vF32, fill).getResult() : Value();
    emitRowLoops(
        b, {N, P, Q}, this->o.threads,
        [&](ImplicitLocOpBuilder &ib, ValueRange npq) {
          Value n = npq[0], p = npq[1], q = npq[2];
          Value h0 = arith::MulIOp::create(ib, p, idx(ib, st[0]));
          Value w0 = arith::MulIOp::create(ib, q, idx(ib, st[1]));
          for (int64_t c0 = 0; c0 < C; c0 += L) {
            Value c = idx(ib, c0), mask = tailMask(ib, L, c0, C);
            auto load = [&](Value from, ValueRange at) {
              return loadF32(ib, vF32, from, at, mask);
            };
            Value acc = fillV ? fillV : load(y, ValueRange{n, p, q, c});
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                Value h = arith::AddIOp::create(ib, h0, idx(ib, r * dl[0]));
                Value w = arith::AddIOp::create(ib, w0, idx(ib, s * dl[1]));
                acc = PoolKernel<Nchw>::combine(ib, acc,
                                                load(x, ValueRange{n, h, w, c}),
                                                noNegativeZero, this->o.x86);
              }
            storeThroughEpilogue(ib, epi, acc, to, ValueRange{n, p, q}, c,
                                 mask);
          }
        });
    eraseWithEpilogue(op, epi, rw);
    return success();
  }
};

} // namespace

/// The images [0, N) in one chunk per thread (as many as the threads, at
/// most N), each chunk with its own `scratch` buffers (heap allocations,
/// made once per chunk and freed after it), calling `body` with (n, the
/// buffers) for each image of the chunk. The buffers are not on the stack:
/// canonicalization hoists an alloca out of its `memref.alloca_scope` into
/// the image loop, where the stack would grow at every image.
void mlir::tq::floatkernels::forEachImageWithScratch(
    ImplicitLocOpBuilder &b, int64_t N, int64_t threads,
    ArrayRef<MemRefType> scratch,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, ValueRange)> body,
    llvm::function_ref<void(ImplicitLocOpBuilder &, ValueRange)> prepare) {
  int64_t chunks = std::clamp<int64_t>(threads, 1, N),
          per = llvm::divideCeil(N, chunks);
  cpu::buildIndependentLoops(
      b, b.getLoc(), ValueRange{idx(b, 0)}, ValueRange{idx(b, chunks)},
      ValueRange{idx(b, 1)}, threads,
      [&](OpBuilder &nb, Location loc, ValueRange chunk) {
        ImplicitLocOpBuilder cb(loc, nb);
        SmallVector<Value> buffers;
        for (MemRefType t : scratch)
          buffers.push_back(
              memref::AllocOp::create(cb, t, cb.getI64IntegerAttr(64)));
        if (prepare)
          prepare(cb, buffers);
        Value lo = arith::MulIOp::create(cb, chunk[0], idx(cb, per));
        Value hi = arith::MinUIOp::create(
            cb, arith::AddIOp::create(cb, lo, idx(cb, per)), idx(cb, N));
        scf::buildLoopNest(cb, loc, ValueRange{lo}, ValueRange{hi},
                           ValueRange{idx(cb, 1)},
                           [&](OpBuilder &ib, Location l, ValueRange n) {
                             ImplicitLocOpBuilder nb2(l, ib);
                             body(nb2, n[0], buffers);
                           });
        for (Value v : buffers)
          memref::DeallocOp::create(cb, v);
      });
}

void mlir::tq::floatkernels::populateWindowKernelPatterns(
    RewritePatternSet &patterns, KernelOptions o) {
  patterns.add<DepthwiseKernel, DepthwiseNhwcKernel,
               PoolNhwcKernel<linalg::PoolingNhwcMaxOp>,
               PoolNhwcKernel<linalg::PoolingNhwcSumOp>,
               PoolKernel<linalg::PoolingNchwMaxOp>,
               PoolKernel<linalg::PoolingNchwSumOp>>(patterns.getContext(), o);
}
