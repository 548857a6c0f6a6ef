//===- FloatKernels.h - helpers shared by the f32 kernels -------*- C++ -*-===//
//
// What the kernels of tq-cpu-float-kernels share: FloatKernels.cpp has the
// matmul, convolution and layout-transpose kernels and the pass,
// ConvNhwcKernel.cpp the NHWC convolution of few taps (a first layer),
// SmallOutputConv.cpp the convolutions with few output pixels (weight
// gradients), WindowKernels.cpp the depthwise convolution and pooling kernels,
// ElementwiseKernels.cpp the elementwise generics left after them, and
// StridedKernels.cpp those with several outputs or strided operands.
//
//===----------------------------------------------------------------------===//
#ifndef TQ_LIB_CONVERSION_TQTOCPU_FLOATKERNELS_H
#define TQ_LIB_CONVERSION_TQTOCPU_FLOATKERNELS_H

#include "Epilogue.h"
#include "tq/Conversion/TQToCPU/TQToCPU.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tq::floatkernels {

struct KernelOptions {
  int64_t lanes = 8;
  /// Vector registers the kernels may plan for (32 on AVX-512, else 16).
  int64_t registers = 16;
  int64_t threads = 1;
  /// Products accumulated with fused multiply-adds (one rounding), on the
  /// x86 targets; the generic one multiplies, then adds.
  bool fma = false;
  /// An x86 target: its instructions may be called as LLVM intrinsics.
  bool x86 = false;
};

KernelOptions kernelOptions(const CPUCodegenOptions &options);

template <typename OpT> struct FloatKernelPattern : OpRewritePattern<OpT> {
  FloatKernelPattern(MLIRContext *ctx, KernelOptions o,
                     PatternBenefit benefit = 1)
      : OpRewritePattern<OpT>(ctx, benefit), o(o) {}
  KernelOptions o;
};

/// Whether `v` is a static f32 memref of `rank` whose last dim has unit
/// stride.
bool isKernelOperand(Value v, int64_t rank);
/// The input, filter and output of a convolution on buffers, each a
/// kernel operand of `rank` (the filter of `filterRank` if given); failure
/// (with the reason) otherwise.
struct WindowOperands {
  Value x, w, y;
  ArrayRef<int64_t> xs, ws, ys; // their shapes
};
FailureOr<WindowOperands> matchWindowOperands(linalg::LinalgOp op, int64_t rank,
                                              PatternRewriter &rw,
                                              int64_t filterRank = 0);
Value idx(ImplicitLocOpBuilder &b, int64_t v);
/// acc + x·y: one fused multiply-add with `fma`, else a multiply, then an
/// add.
Value multiplyAdd(ImplicitLocOpBuilder &b, Value acc, Value x, Value y,
                  bool fma);
/// An f32 vector of zeros.
Value zeros(ImplicitLocOpBuilder &b, VectorType t);
/// The mask of the L lanes from `first` along a dim of `extent` (a channel
/// vector's), none when all L are inside it.
Value tailMask(ImplicitLocOpBuilder &b, int64_t L, int64_t first,
               int64_t extent);
/// The f32 vector of `t` at `at` of `from`: masked (zeros elsewhere) when
/// `mask` is not null.
Value loadF32(ImplicitLocOpBuilder &b, VectorType t, Value from, ValueRange at,
              Value mask);
/// A 2-D view of `v` with its dims grouped as `groups`.
Value collapse(ImplicitLocOpBuilder &b, Value v,
               ArrayRef<ReassociationIndices> groups);
/// `v[i]` of a memref with a leading dim, rank-reduced, or with that dim
/// kept (of size 1) with `keepDim`.
Value slice(ImplicitLocOpBuilder &b, Value v, Value i, bool keepDim = false);
/// The value of a `linalg.fill` of `c` just before `op`, which the kernel
/// then does itself (erasing the fill): the output is not written twice.
Value takeFill(Operation *op, Value c, PatternRewriter &rw);
/// The elementwise generic after `op` that its kernel applies as it stores
/// `out` (vectors along its trailing `vectorDims` dims), with its views
/// built at `b`, whose location then names both layers; none if there is
/// no such generic.
std::optional<VectorEpilogue> takeEpilogue(Operation *op, Value out,
                                           int64_t vectorDims,
                                           ImplicitLocOpBuilder &b);
/// `v` through the epilogue `epi`, if any (at the outer indices `outer`
/// and position `col` along its vector dims), stored at (outer..., col) of
/// `to`: masked when `mask` is not null. `scalars`: the epilogue's scalar
/// inputs at `outer`, loaded once (VectorEpilogue::loadScalars), if given.
void storeThroughEpilogue(ImplicitLocOpBuilder &b,
                          const std::optional<VectorEpilogue> &epi, Value v,
                          Value to, ValueRange outer, Value col, Value mask,
                          ArrayRef<Value> scalars = {});
/// Erases a kernel's op and the epilogue it took.
void eraseWithEpilogue(Operation *op, const std::optional<VectorEpilogue> &epi,
                       PatternRewriter &rw);

/// The lanes of the vectors along a row of Q elements: the target's, or
/// fewer (a power of two, at least 4) for a row shorter than that, so that
/// a row of 4 or 7 is not one mostly masked 16-lane vector.
int64_t rowLanes(int64_t lanes, int64_t Q);
using cpu::rootOf;
/// Whether an op strictly between `from` and `to` (in their block) uses
/// `v` or a view of it, deallocs aside; a user outside the block counts.
bool usedBetween(Value v, Operation *from, Operation *to);

/// The rows of an L×L block (L vectors of L lanes) transposed: log2(L)
/// rounds of two-input shuffles, the round of half-width h swapping the
/// off-diagonal h×h blocks of every 2h×2h block.
SmallVector<Value> transposeBlock(ImplicitLocOpBuilder &b,
                                  ArrayRef<Value> rows);
/// [0, channels) × [0, pixels) in L × L blocks, channel blocks outside:
/// along each, the whole blocks in a loop, then the last partial one on its
/// own. `body` gets each block's first channel and how many it holds, then
/// its first pixel and how many it holds.
using BlockBody = llvm::function_ref<void(ImplicitLocOpBuilder &, Value,
                                          int64_t, Value, int64_t)>;
void forEachBlock(ImplicitLocOpBuilder &b, int64_t channels, int64_t pixels,
                  int64_t L, BlockBody body);

/// Loops over the leading dims `outer` (shared among `threads`) around the
/// vectors of L lanes along a row of `extent` values: the whole vectors in a
/// loop, then the last, partial one on its own. `body` gets the outer
/// indices, the vector's first column and how many columns it holds;
/// `atRow`, if given, the outer indices first, once per row.
using RowVectorBody = llvm::function_ref<void(ImplicitLocOpBuilder &,
                                              ValueRange, Value, int64_t)>;
using RowBody = llvm::function_ref<void(ImplicitLocOpBuilder &, ValueRange)>;
void forEachRowVector(ImplicitLocOpBuilder &b, ArrayRef<int64_t> outer,
                      int64_t extent, int64_t L, int64_t threads,
                      RowVectorBody body, RowBody atRow = nullptr);

/// The max pooling (`PoolOp`, NCHW or NHWC; the fill of its output just
/// before it) right after `last` that reads `out`, an allocation nothing
/// else reads after it: a convolution can pool each image as soon as it
/// has it.
template <typename PoolOp> struct FollowingPool {
  linalg::FillOp fill;
  PoolOp pool;

  static std::optional<FollowingPool> match(Operation *last, Value out);
  /// Allocations the pool needs, moved to `b`'s insertion point.
  void hoist(ImplicitLocOpBuilder &b, Operation *last);
  /// The pool on image `n`, whose output (one image, N of size 1) is
  /// `from`; or, given `row`, output row `row` of image n, from the
  /// window's rows in `from` (of rowWindows()'s first size).
  void emit(ImplicitLocOpBuilder &b, Value from, Value n, Value row = Value());
  /// When the windows do not overlap down the rows: the rows a window
  /// spans and the stride between windows (at least those rows).
  std::optional<std::pair<int64_t, int64_t>> rowWindows();
  /// The pool's output rows.
  int64_t outputRows();
  /// Erases the fill and the pool, and `out` if nothing else reads it.
  void erase(Value out, PatternRewriter &rw);
};

/// A convolution's input that is a bufferized `tensor.pad`: an allocation
/// filled with the pad value, the source copied into its interior (NCHW,
/// seen through a depthwise convolution's expand_shape, or NHWC). The
/// kernels pad one plane or image at a time into a scratch buffer that
/// stays in cache instead: the padded tensor (read and written in full for
/// the pad) is never needed.
struct PaddedPlanes {
  /// The source, the buffer it is a view of, the pad value.
  Value source, root, padValue;
  int64_t top = 0, left = 0;
  /// The pad's ops, erased with the convolution in this order.
  SmallVector<Operation *> ops;
  /// The source's dealloc, moved after the kernel.
  Operation *sourceDealloc = nullptr;

  /// Whether the epilogue `epi` of a kernel writing planes of `outShape`
  /// uses the source's buffer (reused in place for its output) only as
  /// those planes: the source, or its buffer of the same type, of the
  /// output's shape. The kernel reads each plane before it stores it.
  bool onlyOwnPlanes(const VectorEpilogue &epi,
                     ArrayRef<int64_t> outShape) const;
  /// `x` is the padded buffer seen through an expand_shape (NCHW, the
  /// group dim added), or with `channelsLast` the padded NHWC buffer itself.
  static std::optional<PaddedPlanes> match(Operation *conv, Value x,
                                           bool channelsLast = false);
};

/// The images [0, N) in one chunk per thread (as many as the threads, at
/// most N), each chunk with its own `scratch` buffers (heap allocations,
/// made once per chunk and freed after it), calling `prepare` (if given)
/// with the buffers once per chunk, then `body` with (n, the buffers) for
/// each image of the chunk.
void forEachImageWithScratch(
    ImplicitLocOpBuilder &b, int64_t N, int64_t threads,
    ArrayRef<MemRefType> scratch,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, ValueRange)> body,
    llvm::function_ref<void(ImplicitLocOpBuilder &, ValueRange)> prepare = {});

/// The NHWC convolution of few taps (ConvNhwcKernel.cpp).
void populateConvNhwcKernelPatterns(RewritePatternSet &patterns,
                                    KernelOptions o);
/// The depthwise convolution and pooling kernels (WindowKernels.cpp).
void populateWindowKernelPatterns(RewritePatternSet &patterns, KernelOptions o);
/// The convolutions with fewer output pixels than a vector has lanes
/// (SmallOutputConv.cpp), before the convolution kernel.
void populateSmallOutputConvPatterns(RewritePatternSet &patterns,
                                     KernelOptions o);
/// The elementwise generics left, as vector loops (ElementwiseKernels.cpp).
void populateElementwiseKernelPatterns(RewritePatternSet &patterns,
                                       KernelOptions o);
/// The elementwise generics with several outputs or strided operands, as
/// vector loops (StridedKernels.cpp).
void populateStridedKernelPatterns(RewritePatternSet &patterns,
                                   KernelOptions o);

} // namespace mlir::tq::floatkernels

#endif // TQ_LIB_CONVERSION_TQTOCPU_FLOATKERNELS_H
