//===- Conv2D.cpp - tq.conv2d to the tiled integer GEMM kernel ------------===//
//
// tq.conv2d as an implicit GEMM on the kernel of MatmulKernel.h.
//
//===----------------------------------------------------------------------===//
#include "MatmulKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::matmul;

namespace {

/// The implicit GEMM's geometry, from the op.
struct ConvGeometry {
  int64_t N, H, W, C, K, R, S, P, Q;
  int64_t ct, CT; // channels per K-tile (no more than C), and C-tiles
  int64_t tn;     // the input's tile extent along N
  ArrayRef<int64_t> stride, dil, pad;
  Type xElem;
  int64_t threads;

  ConvGeometry(Conv2DOp op, int64_t threads) : threads(threads) {
    auto tx = cast<TiledType>(op.getInput().getType());
    ArrayRef<int64_t> xs = tx.getShape(),
                      ws = cast<TiledType>(op.getFilter().getType()).getShape(),
                      out = cast<RankedTensorType>(op.getType()).getShape();
    N = xs[0], H = xs[1], W = xs[2], C = xs[3];
    K = ws[0], R = ws[1], S = ws[2];
    P = out[1], Q = out[2];
    ct = std::min(tx.getTileShape()[1], C);
    CT = llvm::divideCeil(C, ct);
    tn = tx.getTileShape()[0];
    stride = op.getStrides(), dil = op.getDilations(), pad = op.getPadding();
    xElem = TiledToTensorsConverter::containerType(tx);
  }
};

/// Input pixel (h, w), signed and possibly in the padding: clamped into
/// the H × W input, and whether it is inside.
std::tuple<Value, Value, Value> clampToInput(ImplicitLocOpBuilder &b, Value h,
                                             Value w, int64_t H, int64_t W) {
  auto c = [&](int64_t v) { return cIndex(b, v); };
  auto inRange = [&](Value v, int64_t hi) {
    return arith::AndIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::sge, v, c(0)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, v, c(hi)));
  };
  auto clamp = [&](Value v, int64_t hi) {
    return arith::MinSIOp::create(b, arith::MaxSIOp::create(b, v, c(0)),
                                  c(hi - 1));
  };
  return {clamp(h, H), clamp(w, W),
          arith::AndIOp::create(b, inRange(h, H), inRange(w, W))};
}

/// im2col: A[(n, p, q)][((r·S + s)·CT + t)·ct + c'] and its steps
/// SA[(n, p, q)][(r·S + s)·CT + t] (0 in the padding, whose values are 0).
/// C is padded to whole C-tiles with zeros.
std::pair<Value, Value> im2col(ImplicitLocOpBuilder &b, const ConvGeometry &g,
                               const KernelShape &s, Value xTensor,
                               Value sxTensor) {
  int64_t N = g.N, H = g.H, W = g.W, C = g.C, R = g.R, S = g.S, P = g.P,
          Q = g.Q, ct = g.ct, CT = g.CT, tn = g.tn;
  ArrayRef<int64_t> stride = g.stride, dil = g.dil, pad = g.pad;
  Type xElem = g.xElem;
  auto idx = [&](int64_t v) { return cIndex(b, v); };
  // im2col: A[(n, p, q)][((r·S + s)·CT + t)·ct + c'] and its steps
  // SA[(n, p, q)][(r·S + s)·CT + t]. For one (n, p, q, r, s) the CT·ct
  // values are the pixel's channels, then zeros past C: two unit-stride
  // loops, which LLVM vectorizes. A is int16 for vpmaddwd (read in place
  // by the kernel). Each (n, p, q) writes its own row: the rows are shared
  // among the threads.
  Type aElem = s.target().packedAElement(xElem);
  Value x = cpu::toBuffer(b, b.getLoc(), xTensor);
  Value sx = cpu::toBuffer(b, b.getLoc(), sxTensor);
  Value a = cpu::allocBuffer(b, b.getLoc(), {s.M, s.K}, aElem);
  Value sa = cpu::allocBuffer(b, b.getLoc(), {s.M, s.KT}, b.getF32Type());
  Value zero = idx(0), one = idx(1), rEnd = idx(R), sEnd = idx(S);
  auto im2colRow = [&](OpBuilder &ob, Location rowLoc, ValueRange npq) {
    scf::buildLoopNest(
        ob, rowLoc, ValueRange{zero, zero}, ValueRange{rEnd, sEnd},
        ValueRange{one, one}, [&](OpBuilder &nb, Location loc, ValueRange tap) {
          ImplicitLocOpBuilder ib(loc, nb);
          IndexMath m{ib};
          auto c = [&](int64_t v) { return m.c(v); };
          auto mul = [&](Value v, int64_t k) { return m.mul(v, k); };
          auto add = [&](Value u, Value v) { return m.add(u, v); };
          Value n = npq[0], p = npq[1], q = npq[2], r = tap[0], sIdx = tap[1];
          // Input coordinates, as signed offsets from the padded origin.
          Value hc, wc, valid;
          std::tie(hc, wc, valid) = clampToInput(
              ib,
              arith::SubIOp::create(ib, add(mul(p, stride[0]), mul(r, dil[0])),
                                    c(pad[0])),
              arith::SubIOp::create(
                  ib, add(mul(q, stride[1]), mul(sIdx, dil[1])), c(pad[1])),
              H, W);
          Value row = add(mul(add(mul(n, P), p), Q), q);
          Value rs = add(mul(r, S), sIdx);
          Value nTile = arith::DivUIOp::create(ib, n, c(tn));
          Value zeroF = arith::ConstantFloatOp::create(ib, ib.getF32Type(),
                                                       APFloat(0.0f));
          Value zeroI = arith::ConstantIntOp::create(ib, aElem, 0);
          scf::buildLoopNest(
              ib, loc, ValueRange{c(0)}, ValueRange{c(CT)}, ValueRange{c(1)},
              [&](OpBuilder &nb2, Location l2, ValueRange tv) {
                ImplicitLocOpBuilder jb(l2, nb2);
                Value kt = arith::AddIOp::create(
                    jb, arith::MulIOp::create(jb, rs, cIndex(jb, CT)), tv[0]);
                Value step = memref::LoadOp::create(
                    jb, sx, ValueRange{nTile, hc, wc, tv[0]});
                memref::StoreOp::create(
                    jb, arith::SelectOp::create(jb, valid, step, zeroF), sa,
                    ValueRange{row, kt});
              });
          Value base = mul(rs, CT * ct);
          // Columns [from, to) of the row: the pixel's channels, or zeros.
          auto fill = [&](ImplicitLocOpBuilder &fb, int64_t from, int64_t to,
                          bool channels) {
            if (from >= to)
              return;
            // Whole vectors of 16 or 8 when the run allows (LLVM would
            // leave a short run of widened bytes scalar).
            int64_t vw = (to - from) % 16 == 0  ? 16
                         : (to - from) % 8 == 0 ? 8
                                                : 1;
            auto vA = VectorType::get({vw}, aElem);
            scf::buildLoopNest(
                fb, fb.getLoc(), ValueRange{cIndex(fb, from)},
                ValueRange{cIndex(fb, to)}, ValueRange{cIndex(fb, vw)},
                [&](OpBuilder &nb2, Location l2, ValueRange cv) {
                  ImplicitLocOpBuilder kb(l2, nb2);
                  Value col = arith::AddIOp::create(kb, base, cv[0]);
                  if (vw == 1) {
                    Value v = zeroI;
                    if (channels) {
                      v = memref::LoadOp::create(kb, x,
                                                 ValueRange{n, hc, wc, cv[0]});
                      if (v.getType() != aElem)
                        v = arith::ExtSIOp::create(kb, aElem, v);
                    }
                    memref::StoreOp::create(kb, v, a, ValueRange{row, col});
                    return;
                  }
                  Value v;
                  if (channels) {
                    v = vector::LoadOp::create(kb, VectorType::get({vw}, xElem),
                                               x, ValueRange{n, hc, wc, cv[0]});
                    if (xElem != aElem)
                      v = arith::ExtSIOp::create(kb, vA, v);
                  } else {
                    v = arith::ConstantOp::create(
                        kb, vA,
                        DenseElementsAttr::get(
                            vA, APInt(aElem.getIntOrFloatBitWidth(), 0)));
                  }
                  vector::StoreOp::create(kb, v, a, ValueRange{row, col});
                });
          };
          auto ifValid = scf::IfOp::create(ib, valid, /*withElse=*/true);
          {
            ImplicitLocOpBuilder tb(loc, ifValid.getThenBodyBuilder());
            fill(tb, 0, C, true);
            fill(tb, C, CT * ct, false);
          }
          {
            ImplicitLocOpBuilder eb(loc, ifValid.getElseBodyBuilder());
            fill(eb, 0, CT * ct, false);
          }
        });
  };
  cpu::buildIndependentLoops(b, b.getLoc(), ValueRange{zero, zero, zero},
                             ValueRange{idx(N), idx(P), idx(Q)},
                             ValueRange{one, one, one}, g.threads, im2colRow);
  return {a, sa};
}

/// The buffer `v` (identity layout) as one dim.
Value flatten(ImplicitLocOpBuilder &b, Value v) {
  int64_t rank = cast<MemRefType>(v.getType()).getRank();
  return memref::CollapseShapeOp::create(b, v, cpu::mergeTrailingDims(rank, 0));
}

/// Whether emitDotRowSums applies to `pixels` pixels of C int8 channels:
/// the target's dot takes four bytes, the C-tiles are whole, a vector of
/// bytes holds whole C-tiles and the pixels are a whole number of vectors.
bool dotRowSumsApply(const ConvGeometry &g, const KernelShape &s,
                     int64_t pixels) {
  int64_t bytes = 4 * s.L;
  return s.target().group() == 4 && g.xElem.isInteger(8) && g.ct % 4 == 0 &&
         g.C % g.ct == 0 && bytes % g.ct == 0 && pixels * g.C % bytes == 0;
}

/// The row sums of A read where it is, `x` (the input, or its copy with a
/// zero border: `pixels` pixels of C int8 channels), with the dot product
/// (see dotRowSumsApply): each (pixel, C-tile) is `ct` consecutive bytes of
/// x, so a vector of 4·L bytes holds 4·L / ct of them, in the order of
/// `sums`. One dot with ones sums each four bytes, the lanes of each C-tile
/// are added in place (log2(ct / 4) shuffles), and the sums of the vector's
/// C-tiles, times -offset, are stored together. The same integer sums as
/// adding the bytes one by one.
void emitDotRowSums(ImplicitLocOpBuilder &b, const ConvGeometry &g,
                    const KernelShape &s, Value x, Value sums, int64_t offset,
                    int64_t pixels) {
  int64_t bytes = 4 * s.L, ct = g.ct, total = pixels * g.C;
  int64_t per = bytes / ct, lanes = ct / 4;
  Type i32 = b.getI32Type();
  auto vL = VectorType::get({s.L}, i32);
  auto vPer = VectorType::get({per}, i32);
  auto vBytes = VectorType::get({bytes}, g.xElem);
  Value ones = arith::ConstantOp::create(
      b, vL, DenseElementsAttr::get(vL, APInt(32, 0x01010101)));
  Value zero = arith::ConstantOp::create(
      b, vL, DenseElementsAttr::get(vL, APInt(32, 0)));
  Value negOffset = arith::ConstantOp::create(
      b, vPer, DenseElementsAttr::get(vPer, APInt(32, -offset, true)));
  Value flatX = flatten(b, x), flatSums = flatten(b, sums);
  cpu::buildIndependentLoops(
      b, b.getLoc(), ValueRange{cIndex(b, 0)},
      ValueRange{cIndex(b, total / bytes)}, ValueRange{cIndex(b, 1)}, g.threads,
      [&](OpBuilder &nb, Location loc, ValueRange iv) {
        ImplicitLocOpBuilder ib(loc, nb);
        Value v = vector::LoadOp::create(
            ib, vBytes, flatX,
            ValueRange{arith::MulIOp::create(ib, iv[0], cIndex(ib, bytes))});
        Value acc = s.target().dot(ib, zero,
                                   vector::BitCastOp::create(ib, vL, v), ones);
        // Each lane gains its partner's sum `w` lanes away within its
        // C-tile, until every lane holds its C-tile's.
        for (int64_t w = 1; w < lanes; w *= 2) {
          SmallVector<int64_t> partner(s.L);
          for (int64_t l = 0; l < s.L; ++l)
            partner[l] = l ^ w;
          acc = arith::AddIOp::create(
              ib, acc, vector::ShuffleOp::create(ib, acc, acc, partner));
        }
        SmallVector<int64_t> first(per);
        for (int64_t t = 0; t < per; ++t)
          first[t] = t * lanes;
        Value tiles = vector::ShuffleOp::create(ib, acc, acc, first);
        vector::StoreOp::create(
            ib, arith::MulIOp::create(ib, tiles, negOffset), flatSums,
            ValueRange{arith::MulIOp::create(ib, iv[0], cIndex(ib, per))});
      });
}

/// A read where it is. Over the input with its zero border (xp), the
/// values of K-tile (r·S + s)·CT + t of row (n, p, q) are the channels
/// [t·ct, min((t + 1)·ct, C)) of pixel (p·sh + r·dh, q·sw + s·dw) of image
/// n (a short last C-tile when KernelShape::tailExact): a
/// row's offset plus a K-tile's. The steps and the row sums (one per pixel
/// and C-tile, 0 in the border) are laid out over the same padded pixels.
/// One pass over the input makes the copy when the input is padded or
/// widened (vpmaddwd), where im2col wrote R·S copies of it, and the row
/// sums; or the sums follow in a pass of their own by the dot product
/// (emitDotRowSums), over the copy if there is one.
/// Each row and K-tile gets the same values, step and sum as from im2col.
GatheredA gatherInPlace(ImplicitLocOpBuilder &b, const ConvGeometry &g,
                        const KernelShape &s, Value xTensor, Value sxTensor) {
  int64_t N = g.N, H = g.H, W = g.W, C = g.C, S = g.S, P = g.P, Q = g.Q,
          ct = g.ct, CT = g.CT, tn = g.tn;
  int64_t Hp = H + g.pad[0] + g.pad[2], Wp = W + g.pad[1] + g.pad[3];
  int64_t gN = llvm::divideCeil(N, tn);
  bool padded = Hp != H || Wp != W;
  Type aElem = s.target().packedAElement(g.xElem), i32 = b.getI32Type(),
       f32 = b.getF32Type();
  int64_t offset = s.target().offset(s.nibbles);
  Value x = cpu::toBuffer(b, b.getLoc(), xTensor);
  Value sx = cpu::toBuffer(b, b.getLoc(), sxTensor);
  auto idx = [&](int64_t v) { return cIndex(b, v); };
  Value zero = idx(0), one = idx(1);

  // cpu::toBuffer gives identity layouts: the input is read as it is
  // unless it needs a border or widening.
  Value xp = x;
  if (padded || aElem != g.xElem)
    xp = cpu::allocBuffer(b, b.getLoc(), {N, Hp, Wp, C}, aElem);
  Value sums =
      offset ? cpu::allocBuffer(b, b.getLoc(), {N, Hp, Wp, CT}, i32) : Value();
  // (h, w) of the input for padded (hp, wp), clamped, and whether it is
  // inside the input.
  auto source = [&](ImplicitLocOpBuilder &ib, Value hp, Value wp) {
    return clampToInput(ib, arith::SubIOp::create(ib, hp, cIndex(ib, g.pad[0])),
                        arith::SubIOp::create(ib, wp, cIndex(ib, g.pad[1])), H,
                        W);
  };
  // The sums by the dot product, after the copy if there is one.
  bool dotSums = sums && dotRowSumsApply(g, s, N * Hp * Wp);
  if (xp != x || (sums && !dotSums)) {
    // The channels in vectors of at most 64 values, each inside one C-tile
    // (the last may be short).
    int64_t vw = std::gcd(std::gcd(ct, C), int64_t(64));
    auto vX = VectorType::get({vw}, g.xElem);
    Value zeros = arith::ConstantOp::create(
        b, vX,
        DenseElementsAttr::get(vX, APInt(g.xElem.getIntOrFloatBitWidth(), 0)));
    Value negOffset = arith::ConstantIntOp::create(b, i32, -offset);
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{zero, zero}, ValueRange{idx(N), idx(Hp)},
        ValueRange{one, one}, g.threads,
        [&](OpBuilder &ob, Location loc, ValueRange nh) {
          ImplicitLocOpBuilder rb(loc, ob);
          auto c = [&](int64_t v) { return cIndex(rb, v); };
          scf::ForOp::create(
              rb, c(0), c(Wp), c(1), ValueRange{},
              [&](OpBuilder &nb, Location l, Value wp, ValueRange) {
                ImplicitLocOpBuilder ib(l, nb);
                auto [hc, wc, valid] = source(ib, nh[1], wp);
                for (int64_t t = 0; t < CT; ++t) {
                  Value sum;
                  for (int64_t k = t * ct; k < std::min(C, (t + 1) * ct);
                       k += vw) {
                    Value ch = cIndex(ib, k);
                    Value v = arith::SelectOp::create(
                        ib, valid,
                        vector::LoadOp::create(ib, vX, x,
                                               ValueRange{nh[0], hc, wc, ch}),
                        zeros);
                    if (xp != x) {
                      Value stored = v;
                      if (aElem != g.xElem)
                        stored = arith::ExtSIOp::create(
                            ib, VectorType::get({vw}, aElem), v);
                      vector::StoreOp::create(ib, stored, xp,
                                              ValueRange{nh[0], nh[1], wp, ch});
                    }
                    if (!sums || dotSums)
                      continue;
                    Value part = vector::ReductionOp::create(
                        ib, vector::CombiningKind::ADD,
                        arith::ExtSIOp::create(ib, VectorType::get({vw}, i32),
                                               v));
                    sum = sum ? arith::AddIOp::create(ib, sum, part) : part;
                  }
                  if (sums && !dotSums)
                    memref::StoreOp::create(
                        ib, arith::MulIOp::create(ib, sum, negOffset), sums,
                        ValueRange{nh[0], nh[1], wp, cIndex(ib, t)});
                }
                scf::YieldOp::create(ib);
              });
        });
  }
  if (dotSums)
    emitDotRowSums(b, g, s, xp, sums, offset, N * Hp * Wp);
  Value sxp = sx;
  if (padded) {
    sxp = cpu::allocBuffer(b, b.getLoc(), {gN, Hp, Wp, CT}, f32);
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{zero, zero, zero, zero},
        ValueRange{idx(gN), idx(Hp), idx(Wp), idx(CT)},
        ValueRange{one, one, one, one}, g.threads,
        [&](OpBuilder &nb, Location l, ValueRange iv) {
          ImplicitLocOpBuilder ib(l, nb);
          auto [hc, wc, valid] = source(ib, iv[1], iv[2]);
          Value step =
              memref::LoadOp::create(ib, sx, ValueRange{iv[0], hc, wc, iv[3]});
          memref::StoreOp::create(
              ib,
              arith::SelectOp::create(ib, valid, step,
                                      arith::ConstantFloatOp::create(
                                          ib, ib.getF32Type(), APFloat(0.0f))),
              sxp, iv);
        });
  }

  GatheredA ga;
  ga.data = flatten(b, xp);
  ga.steps = flatten(b, sxp);
  ga.sums = sums ? flatten(b, sums) : Value();
  int64_t sh = g.stride[0], sw = g.stride[1], dh = g.dil[0], dw = g.dil[1];
  ga.row = [=](ImplicitLocOpBuilder &ib, Value i) {
    IndexMath m{ib};
    Value n = m.div(i, P * Q), pq = m.rem(i, P * Q);
    Value p = m.div(pq, Q), q = m.rem(pq, Q);
    // The padded pixel of the window's first tap, in image `image`.
    auto pixel = [&](Value image) {
      return m.add(m.mul(m.add(m.mul(image, Hp), m.mul(p, sh)), Wp),
                   m.mul(q, sw));
    };
    Value pix = pixel(n), tilePix = pixel(m.div(n, tn));
    return GatheredA::Offsets{m.mul(pix, C), m.mul(tilePix, CT),
                              m.mul(pix, CT)};
  };
  ga.tile = [=](ImplicitLocOpBuilder &ib, Value t) {
    IndexMath m{ib};
    Value rs = m.div(t, CT), tc = m.rem(t, CT);
    Value pix = m.add(m.mul(m.div(rs, S), dh * Wp), m.mul(m.rem(rs, S), dw));
    Value steps = m.add(m.mul(pix, CT), tc);
    return GatheredA::Offsets{m.add(m.mul(pix, C), m.mul(tc, ct)), steps,
                              steps};
  };
  return ga;
}

/// Read in place, micro-tiles whose rows are the same pixels relative to
/// their first row's (GatheredA::rowDeltas) address them from one base:
/// rows within one output row (MR divides Q), or whole output rows of one
/// image (Q divides MR, MR divides P·Q). Takes the most such rows whose
/// accumulators (f32 and int32, NC vectors each), B's NC vectors and A's
/// broadcast fit the registers (up to twice chooseKernel's rows), with one
/// vector per row when the filters fit one, when panels of two vectors
/// would compute more columns than panels of one, or when no tile of two
/// is aligned (3 × 3 outputs: 9 rows, each panel of filters in turn); keeps
/// chooseKernel's shape if none has at least 2/3 of its rows.
void alignRows(KernelShape &s, const ConvGeometry &g, GatheredA &ga,
               const CPUCodegenOptions &o) {
  ISAInfo isa = getISAInfo(o.target);
  if (!isa.registers)
    return;
  int64_t P = g.P, Q = g.Q;
  // Two vectors per row when the filters need them and the last panel of
  // two would not compute more columns than panels of one (24 filters on 8
  // lanes: 32 against 24); else (or when no such tile is aligned) one:
  // twice the rows, each panel of filters in turn.
  auto columns = [&](int64_t nc) {
    return llvm::divideCeil(s.N, nc * s.L) * nc * s.L;
  };
  bool wide = s.N > s.L && columns(2) <= columns(1);
  for (int64_t NC = wide ? 2 : 1; NC >= 1; --NC) {
    int64_t most = std::min((isa.registers - NC - 1) / (2 * NC), 2 * isa.rows);
    for (int64_t mr = most; mr * 3 >= isa.rows * 2; --mr) {
      if (Q % mr != 0 && (mr % Q != 0 || P * Q % mr != 0))
        continue;
      s.MR = mr;
      s.NC = NC;
      for (int64_t r = 0; r < mr; ++r) {
        int64_t pix = r / Q * g.stride[0] * (g.W + g.pad[1] + g.pad[3]) +
                      r % Q * g.stride[1];
        ga.rowDeltas.push_back({pix * g.C, pix * g.CT, pix * g.CT});
      }
      return;
    }
  }
}

/// tq.conv2d as the matmul kernel on an implicit GEMM: rows (n, p, q),
/// columns k, reduction (r, s, c) with one K-tile per (r, s, C-tile), in
/// the reference's order. A is read in place from the input when its
/// K-tiles are whole groups of the dot's values and its short last C-tile,
/// if any, ends where the kernel's steps do (gatherInPlace), else gathered
/// (im2col); the filter is B, packed at compile time when constant.
struct Conv2DLowering : KernelPattern<Conv2DOp> {
  using KernelPattern::KernelPattern;

  LogicalResult matchAndRewrite(Conv2DOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto tx = cast<TiledType>(op.getInput().getType());
    auto tw = cast<TiledType>(op.getFilter().getType());
    ArrayRef<int64_t> out = cast<RankedTensorType>(op.getType()).getShape();
    ConvGeometry geometry(op, options.threads);
    int64_t N = geometry.N, C = geometry.C, K = geometry.K, R = geometry.R,
            S = geometry.S, P = geometry.P, Q = geometry.Q, ct = geometry.ct,
            CT = geometry.CT;

    // A filter with whole C-tiles of channels is already B transposed,
    // [k][(r·S + s)·C + c]: the kernel packs it from where it is. A constant
    // filter is packed at compile time.
    bool filterIsBT =
        C % ct == 0 && !op.getFilter().getDefiningOp<ConstantOp>();
    KernelShape s;
    s.transA = false;
    s.transB = filterIsBT;
    s.bf16 = op.getScaleProduct() == ScaleProduct::bf16;
    s.M = N * P * Q;
    s.N = K;
    s.kt = ct;
    s.KT = R * S * CT;
    if (C % ct != 0) {
      s.tailPeriod = CT;
      s.tailK = C % ct;
    }
    s.K = s.KT * ct;
    s.tileMA = 1;
    s.tileNB = tw.getTileShape()[0];
    s.nonNegativeA = op->hasAttr(cpu::kNonNegativeInputAttr);
    chooseKernel(s, tx, tw, options);

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    KernelEmitter e(b, s);
    auto idx = [&](int64_t v) { return cIndex(b, v); };
    Type f32 = b.getF32Type();
    Value sw = cpu::toBuffer(b, b.getLoc(), adaptor.getFilter()[1]);

    // A K-tile of whole channel groups, read where it is (see
    // gatherInPlace), or gathered into a copy (im2col).
    GatheredA gathered;
    Value a, sa;
    // (With fewer channels in the last C-tile, the kernel's steps must end
    // exactly at them: the next pixel's channels follow.)
    if (ct % s.group() == 0 && (C % ct == 0 || s.tailExact())) {
      gathered = gatherInPlace(b, geometry, s, adaptor.getInput()[0],
                               adaptor.getInput()[1]);
      alignRows(s, geometry, gathered, options);
      e.gathered = &gathered;
    } else {
      std::tie(a, sa) =
          im2col(b, geometry, s, adaptor.getInput()[0], adaptor.getInput()[1]);
    }

    // The filter as B[((r·S + s)·CT + t)·ct + c'][k] and its steps
    // SB[(r·S + s)·CT + t][k-tile] (both transposed with filterIsBT).
    int64_t gn = llvm::divideCeil(K, s.tileNB);
    Value sb = cpu::allocBuffer(b, b.getLoc(),
                                filterIsBT ? SmallVector<int64_t>{gn, s.KT}
                                           : SmallVector<int64_t>{s.KT, gn},
                                f32);
    scf::buildLoopNest(
        b, b.getLoc(), ValueRange{idx(0), idx(0), idx(0), idx(0)},
        ValueRange{idx(gn), idx(R), idx(S), idx(CT)},
        ValueRange{idx(1), idx(1), idx(1), idx(1)},
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          Value kt = arith::AddIOp::create(
              ib,
              arith::MulIOp::create(
                  ib,
                  arith::AddIOp::create(
                      ib, arith::MulIOp::create(ib, iv[1], cIndex(ib, S)),
                      iv[2]),
                  cIndex(ib, CT)),
              iv[3]);
          memref::StoreOp::create(ib, memref::LoadOp::create(ib, sw, iv), sb,
                                  filterIsBT ? ValueRange{iv[0], kt}
                                             : ValueRange{kt, iv[0]});
        });
    auto filterIndex = [&](int64_t k, int64_t j) {
      int64_t t = k / ct, c = t % CT * ct + k % ct, rs = t / CT;
      return c < C ? std::optional<int64_t>(
                         ((j * R + rs / S) * S + rs % S) * C + c)
                   : std::nullopt;
    };
    Value bd, packed;
    if (auto c = op.getFilter().getDefiningOp<ConstantOp>()) {
      std::vector<int64_t> v = getConstantValues(c);
      auto value = [&](int64_t k, int64_t j) -> int64_t {
        std::optional<int64_t> i = filterIndex(k, j);
        return i ? v[*i] : 0;
      };
      packed = cpu::toBuffer(
          b, b.getLoc(),
          arith::ConstantOp::create(
              b,
              packConstantB(
                  s, value,
                  e.packedBType(TiledToTensorsConverter::containerType(tw)))));
    } else if (filterIsBT) {
      Value wv = cpu::toBuffer(b, b.getLoc(), adaptor.getFilter()[0]);
      bd = memref::CollapseShapeOp::create(
          b, wv, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
    } else {
      Value wv = cpu::toBuffer(b, b.getLoc(), adaptor.getFilter()[0]);
      Type wElem = TiledToTensorsConverter::containerType(tw);
      bd = cpu::allocBuffer(b, b.getLoc(), {s.K, K}, wElem);
      scf::buildLoopNest(
          b, b.getLoc(), ValueRange{idx(0), idx(0), idx(0), idx(0), idx(0)},
          ValueRange{idx(K), idx(R), idx(S), idx(CT), idx(ct)},
          ValueRange{idx(1), idx(1), idx(1), idx(1), idx(1)},
          [&](OpBuilder &nb, Location loc, ValueRange iv) {
            ImplicitLocOpBuilder ib(loc, nb);
            auto c = [&](int64_t v) { return cIndex(ib, v); };
            Value ch = arith::AddIOp::create(
                ib, arith::MulIOp::create(ib, iv[3], c(ct)), iv[4]);
            Value ok =
                arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, ch, c(C));
            Value v = memref::LoadOp::create(
                ib, wv,
                ValueRange{iv[0], iv[1], iv[2],
                           arith::MinUIOp::create(ib, ch, c(C - 1))});
            Value kt = arith::AddIOp::create(
                ib,
                arith::MulIOp::create(
                    ib,
                    arith::AddIOp::create(
                        ib, arith::MulIOp::create(ib, iv[1], c(S)), iv[2]),
                    c(CT)),
                iv[3]);
            Value k = arith::AddIOp::create(
                ib, arith::MulIOp::create(ib, kt, c(ct)), iv[4]);
            memref::StoreOp::create(
                ib,
                arith::SelectOp::create(
                    ib, ok, v, arith::ConstantIntOp::create(ib, wElem, 0)),
                bd, ValueRange{k, iv[0]});
          });
    }
    // The elementwise generic after the convolution (bias, activation,
    // residual add on NHWC), applied as each output vector is stored.
    std::optional<TensorEpilogue> te;
    std::optional<VectorEpilogue> epi;
    linalg::GenericOp onBuffers;
    Value dest = attachEpilogue(b, e, op, rw, te, epi, onBuffers);
    Value y = e.emit(a, sa, bd, sb, packed, dest);
    if (onBuffers)
      rw.eraseOp(onBuffers);
    // [(n, p, q)][k] is [n][p][q][k].
    Value shaped = memref::ExpandShapeOp::create(
        b, MemRefType::get(out, f32), y,
        ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
    Value result = cpu::toTensor(b, b.getLoc(), shaped);
    rw.replaceOp(op, result);
    if (epi)
      rw.replaceOp(te->generic, result);
    return success();
  }
};

} // namespace

void matmul::populateConv2DPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    const CPUCodegenOptions &options) {
  patterns.add<Conv2DLowering>(converter, patterns.getContext(), options);
}
