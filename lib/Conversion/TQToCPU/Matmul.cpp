//===- Matmul.cpp - tq.matmul to the tiled integer GEMM kernel ------------===//
//
// C[i,j] = Σ_t p(sA(i,t)·sB(t,j)) · Σ_{k∈t} qA[i,k]·qB[k,j]   (SPEC T5)
//
// The patterns of tq.matmul: tiled × tiled through the kernel of
// MatmulKernel.h (B packed at compile time when constant, A's quantization
// fused into the loop nest where it can be), and the mixed tiled × f32
// product.
//
//===----------------------------------------------------------------------===//
#include "MatmulKernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::matmul;

bool mlir::tq::quantizeFusesIntoMatmul(QuantizeOp q,
                                       const CPUCodegenOptions &options) {
  if (!q->hasOneUse() || q.getRounding() == RoundingMode::stochastic)
    return false;
  auto m = dyn_cast<MatmulOp>(*q->getUsers().begin());
  if (!m || m.getLhs() != q.getResult() || m.getRhs() == q.getResult() ||
      m.getTransposeA())
    return false;
  auto ta = cast<TiledType>(q.getType());
  auto tb = dyn_cast<TiledType>(m.getRhs().getType());
  if (!tb || ta.getRank() != 2)
    return false;
  // A must be read in place: K a whole number of 4-aligned K-tiles.
  KernelShape s = kernelShape(m, ta, tb, options);
  return s.Kp() == s.K;
}

std::optional<TensorEpilogue>
matmul::matchTensorEpilogue(Operation *op, ConversionPatternRewriter &rw) {
  if (op->getNumResults() != 1 || !op->hasOneUse())
    return std::nullopt;
  TensorEpilogue e;
  e.product = op->getResult(0);
  Operation *user = *op->getUsers().begin();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
    if (!expand->hasOneUse() ||
        expand.getReassociationIndices().back().size() != 1)
      return std::nullopt;
    e.expand = expand;
    e.product = expand.getResult();
    user = *expand->getUsers().begin();
  }
  auto g = dyn_cast<linalg::GenericOp>(user);
  auto type = dyn_cast<RankedTensorType>(e.product.getType());
  if (!g || !type || !g.hasPureTensorSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      g.getNumLoops() != type.getRank() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
      g.getResult(0).getType() != type ||
      !g.getBody()->getArgument(g.getNumDpsInputs()).use_empty())
    return std::nullopt;
  int64_t rank = type.getRank();
  DominanceInfo dom(op->getParentOp());
  auto before = [&](Value v) {
    Value r = rw.getRemappedValue(v);
    e.remapped.map(v, r);
    return r && dom.properlyDominates(r, op);
  };
  SetVector<Value> above;
  getUsedValuesDefinedAbove(g.getRegion(), above);
  if (!llvm::all_of(above, before))
    return std::nullopt;
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(in);
    Value v = in->get();
    if (v == e.product) {
      if (!m.isIdentity())
        return std::nullopt;
      continue;
    }
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t) {
      if (!before(v))
        return std::nullopt;
      continue;
    }
    bool whole = m.isIdentity() && t == type;
    AffineDimExpr dim(nullptr);
    if (m.getNumResults() == 1)
      dim = dyn_cast<AffineDimExpr>(m.getResult(0));
    bool columns = dim && dim.getPosition() == unsigned(rank - 1) &&
                   t.getRank() == 1 &&
                   t.getShape()[0] == type.getShape().back();
    bool scalar = m.getNumResults() == 0 && t.getRank() == 0;
    if (!(whole || columns || scalar) || !before(v))
      return std::nullopt;
  }
  e.generic = g;
  return e;
}

linalg::GenericOp matmul::buildBufferEpilogue(ImplicitLocOpBuilder &b,
                                              const TensorEpilogue &te,
                                              Value c) {
  linalg::GenericOp g = te.generic;
  MLIRContext *ctx = b.getContext();
  int64_t rank = cast<RankedTensorType>(te.product.getType()).getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, ctx);
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands()) {
    auto t = dyn_cast<RankedTensorType>(in->get().getType());
    if (in->get() == te.product) {
      ins.push_back(c);
      maps.push_back(identity);
      continue;
    }
    Value v = te.remapped.lookup(in->get());
    if (!t) {
      ins.push_back(v);
      maps.push_back(AffineMap::get(2, 0, ctx));
    } else if (t.getRank() == 0) {
      ins.push_back(cpu::toBuffer(b, b.getLoc(), v));
      maps.push_back(AffineMap::get(2, 0, ctx));
    } else if (g.getMatchingIndexingMap(in).isIdentity()) {
      // A whole tensor: its rows merged as the product's are.
      Value buf = cpu::toBuffer(b, b.getLoc(), v);
      if (rank > 2) {
        SmallVector<ReassociationIndices> groups(1);
        for (int64_t d = 0; d + 1 < rank; ++d)
          groups[0].push_back(d);
        groups.push_back({rank - 1});
        buf = memref::CollapseShapeOp::create(b, buf, groups);
      }
      ins.push_back(buf);
      maps.push_back(identity);
    } else {
      ins.push_back(cpu::toBuffer(b, b.getLoc(), v));
      maps.push_back(AffineMap::get(2, 0, getAffineDimExpr(1, ctx)));
    }
  }
  maps.push_back(identity);
  auto copy = linalg::GenericOp::create(
      b, g.getLoc(), TypeRange{}, ins, ValueRange{c}, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel));
  IRMapping map = te.remapped;
  g.getRegion().cloneInto(&copy.getRegion(), map);
  return copy;
}

Value matmul::attachEpilogue(ImplicitLocOpBuilder &b, KernelEmitter &e,
                             Operation *op, ConversionPatternRewriter &rw,
                             std::optional<TensorEpilogue> &te,
                             std::optional<VectorEpilogue> &epi,
                             linalg::GenericOp &onBuffers) {
  te = matchTensorEpilogue(op, rw);
  if (!te)
    return Value();
  Value dest = cpu::allocBuffer(b, b.getLoc(), {e.shape().M, e.shape().N},
                                b.getF32Type());
  onBuffers = buildBufferEpilogue(b, *te, dest);
  epi = VectorEpilogue::matchReading(onBuffers, dest, 1);
  if (epi) {
    epi->prepare(b);
    e.epilogue = &*epi;
    b.setLoc(epi->fusedLoc(op));
  }
  return dest;
}

namespace {

struct MatmulLowering : KernelPattern<MatmulOp> {
  using KernelPattern::KernelPattern;

  LogicalResult matchAndRewrite(MatmulOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto ta = dyn_cast<TiledType>(op.getLhs().getType());
    auto tb = dyn_cast<TiledType>(op.getRhs().getType());
    if (!ta || !tb)
      return rw.notifyMatchFailure(op, "mixed matmul");
    KernelShape s = kernelShape(op, ta, tb, options);
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    KernelEmitter e(b, s);
    bool fusedLhs = false;
    if (auto q = op.getLhs().getDefiningOp<QuantizeOp>())
      fusedLhs = quantizeFusesIntoMatmul(q, options);
    Value a, sa;
    if (!fusedLhs) {
      a = cpu::toBuffer(b, b.getLoc(), adaptor.getLhs()[0]);
      sa = cpu::toBuffer(b, b.getLoc(), adaptor.getLhs()[1]);
    }
    Value bd = cpu::toBuffer(b, b.getLoc(), adaptor.getRhs()[0]);
    Value sb = cpu::toBuffer(b, b.getLoc(), adaptor.getRhs()[1]);
    if (ta.getRank() == 2) {
      // A7: the lhs's quantization runs inside this loop nest.
      std::optional<FusedQuantize> fused;
      if (auto q = op.getLhs().getDefiningOp<QuantizeOp>();
          q && quantizeFusesIntoMatmul(q, options)) {
        auto cast =
            adaptor.getLhs()[0].getDefiningOp<UnrealizedConversionCastOp>();
        Value bits = q.getBits() ? rw.getRemappedValue(q.getBits())
                                 : Value(arith::ConstantIntOp::create(
                                       b, b.getI32Type(), ta.getBits()));
        Value scales = q.getScales()
                           ? cpu::toBuffer(b, b.getLoc(),
                                           rw.getRemappedValue(q.getScales()))
                           : Value();
        fused = FusedQuantize{
            ta,
            cpu::toBuffer(b, b.getLoc(), cast.getInputs()[0]),
            bits,
            q.getRounding(),
            scales,
            q.getRefresh() ? rw.getRemappedValue(q.getRefresh()) : Value()};
        a = cpu::allocBuffer(b, b.getLoc(), ta.getShape(),
                             TiledToTensorsConverter::containerType(ta));
        sa = cpu::allocBuffer(b, b.getLoc(), ta.getGridShape(), b.getF32Type());
      }
      Value packed;
      if (auto c = op.getRhs().getDefiningOp<ConstantOp>()) {
        s.nibbles = s.vnni() && tb.getMaxBits() <= 4 && s.kt4 % 8 == 0;
        RankedTensorType pt =
            e.packedBType(TiledToTensorsConverter::containerType(tb));
        std::vector<int64_t> v = getConstantValues(c);
        int64_t cols = tb.getShape()[1];
        auto value = [&](int64_t k, int64_t j) {
          return s.transB ? v[j * cols + k] : v[k * cols + j];
        };
        packed = cpu::toBuffer(
            b, b.getLoc(),
            arith::ConstantOp::create(b, packConstantB(s, value, pt)));
        bd = Value();
      }
      // The elementwise generic after the product, applied as C is stored.
      std::optional<TensorEpilogue> te;
      std::optional<VectorEpilogue> epi;
      linalg::GenericOp onBuffers;
      Value dest = attachEpilogue(b, e, op, rw, te, epi, onBuffers);
      Value out =
          e.emit(a, sa, bd, sb, packed, dest, fused ? &*fused : nullptr);
      if (onBuffers)
        rw.eraseOp(onBuffers);
      Value result = cpu::toTensor(b, b.getLoc(), out);
      rw.replaceOp(op, result);
      if (epi)
        rw.replaceOp(te->generic, te->expand ? te->expand.getResult() : result);
      return success();
    }
    // Batches: one kernel per batch index, on 2-D views of the operands
    // (batch dims flattened) and of the result.
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t batches = 1;
    for (int64_t d : resultType.getShape().drop_back(2))
      batches *= d;
    Value out =
        cpu::allocBuffer(b, b.getLoc(), resultType.getShape(), b.getF32Type());
    auto flat = [&](Value v) {
      auto t = cast<MemRefType>(v.getType());
      SmallVector<ReassociationIndices> groups(1);
      for (int64_t d = 0; d + 2 < t.getRank(); ++d)
        groups[0].push_back(d);
      groups.push_back({t.getRank() - 2});
      groups.push_back({t.getRank() - 1});
      return memref::CollapseShapeOp::create(b, v, groups).getResult();
    };
    Value fa = flat(a), fsa = flat(sa), fbd = flat(bd), fsb = flat(sb),
          fout = flat(out);
    auto loop =
        scf::ForOp::create(b, cIndex(b, 0), cIndex(b, batches), cIndex(b, 1));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      auto slice = [&](Value v) {
        auto t = cast<MemRefType>(v.getType());
        SmallVector<OpFoldResult> offsets = {i, b.getIndexAttr(0),
                                             b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                           b.getIndexAttr(t.getShape()[1]),
                                           b.getIndexAttr(t.getShape()[2])};
        SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
        auto type = memref::SubViewOp::inferRankReducedResultType(
            t.getShape().drop_front(), t, offsets, sizes, strides);
        return memref::SubViewOp::create(b, cast<MemRefType>(type), v, offsets,
                                         sizes, strides)
            .getResult();
      };
      e.emit(slice(fa), slice(fsa), slice(fbd), slice(fsb), Value(),
             slice(fout));
    }
    rw.replaceOp(op, cpu::toTensor(b, b.getLoc(), out));
    return success();
  }
};

/// The mixed tq.matmul: one operand tiled, the other f32 (T5). For each
/// K-tile, the f32 partial sum Σ_k x·y (k ascending, multiply then add) is
/// multiplied by the tiled operand's step and added, as the reference does;
/// 16 columns at a time. Transposed operands are copied row-major first.
struct MixedMatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(MatmulOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto ta = dyn_cast<TiledType>(op.getLhs().getType());
    auto tb = dyn_cast<TiledType>(op.getRhs().getType());
    if ((ta != nullptr) == (tb != nullptr) ||
        cpu::rankOf(op.getLhs().getType()) != 2)
      return rw.notifyMatchFailure(op, "not a 2-D mixed matmul");
    ImplicitLocOpBuilder b(op.getLoc(), rw);
    Type f32 = b.getF32Type();
    bool tiledA = ta != nullptr;
    TiledType tt = tiledA ? ta : tb;
    auto operand = [&](ValueRange v, bool trans) {
      Value m = cpu::toBuffer(b, b.getLoc(), v.front());
      return trans ? cpu::emitPermute(b, m, {1, 0}) : m;
    };
    Value a = operand(adaptor.getLhs(), op.getTransposeA());
    Value bm = operand(adaptor.getRhs(), op.getTransposeB());
    Value steps = cpu::toBuffer(
        b, b.getLoc(), (tiledA ? adaptor.getLhs() : adaptor.getRhs())[1]);
    bool stepsTransposed = tiledA ? op.getTransposeA() : op.getTransposeB();
    int64_t M = cast<MemRefType>(a.getType()).getShape()[0];
    int64_t K = cast<MemRefType>(a.getType()).getShape()[1];
    int64_t N = cast<MemRefType>(bm.getType()).getShape()[1];
    // The tiled operand's tile extents in op() orientation: (rows, K) for
    // A, (K, columns) for B.
    ArrayRef<int64_t> tile = tt.getTileShape();
    int64_t t0 = stepsTransposed ? tile[1] : tile[0];
    int64_t t1 = stepsTransposed ? tile[0] : tile[1];
    int64_t kt = std::min(K, tiledA ? t1 : t0);
    int64_t KT = llvm::divideCeil(K, kt);
    const int64_t L = 16;
    auto vF32 = VectorType::get({L}, f32);
    Value c = cpu::allocBuffer(b, b.getLoc(), {M, N}, f32);
    auto idx = [&](int64_t v) { return cIndex(b, v); };
    scf::buildLoopNest(
        b, b.getLoc(), ValueRange{idx(0), idx(0)},
        ValueRange{idx(M), idx(llvm::divideCeil(N, L))},
        ValueRange{idx(1), idx(1)},
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          auto ci = [&](int64_t v) { return cIndex(ib, v); };
          Value i = iv[0];
          Value j = arith::MulIOp::create(ib, iv[1], ci(L));
          Value left = arith::SubIOp::create(ib, ci(N), j);
          Value mask = vector::CreateMaskOp::create(
              ib, VectorType::get({L}, ib.getI1Type()), ValueRange{left});
          // The step of tile (row tile, K-tile t) or (t, column tile) in the
          // stored grid.
          auto step = [&](ImplicitLocOpBuilder &kb, Value r, Value t) {
            SmallVector<Value> at =
                tiledA ? SmallVector<Value>{r, t} : SmallVector<Value>{t, r};
            if (stepsTransposed)
              std::swap(at[0], at[1]);
            return memref::LoadOp::create(kb, steps, at).getResult();
          };
          Value zero = arith::ConstantOp::create(
              ib, vF32, DenseElementsAttr::get(vF32, APFloat(0.0f)));
          // Per-column steps of a tiled B for K-tile t (clamped columns).
          auto colSteps = [&](ImplicitLocOpBuilder &kb, Value t) {
            Value v = zero;
            for (int64_t l = 0; l < L; ++l) {
              Value col = arith::MinUIOp::create(
                  kb, arith::AddIOp::create(kb, j, cIndex(kb, l)),
                  cIndex(kb, N - 1));
              Value ct = arith::DivUIOp::create(kb, col, cIndex(kb, t1));
              v = vector::InsertOp::create(kb, step(kb, ct, t), v,
                                           ArrayRef<int64_t>{l});
            }
            return v;
          };
          auto tLoop = scf::ForOp::create(
              ib, ci(0), ci(KT), ci(1), ValueRange{zero},
              [&](OpBuilder &nb2, Location l2, Value t, ValueRange acc) {
                ImplicitLocOpBuilder tb2(l2, nb2);
                Value k0 = arith::MulIOp::create(tb2, t, cIndex(tb2, kt));
                Value k1 = arith::MinUIOp::create(
                    tb2, arith::AddIOp::create(tb2, k0, cIndex(tb2, kt)),
                    cIndex(tb2, K));
                auto kLoop = scf::ForOp::create(
                    tb2, k0, k1, cIndex(tb2, 1), ValueRange{zero},
                    [&](OpBuilder &nb3, Location l3, Value k, ValueRange ps) {
                      ImplicitLocOpBuilder kb(l3, nb3);
                      Value x = memref::LoadOp::create(kb, a, ValueRange{i, k});
                      if (!isa<FloatType>(x.getType()))
                        x = arith::SIToFPOp::create(kb, f32, x);
                      Type bElem =
                          cast<MemRefType>(bm.getType()).getElementType();
                      auto bVec = VectorType::get({L}, bElem);
                      Value pass = arith::ConstantOp::create(
                          kb, bVec,
                          isa<FloatType>(bElem)
                              ? DenseElementsAttr::get(bVec, APFloat(0.0f))
                              : DenseElementsAttr::get(
                                    bVec,
                                    APInt(bElem.getIntOrFloatBitWidth(), 0)));
                      Value y = vector::MaskedLoadOp::create(
                          kb, bVec, bm, ValueRange{k, j}, mask, pass);
                      if (!isa<FloatType>(bElem))
                        y = arith::SIToFPOp::create(kb, vF32, y);
                      Value prod = arith::MulFOp::create(
                          kb, vector::BroadcastOp::create(kb, vF32, x), y);
                      scf::YieldOp::create(kb, ValueRange{arith::AddFOp::create(
                                                   kb, ps[0], prod)});
                    });
                Value sv;
                if (tiledA)
                  sv = vector::BroadcastOp::create(
                      tb2, vF32,
                      step(tb2, arith::DivUIOp::create(tb2, i, cIndex(tb2, t0)),
                           t));
                else
                  sv = colSteps(tb2, t);
                Value term = arith::MulFOp::create(tb2, kLoop.getResult(0), sv);
                scf::YieldOp::create(
                    tb2, ValueRange{arith::AddFOp::create(tb2, acc[0], term)});
              });
          vector::MaskedStoreOp::create(ib, c, ValueRange{i, j}, mask,
                                        tLoop.getResult(0));
        });
    rw.replaceOp(op, cpu::toTensor(b, b.getLoc(), c));
    return success();
  }
};

} // namespace

void mlir::tq::populateTQMatmulToCPUPatterns(TypeConverter &converter,
                                             RewritePatternSet &patterns,
                                             const CPUCodegenOptions &options) {
  patterns.add<MatmulLowering>(converter, patterns.getContext(), options);
  matmul::populateConv2DPatterns(converter, patterns, options);
  patterns.add<MixedMatmulLowering>(converter, patterns.getContext());
}
