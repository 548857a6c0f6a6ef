//===- Transforms.h - tile-quant rewrite patterns ---------------*- C++ -*-===//
#ifndef TQ_DIALECT_TQ_TRANSFORMS_TRANSFORMS_H
#define TQ_DIALECT_TQ_TRANSFORMS_TRANSFORMS_H

#include "mlir/IR/PatternMatch.h"
#include "tq/Dialect/TQ/Transforms/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>
#include <vector>

namespace mlir::tq {

/// One range of a bit-width schedule: epochs [first, last] use `bits`.
struct ScheduleEntry {
  int64_t first, last, bits;
};

/// Parses "0-75:4,76-86:8": increasing, non-overlapping epoch ranges with
/// widths in [2, 16]. Fails with a message in `error`.
FailureOr<SmallVector<ScheduleEntry>> parseSchedule(StringRef text,
                                                    std::string &error);

/// Attribute on a function argument holding the training epoch.
constexpr StringLiteral kEpochArgAttr = "tq.epoch";
/// Attribute on a function argument holding the training iteration (the
/// run-time offset of stochastic rounding's seeds).
constexpr StringLiteral kIterationArgAttr = "tq.iteration";

/// How tq-insert-quantization quantizes compute ops: the pass's options
/// (declared once, in Passes.td), with the schedule parsed, and what the
/// pass works out from the module.
struct QuantizationOptions : TQInsertQuantizationOptions {
  /// `schedule`, parsed.
  SmallVector<ScheduleEntry> scheduleEntries;
  /// Tile sizes chosen per layer from `tileCandidates` (owned by the
  /// caller).
  const llvm::DenseMap<Operation *, int64_t> *layerTiles = nullptr;
  /// Layer names by compute op (owned by the caller).
  const llvm::DenseMap<Operation *, std::string> *layerNames = nullptr;
  /// Calibrated layers (A8), by compute op: their operands are quantized
  /// exactly as recorded, whatever the policy. Owned by the caller.
  const llvm::DenseMap<Operation *, const struct CalibratedLayer *>
      *calibrated = nullptr;
  /// The forward GEMMs kept in float, by function and `tq.layer` ordinal:
  /// their gradient GEMMs (`tq.gradient_of`) stay in float too. Owned by
  /// the caller.
  const llvm::DenseSet<std::pair<Operation *, int64_t>> *floatLayers = nullptr;

  /// The largest width an operand of `role` can have at run time.
  int64_t maxBitsFor(Role role, bool isConstant) const;

  /// The bit width for a tensor of `role`.
  int64_t bitsFor(Role role) const;
  /// The tiled type an operand of `shape`, `role` and split `dims` gets
  /// with tile size `v`; `contracted` (0 or 1) says which split dim its
  /// product reduces over. Fails for granularities that need a static size
  /// the shape lacks.
  FailureOr<TiledType> typeFor(MLIRContext *ctx, ArrayRef<int64_t> shape,
                               Role role, ArrayRef<int64_t> dims,
                               unsigned contracted, int64_t v) const;
  /// The tile size of compute op `op`: its entry in `layerTiles`, or `tile`.
  int64_t tileFor(Operation *op) const;
  /// Whether operand `i` (of role `role`) of a compute op is quantized.
  bool quantizes(Role role) const;
};

/// Checks that the options and every compute op under `root` (with its
/// tq.roles / tq.split_dims) can be quantized: emits an error naming the
/// option or the op, and fails, otherwise.
LogicalResult verifyQuantization(Operation *root,
                                 const QuantizationOptions &options);

/// Patterns rewriting float compute ops into tq ops (roles and split dims
/// must be annotated, see annotateRolesAndSplitDims):
///   - linalg.matmul (plain, transposed A/B) -> tq.quantize + tq.matmul
///   - linalg.batch_matmul (plain, transposed A/B) -> same, batched
///   - [tensor.pad(zero) ->] linalg.conv_2d_nhwc_fhwc -> tq.conv2d (the
///     padding folded into the op)
/// A non-zero init is added back with arith.addf.
void populateInsertQuantizationPatterns(RewritePatternSet &patterns,
                                        const QuantizationOptions &options);

/// Patterns splitting grouped convolutions into one plain convolution per
/// group, for groups of at least `minChannels` input channels:
///   - linalg.conv_2d_ngchw_gfchw -> G x (tensor.extract_slice ->
///     linalg.conv_2d_nchw_fchw -> tensor.insert_slice)
void populateSplitGroupedConvPatterns(RewritePatternSet &patterns,
                                      int64_t minChannels);

/// Patterns that evaluate quantization of constants at compile time:
///   - tq.quantize(arith.constant) -> tq.constant (reference numerics),
///     for constants of at most `maxElements` elements.
void populateQuantizeConstantsPatterns(RewritePatternSet &patterns,
                                       int64_t maxElements);

/// Patterns folding transposes into tq.matmul operand flags (SPEC T4):
///   - tq.matmul(tq.quantize(linalg.transpose(x))) -> tq.matmul(tq.quantize(x))
///     with the operand's transpose flag flipped
///   - tq.matmul(tq.transpose(q)) -> tq.matmul(q), flag flipped
/// when the permutation swaps the two innermost dims (`numFolded`, optional,
/// counts them), and
///   - tq.quantize(linalg.transpose(x)) -> tq.transpose(tq.quantize(x)) for
///     any permutation tq.transpose allows on the tiles.
void populateFoldTransposesPatterns(RewritePatternSet &patterns,
                                    int64_t *numFolded = nullptr);

/// Replaces every tq.quantize of a value that is already quantized (by an
/// earlier tq.quantize in the same block, with the same rounding; a
/// stochastic one of the same type with any seed) by that quantization, or
/// by a tq.requantize of it when the types differ (not for a stochastic one
/// with another seed, which stays). Returns the number of requantizations
/// inserted.
int64_t shareQuantizations(Operation *root);

/// Whether `op` is an elementwise ReLU: a linalg.generic with one input,
/// identity maps, all-parallel iterators and body maximumf(x, 0.0) (the
/// zero may be a constant of the body).
bool isRelu(Operation *op);

/// Patterns fusing layer outputs into tq.postprocess (SPEC T6):
///   - tq.quantize(relu(tq.matmul | tq.conv2d)) -> tq.postprocess{relu}
///   - tq.quantize(tq.matmul | tq.conv2d) -> tq.postprocess
/// `numFused` / `numRelu` (optional) count the rewrites.
void populateFusePostprocessPatterns(RewritePatternSet &patterns,
                                     int64_t *numFused = nullptr,
                                     int64_t *numRelu = nullptr);

} // namespace mlir::tq

#endif // TQ_DIALECT_TQ_TRANSFORMS_TRANSFORMS_H
