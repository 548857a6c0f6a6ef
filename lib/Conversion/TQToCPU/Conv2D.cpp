//===- Conv2D.cpp - tq.conv2d to the tiled integer GEMM kernel ------------===//
//
// tq.conv2d as an implicit GEMM on the kernel of MatmulKernel.h.
//
//===----------------------------------------------------------------------===//
#include "MatmulKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::matmul;

namespace {

/// tq.conv2d as the matmul kernel on an implicit GEMM: rows (n, p, q),
/// columns k, reduction (r, s, c) with one K-tile per (r, s, C-tile), in
/// the reference's order. A is gathered (im2col) with a step per row and
/// K-tile (0 in the padding, whose values are 0); the filter is B, packed
/// at compile time when constant. C is padded to whole C-tiles with zeros.
struct Conv2DLowering : KernelPattern<Conv2DOp> {
  using KernelPattern::KernelPattern;

  LogicalResult matchAndRewrite(Conv2DOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto tx = cast<TiledType>(op.getInput().getType());
    auto tw = cast<TiledType>(op.getFilter().getType());
    ArrayRef<int64_t> xs = tx.getShape(), ws = tw.getShape();
    ArrayRef<int64_t> out = cast<RankedTensorType>(op.getType()).getShape();
    int64_t N = xs[0], H = xs[1], W = xs[2], C = xs[3];
    int64_t K = ws[0], R = ws[1], S = ws[2];
    int64_t P = out[1], Q = out[2];
    // A K-tile is a tile of channels, no wider than C.
    int64_t ct = std::min(tx.getTileShape()[1], C),
            CT = llvm::divideCeil(C, ct);
    ArrayRef<int64_t> stride = op.getStrides(), dil = op.getDilations(),
                      pad = op.getPadding();

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
    s.K = s.KT * ct;
    s.tileMA = 1;
    s.tileNB = tw.getTileShape()[0];
    chooseKernel(s, tx, tw, options);

    ImplicitLocOpBuilder b(op.getLoc(), rw);
    KernelEmitter e(b, s);
    auto idx = [&](int64_t v) { return cIndex(b, v); };
    Type xElem = TiledToTensorsConverter::containerType(tx);
    Type f32 = b.getF32Type();
    Value x = cpu::toBuffer(b, b.getLoc(), adaptor.getInput()[0]);
    Value sx = cpu::toBuffer(b, b.getLoc(), adaptor.getInput()[1]);
    Value sw = cpu::toBuffer(b, b.getLoc(), adaptor.getFilter()[1]);

    // im2col: A[(n, p, q)][((r·S + s)·CT + t)·ct + c'] and its steps
    // SA[(n, p, q)][(r·S + s)·CT + t]. For one (n, p, q, r, s) the CT·ct
    // values are the pixel's channels, then zeros past C: two unit-stride
    // loops, which LLVM vectorizes. A is int16 for vpmaddwd (read in place
    // by the kernel). Each (n, p, q) writes its own row: the rows are shared
    // among the threads.
    Type aElem = s.target().packedAElement(xElem);
    Value a = cpu::allocBuffer(b, b.getLoc(), {s.M, s.K}, aElem);
    Value sa = cpu::allocBuffer(b, b.getLoc(), {s.M, s.KT}, f32);
    Value zero = idx(0), one = idx(1), rEnd = idx(R), sEnd = idx(S);
    auto im2colRow = [&](OpBuilder &ob, Location rowLoc, ValueRange npq) {
      scf::buildLoopNest(
          ob, rowLoc, ValueRange{zero, zero}, ValueRange{rEnd, sEnd},
          ValueRange{one, one},
          [&](OpBuilder &nb, Location loc, ValueRange tap) {
            ImplicitLocOpBuilder ib(loc, nb);
            auto c = [&](int64_t v) { return cIndex(ib, v); };
            Value n = npq[0], p = npq[1], q = npq[2], r = tap[0], sIdx = tap[1];
            auto mul = [&](Value v, int64_t k) {
              return arith::MulIOp::create(ib, v, c(k));
            };
            auto add = [&](Value u, Value v) {
              return arith::AddIOp::create(ib, u, v);
            };
            // Input coordinates, as signed offsets from the padded origin.
            Value h = arith::SubIOp::create(
                ib, add(mul(p, stride[0]), mul(r, dil[0])), c(pad[0]));
            Value w = arith::SubIOp::create(
                ib, add(mul(q, stride[1]), mul(sIdx, dil[1])), c(pad[1]));
            auto inRange = [&](Value v, int64_t hi) {
              return arith::AndIOp::create(
                  ib,
                  arith::CmpIOp::create(ib, arith::CmpIPredicate::sge, v, c(0)),
                  arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, v,
                                        c(hi)));
            };
            Value valid =
                arith::AndIOp::create(ib, inRange(h, H), inRange(w, W));
            Value hc = arith::MinSIOp::create(
                ib, arith::MaxSIOp::create(ib, h, c(0)), c(H - 1));
            Value wc = arith::MinSIOp::create(
                ib, arith::MaxSIOp::create(ib, w, c(0)), c(W - 1));
            Value row = add(mul(add(mul(n, P), p), Q), q);
            Value rs = add(mul(r, S), sIdx);
            Value nTile =
                arith::DivUIOp::create(ib, n, c(tx.getTileShape()[0]));
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
                        v = memref::LoadOp::create(
                            kb, x, ValueRange{n, hc, wc, cv[0]});
                        if (v.getType() != aElem)
                          v = arith::ExtSIOp::create(kb, aElem, v);
                      }
                      memref::StoreOp::create(kb, v, a, ValueRange{row, col});
                      return;
                    }
                    Value v;
                    if (channels) {
                      v = vector::LoadOp::create(
                          kb, VectorType::get({vw}, xElem), x,
                          ValueRange{n, hc, wc, cv[0]});
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
                               ValueRange{one, one, one}, options.threads,
                               im2colRow);

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
    Value y = e.emit(a, sa, bd, sb, packed);
    // [(n, p, q)][k] is [n][p][q][k].
    Value shaped = memref::ExpandShapeOp::create(
        b, MemRefType::get(out, f32), y,
        ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
    rw.replaceOp(op, cpu::toTensor(b, b.getLoc(), shaped));
    return success();
  }
};

} // namespace

void matmul::populateConv2DPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    const CPUCodegenOptions &options) {
  patterns.add<Conv2DLowering>(converter, patterns.getContext(), options);
}
