//===- Matmul.cpp - tq.matmul to integer SIMD kernels ---------------------===//
//
// C[i,j] = Σ_t p(sA(i,t)·sB(t,j)) · Σ_{k∈t} qA[i,k]·qB[k,j]   (SPEC T5)
//
// The generated code has three parts:
//
// 1. pack A: op(A) copied row-major into Ap[Mp][KT·kt4] (each K-tile padded
//    to a multiple of 4 with zeros, rows padded to the micro-tile), with, on
//    the VNNI targets, cmp[i][t] = -128·Σ_{k∈t} A[i,k] per row and K-tile;
// 2. pack B: op(B) into column panels of NR = 2·L columns. For VNNI,
//    Bp[panel][k/4][NR·4] holds groups of four k per column in offset binary
//    (w + 128, unsigned), the operand order `vpdpbusd` wants (u8 × s8): the
//    weights go on the unsigned side and the activations keep their sign,
//    the offset is paid back through cmp. A constant B is packed at compile
//    time. Without VNNI (AVX2, and i16 containers on any x86 target),
//    `vpmaddwd` takes pairs of k: Bp[panel][k/2][NR·2] in int16, and A is
//    packed as int16. The generic kernel uses Bp[panel][k][NR] with signed
//    values;
// 3. the micro-kernel: MR rows × NR columns of f32 accumulators held in
//    registers across all K-tiles; per K-tile, MR × NR/L int32 accumulators
//    start from cmp, take kt4/4 `vpdpbusd` steps (the A value broadcast from
//    memory), are converted to f32, multiplied by the scale product and
//    added, in increasing t, as the reference does (mul then add, no FMA).
//
// i16 containers (N > 8) take `vpmaddwd` on x86, the generic kernel
// elsewhere.
//
//===----------------------------------------------------------------------===//
#include "tq/Conversion/Passes.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tq {
#define GEN_PASS_DEF_CONVERTTQCPUINTRINSICS
#include "tq/Conversion/Passes.h.inc"
} // namespace mlir::tq

using namespace mlir;
using namespace mlir::tq;

namespace {

/// Static description of one matmul kernel.
struct KernelShape {
  int64_t M, N, K;
  int64_t kt;     // K-tile
  int64_t kt4;    // K-tile padded to the packing granule
  int64_t KT;     // number of K-tiles
  int64_t tileMA; // A's tile extent along M
  int64_t tileNB; // B's tile extent along N
  bool transA, transB, bf16;
  /// How the int32 partial sums are formed: `vpdpbusd` (4 k per lane,
  /// weights in offset binary), `vpmaddwd` (2 k per lane, both operands
  /// int16) or portable multiply-add (1 k).
  enum class Dot { vnni, madd, mul } dot = Dot::mul;
  int64_t L;      // int32 lanes per vector
  int64_t NC = 2; // vectors per row of the micro-tile
  int64_t MR;     // rows of the micro-tile
  int64_t threads = 1;
  /// Weights of at most 4 bits packed two per byte (VNNI, constant B):
  /// byte (k/8, n, k%4) holds k-groups 2h (low nibble) and 2h+1 (high), in
  /// offset binary w + 8.
  bool nibbles = false;
  bool vnni() const { return dot == Dot::vnni; }
  bool madd() const { return dot == Dot::madd; }
  /// k values per int32 lane of one dot step.
  int64_t group() const { return vnni() ? 4 : madd() ? 2 : 1; }
  int64_t NR() const { return NC * L; }
  int64_t Mp() const { return llvm::divideCeil(M, MR) * MR; }
  int64_t Kp() const { return KT * kt4; }
  int64_t panels() const { return llvm::divideCeil(N, NR()); }
};

Value cIndex(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// Packs B at compile time; `value(k, j)` is element (k, j) of the K×N
/// operand for k < K, j < N. Large packings are dense resources.
ElementsAttr packConstantB(const KernelShape &s,
                           llvm::function_ref<int64_t(int64_t, int64_t)> value,
                           RankedTensorType packedType) {
  auto at = [&](int64_t k, int64_t j) -> int64_t {
    return k >= s.K || j >= s.N ? 0 : value(k, j);
  };
  // The logical k of packed position kp (K when it is padding).
  auto logicalK = [&](int64_t kp) {
    int64_t t = kp / s.kt4, r = kp % s.kt4;
    return r < s.kt ? t * s.kt + r : s.K;
  };
  int64_t NR = s.NR(), Kp = s.Kp();
  std::vector<int16_t> out;
  out.reserve(packedType.getNumElements());
  for (int64_t p = 0; p < s.panels(); ++p) {
    if (s.nibbles) {
      for (int64_t h = 0; h < Kp / 8; ++h)
        for (int64_t n = 0; n < NR; ++n)
          for (int64_t kk = 0; kk < 4; ++kk) {
            int64_t lo = at(logicalK(8 * h + kk), p * NR + n) + 8;
            int64_t hi = at(logicalK(8 * h + 4 + kk), p * NR + n) + 8;
            out.push_back(int8_t(uint8_t(lo | (hi << 4))));
          }
    } else if (s.vnni()) {
      // [panel][k/4][n*4 + k%4], offset binary.
      for (int64_t g = 0; g < Kp / 4; ++g)
        for (int64_t n = 0; n < NR; ++n)
          for (int64_t kk = 0; kk < 4; ++kk)
            out.push_back(int8_t(at(logicalK(4 * g + kk), p * NR + n) ^ 0x80));
    } else if (s.madd()) {
      // [panel][k/2][n*2 + k%2], signed.
      for (int64_t g = 0; g < Kp / 2; ++g)
        for (int64_t n = 0; n < NR; ++n)
          for (int64_t kk = 0; kk < 2; ++kk)
            out.push_back(int16_t(at(logicalK(2 * g + kk), p * NR + n)));
    } else {
      // [panel][k][n], signed.
      for (int64_t kp = 0; kp < Kp; ++kp)
        for (int64_t n = 0; n < NR; ++n)
          out.push_back(int16_t(at(logicalK(kp), p * NR + n)));
    }
  }
  return getIntElements(
      packedType, std::vector<int64_t>(out.begin(), out.end()), "packed_b");
}

/// The tq.quantize of a matmul's lhs, done inside the matmul's loop nest.
struct FusedQuantize {
  TiledType type;
  Value input; // f32 memref
  Value bits;  // i32
  RoundingMode rounding;
  Value scales;  // given steps (f32 memref), or null
  Value refresh; // i1: the steps computed after all, or null
};

class KernelEmitter {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, const KernelShape &s) : b(b), s(s) {}

  /// A (stored), its steps, B (stored), its steps -> C (f32 M×N buffer).
  /// With `dest`, C is written there (an M×N view) instead of a new buffer.
  /// With `fused`, A is quantized from f32 block by block inside the loop
  /// nest (A7): `a` and `sa` are then the buffers it is quantized into.
  Value emit(Value a, Value sa, Value bData, Value sb, Value packedB,
             Value dest = Value(), const FusedQuantize *fused = nullptr);
  Value packB(Value bData);
  /// Packed B for stored elements `elem` (`vpmaddwd` widens bytes to
  /// int16 as it loads them).
  RankedTensorType packedBType(Type elem) const {
    if (s.nibbles)
      return RankedTensorType::get({s.panels(), s.Kp() / 8, s.NR() * 4}, elem);
    int64_t g = s.group();
    return RankedTensorType::get({s.panels(), s.Kp() / g, s.NR() * g}, elem);
  }

private:
  ImplicitLocOpBuilder &b;
  const KernelShape &s;

  Value idx(int64_t v) { return cIndex(b, v); }
  /// Logical K index of packed position kp (may be >= K: padding).
  std::pair<Value, Value> unpackK(ImplicitLocOpBuilder &b, Value kp) {
    Value t = arith::DivUIOp::create(b, kp, cIndex(b, s.kt4));
    Value r = arith::RemUIOp::create(b, kp, cIndex(b, s.kt4));
    Value k = arith::AddIOp::create(
        b, arith::MulIOp::create(b, t, cIndex(b, s.kt)), r);
    Value valid = arith::AndIOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, r, cIndex(b, s.kt)),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, k, cIndex(b, s.K)));
    return {k, valid};
  }
  /// Element (i, k) of op(X) where X is stored rows×cols, or 0 outside.
  Value loadOp(ImplicitLocOpBuilder &b, Value x, bool trans, Value i, Value k,
               Value valid, int64_t rows, int64_t cols) {
    // Clamp so that padding never reads out of bounds, then select 0.
    Value r = trans ? k : i, c = trans ? i : k;
    r = arith::MinUIOp::create(b, r, cIndex(b, rows - 1));
    c = arith::MinUIOp::create(b, c, cIndex(b, cols - 1));
    Value v = memref::LoadOp::create(b, x, ValueRange{r, c});
    Value zero = arith::ConstantIntOp::create(b, v.getType(), 0);
    return arith::SelectOp::create(b, valid, v, zero);
  }
  Value vnniDot(ImplicitLocOpBuilder &b, Value acc, Value u8, Value s8);
  /// Copies rows [rowBegin, rowEnd) of the i8 `a` into the int16 `ap`.
  void widenRows(Value a, Value ap, Value rowBegin, Value rowEnd);
  /// cmp[i][t] = offset · Σ_{k∈t} A[i,k] for rows [rowBegin, rowEnd).
  void rowSums(Value ap, Type elem, Value cmp, Value rowBegin, Value rowEnd);
};

void KernelEmitter::rowSums(Value ap, Type elem, Value cmp, Value rowBegin,
                            Value rowEnd) {
  Type i32 = b.getI32Type();
  // 16 values at a time when the K-tile allows.
  int64_t w = s.kt4 % 16 == 0 ? 16 : 1;
  auto vI32 = VectorType::get({w}, i32);
  scf::buildLoopNest(
      b, b.getLoc(), ValueRange{rowBegin, idx(0)},
      ValueRange{rowEnd, idx(s.KT)}, ValueRange{idx(1), idx(1)},
      [&](OpBuilder &nb, Location loc, ValueRange iv) {
        ImplicitLocOpBuilder ib(loc, nb);
        Value base = arith::MulIOp::create(ib, iv[1], cIndex(ib, s.kt4));
        Value zero = arith::ConstantOp::create(
            ib, vI32, DenseElementsAttr::get(vI32, APInt(32, 0)));
        auto loop = scf::ForOp::create(
            ib, cIndex(ib, 0), cIndex(ib, s.kt4), cIndex(ib, w),
            ValueRange{zero},
            [&](OpBuilder &nb2, Location l2, Value r, ValueRange acc) {
              ImplicitLocOpBuilder jb(l2, nb2);
              Value kp = arith::AddIOp::create(jb, base, r);
              Value v = vector::LoadOp::create(jb, VectorType::get({w}, elem),
                                               ap, ValueRange{iv[0], kp});
              scf::YieldOp::create(
                  jb, ValueRange{arith::AddIOp::create(
                          jb, acc[0], arith::ExtSIOp::create(jb, vI32, v))});
            });
        Value sum = vector::ReductionOp::create(ib, vector::CombiningKind::ADD,
                                                loop.getResult(0));
        Value c = arith::MulIOp::create(
            ib, sum,
            arith::ConstantIntOp::create(ib, i32, s.nibbles ? -8 : -128));
        memref::StoreOp::create(ib, c, cmp, iv);
      });
}

Value KernelEmitter::packB(Value bData) {
  auto bt = cast<MemRefType>(bData.getType());
  RankedTensorType pt = packedBType(bt.getElementType());
  Type elem = pt.getElementType();
  Value out = cpu::allocBuffer(b, b.getLoc(), pt.getShape(), elem);
  int64_t rows = bt.getShape()[0], cols = bt.getShape()[1];
  SmallVector<Value> lbs(3, idx(0)), steps(3, idx(1));
  SmallVector<Value> ubs = {idx(pt.getShape()[0]), idx(pt.getShape()[1]),
                            idx(pt.getShape()[2])};
  scf::buildLoopNest(
      b, b.getLoc(), lbs, ubs, steps,
      [&](OpBuilder &nb, Location loc, ValueRange iv) {
        ImplicitLocOpBuilder ib(loc, nb);
        // iv = (panel, group, n*g+kk) for groups of g k; generic:
        // (panel, kp, n).
        Value n, kp;
        if (int64_t g = s.group(); g > 1) {
          n = arith::DivUIOp::create(ib, iv[2], cIndex(ib, g));
          kp = arith::AddIOp::create(
              ib, arith::MulIOp::create(ib, iv[1], cIndex(ib, g)),
              arith::RemUIOp::create(ib, iv[2], cIndex(ib, g)));
        } else {
          n = iv[2];
          kp = iv[1];
        }
        Value j = arith::AddIOp::create(
            ib, arith::MulIOp::create(ib, iv[0], cIndex(ib, s.NR())), n);
        auto [k, kValid] = unpackK(ib, kp);
        Value valid = arith::AndIOp::create(
            ib, kValid,
            arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, j,
                                  cIndex(ib, s.N)));
        // op(B)[k][j]: stored B is K×N, or N×K when transposed.
        Value v = loadOp(ib, bData, s.transB, k, j, valid, rows, cols);
        if (s.vnni())
          v = arith::XOrIOp::create(
              ib, v, arith::ConstantIntOp::create(ib, elem, 0x80));
        memref::StoreOp::create(ib, v, out, iv);
      });
  return out;
}

Value KernelEmitter::vnniDot(ImplicitLocOpBuilder &b, Value acc, Value u8,
                             Value s8) {
  auto bytes = VectorType::get({4 * s.L}, b.getI8Type());
  return DotU8S8Op::create(b, acc.getType(), acc,
                           vector::BitCastOp::create(b, bytes, u8),
                           vector::BitCastOp::create(b, bytes, s8));
}

void KernelEmitter::widenRows(Value a, Value ap, Value rowBegin, Value rowEnd) {
  Type i16 = b.getI16Type();
  scf::buildLoopNest(b, b.getLoc(), ValueRange{rowBegin, idx(0)},
                     ValueRange{rowEnd, idx(s.K)}, ValueRange{idx(1), idx(1)},
                     [&](OpBuilder &nb, Location loc, ValueRange iv) {
                       ImplicitLocOpBuilder ib(loc, nb);
                       Value v = memref::LoadOp::create(ib, a, iv);
                       memref::StoreOp::create(
                           ib, arith::ExtSIOp::create(ib, i16, v), ap, iv);
                     });
}

Value KernelEmitter::emit(Value a, Value sa, Value bData, Value sb,
                          Value packedB, Value dest,
                          const FusedQuantize *fused) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto aType = cast<MemRefType>(a.getType());
  Type aElem = aType.getElementType();
  int64_t aRows = aType.getShape()[0], aCols = aType.getShape()[1];
  int64_t Mp = s.Mp(), Kp = s.Kp(), MR = s.MR, NC = s.NC, L = s.L;

  // 1. A as the kernel reads it, rows of KT·kt4 values: A itself when it
  //    already is (not transposed, K a whole number of aligned K-tiles,
  //    int16 for `vpmaddwd`), else a packed copy. Rows past M are never
  //    packed: the kernel reads row M-1 for them and drops the results.
  //    Fused, the blocks widen their own rows once quantized.
  Type apElem = s.madd() ? Type(b.getI16Type()) : aElem;
  bool direct = !s.transA && Kp == s.K && apElem == aElem;
  Value ap = direct ? a : cpu::allocBuffer(b, b.getLoc(), {s.M, Kp}, apElem);
  if (!direct && !fused && !s.transA && Kp == s.K)
    widenRows(a, ap, idx(0), idx(s.M));
  else if (!direct && !fused)
    scf::buildLoopNest(
        b, b.getLoc(), ValueRange{idx(0), idx(0)},
        ValueRange{idx(s.M), idx(Kp)}, ValueRange{idx(1), idx(1)},
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          auto [k, valid] = unpackK(ib, iv[1]);
          Value v = loadOp(ib, a, s.transA, iv[0], k, valid, aRows, aCols);
          if (apElem != aElem)
            v = arith::ExtSIOp::create(ib, apElem, v);
          memref::StoreOp::create(ib, v, ap, iv);
        });
  //    VNNI: cmp[i][t] = -128 · Σ_{k∈t} A[i,k], paying back the offset of
  //    the weights.
  Value cmp;
  if (s.vnni()) {
    cmp = cpu::allocBuffer(b, b.getLoc(), {s.M, s.KT}, i32);
    if (!fused)
      rowSums(ap, aElem, cmp, idx(0), idx(s.M));
  }
  // 2. Pack B unless it was packed at compile time.
  Value bp = packedB ? packedB : packB(bData);
  Type bElem = cast<MemRefType>(bp.getType()).getElementType();

  // 3. B's steps per column when a vector of L columns spans several B
  //    tiles (B tiles narrower than L): colSteps[t][j] = sB(t, j / tile).
  Value colSteps;
  if (s.tileNB % L != 0) {
    int64_t width = s.panels() * s.NR();
    colSteps = cpu::allocBuffer(b, b.getLoc(), {s.KT, width}, f32);
    scf::buildLoopNest(
        b, b.getLoc(), ValueRange{idx(0), idx(0)},
        ValueRange{idx(s.KT), idx(width)}, ValueRange{idx(1), idx(1)},
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          Value cb = arith::DivUIOp::create(
              ib, arith::MinUIOp::create(ib, iv[1], cIndex(ib, s.N - 1)),
              cIndex(ib, s.tileNB));
          Value step = memref::LoadOp::create(
              ib, sb, s.transB ? ValueRange{cb, iv[0]} : ValueRange{iv[0], cb});
          memref::StoreOp::create(ib, step, colSteps, iv);
        });
  }

  //    Else, when small enough, the products p(sA·sB) for every pair of
  //    tiles: one broadcast load per accumulator and K-tile in the kernel.
  Value products;
  int64_t gm = llvm::divideCeil(s.M, s.tileMA),
          gn = llvm::divideCeil(s.N, s.tileNB);
  if (!fused && !colSteps && s.KT * gm * gn <= (int64_t(1) << 22)) {
    products = cpu::allocBuffer(b, b.getLoc(), {s.KT, gm, gn}, f32);
    scf::buildLoopNest(
        b, b.getLoc(), ValueRange{idx(0), idx(0), idx(0)},
        ValueRange{idx(s.KT), idx(gm), idx(gn)},
        ValueRange{idx(1), idx(1), idx(1)},
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          Value t = iv[0], ra = iv[1], cb = iv[2];
          Value sAv = memref::LoadOp::create(
              ib, sa, s.transA ? ValueRange{t, ra} : ValueRange{ra, t});
          Value sBv = memref::LoadOp::create(
              ib, sb, s.transB ? ValueRange{cb, t} : ValueRange{t, cb});
          Value prod = arith::MulFOp::create(ib, sAv, sBv);
          if (s.bf16)
            prod = arith::ExtFOp::create(
                ib, f32,
                arith::TruncFOp::create(ib, ib.getBF16Type(), prod)
                    .getResult());
          memref::StoreOp::create(ib, prod, products, iv);
        });
  }

  // 4. The micro-kernel loops.
  Value c = dest ? dest : cpu::allocBuffer(b, b.getLoc(), {s.M, s.N}, f32);
  auto vI32 = VectorType::get({L}, i32);
  auto vF32 = VectorType::get({L}, f32);
  auto vElem = VectorType::get({L}, bElem);
  int64_t nAcc = MR * NC;
  // Blocks of MC rows of A (about 256 KiB: they stay in L2) outside, then
  // column panels (NR columns of B by K: they stay in L1), then the row
  // micro-tiles of the block. Blocks are of equal size (a multiple of MR),
  // so that threads get equal shares.
  int64_t maxMC =
      std::max<int64_t>(1, (256 * 1024 / std::max<int64_t>(Kp, 1)) / MR) * MR;
  int64_t nBlocks = llvm::divideCeil(Mp, maxMC);
  // Fused, a block holds whole row tiles of A, which it quantizes itself.
  int64_t granule = fused ? std::lcm(MR, s.tileMA) : MR;
  int64_t MC = llvm::alignTo(llvm::divideCeil(Mp, nBlocks), granule);
  nBlocks = llvm::divideCeil(Mp, MC);
  // With threads, the (block, panel) pairs are shared out (scf.parallel,
  // lowered to OpenMP): every output element is still computed by one
  // thread in the same order, so results do not depend on the count.
  Value blk, jp;
  Operation *outerOp;
  // Fused: each block first quantizes its rows of A (T3 per tile, then
  // the row sums), so the blocks are shared out and the panels follow.
  auto quantizeBlock = [&](Value block) {
    Value r0 = arith::MulIOp::create(b, block, idx(MC));
    Value r1 = arith::MinUIOp::create(b, arith::AddIOp::create(b, r0, idx(MC)),
                                      idx(s.M));
    Value t0 = arith::DivUIOp::create(b, r0, idx(s.tileMA));
    Value t1 = arith::DivUIOp::create(
        b, arith::AddIOp::create(b, r1, idx(s.tileMA - 1)), idx(s.tileMA));
    cpu::emitQuantizeTiles(b, b.getLoc(), fused->type, fused->input, a, sa,
                           fused->bits, fused->rounding, t0, t1, fused->scales,
                           fused->refresh);
    if (ap != a)
      widenRows(a, ap, r0, r1);
    if (s.vnni())
      rowSums(ap, aElem, cmp, r0, r1);
  };
  if (fused) {
    Operation *blocks;
    if (s.threads > 1) {
      auto par = scf::ParallelOp::create(
          b, ValueRange{idx(0)}, ValueRange{idx(nBlocks)}, ValueRange{idx(1)});
      blk = par.getInductionVars()[0];
      blocks = par;
    } else {
      auto loop = scf::ForOp::create(b, idx(0), idx(nBlocks), idx(1));
      blk = loop.getInductionVar();
      blocks = loop;
    }
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&blocks->getRegion(0).front());
    quantizeBlock(blk);
    auto panels = scf::ForOp::create(b, idx(0), idx(s.panels()), idx(1));
    jp = panels.getInductionVar();
    outerOp = panels;
  } else if (s.threads > 1) {
    auto par = scf::ParallelOp::create(
        b, ValueRange{idx(0), idx(0)},
        ValueRange{idx(nBlocks), idx(s.panels())}, ValueRange{idx(1), idx(1)});
    blk = par.getInductionVars()[0];
    jp = par.getInductionVars()[1];
    outerOp = par;
  } else {
    auto blocks = scf::ForOp::create(b, idx(0), idx(nBlocks), idx(1));
    blk = blocks.getInductionVar();
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(blocks.getBody());
    auto panels = scf::ForOp::create(b, idx(0), idx(s.panels()), idx(1));
    jp = panels.getInductionVar();
    outerOp = panels;
  }
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&outerOp->getRegion(0).front());
    Value m0 = arith::MulIOp::create(b, blk, idx(MC));
    Value m1 = arith::MinUIOp::create(b, arith::AddIOp::create(b, m0, idx(MC)),
                                      idx(Mp));
    auto rowLoop = scf::ForOp::create(b, m0, m1, idx(MR));
    b.setInsertionPointToStart(rowLoop.getBody());
    Value i0 = rowLoop.getInductionVar();
    Value j0 = arith::MulIOp::create(b, jp, idx(s.NR()));
    Value zeroF = arith::ConstantOp::create(
        b, vF32, DenseElementsAttr::get(vF32, APFloat(0.0f)));
    SmallVector<Value> init(nAcc, zeroF);
    // Rows of the micro-tile, clamped for the scales of padding rows.
    SmallVector<Value> rowIdx, aRow, rowScaleIdx;
    for (int64_t r = 0; r < MR; ++r) {
      Value i = arith::AddIOp::create(b, i0, idx(r));
      rowIdx.push_back(i);
      aRow.push_back(arith::MinUIOp::create(b, i, idx(s.M - 1)));
      rowScaleIdx.push_back(arith::DivUIOp::create(
          b, arith::MinUIOp::create(b, i, idx(s.M - 1)), idx(s.tileMA)));
    }
    SmallVector<Value> colScaleIdx;
    for (int64_t cc = 0; cc < NC; ++cc) {
      Value j = arith::AddIOp::create(b, j0, idx(cc * L));
      colScaleIdx.push_back(arith::DivUIOp::create(
          b, arith::MinUIOp::create(b, j, idx(s.N - 1)), idx(s.tileNB)));
    }
    auto tLoop = scf::ForOp::create(
        b, idx(0), idx(s.KT), idx(1), init,
        [&](OpBuilder &nb, Location loc, Value t, ValueRange facc) {
          ImplicitLocOpBuilder ib(loc, nb);
          SmallVector<Value> iacc;
          for (int64_t r = 0; r < MR; ++r) {
            Value start;
            if (s.vnni())
              start = vector::BroadcastOp::create(
                  ib, vI32,
                  memref::LoadOp::create(ib, cmp, ValueRange{aRow[r], t}));
            else
              start = arith::ConstantOp::create(
                  ib, vI32, DenseElementsAttr::get(vI32, APInt(32, 0)));
            for (int64_t cc = 0; cc < NC; ++cc)
              iacc.push_back(start);
          }
          int64_t steps = s.kt4 / s.group();
          Value lo = arith::MulIOp::create(ib, t, cIndex(ib, steps));
          Value hi = arith::AddIOp::create(ib, lo, cIndex(ib, steps));
          // B's vectors for k step g (4 k with VNNI).
          auto loadB = [&](ImplicitLocOpBuilder &kb, Value g) {
            SmallVector<Value> bv;
            for (int64_t cc = 0; cc < NC; ++cc) {
              if (s.vnni()) {
                auto bytes = VectorType::get({4 * L}, bElem);
                Value v = vector::LoadOp::create(
                    kb, bytes, bp, ValueRange{jp, g, cIndex(kb, cc * 4 * L)});
                bv.push_back(vector::BitCastOp::create(kb, vI32, v));
              } else if (s.madd()) {
                auto vI16 = VectorType::get({2 * L}, kb.getI16Type());
                Value v = vector::LoadOp::create(
                    kb, VectorType::get({2 * L}, bElem), bp,
                    ValueRange{jp, g, cIndex(kb, cc * 2 * L)});
                bv.push_back(bElem.isInteger(16)
                                 ? v
                                 : arith::ExtSIOp::create(kb, vI16, v));
              } else {
                Value v = vector::LoadOp::create(
                    kb, vElem, bp, ValueRange{jp, g, cIndex(kb, cc * L)});
                bv.push_back(arith::ExtSIOp::create(kb, vI32, v));
              }
            }
            return bv;
          };
          // Nibbles: the vectors of steps 2h and 2h+1 from one load.
          auto loadPair = [&](ImplicitLocOpBuilder &kb, Value h) {
            SmallVector<Value> low, high;
            auto bytes = VectorType::get({4 * L}, bElem);
            Value mask = arith::ConstantOp::create(
                kb, bytes, DenseElementsAttr::get(bytes, APInt(8, 0x0F)));
            Value four = arith::ConstantOp::create(
                kb, bytes, DenseElementsAttr::get(bytes, APInt(8, 4)));
            for (int64_t cc = 0; cc < NC; ++cc) {
              Value v = vector::LoadOp::create(
                  kb, bytes, bp, ValueRange{jp, h, cIndex(kb, cc * 4 * L)});
              low.push_back(vector::BitCastOp::create(
                  kb, vI32, arith::AndIOp::create(kb, v, mask)));
              high.push_back(vector::BitCastOp::create(
                  kb, vI32,
                  arith::AndIOp::create(kb, arith::ShRUIOp::create(kb, v, four),
                                        mask)));
            }
            return std::make_pair(low, high);
          };
          // One k step of the micro-tile, B's vectors given.
          auto step = [&](ImplicitLocOpBuilder &kb, Value g, ValueRange acc,
                          ArrayRef<Value> bv) {
            SmallVector<Value> next;
            for (int64_t r = 0; r < MR; ++r) {
              Value av;
              if (s.vnni()) {
                Value kp = arith::MulIOp::create(kb, g, cIndex(kb, 4));
                Value four =
                    vector::LoadOp::create(kb, VectorType::get({4}, aElem), ap,
                                           ValueRange{aRow[r], kp});
                Value word = vector::ExtractOp::create(
                    kb,
                    vector::BitCastOp::create(kb, VectorType::get({1}, i32),
                                              four),
                    ArrayRef<int64_t>{0});
                av = vector::BroadcastOp::create(kb, vI32, word);
              } else if (s.madd()) {
                // The pair (k, k+1) of int16, broadcast as one int32.
                Value kp = arith::MulIOp::create(kb, g, cIndex(kb, 2));
                Value two =
                    vector::LoadOp::create(kb, VectorType::get({2}, apElem), ap,
                                           ValueRange{aRow[r], kp});
                Value word = vector::ExtractOp::create(
                    kb,
                    vector::BitCastOp::create(kb, VectorType::get({1}, i32),
                                              two),
                    ArrayRef<int64_t>{0});
                av = vector::BitCastOp::create(
                    kb, VectorType::get({2 * L}, apElem),
                    vector::BroadcastOp::create(kb, vI32, word));
              } else {
                Value x =
                    memref::LoadOp::create(kb, ap, ValueRange{aRow[r], g});
                av = vector::BroadcastOp::create(
                    kb, vI32, arith::ExtSIOp::create(kb, i32, x));
              }
              for (int64_t cc = 0; cc < NC; ++cc) {
                Value a0 = acc[r * NC + cc];
                if (s.vnni())
                  next.push_back(vnniDot(kb, a0, bv[cc], av));
                else if (s.madd())
                  next.push_back(DotI16Op::create(kb, vI32, a0, av, bv[cc]));
                else
                  next.push_back(arith::AddIOp::create(
                      kb, a0, arith::MulIOp::create(kb, av, bv[cc])));
              }
            }
            return next;
          };
          // `count` steps from step g0 (even with nibbles).
          auto steps_ = [&](ImplicitLocOpBuilder &kb, Value g0, int64_t count,
                            SmallVector<Value> acc) {
            for (int64_t u = 0; u < count; u += s.nibbles ? 2 : 1) {
              Value g = arith::AddIOp::create(kb, g0, cIndex(kb, u));
              if (!s.nibbles) {
                acc = step(kb, g, acc, loadB(kb, g));
                continue;
              }
              auto [low, high] =
                  loadPair(kb, arith::DivUIOp::create(kb, g, cIndex(kb, 2)));
              acc = step(kb, g, acc, low);
              acc = step(kb, arith::AddIOp::create(kb, g, cIndex(kb, 1)), acc,
                         high);
            }
            return acc;
          };
          // Short K-tiles are unrolled whole, so that the scaling of one
          // K-tile overlaps the dot products of the next; long ones by 4.
          int64_t unroll = steps <= 8 ? steps : (steps % 4 == 0 ? 4 : 2);
          if (!s.nibbles && steps > 8 && steps % 4 != 0)
            unroll = 1;
          SmallVector<Value> psums;
          if (unroll == steps) {
            psums = steps_(ib, lo, steps, iacc);
          } else {
            auto kLoop = scf::ForOp::create(
                ib, lo, hi, cIndex(ib, unroll), iacc,
                [&](OpBuilder &nb2, Location l2, Value g, ValueRange acc) {
                  ImplicitLocOpBuilder kb(l2, nb2);
                  scf::YieldOp::create(
                      kb, steps_(kb, g, unroll,
                                 SmallVector<Value>(acc.begin(), acc.end())));
                });
            psums.assign(kLoop.getResults().begin(), kLoop.getResults().end());
          }
          // Scale and accumulate in f32: facc += float(psum) * p(sA·sB).
          SmallVector<Value> out;
          for (int64_t r = 0; r < MR; ++r) {
            Value ra = rowScaleIdx[r];
            Value sAv = memref::LoadOp::create(
                ib, sa, s.transA ? ValueRange{t, ra} : ValueRange{ra, t});
            for (int64_t cc = 0; cc < NC; ++cc) {
              Value sv;
              if (colSteps) {
                // Columns of several B tiles in one vector: one step each.
                Value j = arith::AddIOp::create(ib, j0, cIndex(ib, cc * L));
                Value sBv = vector::LoadOp::create(ib, vF32, colSteps,
                                                   ValueRange{t, j});
                sv = arith::MulFOp::create(
                    ib, vector::BroadcastOp::create(ib, vF32, sAv), sBv);
                if (s.bf16)
                  sv = arith::ExtFOp::create(
                      ib, vF32,
                      arith::TruncFOp::create(
                          ib, VectorType::get({L}, ib.getBF16Type()), sv)
                          .getResult());
              } else if (products) {
                // p(sA·sB) of this row's and column's tiles, precomputed.
                sv = vector::BroadcastOp::create(
                    ib, vF32,
                    memref::LoadOp::create(ib, products,
                                           ValueRange{t, ra, colScaleIdx[cc]}));
              } else {
                Value cb = colScaleIdx[cc];
                Value sBv = memref::LoadOp::create(
                    ib, sb, s.transB ? ValueRange{cb, t} : ValueRange{t, cb});
                Value prod = arith::MulFOp::create(ib, sAv, sBv);
                if (s.bf16)
                  prod = arith::ExtFOp::create(
                      ib, f32,
                      arith::TruncFOp::create(ib, ib.getBF16Type(), prod)
                          .getResult());
                sv = vector::BroadcastOp::create(ib, vF32, prod);
              }
              Value psum =
                  arith::SIToFPOp::create(ib, vF32, psums[r * NC + cc]);
              out.push_back(arith::AddFOp::create(
                  ib, facc[r * NC + cc], arith::MulFOp::create(ib, psum, sv)));
            }
          }
          scf::YieldOp::create(ib, out);
        });
    // Store the micro-tile (rows below M, columns masked at N).
    for (int64_t r = 0; r < MR; ++r) {
      Value inRows = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                           rowIdx[r], idx(s.M));
      auto ifOp = scf::IfOp::create(b, inRows, /*withElse=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      for (int64_t cc = 0; cc < NC; ++cc) {
        Value j = arith::AddIOp::create(b, j0, idx(cc * L));
        Value left = arith::SubIOp::create(
            b, idx(s.N), arith::MinUIOp::create(b, j, idx(s.N)));
        Value mask = vector::CreateMaskOp::create(
            b, VectorType::get({L}, b.getI1Type()), ValueRange{left});
        vector::MaskedStoreOp::create(b, c, ValueRange{rowIdx[r], j}, mask,
                                      tLoop.getResult(r * NC + cc));
      }
    }
  }
  return c;
}

/// The kernel for the target and the operands' containers: vpdpbusd when
/// both are bytes and the target has VNNI, vpmaddwd on the other x86
/// targets, and a micro-tile of MR rows × (2 vectors of L lanes) sized to
/// the register file (AVX-512: 32 vector registers; AVX2: 16).
void chooseKernel(KernelShape &s, TiledType a, TiledType b,
                  const CPUCodegenOptions &o) {
  bool bytes = TiledToTensorsConverter::containerType(a).getWidth() == 8 &&
               TiledToTensorsConverter::containerType(b).getWidth() == 8;
  using Dot = KernelShape::Dot;
  int64_t rows = 4;
  switch (o.target) {
  case CPUTarget::avx512:
    s.dot = bytes ? Dot::vnni : Dot::madd;
    s.L = 16;
    rows = 6;
    break;
  case CPUTarget::avxvnni:
  case CPUTarget::avx2:
    s.dot = bytes && o.target == CPUTarget::avxvnni ? Dot::vnni : Dot::madd;
    s.L = 8;
    rows = 3;
    break;
  case CPUTarget::generic:
    s.dot = Dot::mul;
    s.L = 16;
    break;
  }
  s.kt4 = llvm::alignTo(s.kt, s.group());
  s.MR = std::min(s.M, rows);
  s.threads = o.threads;
}

/// The shape of a tq.matmul's kernel.
KernelShape kernelShape(MatmulOp op, TiledType ta, TiledType tb,
                        const CPUCodegenOptions &options) {
  KernelShape s;
  s.transA = op.getTransposeA();
  s.transB = op.getTransposeB();
  s.bf16 = op.getScaleProduct() == ScaleProduct::bf16;
  // The two innermost dims; leading ones are batches.
  ArrayRef<int64_t> as = ta.getShape().take_back(2),
                    bs = tb.getShape().take_back(2);
  s.M = s.transA ? as[1] : as[0];
  s.K = s.transA ? as[0] : as[1];
  s.N = s.transB ? bs[0] : bs[1];
  int64_t tkA = s.transA ? ta.getTileShape()[0] : ta.getTileShape()[1];
  s.kt = std::min(s.K, tkA);
  s.KT = llvm::divideCeil(s.K, s.kt);
  s.tileMA = s.transA ? ta.getTileShape()[1] : ta.getTileShape()[0];
  s.tileNB = s.transB ? tb.getTileShape()[0] : tb.getTileShape()[1];
  chooseKernel(s, ta, tb, options);
  return s;
}

} // namespace

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

namespace {

/// A conversion pattern that knows the codegen options.
template <typename OpT> struct KernelPattern : OpConversionPattern<OpT> {
  KernelPattern(TypeConverter &tc, MLIRContext *ctx,
                const CPUCodegenOptions &options)
      : OpConversionPattern<OpT>(tc, ctx), options(options) {}
  CPUCodegenOptions options;
};

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
      Value out =
          e.emit(a, sa, bd, sb, packed, Value(), fused ? &*fused : nullptr);
      rw.replaceOp(op, cpu::toTensor(b, b.getLoc(), out));
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

    KernelShape s;
    s.transA = s.transB = false;
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
    // by the kernel).
    Type aElem = s.madd() ? Type(b.getI16Type()) : Type(xElem);
    Value a = cpu::allocBuffer(b, b.getLoc(), {s.M, s.K}, aElem);
    Value sa = cpu::allocBuffer(b, b.getLoc(), {s.M, s.KT}, f32);
    scf::buildLoopNest(
        b, b.getLoc(), ValueRange{idx(0), idx(0), idx(0), idx(0), idx(0)},
        ValueRange{idx(N), idx(P), idx(Q), idx(R), idx(S)},
        ValueRange{idx(1), idx(1), idx(1), idx(1), idx(1)},
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          auto c = [&](int64_t v) { return cIndex(ib, v); };
          Value n = iv[0], p = iv[1], q = iv[2], r = iv[3], sIdx = iv[4];
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
                arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, v, c(hi)));
          };
          Value valid = arith::AndIOp::create(ib, inRange(h, H), inRange(w, W));
          Value hc = arith::MinSIOp::create(
              ib, arith::MaxSIOp::create(ib, h, c(0)), c(H - 1));
          Value wc = arith::MinSIOp::create(
              ib, arith::MaxSIOp::create(ib, w, c(0)), c(W - 1));
          Value row = add(mul(add(mul(n, P), p), Q), q);
          Value rs = add(mul(r, S), sIdx);
          Value nTile = arith::DivUIOp::create(ib, n, c(tx.getTileShape()[0]));
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

    // The filter as B[((r·S + s)·CT + t)·ct + c'][k] and its steps
    // SB[(r·S + s)·CT + t][k-tile].
    int64_t gn = llvm::divideCeil(K, s.tileNB);
    Value sb = cpu::allocBuffer(b, b.getLoc(), {s.KT, gn}, f32);
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
                                  ValueRange{kt, iv[0]});
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

void mlir::tq::populateTQMatmulToCPUPatterns(TypeConverter &converter,
                                             RewritePatternSet &patterns,
                                             const CPUCodegenOptions &options) {
  patterns.add<MatmulLowering, Conv2DLowering>(converter, patterns.getContext(),
                                               options);
  patterns.add<MixedMatmulLowering>(converter, patterns.getContext());
}

namespace {
struct DotToIntrinsic : OpRewritePattern<DotU8S8Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotU8S8Op op,
                                PatternRewriter &rw) const override {
    StringRef name = op.getAcc().getType().getNumElements() == 16
                         ? "llvm.x86.avx512.vpdpbusd.512"
                         : "llvm.x86.avx512.vpdpbusd.256";
    rw.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, op.getType(), rw.getStringAttr(name),
        ValueRange{op.getAcc(), op.getLhs(), op.getRhs()});
    return success();
  }
};

struct MAddToIntrinsic : OpRewritePattern<DotI16Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotI16Op op,
                                PatternRewriter &rw) const override {
    StringRef name = op.getAcc().getType().getNumElements() == 16
                         ? "llvm.x86.avx512.pmaddw.d.512"
                         : "llvm.x86.avx2.pmadd.wd";
    Value products = LLVM::CallIntrinsicOp::create(
                         rw, op.getLoc(), op.getType(), rw.getStringAttr(name),
                         ValueRange{op.getLhs(), op.getRhs()})
                         .getResult(0);
    rw.replaceOpWithNewOp<arith::AddIOp>(op, op.getAcc(), products);
    return success();
  }
};

struct ConvertTQCPUIntrinsics
    : mlir::tq::impl::ConvertTQCPUIntrinsicsBase<ConvertTQCPUIntrinsics> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DotToIntrinsic, MAddToIntrinsic>(&getContext());
    // Each op is rewritten once, by itself: one walk, without the greedy
    // driver's folding and worklist over the whole program.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
