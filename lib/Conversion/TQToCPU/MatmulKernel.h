//===- MatmulKernel.h - the tiled integer GEMM kernel ----------*- C++ -*-===//
//
// The loop nest that tq.matmul and tq.conv2d lower to on the CPU: the
// kernel's static shape and its choice per target, the compile-time
// packing of a constant B, and the emitter of the packing and micro-kernel
// loops (MatmulKernel.cpp). The patterns that use it are in Matmul.cpp and
// Conv2D.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_LIB_CONVERSION_TQTOCPU_MATMULKERNEL_H
#define TQ_LIB_CONVERSION_TQTOCPU_MATMULKERNEL_H

#include "Epilogue.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"
#include "tq/Dialect/TQ/IR/TQ.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>

namespace mlir::tq::matmul {

class DotTarget;

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
  /// weights in offset binary), `vpmaddubsw` then `vpmaddwd` with ones (4 k
  /// per lane, A's bytes not negative, weights signed), `vpmaddwd` (2 k per
  /// lane, both operands int16) or portable multiply-add (1 k).
  enum class Dot { vnni, pairs, madd, mul } dot = Dot::mul;
  /// Whether every value of A is known not to be negative (the op's
  /// tq.nonnegative_input, set by tq-cpu-mark-nonnegative).
  bool nonNegativeA = false;
  int64_t L;      // int32 lanes per vector
  int64_t NC = 2; // vectors per row of the micro-tile
  int64_t MR;     // rows of the micro-tile
  int64_t threads = 1;
  /// K-tiles t with t % tailPeriod == tailPeriod - 1 hold tailK values and
  /// zeros after them (a matmul's last K-tile, a convolution's last C-tile
  /// of each tap); 0: every K-tile is whole.
  int64_t tailPeriod = 0, tailK = 0;
  /// Weights of at most 4 bits packed two per byte (VNNI, constant B):
  /// byte (k/8, n, k%4) holds k-groups 2h (low nibble) and 2h+1 (high), in
  /// offset binary w + 8.
  bool nibbles = false;
  bool vnni() const { return dot == Dot::vnni; }
  /// The instructions of `dot` (KernelTargets.cpp).
  const DotTarget &target() const;
  /// k values per int32 lane of one dot step.
  int64_t group() const;
  int64_t NR() const { return NC * L; }
  /// k steps of a K-tile (kt4 values).
  int64_t steps() const { return kt4 / group(); }
  /// The steps the micro-kernel unrolls: a short K-tile's all, else 4, or
  /// when 4 does not divide them 1 (nibbles: 2, they go in pairs).
  int64_t unroll() const {
    int64_t n = steps();
    if (n <= 8)
      return n;
    if (n % 4 == 0)
      return 4;
    return nibbles ? 2 : 1;
  }
  /// The steps of a K-tile that holds tailK values and zeros after them
  /// (see tailPeriod), in whole unrolled groups.
  int64_t tailSteps() const {
    int64_t n = llvm::divideCeil(tailK, group());
    return unroll() == steps() ? n : llvm::alignTo(n, unroll());
  }
  /// Whether those steps read exactly the tailK values: A may then hold
  /// anything after them (a convolution's input read in place, whose next
  /// pixel follows its last C-tile).
  bool tailExact() const { return tailSteps() * group() == tailK; }
  int64_t Mp() const { return llvm::divideCeil(M, MR) * MR; }
  int64_t Kp() const { return KT * kt4; }
  int64_t panels() const { return llvm::divideCeil(N, NR()); }
};

inline Value cIndex(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// Index arithmetic by constants, at the builder's place.
struct IndexMath {
  ImplicitLocOpBuilder &b;
  Value c(int64_t v) const { return cIndex(b, v); }
  Value add(Value u, Value v) const { return arith::AddIOp::create(b, u, v); }
  Value mul(Value u, int64_t k) const {
    return arith::MulIOp::create(b, u, c(k));
  }
  Value div(Value u, int64_t k) const {
    return arith::DivUIOp::create(b, u, c(k));
  }
  Value rem(Value u, int64_t k) const {
    return arith::RemUIOp::create(b, u, c(k));
  }
};

/// How the kernel forms int32 partial sums on a target: the layout of
/// packed B (groups of `group()` k per column), what A is packed as, and
/// the instructions of one k step, for the NC vectors of L lanes of a
/// micro-tile row. One per instruction family (KernelTargets.cpp): VNNI
/// (`vpdpbusd`), `vpmaddubsw` with `vpmaddwd` (A not negative), `vpmaddwd`,
/// portable multiply-add.
class DotTarget {
public:
  virtual ~DotTarget();
  /// k values per int32 lane of one step.
  virtual int64_t group() const = 0;
  /// The element A is packed as, from the one it is stored as.
  virtual Type packedAElement(Type stored) const { return stored; }
  /// Packed B's value for weight `w` (at compile time, and in the IR).
  virtual int64_t packValue(int64_t w) const { return w; }
  /// `w` (one value or a vector of them) as packed B holds it.
  virtual Value packValue(ImplicitLocOpBuilder &b, Value w) const { return w; }
  /// The offset packed weights carry (VNNI: 128, or 8 for nibbles), paid
  /// back per row and K-tile; 0 for none.
  virtual int64_t offset(bool nibbles) const { return 0; }
  /// B's NC vectors for k step g of column panel `panel`.
  virtual SmallVector<Value> loadB(ImplicitLocOpBuilder &b,
                                   const KernelShape &s, Value bp, Value panel,
                                   Value g) const = 0;
  /// A's `group()` values from index `at` of the packed A (its row and
  /// column, or an offset into a gathered A), broadcast to the lanes.
  virtual Value broadcastA(ImplicitLocOpBuilder &b, const KernelShape &s,
                           Value ap, ValueRange at) const = 0;
  /// acc + the dot products of one k step.
  virtual Value dot(ImplicitLocOpBuilder &b, Value acc, Value a,
                    Value bv) const = 0;
};

const DotTarget &getDotTarget(KernelShape::Dot dot);
inline const DotTarget &KernelShape::target() const {
  return getDotTarget(dot);
}
inline int64_t KernelShape::group() const { return target().group(); }

/// What the kernel needs to know of an instruction set.
struct ISAInfo {
  int64_t lanes;     // int32 / f32 lanes per vector
  int64_t rows;      // micro-tile rows whose accumulators fit the registers
  bool byteDot;      // vpdpbusd (u8 x s8)
  bool wordDot;      // vpmaddwd (i16 x i16) and vpmaddubsw (u8 x s8 pairs)
  int64_t registers; // vector registers (0: LLVM splits the vectors)
};
ISAInfo getISAInfo(CPUTarget target);

/// Packs B at compile time; `value(k, j)` is element (k, j) of the K×N
/// operand for k < K, j < N. Large packings are dense resources.
ElementsAttr packConstantB(const KernelShape &s,
                           llvm::function_ref<int64_t(int64_t, int64_t)> value,
                           RankedTensorType packedType);

/// The tq.quantize of a matmul's lhs, done inside the matmul's loop nest.
struct FusedQuantize {
  TiledType type;
  Value input; // f32 memref
  Value bits;  // i32
  RoundingMode rounding;
  Value scales;  // given steps (f32 memref), or null
  Value refresh; // i1: the steps computed after all, or null
};

/// A read where it is (an implicit GEMM) instead of packed M×Kp: for row
/// i and K-tile t, the K-tile's values start at data[row(i).data +
/// tile(t).data], its step is steps[row(i).steps + tile(t).steps], and
/// its row sum (see DotTarget::offset) sums[row(i).sums + tile(t).sums].
/// The three buffers are 1-D; a K-tile's kt4 values are contiguous.
struct GatheredA {
  struct Offsets {
    Value data, steps, sums;
  };
  Value data, steps, sums;
  std::function<Offsets(ImplicitLocOpBuilder &, Value)> row, tile;
  /// When every micro-tile's rows lie at the same distances from its first
  /// row (rows of one image, in the same place in its output rows): row r's
  /// offsets minus row 0's, for r < MR. Only row 0's offsets are then
  /// computed, and the others are constants from them. Empty otherwise.
  struct Delta {
    int64_t data, steps, sums;
  };
  SmallVector<Delta> rowDeltas;
};

class KernelEmitter {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, const KernelShape &s) : b(b), s(s) {}

  const KernelShape &shape() const { return s; }

  /// Elementwise ops applied to each vector of C before it is stored (a
  /// 2-D kernel's; prepared by the caller).
  const VectorEpilogue *epilogue = nullptr;
  /// A read in place (set by the caller); emit() then ignores `a`, `sa`.
  const GatheredA *gathered = nullptr;

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
  /// Rows of A per block (a multiple of MR), set by emit().
  int64_t blockRows = 0;
  /// Whether the dot steps of a short K-tile past its tailK values are
  /// skipped (set by emit(): packed A holds zeros there, A read in place
  /// the next pixel's channels, which tailExact steps never reach; not with
  /// nibbles, whose steps go in pairs).
  bool skipTail = false;

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
  /// Copies rows [rowBegin, rowEnd) of the i8 `a` into the int16 `ap`.
  void widenRows(Value a, Value ap, Value rowBegin, Value rowEnd);
  /// cmp[i][t] = -offset · Σ_{k∈t} A[i,k] for rows [rowBegin, rowEnd).
  void rowSums(Value ap, Type elem, Value cmp, Value rowBegin, Value rowEnd);

  // The parts of emit(), in order (packB, above, is the second).
  /// 1. A as the kernel reads it (A itself, or a packed copy), and the row
  ///    sums that pay back B's offset (or null).
  std::pair<Value, Value> packA(Value a, const FusedQuantize *fused);
  /// 3. B's steps per column when a vector spans several B tiles, or null.
  Value columnSteps(Value sb);
  /// 3. Else the scale products of every pair of tiles, when small enough.
  Value scaleProducts(Value sa, Value sb);
  /// 4. The loops over blocks of A's rows and column panels (shared among
  ///    the threads); returns the innermost one, whose body computes the
  ///    micro-tiles of block `blk` and panel `jp`.
  Operation *blockPanelLoops(Value &blk, Value &jp,
                             llvm::function_ref<void(Value)> quantizeBlock);
  /// The state of one micro-tile's code.
  struct MicroTile {
    Value ap, cmp, bp, sa, sb, colSteps, products, c, jp, j0;
    SmallVector<Value> rowIdx, aRow, rowScaleIdx, colScaleIdx;
    /// Gathered A: each row's offsets.
    SmallVector<GatheredA::Offsets> rowOffsets;
    /// The last micro-tile, with rows past M: they are clamped to M - 1
    /// where read and not stored.
    bool partial = false;
  };
  /// The micro-tile of rows [i0, i0 + MR) at the insertion point: each
  /// K-tile's partial sums scaled into f32 accumulators, then stored. `m`
  /// holds the operands; its rows are filled in.
  void emitMicroTile(MicroTile &m, Value i0, bool partial);
  /// The int32 partial sums of K-tile t for every accumulator (`off`: the
  /// K-tile's offsets into a gathered A).
  SmallVector<Value> partialSums(ImplicitLocOpBuilder &b, const MicroTile &m,
                                 Value t, const GatheredA::Offsets &off);
  /// facc + float(psum) · p(sA·sB) for K-tile t.
  SmallVector<Value> scaleAndAdd(ImplicitLocOpBuilder &b, const MicroTile &m,
                                 Value t, const GatheredA::Offsets &off,
                                 ArrayRef<Value> psums, ValueRange facc);
  /// Stores the accumulators (rows below M, columns masked at N).
  void storeMicroTile(const MicroTile &m, ValueRange acc);
};

/// The kernel for the target and the operands' containers: vpdpbusd when
/// both are bytes and the target has VNNI, vpmaddubsw when they are bytes
/// and A is not negative (KernelShape::nonNegativeA), vpmaddwd on the other
/// x86 targets, and a micro-tile of MR rows × (2 vectors of L lanes) sized to
/// the register file (AVX-512: 32 vector registers; AVX2: 16), or of up to
/// twice the rows × 1 vector for a product at most one vector wide.
void chooseKernel(KernelShape &s, TiledType a, TiledType b,
                  const CPUCodegenOptions &o);

/// The shape of a tq.matmul's kernel.
KernelShape kernelShape(MatmulOp op, TiledType ta, TiledType tb,
                        const CPUCodegenOptions &options);

/// A conversion pattern that knows the codegen options.
template <typename OpT> struct KernelPattern : OpConversionPattern<OpT> {
  KernelPattern(TypeConverter &tc, MLIRContext *ctx,
                const CPUCodegenOptions &options)
      : OpConversionPattern<OpT>(tc, ctx), options(options) {}
  CPUCodegenOptions options;
};

/// The elementwise generic on tensors that a kernel's result (a 2-D
/// tq.matmul's, or a tq.conv2d's NHWC one) flows into, directly or through
/// an expand_shape that splits its rows only: the kernel applies it as it
/// stores its 2-D output (rows, columns).
struct TensorEpilogue {
  linalg::GenericOp generic;
  tensor::ExpandShapeOp expand; // or null
  Value product;                // what the generic reads of the kernel
  /// The values the generic reads, its operands and those its body uses
  /// from above, as the conversion has remapped them (a converted
  /// function's arguments).
  IRMapping remapped;
};

/// The generic after `op` (one result), if it is the only user, writes a
/// new f32 tensor of the product's shape without reading its init, reads
/// the product through the identity, and reads every other tensor either
/// whole (a residual, defined before `op`), as a vector along the columns
/// (a bias), or as a 0-d value; these and the values its body uses from
/// above are defined before `op`. Its body is checked when it is built on
/// buffers.
std::optional<TensorEpilogue>
matchTensorEpilogue(Operation *op, ConversionPatternRewriter &rw);

/// The generic of `te` on buffers, in the kernel's 2-D index space (rows,
/// columns), reading and writing `c`: built at `b`, for VectorEpilogue.
linalg::GenericOp buildBufferEpilogue(ImplicitLocOpBuilder &b,
                                      const TensorEpilogue &te, Value c);

/// The kernel's output buffer ({M, N} f32) when `op` has an epilogue
/// generic (matchTensorEpilogue) that VectorEpilogue takes: `epi` is set,
/// prepared and given to `e`, and `onBuffers` (the generic on buffers, to
/// erase once the kernel is emitted) is set. Else null: the kernel
/// allocates its output.
Value attachEpilogue(ImplicitLocOpBuilder &b, KernelEmitter &e, Operation *op,
                     ConversionPatternRewriter &rw,
                     std::optional<TensorEpilogue> &te,
                     std::optional<VectorEpilogue> &epi,
                     linalg::GenericOp &onBuffers);

/// Adds the tq.conv2d lowering (Conv2D.cpp).
void populateConv2DPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns,
                            const CPUCodegenOptions &options);

} // namespace mlir::tq::matmul

#endif // TQ_LIB_CONVERSION_TQTOCPU_MATMULKERNEL_H
