//===- MatmulKernel.cpp - the tiled integer GEMM kernel -------------------===//
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
//
//===----------------------------------------------------------------------===//
#include "MatmulKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::matmul;

/// Packs B at compile time; `value(k, j)` is element (k, j) of the K×N
/// operand for k < K, j < N. Large packings are dense resources.
ElementsAttr
matmul::packConstantB(const KernelShape &s,
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
void matmul::chooseKernel(KernelShape &s, TiledType a, TiledType b,
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
KernelShape matmul::kernelShape(MatmulOp op, TiledType ta, TiledType tb,
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
