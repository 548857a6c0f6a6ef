//===- TQToCPU.h - tq to upstream dialects for the CPU ----------*- C++ -*-===//
//
// The CPU lowering of `tq`: a tiled value becomes two tensors, its integer
// data (in the narrowest container: i8 up to 8 bits, i16 above) and its
// steps (f32, in the tile-grid shape). Each tq op becomes a loop nest over
// memrefs (scf / vector / arith / memref, and LLVM's x86 dot-product
// intrinsics on the VNNI targets) between bufferization casts, so that the
// rest of the program is bufferized by upstream one-shot bufferization.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_CONVERSION_TQTOCPU_TQTOCPU_H
#define TQ_CONVERSION_TQTOCPU_TQTOCPU_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::tq {

class TiledType;
enum class RoundingMode : uint32_t;

/// The instruction set the generated kernels use.
enum class CPUTarget {
  /// AVX-512 VNNI: vpdpbusd on 16 int32 lanes.
  avx512,
  /// AVX-VNNI (or AVX-512 VL): vpdpbusd on 8 int32 lanes.
  avxvnni,
  /// AVX2 without VNNI: vpmaddwd (pairs of int16 products) on 8 lanes.
  avx2,
  /// Portable vector code (sign-extend, multiply, add), any CPU.
  generic,
};

/// Parses `native|avx512|avxvnni|avx2|generic`; `native` asks the host.
std::optional<CPUTarget> parseCPUTarget(llvm::StringRef name);
/// The accepted target names, for diagnostics: "native, avx512, ...".
llvm::StringRef cpuTargetNames();
/// The best target the host supports.
CPUTarget detectHostCPUTarget();
/// Whether the host has the instructions `t`'s kernels use.
bool hostSupportsCPUTarget(CPUTarget t);
llvm::StringRef stringifyCPUTarget(CPUTarget t);

/// How the CPU passes (and tq-to-cpu's canonicalizers) apply patterns
/// greedily: bottom-up, without region simplification. Before scf is
/// lowered there are no unreachable blocks or unused block arguments to
/// drop, and simplifying every loop body of a large network after each pass
/// took a tenth of its compile time.
GreedyRewriteConfig loopNestRewriteConfig();

/// What the generated code is for.
struct CPUCodegenOptions {
  CPUTarget target = CPUTarget::generic;
  /// Threads sharing the matmul's output tiles: 1 emits sequential loops,
  /// more an `scf.parallel` that tq-to-cpu lowers to OpenMP.
  int64_t threads = 1;
};

/// Converts `!tq.tiled` into (data tensor, steps tensor); other types are
/// kept.
class TiledToTensorsConverter : public TypeConverter {
public:
  TiledToTensorsConverter();
  /// The integer container of a tiled type's elements in memory.
  static IntegerType containerType(TiledType t);
};

void populateTQToCPUPatterns(TypeConverter &converter,
                             RewritePatternSet &patterns,
                             const CPUCodegenOptions &options);

class QuantizeOp;
/// Whether `q` is quantized inside the loop nest of the matmul that uses it
/// (A7) instead of on its own: its only use is a non-transposed 2-D
/// tiled×tiled matmul's lhs that the kernel reads in place.
bool quantizeFusesIntoMatmul(QuantizeOp q, const CPUCodegenOptions &options);
/// Whether `q` is written directly in the layout of the tq.transpose that
/// is its only use: an NCHW tensor split on (N, C), with the steps computed
/// from the data, transposed to NHWC (the input of a tq.conv2d).
bool quantizeFusesIntoTranspose(QuantizeOp q);

/// The tq.matmul and tq.conv2d patterns (Matmul.cpp, Conv2D.cpp), on the
/// kernel of MatmulKernel.cpp.
void populateTQMatmulToCPUPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   const CPUCodegenOptions &options);

/// Patterns of tq-cpu-fuse-elementwise: linalg.transpose generalized and
/// elementwise producers fused into their only consumer.
void populateCPUFuseElementwisePatterns(RewritePatternSet &patterns);

/// Patterns of tq-cpu-float-kernels: f32 matmuls and convolutions on
/// buffers as register-blocked kernels.
void populateCPUFloatKernelPatterns(RewritePatternSet &patterns,
                                    const CPUCodegenOptions &options);

/// Patterns of tq-cpu-loop-order: linalg ops whose innermost loop is a
/// reduction, with their contiguous output loop moved innermost.
void populateCPULoopOrderPatterns(RewritePatternSet &patterns);

/// Patterns of tq-cpu-select-clamps: a maximumf or minimumf with a
/// constant as a compare and a select.
void populateCPUSelectClampsPatterns(RewritePatternSet &patterns);

/// Patterns of tq-cpu-split-masked-stores: a 1-D masked store with a
/// constant_mask or create_mask as unmasked stores of its active lanes.
void populateCPUSplitMaskedStoresPatterns(RewritePatternSet &patterns);

namespace cpu {
/// On a linalg.pooling_nchw_max or pooling_nhwc_max: its input holds no
/// -0, every value NaN or at least +0. On a tq.conv2d or tq.matmul: no
/// value of its input (the lhs) is negative, as a tq.quantize of such a
/// tensor gives (tq-cpu-mark-nonnegative; a kernel on AVX2 multiplies
/// the bytes as unsigned, and a negative one gives wrong sums).
constexpr StringLiteral kNonNegativeInputAttr = "tq.nonnegative_input";

/// Emits the quantization of one tile-grid: `x` (f32 memref) into `q`
/// (container memref) and `steps`, computing each tile's step from its data
/// (T3). `bits` is an i32 value. With `tilesBegin` / `tilesEnd`, only the
/// tiles in that range of the grid along the first split dim. With `given`
/// (an f32 memref in the grid shape), each tile uses its given step
/// instead, one that is not finite and positive taken as 0, and only the
/// values are computed; with `refresh` (an i1) too, only where it is
/// false. Stochastic rounding draws its noise from `seed` (an i32: the
/// op's seed plus its run-time offset) and each element's row-major index. With
/// `threads` > 1 the tiles are shared among the threads (see
/// buildIndependentLoops). Shared by quantize, postprocess, requantize, weight
/// update and the fused matmul.
void emitQuantizeTiles(OpBuilder &b, Location loc, TiledType type, Value x,
                       Value q, Value steps, Value bits, RoundingMode rounding,
                       Value tilesBegin = Value(), Value tilesEnd = Value(),
                       Value given = Value(), Value refresh = Value(),
                       Value seed = Value(), int64_t threads = 1);
/// The change of a stochastic rounding's seed that moves its noise by
/// `shift` elements: element i rounded with seed s + noiseSeedShift(d)
/// draws the noise of element i + d with seed s (modulo 2^32). The noise
/// hashes index + seed · K and K is odd, so K has an inverse modulo 2^32.
/// tq-cpu-split-batch gives each share of a batch its own elements' noise
/// this way.
uint32_t noiseSeedShift(uint64_t shift);
/// A loop nest over [lbs, ubs) by `steps` whose iterations are independent
/// (each writes memory no other one reads or writes): a nest of
/// scf.for for one thread, an `scf.parallel` for more, whose shared dims
/// tq-cpu-share-loops chooses. Either way each iteration computes the same
/// values, so the results do not depend on the thread count.
void buildIndependentLoops(
    OpBuilder &b, Location loc, ValueRange lbs, ValueRange ubs,
    ValueRange steps, int64_t threads,
    function_ref<void(OpBuilder &, Location, ValueRange)> body);
/// The reassociation that keeps dims [0, from) of a rank-`rank` shape and
/// merges [from, rank) into one.
SmallVector<ReassociationIndices> mergeTrailingDims(int64_t rank, int64_t from);
/// The rank of a tiled or ranked tensor type.
int64_t rankOf(Type t);
/// A copy of the memref `src` whose dimension i is `src`'s perm[i]
/// (Permute.cpp: a swap of two groups of trailing dims in blocks transposed
/// in registers, else loops in the copy's order; shared among `threads`,
/// see buildIndependentLoops).
Value emitPermute(ImplicitLocOpBuilder &b, Value src, ArrayRef<int64_t> perm,
                  int64_t threads = 1);
/// Whether `user`, which uses an alias of a buffer as `operand`, keeps to
/// the buffer's block: it does not pass the buffer on (a terminator), frees
/// it, or makes a value that could alias it other than a view or cast,
/// which `views` receives to be followed in turn.
bool keepsBufferLocal(Operation *user, OpOperand &operand,
                      SmallVectorImpl<Value> &views);
/// Whether two subviews of one buffer (of the identity layout) never share
/// an element: along some dim, their static index sets (offset + stride · i,
/// i < size) are apart or interleaved without meeting.
bool disjointSubviews(memref::SubViewOp a, memref::SubViewOp b);
/// The buffer `v` is a view of (through any chain of view-like ops), or
/// `v`.
Value rootOf(Value v);
/// `memref.alloc` of a static shape.
Value allocBuffer(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);
/// The memref view of a tensor value, and a tensor view of a memref.
Value toBuffer(OpBuilder &b, Location loc, Value tensor);
Value toTensor(OpBuilder &b, Location loc, Value buffer);
} // namespace cpu

} // namespace mlir::tq

#endif // TQ_CONVERSION_TQTOCPU_TQTOCPU_H
