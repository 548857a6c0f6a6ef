//===- MatmulKernel.cpp - the tiled integer GEMM kernel -------------------===//
//
// C[i,j] = Σ_t p(sA(i,t)·sB(t,j)) · Σ_{k∈t} qA[i,k]·qB[k,j]   (SPEC T5)
//
// The generated code has three parts:
//
// 1. pack A: op(A) copied row-major into Ap[Mp][KT·kt4] (each K-tile padded
//    to a multiple of 4 with zeros, rows padded to the micro-tile), with, on
//    the VNNI targets, cmp[i][t] = -128·Σ_{k∈t} A[i,k] per row and K-tile.
//    Or A read where it is (GatheredA, a convolution's input): a row's
//    offset plus a K-tile's locate its values, step and cmp;
// 2. pack B: op(B) into column panels of NR = NC·L columns (NC = 2, or 1
//    for a narrow product with few rows). For VNNI,
//    Bp[panel][k/4][NR·4] holds groups of four k per column in offset binary
//    (w + 128, unsigned), the operand order `vpdpbusd` wants (u8 × s8): the
//    weights go on the unsigned side and the activations keep their sign,
//    the offset is paid back through cmp. A constant B is packed at compile
//    time. Without VNNI (AVX2), bytes of A known not to be negative take
//    `vpmaddubsw` then `vpmaddwd` with ones: the same layout with the
//    weights signed on the signed side, no offset. Other A without VNNI
//    (and i16 containers on any x86 target) take `vpmaddwd` on pairs of k:
//    Bp[panel][k/2][NR·2] in int16, and A is packed as int16. The generic
//    kernel uses Bp[panel][k][NR] with signed values;
// 3. the micro-kernel: MR rows × NR columns of f32 accumulators held in
//    registers across all K-tiles; per K-tile, MR × NR/L int32 accumulators
//    start from cmp, take kt4/4 `vpdpbusd` steps (the A value broadcast from
//    memory; a short K-tile's stop after its values), are converted to f32,
//    multiplied by the scale product and added, in increasing t, as the
//    reference does (mul then add, no FMA).
//
// i16 containers (N > 8) take `vpmaddwd` on x86, the generic kernel
// elsewhere.
//
//
//===----------------------------------------------------------------------===//
#include "MatmulKernel.h"
#include "FloatKernels.h"

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
  const DotTarget &target = s.target();
  int64_t g = s.group();
  for (int64_t p = 0; p < s.panels(); ++p) {
    if (s.nibbles) {
      for (int64_t h = 0; h < Kp / 8; ++h)
        for (int64_t n = 0; n < NR; ++n)
          for (int64_t kk = 0; kk < 4; ++kk) {
            int64_t lo = at(logicalK(8 * h + kk), p * NR + n) + 8;
            int64_t hi = at(logicalK(8 * h + 4 + kk), p * NR + n) + 8;
            out.push_back(int8_t(uint8_t(lo | (hi << 4))));
          }
      continue;
    }
    // [panel][k/g][n*g + k%g]: groups of g k per column.
    for (int64_t kg = 0; kg < Kp / g; ++kg)
      for (int64_t n = 0; n < NR; ++n)
        for (int64_t kk = 0; kk < g; ++kk)
          out.push_back(
              int16_t(target.packValue(at(logicalK(g * kg + kk), p * NR + n))));
  }
  return getIntElements(
      packedType, std::vector<int64_t>(out.begin(), out.end()), "packed_b");
}

void KernelEmitter::rowSums(Value ap, Type elem, Value cmp, Value rowBegin,
                            Value rowEnd) {
  Type i32 = b.getI32Type();
  Value negOffset =
      arith::ConstantIntOp::create(b, i32, -s.target().offset(s.nibbles));
  // With the dot product (VNNI): one dot of a vector of A's bytes with
  // ones sums each four, then the lanes of each K-tile are added. A
  // vector holds whole K-tiles (`per` of them) or a K-tile whole vectors.
  int64_t bytes = 4 * s.L, per = bytes / s.kt4;
  int64_t dotted = 0; // K-tiles done this way, from the first
  if (s.target().group() == 4 && elem.isInteger(8) && s.kt4 % 4 == 0 &&
      (per > 0 ? bytes % s.kt4 == 0 : s.kt4 % bytes == 0)) {
    int64_t group = std::max<int64_t>(per, 1), loads = s.kt4 / bytes;
    dotted = s.KT / group * group;
    auto vBytes = VectorType::get({bytes}, elem);
    auto vL = VectorType::get({s.L}, i32);
    Value ones = arith::ConstantOp::create(
        b, vL, DenseElementsAttr::get(vL, APInt(32, 0x01010101)));
    Value zero = arith::ConstantOp::create(
        b, vL, DenseElementsAttr::get(vL, APInt(32, 0)));
    if (dotted > 0)
      scf::buildLoopNest(
          b, b.getLoc(), ValueRange{rowBegin, idx(0)},
          ValueRange{rowEnd, idx(dotted)}, ValueRange{idx(1), idx(group)},
          [&](OpBuilder &nb, Location loc, ValueRange iv) {
            ImplicitLocOpBuilder ib(loc, nb);
            Value base = arith::MulIOp::create(ib, iv[1], cIndex(ib, s.kt4));
            Value acc = zero;
            for (int64_t l = 0; l < std::max<int64_t>(loads, 1); ++l) {
              Value v = vector::LoadOp::create(
                  ib, vBytes, ap,
                  ValueRange{iv[0], arith::AddIOp::create(
                                        ib, base, cIndex(ib, l * bytes))});
              acc = s.target().dot(ib, acc,
                                   vector::BitCastOp::create(ib, vL, v), ones);
            }
            int64_t lanes = per > 0 ? s.kt4 / 4 : s.L;
            for (int64_t t = 0; t < group; ++t) {
              Value part = acc;
              if (lanes < s.L)
                part = vector::ExtractStridedSliceOp::create(
                    ib, acc, ArrayRef<int64_t>{t * lanes},
                    ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1});
              Value sum = vector::ReductionOp::create(
                  ib, vector::CombiningKind::ADD, part);
              memref::StoreOp::create(
                  ib, arith::MulIOp::create(ib, sum, negOffset), cmp,
                  ValueRange{iv[0],
                             arith::AddIOp::create(ib, iv[1], cIndex(ib, t))});
            }
          });
  }
  if (dotted == s.KT)
    return;
  // 16 values at a time when the K-tile allows.
  int64_t w = s.kt4 % 16 == 0 ? 16 : 1;
  auto vI32 = VectorType::get({w}, i32);
  scf::buildLoopNest(
      b, b.getLoc(), ValueRange{rowBegin, idx(dotted)},
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
        memref::StoreOp::create(ib, arith::MulIOp::create(ib, sum, negOffset),
                                cmp, iv);
      });
}

Value KernelEmitter::packB(Value bData) {
  auto bt = cast<MemRefType>(bData.getType());
  RankedTensorType pt = packedBType(bt.getElementType());
  Type elem = pt.getElementType();
  Value out = cpu::allocBuffer(b, b.getLoc(), pt.getShape(), elem);
  int64_t rows = bt.getShape()[0], cols = bt.getShape()[1];
  int64_t g = s.group();
  constexpr int64_t T = 16; // words per row of a transposed block
  if (s.transB && !s.nibbles && g * elem.getIntOrFloatBitWidth() == 32 &&
      s.Kp() == s.K && cols == s.K && elem == bt.getElementType() &&
      s.NR() % T == 0 && (s.Kp() / g) % T == 0) {
    // B stored N×K, of whole K-tiles of whole groups, a group of g k being
    // one 32-bit word: the packed panel is the panel's rows transposed as
    // words. Blocks of T rows × T words are loaded as T vectors (rows past
    // N are zeros), transposed in registers, and stored as T groups.
    auto vBytes = VectorType::get({T * g}, elem);
    auto vWords = VectorType::get({T}, b.getI32Type());
    Value zeros = arith::ConstantOp::create(
        b, vBytes, DenseElementsAttr::get(vBytes, b.getIntegerAttr(elem, 0)));
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{idx(0), idx(0), idx(0)},
        ValueRange{idx(s.panels()), idx(s.Kp() / g / T), idx(s.NR() / T)},
        ValueRange{idx(1), idx(1), idx(1)}, s.threads,
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          Value n0 = arith::AddIOp::create(
              ib, arith::MulIOp::create(ib, iv[0], cIndex(ib, s.NR())),
              arith::MulIOp::create(ib, iv[2], cIndex(ib, T)));
          Value kg0 = arith::MulIOp::create(ib, iv[1], cIndex(ib, T));
          Value k0 = arith::MulIOp::create(ib, kg0, cIndex(ib, g));
          SmallVector<Value> words;
          for (int64_t r = 0; r < T; ++r) {
            Value n = arith::AddIOp::create(ib, n0, cIndex(ib, r));
            Value inside = arith::CmpIOp::create(ib, arith::CmpIPredicate::ult,
                                                 n, cIndex(ib, s.N));
            Value row = arith::MinUIOp::create(ib, n, cIndex(ib, rows - 1));
            Value v =
                vector::LoadOp::create(ib, vBytes, bData, ValueRange{row, k0});
            v = arith::SelectOp::create(ib, inside, v, zeros);
            words.push_back(vector::BitCastOp::create(ib, vWords, v));
          }
          Value col = arith::MulIOp::create(ib, iv[2], cIndex(ib, T * g));
          for (auto [c, w] :
               llvm::enumerate(floatkernels::transposeBlock(ib, words))) {
            Value bytes = vector::BitCastOp::create(ib, vBytes, w);
            Value kg = arith::AddIOp::create(ib, kg0, cIndex(ib, c));
            vector::StoreOp::create(ib, s.target().packValue(ib, bytes), out,
                                    ValueRange{iv[0], kg, col});
          }
        });
    return out;
  }
  if (s.transB && !s.nibbles && g > 1 && s.Kp() == s.K && cols == s.K &&
      elem == bt.getElementType()) {
    // B stored N×K, of whole K-tiles of whole groups: each group of g k of
    // one column is g consecutive elements of a row of B, moved as one
    // vector (rows past N are zeros).
    auto vg = VectorType::get({g}, elem);
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{idx(0), idx(0), idx(0)},
        ValueRange{idx(s.panels()), idx(s.Kp() / g), idx(s.NR())},
        ValueRange{idx(1), idx(1), idx(1)}, s.threads,
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          Value j = arith::AddIOp::create(
              ib, arith::MulIOp::create(ib, iv[0], cIndex(ib, s.NR())), iv[2]);
          Value inside = arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, j,
                                               cIndex(ib, s.N));
          Value row = arith::MinUIOp::create(ib, j, cIndex(ib, rows - 1));
          Value k = arith::MulIOp::create(ib, iv[1], cIndex(ib, g));
          Value v = vector::LoadOp::create(ib, vg, bData, ValueRange{row, k});
          Value zeros = arith::ConstantOp::create(
              ib, vg, DenseElementsAttr::get(vg, ib.getIntegerAttr(elem, 0)));
          v = arith::SelectOp::create(ib, inside, v, zeros);
          Value col = arith::MulIOp::create(ib, iv[2], cIndex(ib, g));
          vector::StoreOp::create(ib, s.target().packValue(ib, v), out,
                                  ValueRange{iv[0], iv[1], col});
        });
    return out;
  }
  if (!s.transB && !s.nibbles && llvm::isPowerOf2_64(g) && g > 1 &&
      s.Kp() == s.K && rows == s.K && cols == s.N &&
      elem == bt.getElementType() && pt.getShape()[2] == g * s.NR()) {
    // B stored K×N, of whole K-tiles of whole groups: a group of a panel is
    // g rows of NR columns, loaded as vectors (columns past N masked off,
    // zeros) and interleaved into one vector of g·NR.
    int64_t NR = s.NR();
    auto vRow = VectorType::get({NR}, elem);
    auto vMask = VectorType::get({NR}, b.getI1Type());
    Value zeros = arith::ConstantOp::create(
        b, vRow, DenseElementsAttr::get(vRow, b.getIntegerAttr(elem, 0)));
    // Lane n·g + kk of the group is lane n of row kk, and row kk is lanes
    // kk·NR .. of the rows joined in order.
    SmallVector<int64_t> pairs, order;
    for (int64_t i = 0; i < g * NR; ++i)
      pairs.push_back(i);
    for (int64_t n = 0; n < NR; ++n)
      for (int64_t kk = 0; kk < g; ++kk)
        order.push_back(kk * NR + n);
    cpu::buildIndependentLoops(
        b, b.getLoc(), ValueRange{idx(0), idx(0)},
        ValueRange{idx(s.panels()), idx(s.Kp() / g)},
        ValueRange{idx(1), idx(1)}, s.threads,
        [&](OpBuilder &nb, Location loc, ValueRange iv) {
          ImplicitLocOpBuilder ib(loc, nb);
          Value j0 = arith::MulIOp::create(ib, iv[0], cIndex(ib, NR));
          Value mask = vector::CreateMaskOp::create(
              ib, vMask,
              ValueRange{arith::SubIOp::create(ib, cIndex(ib, s.N), j0)});
          SmallVector<Value> parts;
          for (int64_t kk = 0; kk < g; ++kk) {
            Value k = arith::AddIOp::create(
                ib, arith::MulIOp::create(ib, iv[1], cIndex(ib, g)),
                cIndex(ib, kk));
            parts.push_back(vector::MaskedLoadOp::create(
                ib, vRow, bData, ValueRange{k, j0}, mask, zeros));
          }
          // Joined two by two (g is a power of two) until one vector.
          while (parts.size() > 1) {
            SmallVector<Value> joined;
            for (size_t i = 0; i < parts.size(); i += 2) {
              int64_t n = cast<VectorType>(parts[i].getType()).getNumElements();
              joined.push_back(
                  vector::ShuffleOp::create(ib, parts[i], parts[i + 1],
                                            ArrayRef(pairs).take_front(2 * n)));
            }
            parts = std::move(joined);
          }
          Value group =
              vector::ShuffleOp::create(ib, parts[0], parts[0], order);
          vector::StoreOp::create(ib, s.target().packValue(ib, group), out,
                                  ValueRange{iv[0], iv[1], cIndex(ib, 0)});
        });
    return out;
  }
  SmallVector<Value> lbs(3, idx(0)), steps(3, idx(1));
  SmallVector<Value> ubs = {idx(pt.getShape()[0]), idx(pt.getShape()[1]),
                            idx(pt.getShape()[2])};
  cpu::buildIndependentLoops(
      b, b.getLoc(), lbs, ubs, steps, s.threads,
      [&](OpBuilder &nb, Location loc, ValueRange iv) {
        ImplicitLocOpBuilder ib(loc, nb);
        // iv = (panel, group, n*g+kk) for groups of g k; generic:
        // (panel, kp, n).
        Value n, kp;
        if (g > 1) {
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
        memref::StoreOp::create(ib, s.target().packValue(ib, v), out, iv);
      });
  return out;
}

void KernelEmitter::widenRows(Value a, Value ap, Value rowBegin, Value rowEnd) {
  Type i16 = b.getI16Type();
  // Bytes kWidenLanes at a time (one `vpmovsxbw` each) when A's rows are
  // contiguous, the rest of each row one by one.
  constexpr int64_t kWidenLanes = 16;
  auto aType = cast<MemRefType>(a.getType());
  assert(aType.getElementType().isInteger(8) && "widens bytes");
  int64_t whole =
      aType.isLastDimUnitStride() ? s.K / kWidenLanes * kWidenLanes : 0;
  auto i8Vec = VectorType::get({kWidenLanes}, aType.getElementType());
  auto i16Vec = VectorType::get({kWidenLanes}, i16);
  scf::ForOp::create(
      b, rowBegin, rowEnd, idx(1), ValueRange{},
      [&](OpBuilder &rb, Location loc, Value i, ValueRange) {
        ImplicitLocOpBuilder ib(loc, rb);
        if (whole > 0)
          scf::ForOp::create(
              ib, idx(0), idx(whole), idx(kWidenLanes), ValueRange{},
              [&](OpBuilder &vb, Location vl, Value k, ValueRange) {
                ImplicitLocOpBuilder kb(vl, vb);
                Value v =
                    vector::LoadOp::create(kb, i8Vec, a, ValueRange{i, k});
                vector::StoreOp::create(kb,
                                        arith::ExtSIOp::create(kb, i16Vec, v),
                                        ap, ValueRange{i, k});
                scf::YieldOp::create(kb);
              });
        if (whole < s.K)
          scf::ForOp::create(
              ib, idx(whole), idx(s.K), idx(1), ValueRange{},
              [&](OpBuilder &sb, Location sl, Value k, ValueRange) {
                ImplicitLocOpBuilder kb(sl, sb);
                Value v = memref::LoadOp::create(kb, a, ValueRange{i, k});
                memref::StoreOp::create(kb, arith::ExtSIOp::create(kb, i16, v),
                                        ap, ValueRange{i, k});
                scf::YieldOp::create(kb);
              });
        scf::YieldOp::create(ib);
      });
}

std::pair<Value, Value> KernelEmitter::packA(Value a,
                                             const FusedQuantize *fused) {
  auto aType = cast<MemRefType>(a.getType());
  Type aElem = aType.getElementType();
  int64_t aRows = aType.getShape()[0], aCols = aType.getShape()[1];
  int64_t Kp = s.Kp();
  // A itself when it already is as the kernel reads it (not transposed, K
  // a whole number of aligned K-tiles, the element the dot wants), else a
  // packed copy. Rows past M are never packed: the kernel reads row M-1
  // for them and drops the results. Fused, the blocks widen their own rows
  // once quantized.
  Type apElem = s.target().packedAElement(aElem);
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
  // cmp[i][t] = -offset · Σ_{k∈t} A[i,k] pays back the offset the packed
  // weights carry (VNNI).
  Value cmp;
  if (s.target().offset(s.nibbles) != 0) {
    cmp = cpu::allocBuffer(b, b.getLoc(), {s.M, s.KT}, b.getI32Type());
    if (!fused)
      rowSums(ap, aElem, cmp, idx(0), idx(s.M));
  }
  return {ap, cmp};
}

Value KernelEmitter::columnSteps(Value sb) {
  // colSteps[t][j] = sB(t, j / tile), when B tiles are narrower than L.
  if (s.tileNB % s.L == 0)
    return Value();
  int64_t width = s.panels() * s.NR();
  Value colSteps =
      cpu::allocBuffer(b, b.getLoc(), {s.KT, width}, b.getF32Type());
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
  return colSteps;
}

/// p(x): the scale product as the kernel uses it (rounded to bf16 and back
/// with scale-product = bf16).
static Value roundProduct(ImplicitLocOpBuilder &b, const KernelShape &s,
                          Value prod) {
  if (!s.bf16)
    return prod;
  Type bf16 = b.getBF16Type();
  if (auto v = dyn_cast<VectorType>(prod.getType()))
    bf16 = VectorType::get(v.getShape(), bf16);
  return arith::ExtFOp::create(
      b, prod.getType(), arith::TruncFOp::create(b, bf16, prod).getResult());
}

Value KernelEmitter::scaleProducts(Value sa, Value sb) {
  int64_t gm = llvm::divideCeil(s.M, s.tileMA),
          gn = llvm::divideCeil(s.N, s.tileNB);
  // With one step per row (1-row tiles of A, or an implicit GEMM's rows),
  // the products would be as many loads as the steps, and one more pass.
  if (s.tileMA == 1 || s.KT * gm * gn > (int64_t(1) << 22))
    return Value();
  Value products =
      cpu::allocBuffer(b, b.getLoc(), {s.KT, gm, gn}, b.getF32Type());
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
        memref::StoreOp::create(
            ib, roundProduct(ib, s, arith::MulFOp::create(ib, sAv, sBv)),
            products, iv);
      });
  return products;
}

Operation *
KernelEmitter::blockPanelLoops(Value &blk, Value &jp,
                               llvm::function_ref<void(Value)> quantizeBlock) {
  // With threads, the (block, panel) pairs are shared out (scf.parallel,
  // lowered to OpenMP): every output element is still computed by one
  // thread in the same order, so results do not depend on the count.
  // Fused, each block first quantizes its rows of A, so the blocks are
  // shared out and the panels follow.
  int64_t nBlocks = llvm::divideCeil(s.Mp(), blockRows);
  if (s.threads > 1 && !quantizeBlock) {
    auto par = scf::ParallelOp::create(
        b, ValueRange{idx(0), idx(0)},
        ValueRange{idx(nBlocks), idx(s.panels())}, ValueRange{idx(1), idx(1)});
    blk = par.getInductionVars()[0];
    jp = par.getInductionVars()[1];
    return par;
  }
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
  if (quantizeBlock)
    quantizeBlock(blk);
  auto panels = scf::ForOp::create(b, idx(0), idx(s.panels()), idx(1));
  jp = panels.getInductionVar();
  return panels;
}

SmallVector<Value> KernelEmitter::partialSums(ImplicitLocOpBuilder &ib,
                                              const MicroTile &m, Value t,
                                              const GatheredA::Offsets &off) {
  const DotTarget &target = s.target();
  auto vI32 = VectorType::get({s.L}, ib.getI32Type());
  auto add = [&](Value u, Value v) { return arith::AddIOp::create(ib, u, v); };
  SmallVector<Value> iacc;
  for (int64_t r = 0; r < s.MR; ++r) {
    Value start;
    if (m.cmp)
      start = vector::BroadcastOp::create(
          ib, vI32,
          memref::LoadOp::create(
              ib, m.cmp,
              gathered ? ValueRange{add(m.rowOffsets[r].sums, off.sums)}
                       : ValueRange{m.aRow[r], t}));
    else
      start = arith::ConstantOp::create(
          ib, vI32, DenseElementsAttr::get(vI32, APInt(32, 0)));
    iacc.append(s.NC, start);
  }
  int64_t steps = s.steps();
  Value lo = arith::MulIOp::create(ib, t, cIndex(ib, steps));
  Value hi = arith::AddIOp::create(ib, lo, cIndex(ib, steps));
  // Gathered, step g of row r reads from aStart[r] + g·group.
  SmallVector<Value> aStart;
  if (gathered)
    for (int64_t r = 0; r < s.MR; ++r)
      aStart.push_back(arith::SubIOp::create(
          ib, add(m.rowOffsets[r].data, off.data),
          arith::MulIOp::create(ib, lo, cIndex(ib, s.group()))));
  // Nibbles (VNNI): the vectors of steps 2h and 2h+1 from one load.
  auto loadPair = [&](ImplicitLocOpBuilder &kb, Value h) {
    SmallVector<Value> low, high;
    Type bElem = cast<MemRefType>(m.bp.getType()).getElementType();
    auto bytes = VectorType::get({4 * s.L}, bElem);
    Value mask = arith::ConstantOp::create(
        kb, bytes, DenseElementsAttr::get(bytes, APInt(8, 0x0F)));
    Value four = arith::ConstantOp::create(
        kb, bytes, DenseElementsAttr::get(bytes, APInt(8, 4)));
    for (int64_t cc = 0; cc < s.NC; ++cc) {
      Value v = vector::LoadOp::create(
          kb, bytes, m.bp, ValueRange{m.jp, h, cIndex(kb, cc * 4 * s.L)});
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
  auto step = [&](ImplicitLocOpBuilder &kb, Value g, ArrayRef<Value> acc,
                  ArrayRef<Value> bv) {
    SmallVector<Value> next;
    Value kp = arith::MulIOp::create(kb, g, cIndex(kb, s.group()));
    for (int64_t r = 0; r < s.MR; ++r) {
      Value av = target.broadcastA(
          kb, s, m.ap,
          gathered ? ValueRange{arith::AddIOp::create(kb, aStart[r], kp)}
                   : ValueRange{m.aRow[r], kp});
      for (int64_t cc = 0; cc < s.NC; ++cc)
        next.push_back(target.dot(kb, acc[r * s.NC + cc], av, bv[cc]));
    }
    return next;
  };
  // `count` steps from step g0 (even with nibbles).
  auto run = [&](ImplicitLocOpBuilder &kb, Value g0, int64_t count,
                 SmallVector<Value> acc) {
    for (int64_t u = 0; u < count; u += s.nibbles ? 2 : 1) {
      Value g = arith::AddIOp::create(kb, g0, cIndex(kb, u));
      if (!s.nibbles) {
        acc = step(kb, g, acc, target.loadB(kb, s, m.bp, m.jp, g));
        continue;
      }
      auto [low, high] =
          loadPair(kb, arith::DivUIOp::create(kb, g, cIndex(kb, 2)));
      acc = step(kb, g, acc, low);
      acc = step(kb, arith::AddIOp::create(kb, g, cIndex(kb, 1)), acc, high);
    }
    return acc;
  };
  // Short K-tiles are unrolled whole, so that the scaling of one K-tile
  // overlaps the dot products of the next; long ones by 4
  // (KernelShape::unroll).
  int64_t unroll = s.unroll();
  // A short K-tile stops after its values: A is 0 past them (or, read in
  // place, the steps end exactly there: KernelShape::tailExact), so the
  // steps left add nothing (a 40-channel input: 2 steps of its second
  // K-tile instead of 8).
  Value isTail;
  int64_t tailSteps = steps;
  if (skipTail) {
    tailSteps = s.tailSteps();
    if (tailSteps < steps)
      isTail = arith::CmpIOp::create(
          ib, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(ib, t, cIndex(ib, s.tailPeriod)),
          cIndex(ib, s.tailPeriod - 1));
  }
  if (unroll == steps) {
    if (!isTail)
      return run(ib, lo, steps, iacc);
    SmallVector<Value> head = run(ib, lo, tailSteps, iacc);
    auto rest = scf::IfOp::create(
        ib, isTail,
        [&](OpBuilder &nb, Location loc) {
          scf::YieldOp::create(nb, loc, head);
        },
        [&](OpBuilder &nb, Location loc) {
          ImplicitLocOpBuilder kb(loc, nb);
          scf::YieldOp::create(
              kb, run(kb, arith::AddIOp::create(kb, lo, cIndex(kb, tailSteps)),
                      steps - tailSteps, head));
        });
    return SmallVector<Value>(rest.getResults().begin(),
                              rest.getResults().end());
  }
  if (isTail)
    hi = arith::SelectOp::create(
        ib, isTail, arith::AddIOp::create(ib, lo, cIndex(ib, tailSteps)), hi);
  auto kLoop = scf::ForOp::create(
      ib, lo, hi, cIndex(ib, unroll), iacc,
      [&](OpBuilder &nb, Location loc, Value g, ValueRange acc) {
        ImplicitLocOpBuilder kb(loc, nb);
        scf::YieldOp::create(
            kb, run(kb, g, unroll, SmallVector<Value>(acc.begin(), acc.end())));
      });
  return SmallVector<Value>(kLoop.getResults().begin(),
                            kLoop.getResults().end());
}

SmallVector<Value> KernelEmitter::scaleAndAdd(ImplicitLocOpBuilder &ib,
                                              const MicroTile &m, Value t,
                                              const GatheredA::Offsets &off,
                                              ArrayRef<Value> psums,
                                              ValueRange facc) {
  auto vF32 = VectorType::get({s.L}, ib.getF32Type());
  SmallVector<Value> out;
  for (int64_t r = 0; r < s.MR; ++r) {
    Value ra = m.rowScaleIdx[r];
    Value sAv = memref::LoadOp::create(
        ib, m.sa,
        gathered   ? ValueRange{arith::AddIOp::create(ib, m.rowOffsets[r].steps,
                                                      off.steps)}
        : s.transA ? ValueRange{t, ra}
                   : ValueRange{ra, t});
    for (int64_t cc = 0; cc < s.NC; ++cc) {
      Value sv;
      if (m.colSteps) {
        // Columns of several B tiles in one vector: one step each.
        Value j = arith::AddIOp::create(ib, m.j0, cIndex(ib, cc * s.L));
        Value sBv =
            vector::LoadOp::create(ib, vF32, m.colSteps, ValueRange{t, j});
        sv = roundProduct(
            ib, s,
            arith::MulFOp::create(
                ib, vector::BroadcastOp::create(ib, vF32, sAv), sBv));
      } else if (m.products) {
        // p(sA·sB) of this row's and column's tiles, precomputed.
        sv = vector::BroadcastOp::create(
            ib, vF32,
            memref::LoadOp::create(ib, m.products,
                                   ValueRange{t, ra, m.colScaleIdx[cc]}));
      } else {
        Value cb = m.colScaleIdx[cc];
        Value sBv = memref::LoadOp::create(
            ib, m.sb, s.transB ? ValueRange{cb, t} : ValueRange{t, cb});
        sv = vector::BroadcastOp::create(
            ib, vF32, roundProduct(ib, s, arith::MulFOp::create(ib, sAv, sBv)));
      }
      Value psum = arith::SIToFPOp::create(ib, vF32, psums[r * s.NC + cc]);
      out.push_back(arith::AddFOp::create(ib, facc[r * s.NC + cc],
                                          arith::MulFOp::create(ib, psum, sv)));
    }
  }
  return out;
}

void KernelEmitter::storeMicroTile(const MicroTile &m, ValueRange acc) {
  // Rows past M (when M is not a whole number of micro-tiles) are dropped;
  // vectors past N masked off. A micro-tile inside N (all but the last
  // column panel) takes plain loads and stores: a mask, computed at run
  // time, would stay.
  auto storeRows = [&](OpBuilder &ob, Location loc, bool masked) {
    ImplicitLocOpBuilder sb(loc, ob);
    for (int64_t r = 0; r < s.MR; ++r) {
      OpBuilder::InsertionGuard g(sb);
      if (m.partial) {
        Value inRows = arith::CmpIOp::create(sb, arith::CmpIPredicate::ult,
                                             m.rowIdx[r], idx(s.M));
        auto ifOp = scf::IfOp::create(sb, inRows, /*withElse=*/false);
        sb.setInsertionPointToStart(ifOp.thenBlock());
      }
      for (int64_t cc = 0; cc < s.NC; ++cc) {
        Value j = arith::AddIOp::create(sb, m.j0, cIndex(sb, cc * s.L));
        Value v = acc[r * s.NC + cc];
        if (!masked) {
          if (epilogue)
            v = epilogue->apply(sb, v, ValueRange{m.rowIdx[r]}, j, Value());
          vector::StoreOp::create(sb, v, m.c, ValueRange{m.rowIdx[r], j});
          continue;
        }
        Value left = arith::SubIOp::create(
            sb, cIndex(sb, s.N),
            arith::MinUIOp::create(sb, j, cIndex(sb, s.N)));
        Value mask = vector::CreateMaskOp::create(
            sb, VectorType::get({s.L}, sb.getI1Type()), ValueRange{left});
        if (epilogue)
          v = epilogue->apply(sb, v, ValueRange{m.rowIdx[r]}, j, mask);
        vector::MaskedStoreOp::create(sb, m.c, ValueRange{m.rowIdx[r], j}, mask,
                                      v);
      }
    }
  };
  if (s.N % s.NR() == 0 || s.panels() == 1) {
    storeRows(b, b.getLoc(), /*masked=*/s.N % s.NR() != 0);
    return;
  }
  Value inside = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ule, arith::AddIOp::create(b, m.j0, idx(s.NR())),
      idx(s.N));
  scf::IfOp::create(
      b, inside,
      [&](OpBuilder &ob, Location loc) {
        storeRows(ob, loc, /*masked=*/false);
        scf::YieldOp::create(ob, loc);
      },
      [&](OpBuilder &ob, Location loc) {
        storeRows(ob, loc, /*masked=*/true);
        scf::YieldOp::create(ob, loc);
      });
}

Value KernelEmitter::emit(Value a, Value sa, Value bData, Value sb,
                          Value packedB, Value dest,
                          const FusedQuantize *fused) {
  Type aElem = a ? cast<MemRefType>(a.getType()).getElementType() : Type();
  int64_t Mp = s.Mp(), Kp = s.Kp(), MR = s.MR;
  MicroTile m;
  m.sa = sa;
  m.sb = sb;
  // 1. A as the kernel reads it; 2. B packed unless it was at compile
  // time; 3. the steps the micro-kernel reads: per column when a vector
  // spans several B tiles, else (when small enough) the products of every
  // pair of tiles, one broadcast load per accumulator and K-tile.
  if (gathered) {
    m.ap = gathered->data;
    m.cmp = gathered->sums;
    m.sa = gathered->steps;
  } else {
    std::tie(m.ap, m.cmp) = packA(a, fused);
  }
  m.bp = packedB ? packedB : packB(bData);
  // Packed A (and im2col's copy) hold zeros past a short K-tile's values;
  // A quantized by blocks is not known to, and A read in place holds the
  // next pixel's channels there: its K-tiles are whole, or its short ones'
  // steps end at their values (Conv2D.cpp), which they must skip to. With
  // nibbles the steps go in pairs, which an odd count would split.
  bool tail = s.tailPeriod > 0 && s.tailK > 0;
  assert((!gathered || !tail || (s.tailExact() && !s.nibbles)) &&
         "a convolution read in place ends its short K-tiles exactly");
  skipTail = tail && !fused && !s.nibbles;
  m.colSteps = columnSteps(sb);
  if (!fused && !m.colSteps && !gathered)
    m.products = scaleProducts(sa, sb);

  // 4. The micro-kernel loops: blocks of MC rows of A (about 256 KiB: they
  //    stay in L2) outside, then column panels (NR columns of B by K: they
  //    stay in L1), then the row micro-tiles of the block. Blocks are of
  //    equal size (a multiple of MR), so that threads get equal shares;
  //    fused, a block holds whole row tiles of A, which it quantizes.
  m.c =
      dest ? dest : cpu::allocBuffer(b, b.getLoc(), {s.M, s.N}, b.getF32Type());
  int64_t maxMC =
      std::max<int64_t>(1, (256 * 1024 / std::max<int64_t>(Kp, 1)) / MR) * MR;
  int64_t nBlocks = llvm::divideCeil(Mp, maxMC);
  // With few column panels, each thread gets as many blocks (a narrow
  // product, such as a convolution with 32 filters, has one panel).
  if (s.threads > 1 && s.panels() % s.threads != 0)
    nBlocks =
        std::min(llvm::alignTo(nBlocks, s.threads), llvm::divideCeil(Mp, MR));
  int64_t granule = fused ? std::lcm(MR, s.tileMA) : MR;
  blockRows = llvm::alignTo(llvm::divideCeil(Mp, nBlocks), granule);
  // Blocks start at multiples of MR: only the last holds the partial
  // micro-tile (emitted after the row loop below).
  assert(blockRows % MR == 0 && "row blocks of whole micro-tiles");
  int64_t MC = blockRows;
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
    if (m.ap != a)
      widenRows(a, m.ap, r0, r1);
    if (m.cmp)
      rowSums(m.ap, aElem, m.cmp, r0, r1);
  };
  Value blk;
  Operation *outer = blockPanelLoops(
      blk, m.jp,
      fused ? llvm::function_ref<void(Value)>(quantizeBlock) : nullptr);

  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&outer->getRegion(0).front());
  Value m0 = arith::MulIOp::create(b, blk, idx(MC));
  Value m1 =
      arith::MinUIOp::create(b, arith::AddIOp::create(b, m0, idx(MC)), idx(Mp));
  // Whole micro-tiles index rows i0 + r as they are, so that LLVM
  // addresses A's rows from one pointer (clamped, each row took a register
  // of its own, and some of them went to the stack); the partial one, last,
  // is emitted on its own (emitMicroTile).
  int64_t whole = s.M / MR * MR;
  Value wholeEnd =
      whole == Mp ? m1 : arith::MinUIOp::create(b, m1, idx(whole)).getResult();
  auto rowLoop = scf::ForOp::create(b, m0, wholeEnd, idx(MR));
  b.setInsertionPointToStart(rowLoop.getBody());
  MicroTile tile = m;
  emitMicroTile(tile, rowLoop.getInductionVar(), /*partial=*/false);
  if (whole == Mp)
    return m.c;
  // The block that ends past `whole` (at Mp) holds the partial micro-tile.
  b.setInsertionPointAfter(rowLoop);
  auto holdsLast = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, m1, idx(whole)),
      /*withElse=*/false);
  b.setInsertionPointToStart(holdsLast.thenBlock());
  MicroTile last = m;
  emitMicroTile(last, idx(whole), /*partial=*/true);
  return m.c;
}

void KernelEmitter::emitMicroTile(MicroTile &m, Value i0, bool partial) {
  int64_t MR = s.MR;
  m.partial = partial;
  m.j0 = arith::MulIOp::create(b, m.jp, idx(s.NR()));
  // Rows of the micro-tile; in the partial one, rows past M are clamped to
  // M - 1 for their loads and scales.
  for (int64_t r = 0; r < MR; ++r) {
    Value i = arith::AddIOp::create(b, i0, idx(r));
    Value clamped =
        partial ? arith::MinUIOp::create(b, i, idx(s.M - 1)).getResult() : i;
    m.rowIdx.push_back(i);
    m.aRow.push_back(clamped);
    m.rowScaleIdx.push_back(arith::DivUIOp::create(b, clamped, idx(s.tileMA)));
    if (!gathered)
      continue;
    if (r == 0 || gathered->rowDeltas.empty()) {
      m.rowOffsets.push_back(gathered->row(b, clamped));
      continue;
    }
    const GatheredA::Offsets &first = m.rowOffsets.front();
    const GatheredA::Delta &d = gathered->rowDeltas[r];
    auto plus = [&](Value v, int64_t k) {
      return arith::AddIOp::create(b, v, idx(k)).getResult();
    };
    m.rowOffsets.push_back({plus(first.data, d.data),
                            plus(first.steps, d.steps),
                            first.sums ? plus(first.sums, d.sums) : Value()});
  }
  for (int64_t cc = 0; cc < s.NC; ++cc) {
    Value j = arith::AddIOp::create(b, m.j0, idx(cc * s.L));
    m.colScaleIdx.push_back(arith::DivUIOp::create(
        b, arith::MinUIOp::create(b, j, idx(s.N - 1)), idx(s.tileNB)));
  }
  // f32 accumulators held in registers across all K-tiles: per K-tile, the
  // int32 partial sums, scaled and added in increasing t (mul then add, no
  // FMA), as the reference does.
  auto vF32 = VectorType::get({s.L}, b.getF32Type());
  Value zeroF = arith::ConstantOp::create(
      b, vF32, DenseElementsAttr::get(vF32, APFloat(0.0f)));
  auto tLoop = scf::ForOp::create(
      b, idx(0), idx(s.KT), idx(1), SmallVector<Value>(MR * s.NC, zeroF),
      [&](OpBuilder &nb, Location loc, Value t, ValueRange facc) {
        ImplicitLocOpBuilder ib(loc, nb);
        GatheredA::Offsets off;
        if (gathered)
          off = gathered->tile(ib, t);
        SmallVector<Value> psums = partialSums(ib, m, t, off);
        scf::YieldOp::create(ib, scaleAndAdd(ib, m, t, off, psums, facc));
      });
  storeMicroTile(m, tLoop.getResults());
}

/// The kernel for the target and the operands' containers: vpdpbusd when
/// both are bytes and the target has VNNI, vpmaddubsw when they are bytes
/// and A is not negative, vpmaddwd on the other x86 targets, and a micro-tile
/// of MR rows × (2 vectors of L lanes) sized to the register file (AVX-512: 32
/// vector registers; AVX2: 16), or of up to twice the rows × 1 vector for a
/// product at most one vector wide.
void matmul::chooseKernel(KernelShape &s, TiledType a, TiledType b,
                          const CPUCodegenOptions &o) {
  bool bytes = TiledToTensorsConverter::containerType(a).getWidth() == 8 &&
               TiledToTensorsConverter::containerType(b).getWidth() == 8;
  ISAInfo isa = getISAInfo(o.target);
  using Dot = KernelShape::Dot;
  // Without VNNI, bytes known not to be negative (a ReLU's) take
  // `vpmaddubsw`: four k per step where `vpmaddwd` takes two.
  s.dot = isa.byteDot && bytes                     ? Dot::vnni
          : isa.wordDot && bytes && s.nonNegativeA ? Dot::pairs
          : isa.wordDot                            ? Dot::madd
                                                   : Dot::mul;
  s.L = isa.lanes;
  s.kt4 = llvm::alignTo(s.kt, s.group());
  s.MR = std::min(s.M, isa.rows);
  // A product at most one vector wide whose rows fit twice the micro-tile
  // (a convolution's weight gradient: 9 rows of a 3x3 filter, 16 output
  // channels) takes them all in one tile of one vector per row, in the
  // same registers: half the dot products of two tiles of two vectors.
  // (With many rows, two vectors per row measured faster; a convolution
  // read in place may take one, see alignRows in Conv2D.cpp.)
  if (s.N <= s.L && s.M > isa.rows && s.M <= 2 * isa.rows) {
    s.NC = 1;
    s.MR = s.M;
  }
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
  if (s.K % s.kt != 0) {
    s.tailPeriod = s.KT;
    s.tailK = s.K % s.kt;
  }
  s.tileMA = s.transA ? ta.getTileShape()[1] : ta.getTileShape()[0];
  s.tileNB = s.transB ? tb.getTileShape()[0] : tb.getTileShape()[1];
  s.nonNegativeA = op->hasAttr(cpu::kNonNegativeInputAttr);
  chooseKernel(s, ta, tb, options);
  return s;
}
