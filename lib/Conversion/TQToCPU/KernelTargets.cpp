//===- KernelTargets.cpp - what the GEMM kernel needs of each target ------===//
//
// The instruction sets the kernel is generated for (avx512, avxvnni, avx2,
// generic: lanes and register file), and the four ways it forms int32
// partial sums (DotTarget): `vpdpbusd`, `vpmaddubsw` with `vpmaddwd`,
// `vpmaddwd` and portable multiply-add. KernelEmitter asks these for the
// packing of B, the element A is packed as, and the instructions of one k step,
// so it has no branch per target (as Triton's TargetInfo keeps target
// differences out of its lowerings).
//
//===----------------------------------------------------------------------===//
#include "MatmulKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tq;
using namespace mlir::tq::matmul;

DotTarget::~DotTarget() = default;

/// A's `count` values from index `at` of the packed A (row and column, or
/// one offset into a gathered A), read as one int32 and broadcast to L
/// lanes.
static Value broadcastWord(ImplicitLocOpBuilder &b, Value ap, ValueRange at,
                           int64_t count, int64_t L) {
  Type elem = cast<MemRefType>(ap.getType()).getElementType();
  Value values =
      vector::LoadOp::create(b, VectorType::get({count}, elem), ap, at);
  Type i32 = b.getI32Type();
  Value word = vector::ExtractOp::create(
      b, vector::BitCastOp::create(b, VectorType::get({1}, i32), values),
      ArrayRef<int64_t>{0});
  return vector::BroadcastOp::create(b, VectorType::get({L}, i32), word);
}

namespace {
/// `vpdpbusd`: four k per int32 lane, u8 × s8. The weights go on the
/// unsigned side in offset binary (w + 128), the activations keep their
/// sign, and the offset is paid back per row and K-tile (cmp).
struct VNNIDot : DotTarget {
  int64_t group() const override { return 4; }
  int64_t packValue(int64_t w) const override { return int8_t(w ^ 0x80); }
  Value packValue(ImplicitLocOpBuilder &b, Value w) const override {
    // One value, or a vector of them.
    TypedAttr bit = b.getIntegerAttr(getElementTypeOrSelf(w.getType()), 0x80);
    if (auto v = dyn_cast<VectorType>(w.getType()))
      bit = DenseElementsAttr::get(v, cast<Attribute>(bit));
    return arith::XOrIOp::create(b, w, arith::ConstantOp::create(b, bit));
  }
  int64_t offset(bool nibbles) const override { return nibbles ? 8 : 128; }
  SmallVector<Value> loadB(ImplicitLocOpBuilder &b, const KernelShape &s,
                           Value bp, Value panel, Value g) const override {
    Type elem = cast<MemRefType>(bp.getType()).getElementType();
    auto bytes = VectorType::get({4 * s.L}, elem);
    auto vI32 = VectorType::get({s.L}, b.getI32Type());
    SmallVector<Value> bv;
    for (int64_t cc = 0; cc < s.NC; ++cc) {
      Value v = vector::LoadOp::create(
          b, bytes, bp, ValueRange{panel, g, cIndex(b, cc * 4 * s.L)});
      bv.push_back(vector::BitCastOp::create(b, vI32, v));
    }
    return bv;
  }
  Value broadcastA(ImplicitLocOpBuilder &b, const KernelShape &s, Value ap,
                   ValueRange at) const override {
    return broadcastWord(b, ap, at, 4, s.L);
  }
  Value dot(ImplicitLocOpBuilder &b, Value acc, Value a,
            Value bv) const override {
    // The packed weights are the unsigned operand.
    return byteDot<DotU8S8Op>(b, acc, bv, a);
  }

protected:
  /// acc + the dot `DotOp` of `u` (unsigned) and `s` (signed), each L
  /// words seen as 4·L bytes.
  template <typename DotOp>
  static Value byteDot(ImplicitLocOpBuilder &b, Value acc, Value u, Value s) {
    auto bytes = VectorType::get(
        {4 * cast<VectorType>(acc.getType()).getNumElements()}, b.getI8Type());
    return DotOp::create(b, acc.getType(), acc,
                         vector::BitCastOp::create(b, bytes, u),
                         vector::BitCastOp::create(b, bytes, s));
  }
};

/// `vpmaddubsw`, then `vpmaddwd` with ones: four k per int32 lane, packed
/// as for `vpdpbusd`, for A whose bytes are not negative (the unsigned
/// side) and signed weights as they are, without an offset. No pair sum
/// saturates (2 · 127 · 128 < 2^15), so the sums are exact.
struct PairsDot final : VNNIDot {
  int64_t packValue(int64_t w) const override { return w; }
  Value packValue(ImplicitLocOpBuilder &b, Value w) const override { return w; }
  int64_t offset(bool nibbles) const override { return 0; }
  Value dot(ImplicitLocOpBuilder &b, Value acc, Value a,
            Value bv) const override {
    // A's bytes are the unsigned operand.
    return byteDot<DotU8S8PairsOp>(b, acc, a, bv);
  }
};

/// `vpmaddwd`: two k per int32 lane, both operands int16 (A is widened
/// when it is packed, B as it is loaded).
struct MaddDot final : DotTarget {
  int64_t group() const override { return 2; }
  Type packedAElement(Type stored) const override {
    return IntegerType::get(stored.getContext(), 16);
  }
  SmallVector<Value> loadB(ImplicitLocOpBuilder &b, const KernelShape &s,
                           Value bp, Value panel, Value g) const override {
    Type elem = cast<MemRefType>(bp.getType()).getElementType();
    auto vI16 = VectorType::get({2 * s.L}, b.getI16Type());
    SmallVector<Value> bv;
    for (int64_t cc = 0; cc < s.NC; ++cc) {
      Value v =
          vector::LoadOp::create(b, VectorType::get({2 * s.L}, elem), bp,
                                 ValueRange{panel, g, cIndex(b, cc * 2 * s.L)});
      bv.push_back(elem.isInteger(16) ? v : arith::ExtSIOp::create(b, vI16, v));
    }
    return bv;
  }
  Value broadcastA(ImplicitLocOpBuilder &b, const KernelShape &s, Value ap,
                   ValueRange at) const override {
    // The pair (k, k+1) of int16, broadcast as one int32.
    return vector::BitCastOp::create(b,
                                     VectorType::get({2 * s.L}, b.getI16Type()),
                                     broadcastWord(b, ap, at, 2, s.L));
  }
  Value dot(ImplicitLocOpBuilder &b, Value acc, Value a,
            Value bv) const override {
    return DotI16Op::create(b, acc.getType(), acc, a, bv);
  }
};

/// Portable multiply-add: one k per step, in int32.
struct MulDot final : DotTarget {
  int64_t group() const override { return 1; }
  SmallVector<Value> loadB(ImplicitLocOpBuilder &b, const KernelShape &s,
                           Value bp, Value panel, Value g) const override {
    Type elem = cast<MemRefType>(bp.getType()).getElementType();
    auto vI32 = VectorType::get({s.L}, b.getI32Type());
    SmallVector<Value> bv;
    for (int64_t cc = 0; cc < s.NC; ++cc) {
      Value v =
          vector::LoadOp::create(b, VectorType::get({s.L}, elem), bp,
                                 ValueRange{panel, g, cIndex(b, cc * s.L)});
      bv.push_back(arith::ExtSIOp::create(b, vI32, v));
    }
    return bv;
  }
  Value broadcastA(ImplicitLocOpBuilder &b, const KernelShape &s, Value ap,
                   ValueRange at) const override {
    Type i32 = b.getI32Type();
    Value x = memref::LoadOp::create(b, ap, at);
    return vector::BroadcastOp::create(b, VectorType::get({s.L}, i32),
                                       arith::ExtSIOp::create(b, i32, x));
  }
  Value dot(ImplicitLocOpBuilder &b, Value acc, Value a,
            Value bv) const override {
    return arith::AddIOp::create(b, acc, arith::MulIOp::create(b, a, bv));
  }
};
} // namespace

const DotTarget &matmul::getDotTarget(KernelShape::Dot dot) {
  static const VNNIDot vnni;
  static const PairsDot pairs;
  static const MaddDot madd;
  static const MulDot mul;
  switch (dot) {
  case KernelShape::Dot::vnni:
    return vnni;
  case KernelShape::Dot::pairs:
    return pairs;
  case KernelShape::Dot::madd:
    return madd;
  case KernelShape::Dot::mul:
    break;
  }
  return mul;
}

ISAInfo matmul::getISAInfo(CPUTarget target) {
  switch (target) {
  case CPUTarget::avx512: // 32 zmm registers: 6 rows x 2 vectors + B
    return {/*lanes=*/16, /*rows=*/6, /*byteDot=*/true, /*wordDot=*/true,
            /*registers=*/32};
  case CPUTarget::avxvnni: // 16 ymm registers
    return {8, 3, true, true, 16};
  case CPUTarget::avx2:
    return {8, 3, false, true, 16};
  case CPUTarget::generic: // LLVM splits the vectors as the host needs
    break;
  }
  return {16, 4, false, false, 0};
}
