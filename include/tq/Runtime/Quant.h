//===- Quant.h - tile-quant reference numerics ------------------*- C++ -*-===//
//
// The golden model of tile-quant: plain C++ (no MLIR), simple loops, every
// result defined to the bit. Each backend (CPU, PPU simulator) is tested
// against these functions.
//
// Notation (SPEC T3, A2): N is the bit width, qmax = 2^(N-1) - 1. A tile's
// parameters are a point position s (an integer exponent), a factor f and an
// offset o; its step is  step = f * 2^s  (computed in f32), and
//
//     q  = clamp(round((x - o) / step), -qmax, qmax)     (quantize)
//     x^ = q * step + o                                  (dequantize)
//
// Arithmetic is IEEE f32 in the order written here unless a function says
// otherwise, with no fused multiply-add (every product is rounded to f32
// before it is added; the library is built with -ffp-contract=off). The
// error sums of A3 are done in f64.
//
// Non-finite input (documented, tested): NaN quantizes to 0, +Inf/-Inf
// saturate to +qmax/-qmax; neither takes part in computing Z, Zmax, Zmin or
// the error sums. An all-zero (or all non-finite) tile has step 0 and every
// element quantizes to 0 (+Inf/-Inf to ±qmax, which dequantize to 0 + o).
// A finite value within one step of FLT_MAX may round up to a q whose
// dequantized value q * step overflows to ±Inf (IEEE, not undefined).
//
//===----------------------------------------------------------------------===//
#ifndef TQ_RUNTIME_QUANT_H
#define TQ_RUNTIME_QUANT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tq::ref {

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// The seven quantization forms of SPEC A2.
enum class QuantForm {
  Pow2,             // round(x / 2^s1)
  Pow2Scaled,       // round(x / (2^s1 * f1))
  Scaled,           // round(x / f2)
  Offset,           // round(x - o)
  OffsetPow2,       // round((x - o) / 2^s2)
  OffsetScaled,     // round((x - o) / f4)
  OffsetPow2Scaled, // round((x - o) / (2^s2 * f3))
};
bool hasOffset(QuantForm form);

enum class Rounding { NearestEven, Up, Down, TowardZero, Stochastic };

/// Largest representable magnitude: 2^(bits-1) - 1. `bits` in [2, 16].
int32_t qmax(int bits);

/// One subset's (tile's) quantization parameters.
struct TileParams {
  int bits = 8;
  int32_t pointPos = 0; // s: exponent of the power-of-two part
  float factor = 0.0f;  // f: 1 for the pure power-of-two forms
  float offset = 0.0f;  // o: 0 for the symmetric forms
  /// step = factor * 2^pointPos in f32 (ldexpf; exact unless it underflows).
  float step() const;
};

/// Statistics of a subset: Z1 = max|x|, Zmax, Zmin over finite elements.
struct Range {
  float absMax = 0.0f, max = 0.0f, min = 0.0f;
  int64_t finite = 0, nonFinite = 0;
};
Range computeRange(const float *x, int64_t n, int64_t stride = 1);

/// The smallest integer s with z <= qmax * 2^s, i.e. ceil(log2(z / qmax)),
/// computed exactly. z must be finite and > 0.
int32_t pointPosition(float z, int bits);

/// Parameters of `form` for data with range `r` (SPEC A2). Point positions
/// are clamped to [-149, 127] so that 2^s is a finite non-zero f32 (values
/// of a tile near FLT_MAX saturate at 2 bits instead of giving an infinite
/// step):
///   Z = Z1 (symmetric) or Z2 = Zmax/2 - Zmin/2 with o = Zmax/2 + Zmin/2;
///   Pow2:   s = ceil(log2(Z/qmax)), f = 1
///   Pow2Scaled: s as Pow2, f = Z / (2^s * qmax)    (f1 or f3)
///   Scaled: s = 0, f = Z / qmax                     (f2 or f4)
///   Offset: s = 0, f = 1
/// Z == 0 gives f = 0 (step 0) for every form except Offset.
TileParams computeParams(const Range &r, int bits, QuantForm form);

/// Round `v` (finite) to an integer-valued float. `noise` in [0, 1) is used
/// only by Stochastic: floor(v + noise).
float roundValue(float v, Rounding mode, float noise = 0.0f);

/// The uniform [0, 1) value used for stochastic rounding of element `index`
/// (its linear index in the logical tensor) under `seed`: counter-based, so
/// the result does not depend on iteration order. 24 random bits of a
/// 32-bit hash of index + seed · 0x9E3779B9, modulo 2^32
/// (docs/Numerics.md).
float stochasticNoise(uint64_t seed, uint64_t index);

int32_t quantizeValue(float x, const TileParams &p, Rounding mode,
                      float noise = 0.0f);
float dequantizeValue(int32_t q, const TileParams &p);

/// SPEC A3: log2(Σ|x^ - x| / Σ|x| + 1) over finite x, sums in f64. 0 when
/// Σ|x| is 0.
double quantError(const float *x, const float *xhat, int64_t n);

/// The bit-width search of SPEC A4.
struct BitSearchOptions {
  double low = 0.0, high = 0.0; // thresholds, low < high
  int init = 8, min = 2, max = 16;
  int step = 1;
  int farStep = 0;        // > 0 enables the variable step
  double farMargin = 0.0; // |error - threshold| > farMargin uses farStep
};
struct BitSearchResult {
  int bits = 0;
  double error = 0.0;
  int iterations = 0;
};
/// Quantizes the `n` values (one subset, one set of parameters) with `form`
/// at the current width, measures the A3 error and moves the width, as
/// documented on tq.adaptive_bit_width; a search that crosses the band
/// (one width too coarse, the next too fine) keeps the larger width.
/// Rounding is nearest-even.
BitSearchResult searchBitWidth(const float *x, int64_t n, QuantForm form,
                               const BitSearchOptions &opts);

/// Rounds an f32 to bf16 precision (nearest-even), kept as f32.
float roundToBF16(float v);

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;
int64_t numElements(const Shape &shape);

struct FloatTensor {
  Shape shape;
  std::vector<float> data; // row-major
};

/// How a tensor is split into tiles: tile[0] elements along dims[0], tile[1]
/// along dims[1]; every other dim has its own tiles.
struct TileLayout {
  int64_t tile[2] = {32, 32};
  int dims[2] = {0, 1};
};

/// Tile-grid shape: shape with dims[k] replaced by ceil(shape[dims[k]] /
/// tile[k]).
Shape gridShape(const Shape &shape, const TileLayout &layout);
/// Linear index in the grid of the tile holding the element at `index`.
int64_t tileOf(const Shape &shape, const TileLayout &layout,
               const int64_t *index);

struct TiledTensor {
  Shape shape;
  TileLayout layout;
  QuantForm form = QuantForm::Scaled;
  std::vector<int32_t> q;         // logical row-major order
  std::vector<TileParams> params; // one per tile, grid row-major order
  int64_t nonFinite = 0;          // NaN/Inf elements seen when quantizing
};

/// Bit widths for quantizeTiled: one for all tiles, or one per tile.
struct BitsSpec {
  int uniform = 8;
  std::vector<int> perTile; // grid order; overrides `uniform` when non-empty
};

/// Quantizes each tile with its own parameters (SPEC T1, T3, A2). With
/// `givenSteps` (grid order) the step of each tile is taken from it
/// (factor = step, s = 0, o = 0) instead of being computed.
TiledTensor quantizeTiled(const FloatTensor &x, const TileLayout &layout,
                          const BitsSpec &bits, QuantForm form,
                          Rounding mode = Rounding::NearestEven,
                          uint64_t seed = 0,
                          const std::vector<float> *givenSteps = nullptr);
FloatTensor dequantizeTiled(const TiledTensor &t);

/// A4 search for one width for the whole tensor, quantized in `layout`
/// tiles (each with its own parameters): the error is over all elements.
BitSearchResult searchBitWidthTiled(const FloatTensor &x,
                                    const TileLayout &layout, QuantForm form,
                                    const BitSearchOptions &o);

/// Per-tile A4 search: the width chosen for each tile of `x`.
std::vector<BitSearchResult> searchBitWidthPerTile(const FloatTensor &x,
                                                   const TileLayout &layout,
                                                   QuantForm form,
                                                   const BitSearchOptions &o);

/// Transposes a tiled tensor (SPEC T4): data permuted, every tile's
/// parameters reused; result dim i is input dim perm[i]. Requires square
/// tiles or a permutation that keeps the split dims in order.
TiledTensor transposeTiled(const TiledTensor &t,
                           const std::vector<int64_t> &perm);

/// tq.requantize: quantize(dequantize(t)) into `layout`, `bits` and `form`,
/// with fresh parameters per tile. With `perm` the dequantized data is
/// permuted first (result dim i is input dim perm[i]): the only way to
/// transpose non-square tiles.
TiledTensor requantizeTiled(const TiledTensor &t, const TileLayout &layout,
                            const BitsSpec &bits, QuantForm form,
                            Rounding mode = Rounding::NearestEven,
                            uint64_t seed = 0,
                            const std::vector<int64_t> *perm = nullptr);

//===----------------------------------------------------------------------===//
// Compute (SPEC T5, T6, T7)
//===----------------------------------------------------------------------===//

/// One operand of matmul: tiled, or plain float.
struct MatmulOperand {
  const TiledTensor *tiled = nullptr;
  const FloatTensor *dense = nullptr;
  bool transposed = false; // use the transpose of the two innermost dims
};

/// Result or error of a computation.
struct Status {
  bool ok = true;
  std::string message;
  static Status error(std::string m) { return {false, std::move(m)}; }
};

/// C = op(A) · op(B) over leading batch dims (see tq.matmul). Operands must
/// be split on their two innermost dims, symmetric, with equal K-tiles.
/// The int32 partial sum per K-tile is checked: a sum that does not fit is
/// an error (it cannot happen for K-tiles the verifier accepts).
Status matmulTiled(const MatmulOperand &a, const MatmulOperand &b,
                   bool bf16ScaleProduct, FloatTensor &c);

/// The largest K-tile for which the int32 partial sum of two operands of
/// the given widths cannot overflow: floor((2^31-1) / (qmaxA * qmaxB)).
int64_t maxKTile(int bitsA, int bitsB);

struct Conv2DParams {
  int64_t stride[2] = {1, 1};
  int64_t dilation[2] = {1, 1};
  int64_t pad[4] = {0, 0, 0, 0}; // top, left, bottom, right
};
/// NHWC input split on (0, 3), KRSC filter split on (0, 3).
Status conv2dTiled(const TiledTensor &x, const TiledTensor &w,
                   const Conv2DParams &p, bool bf16ScaleProduct,
                   FloatTensor &y);

enum class Activation { None, Relu };
struct PostprocessResult {
  TiledTensor out;
  float layerScale = 1.0f;
};
/// SPEC T6: y = act(L / s_layer), then quantized into `layout` tiles.
/// `givenLayerScale` or, with `computeLayerScale`, max|L| / qmax(bits).
PostprocessResult
postprocess(const FloatTensor &acc, std::optional<float> givenLayerScale,
            bool computeLayerScale, Activation act, const TileLayout &layout,
            const BitsSpec &bits, QuantForm form,
            Rounding mode = Rounding::NearestEven, uint64_t seed = 0);

/// SPEC T7: W <- quantize(dequant(W) - lr * dW) into W's layout, form and
/// bit widths.
TiledTensor weightUpdate(const TiledTensor &w, const FloatTensor &dw, float lr,
                         Rounding mode = Rounding::NearestEven,
                         uint64_t seed = 0);

} // namespace tq::ref

#endif // TQ_RUNTIME_QUANT_H
