//===- tq-ref.cpp - command-line front end of the reference numerics ------===//
//
// Runs the golden model (tq/Runtime/Quant.h) on .npy files, so that scripts
// and tests (e.g. the numpy cross-check) can call it:
//
//   tq-ref quantize x.npy --tile=32x32 --dims=0,1 --bits=8 --form=scaled -o p
//       writes p.q.npy (i32), p.steps.npy, p.offsets.npy, p.bits.npy (grid),
//       p.deq.npy (f32), and prints the tile count, error and range.
//       --bits-per-tile=b.npy gives each tile its own width (i32, the
//       grid's shape) instead of --bits.
//   tq-ref requantize x.npy --to-tile=RxC [--to-dims=d0,d1] [--to-bits=N]
//       [--to-form=F] [--perm=p0,p1,...] -o p
//       quantizes x (options as quantize), then tq.requantize: dequantizes
//       it, permutes it (result dim i is input dim p_i) and quantizes it
//       into the new tiles; writes p.q.npy, p.steps.npy, p.offsets.npy.
//   tq-ref matmul a.npy b.npy [--transpose-a] [--transpose-b] -o c.npy
//       quantizes a and b (same options as quantize; --bits-b for b) and
//       writes the tiled product.
//   tq-ref conv2d x.npy w.npy [--stride=H,W] [--dilation=H,W]
//       [--pad=T,L,B,R] -o y.npy
//       quantizes the NHWC input and the KRSC filter in --tile tiles on
//       their dims 0 and 3 (options as matmul) and writes the tiled
//       convolution (NHWC).
//   tq-ref search x.npy --low=0.01 --high=0.05 [--tile=...] [--per-tile]
//       prints the A4 bit-width search result: one width for the tensor in
//       its tiles, or (--per-tile) one width per tile.
//   tq-ref postprocess acc.npy [--layer-scale=S | --compute-layer-scale]
//       [--relu] -o p
//       T6: scales, activates and quantizes an accumulator (options as
//       quantize); writes p.q.npy, p.steps.npy, p.offsets.npy and prints
//       the layer scale applied.
//   tq-ref weight-update w.npy dw.npy --lr=R -o p
//       T7: quantizes w (options as quantize), then W <- quantize(
//       dequantize(W) - R dW) in W's tiles; writes p.q.npy, p.steps.npy,
//       p.offsets.npy.
//
//===----------------------------------------------------------------------===//
#include "tq/Runtime/Npy.h"
#include "tq/Runtime/Quant.h"
#include "tq/Support/ToolOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace llvm;

static cl::OptionCategory toolOptions("tq-ref options");
namespace ref = tq::ref;
namespace npy = tq::npy;

static cl::SubCommand quantizeCmd("quantize", "Quantize a tensor into tiles");
static cl::SubCommand
    requantizeCmd("requantize",
                  "Quantize a tensor, then requantize it into other tiles");
static cl::SubCommand matmulCmd("matmul", "Tiled matmul of two tensors");
static cl::SubCommand conv2dCmd("conv2d",
                                "Tiled convolution of an NHWC input and a KRSC "
                                "filter");
static cl::SubCommand searchCmd("search", "A4 bit-width search");
static cl::SubCommand
    postprocessCmd("postprocess",
                   "T6: layer scale, activation and quantization of an "
                   "accumulator");
static cl::SubCommand
    weightUpdateCmd("weight-update",
                    "T7: the weight update of a quantized tensor");

static cl::list<std::string>
    inputs(cl::cat(toolOptions), cl::Positional, cl::OneOrMore,
           cl::desc("<input .npy files>"), cl::sub(quantizeCmd),
           cl::sub(matmulCmd), cl::sub(conv2dCmd), cl::sub(searchCmd),
           cl::sub(postprocessCmd), cl::sub(weightUpdateCmd),
           cl::sub(requantizeCmd));
static cl::opt<std::string> output(cl::cat(toolOptions), "o",
                                   cl::desc("output path or prefix"),
                                   cl::sub(quantizeCmd), cl::sub(requantizeCmd),
                                   cl::sub(matmulCmd), cl::sub(conv2dCmd),
                                   cl::sub(postprocessCmd),
                                   cl::sub(weightUpdateCmd));
static cl::opt<std::string>
    tileOpt(cl::cat(toolOptions), "tile", cl::desc("tile shape RxC"),
            cl::init("32x32"), cl::sub(quantizeCmd), cl::sub(requantizeCmd),
            cl::sub(matmulCmd), cl::sub(conv2dCmd), cl::sub(searchCmd),
            cl::sub(postprocessCmd), cl::sub(weightUpdateCmd));
static cl::opt<std::string> dimsOpt(cl::cat(toolOptions), "dims",
                                    cl::desc("split dims d0,d1 (default: the "
                                             "two innermost)"),
                                    cl::init(""), cl::sub(quantizeCmd),
                                    cl::sub(requantizeCmd), cl::sub(searchCmd),
                                    cl::sub(postprocessCmd),
                                    cl::sub(weightUpdateCmd));
static cl::opt<int> bitsOpt(cl::cat(toolOptions), "bits",
                            cl::desc("bit width N (2..16)"), cl::init(8),
                            cl::sub(quantizeCmd), cl::sub(requantizeCmd),
                            cl::sub(matmulCmd), cl::sub(conv2dCmd),
                            cl::sub(postprocessCmd), cl::sub(weightUpdateCmd));
static cl::opt<int> bitsBOpt(cl::cat(toolOptions), "bits-b",
                             cl::desc("bit width of b (matmul)"), cl::init(0),
                             cl::sub(matmulCmd), cl::sub(conv2dCmd));
/// The names of the quantization forms (SPEC A2), for --form and --to-form.
static cl::ValuesClass formValues() {
  return cl::values(
      clEnumValN(ref::QuantForm::Pow2, "pow2", "round(x / 2^s)"),
      clEnumValN(ref::QuantForm::Pow2Scaled, "pow2_scaled",
                 "round(x / (2^s f1))"),
      clEnumValN(ref::QuantForm::Scaled, "scaled", "round(x / f2)"),
      clEnumValN(ref::QuantForm::Offset, "offset", "round(x - o)"),
      clEnumValN(ref::QuantForm::OffsetPow2, "offset_pow2",
                 "round((x - o) / 2^s)"),
      clEnumValN(ref::QuantForm::OffsetScaled, "offset_scaled",
                 "round((x - o) / f4)"),
      clEnumValN(ref::QuantForm::OffsetPow2Scaled, "offset_pow2_scaled",
                 "round((x - o) / (2^s f3))"));
}
static cl::opt<ref::QuantForm> formOpt(
    cl::cat(toolOptions), "form", cl::desc("quantization form (SPEC A2)"),
    formValues(), cl::init(ref::QuantForm::Scaled), cl::sub(quantizeCmd),
    cl::sub(requantizeCmd), cl::sub(matmulCmd), cl::sub(conv2dCmd),
    cl::sub(searchCmd), cl::sub(postprocessCmd), cl::sub(weightUpdateCmd));
static cl::opt<ref::Rounding> roundingOpt(
    cl::cat(toolOptions), "rounding", cl::desc("rounding mode"),
    cl::values(clEnumValN(ref::Rounding::NearestEven, "nearest_even", ""),
               clEnumValN(ref::Rounding::Up, "up", ""),
               clEnumValN(ref::Rounding::Down, "down", ""),
               clEnumValN(ref::Rounding::TowardZero, "toward_zero", ""),
               clEnumValN(ref::Rounding::Stochastic, "stochastic",
                          "floor(v + u), u from --seed")),
    cl::init(ref::Rounding::NearestEven), cl::sub(quantizeCmd),
    cl::sub(requantizeCmd), cl::sub(postprocessCmd), cl::sub(weightUpdateCmd));
static cl::opt<uint64_t>
    seedOpt(cl::cat(toolOptions), "seed", cl::desc("stochastic rounding seed"),
            cl::init(0), cl::sub(quantizeCmd), cl::sub(requantizeCmd),
            cl::sub(postprocessCmd), cl::sub(weightUpdateCmd));
static cl::opt<std::string>
    bitsPerTileOpt(cl::cat(toolOptions), "bits-per-tile",
                   cl::desc("each tile's width (.npy, integers, the tile "
                            "grid's shape), instead of --bits"),
                   cl::init(""), cl::sub(quantizeCmd), cl::sub(requantizeCmd));
static cl::opt<std::string> toTileOpt(cl::cat(toolOptions), "to-tile",
                                      cl::desc("requantize: the new tile shape "
                                               "RxC"),
                                      cl::init(""), cl::sub(requantizeCmd));
static cl::opt<std::string> toDimsOpt(cl::cat(toolOptions), "to-dims",
                                      cl::desc("requantize: the new split dims "
                                               "(default: the two innermost)"),
                                      cl::init(""), cl::sub(requantizeCmd));
static cl::opt<int> toBitsOpt(cl::cat(toolOptions), "to-bits",
                              cl::desc("requantize: the new width (default: "
                                       "--bits)"),
                              cl::init(0), cl::sub(requantizeCmd));
static cl::opt<ref::QuantForm>
    toFormOpt(cl::cat(toolOptions), "to-form",
              cl::desc("requantize: the new form (default: --form)"),
              formValues(), cl::sub(requantizeCmd));
static cl::list<int64_t> permOpt(cl::cat(toolOptions), "perm",
                                 cl::desc("requantize: result dim i is input "
                                          "dim p_i (default: none)"),
                                 cl::CommaSeparated, cl::sub(requantizeCmd));
static cl::list<int64_t>
    strideOpt(cl::cat(toolOptions), "stride",
              cl::desc("conv2d: strides H,W (default 1,1)"), cl::CommaSeparated,
              cl::sub(conv2dCmd));
static cl::list<int64_t>
    dilationOpt(cl::cat(toolOptions), "dilation",
                cl::desc("conv2d: dilations H,W (default 1,1)"),
                cl::CommaSeparated, cl::sub(conv2dCmd));
static cl::list<int64_t>
    padOpt(cl::cat(toolOptions), "pad",
           cl::desc("conv2d: padding top,left,bottom,right (default 0)"),
           cl::CommaSeparated, cl::sub(conv2dCmd));
static cl::opt<bool> transA(cl::cat(toolOptions), "transpose-a",
                            cl::sub(matmulCmd));
static cl::opt<bool> transB(cl::cat(toolOptions), "transpose-b",
                            cl::sub(matmulCmd));
static cl::opt<bool> bf16Product(cl::cat(toolOptions), "bf16-scale-product",
                                 cl::sub(matmulCmd), cl::sub(conv2dCmd));
static cl::opt<double> lowOpt(cl::cat(toolOptions), "low", cl::init(0.01),
                              cl::sub(searchCmd));
static cl::opt<double> highOpt(cl::cat(toolOptions), "high", cl::init(0.05),
                               cl::sub(searchCmd));
static cl::opt<int> initOpt(cl::cat(toolOptions), "init", cl::init(8),
                            cl::sub(searchCmd));
static cl::opt<int> minOpt(cl::cat(toolOptions), "min", cl::init(2),
                           cl::sub(searchCmd));
static cl::opt<int> maxOpt(cl::cat(toolOptions), "max", cl::init(16),
                           cl::sub(searchCmd));
static cl::opt<int> stepOpt(cl::cat(toolOptions), "step", cl::init(1),
                            cl::desc("width step"), cl::sub(searchCmd));
static cl::opt<int> farStepOpt(cl::cat(toolOptions), "far-step", cl::init(0),
                               cl::desc("width step when the error is more "
                                        "than --far-margin beyond a threshold "
                                        "(0: off)"),
                               cl::sub(searchCmd));
static cl::opt<double> farMarginOpt(cl::cat(toolOptions), "far-margin",
                                    cl::init(0.0), cl::sub(searchCmd));
static cl::opt<bool> perTile(cl::cat(toolOptions), "per-tile",
                             cl::sub(searchCmd));

static cl::opt<double>
    layerScaleOpt(cl::cat(toolOptions), "layer-scale",
                  cl::desc("the layer scale to divide by (default: none)"),
                  cl::init(std::nan("")), cl::sub(postprocessCmd));
static cl::opt<bool> computeLayerScale(cl::cat(toolOptions),
                                       "compute-layer-scale",
                                       cl::desc("max|L| / qmax(bits)"),
                                       cl::sub(postprocessCmd));
static cl::opt<bool> reluOpt(cl::cat(toolOptions), "relu",
                             cl::desc("apply ReLU after the scale"),
                             cl::sub(postprocessCmd));
static cl::opt<double> lrOpt(cl::cat(toolOptions), "lr",
                             cl::desc("learning rate"), cl::init(0.01),
                             cl::sub(weightUpdateCmd));

static int fail(const Twine &msg) {
  errs() << "tq-ref: error: " << msg << "\n";
  return 1;
}

/// Reads a float tensor of rank >= 2.
static bool readTensor(StringRef path, ref::FloatTensor &t) {
  npy::Array a;
  std::string err;
  if (!npy::read(path.str(), a, err)) {
    fail(err);
    return false;
  }
  if (a.shape.size() < 2) {
    fail(path + ": expected a tensor of rank >= 2");
    return false;
  }
  t.shape = a.shape;
  t.data = a.toFloat();
  return true;
}

/// Builds a layout for a tensor of `rank` from a tile option ("RxC") and a
/// dims option ("d0,d1", empty: the two innermost); the names are for the
/// diagnostics.
static bool parseLayout(size_t rank, StringRef tile, StringRef dims,
                        StringRef tileName, StringRef dimsName,
                        ref::TileLayout &l) {
  SmallVector<StringRef> parts;
  tile.split(parts, 'x');
  if (parts.size() != 2 || parts[0].getAsInteger(10, l.tile[0]) ||
      parts[1].getAsInteger(10, l.tile[1]) || l.tile[0] <= 0 ||
      l.tile[1] <= 0) {
    fail("--" + tileName + " must be RxC with positive sizes, got '" + tile +
         "'");
    return false;
  }
  l.dims[0] = rank - 2;
  l.dims[1] = rank - 1;
  if (!dims.empty()) {
    parts.clear();
    dims.split(parts, ',');
    if (parts.size() != 2 || parts[0].getAsInteger(10, l.dims[0]) ||
        parts[1].getAsInteger(10, l.dims[1]) || l.dims[0] < 0 ||
        l.dims[0] >= l.dims[1] || l.dims[1] >= static_cast<int>(rank)) {
      fail("--" + dimsName + " must be d0,d1 with 0 <= d0 < d1 < rank, got '" +
           dims + "'");
      return false;
    }
  }
  return true;
}

/// Builds the layout from --tile and --dims for a tensor of `rank`.
static bool getLayout(size_t rank, ref::TileLayout &l) {
  return parseLayout(rank, tileOpt, dimsOpt, "tile", "dims", l);
}

static bool checkBits(int bits) {
  if (bits < 2 || bits > 16) {
    fail("bit width must be in [2, 16], got " + Twine(bits));
    return false;
  }
  return true;
}

/// The widths of a tensor of `shape` in `layout`: --bits, or with
/// --bits-per-tile one per tile, read from an integer array of the grid's
/// shape.
static bool getBits(const ref::Shape &shape, const ref::TileLayout &layout,
                    ref::BitsSpec &bits) {
  bits.uniform = bitsOpt;
  if (bitsPerTileOpt.empty())
    return checkBits(bitsOpt);
  if (bitsOpt.getNumOccurrences()) {
    fail("--bits and --bits-per-tile exclude each other");
    return false;
  }
  npy::Array a;
  std::string err;
  if (!npy::read(bitsPerTileOpt, a, err)) {
    fail(err);
    return false;
  }
  ref::Shape grid = ref::gridShape(shape, layout);
  if (a.shape != grid) {
    fail("--bits-per-tile: " + bitsPerTileOpt +
         " must have the tile grid's shape");
    return false;
  }
  for (float b : a.toFloat()) {
    if (b != std::floor(b)) {
      fail("--bits-per-tile: " + bitsPerTileOpt +
           " holds a width that is not an integer: " + formatv("{0}", b));
      return false;
    }
    if (!checkBits(static_cast<int>(b)))
      return false;
    bits.perTile.push_back(static_cast<int>(b));
  }
  return true;
}

static bool writeArray(const std::string &path, const npy::Array &a) {
  std::string err;
  if (!npy::write(path, a, err)) {
    fail(err);
    return false;
  }
  return true;
}

static int runQuantize() {
  ref::FloatTensor x;
  ref::TileLayout layout;
  ref::BitsSpec bits;
  if (!readTensor(inputs[0], x) || !getLayout(x.shape.size(), layout) ||
      !getBits(x.shape, layout, bits))
    return 1;
  ref::TiledTensor t =
      ref::quantizeTiled(x, layout, bits, formOpt, roundingOpt, seedOpt);
  ref::FloatTensor back = ref::dequantizeTiled(t);
  ref::Shape grid = ref::gridShape(x.shape, layout);
  std::vector<float> steps, offsets;
  std::vector<int32_t> points;
  for (const ref::TileParams &p : t.params) {
    steps.push_back(p.step());
    offsets.push_back(p.offset);
    points.push_back(p.pointPos);
  }
  if (!output.empty()) {
    if (!writeArray(output + ".q.npy",
                    npy::Array::from(npy::DType::I32, x.shape, t.q)) ||
        !writeArray(output + ".steps.npy",
                    npy::Array::from(npy::DType::F32, grid, steps)) ||
        !writeArray(output + ".offsets.npy",
                    npy::Array::from(npy::DType::F32, grid, offsets)) ||
        !writeArray(output + ".points.npy",
                    npy::Array::from(npy::DType::I32, grid, points)) ||
        !writeArray(output + ".deq.npy",
                    npy::Array::from(npy::DType::F32, x.shape, back.data)))
      return 1;
  }
  double err = ref::quantError(x.data.data(), back.data.data(), x.data.size());
  int64_t zeroTiles = 0;
  for (const ref::TileParams &p : t.params)
    zeroTiles += p.step() == 0.0f;
  outs() << "tiles: " << t.params.size() << " (" << zeroTiles
         << " all-zero), elements: " << x.data.size()
         << ", non-finite: " << t.nonFinite << "\n";
  outs() << "error (A3 diff_bit): " << format("%.6g", err) << "\n";
  return 0;
}

/// Writes p.q.npy, p.steps.npy and p.offsets.npy of `t`.
static bool writeTiled(const ref::TiledTensor &t) {
  if (output.empty())
    return true;
  ref::Shape grid = ref::gridShape(t.shape, t.layout);
  std::vector<float> steps, offsets;
  for (const ref::TileParams &p : t.params) {
    steps.push_back(p.step());
    offsets.push_back(p.offset);
  }
  return writeArray(output + ".q.npy",
                    npy::Array::from(npy::DType::I32, t.shape, t.q)) &&
         writeArray(output + ".steps.npy",
                    npy::Array::from(npy::DType::F32, grid, steps)) &&
         writeArray(output + ".offsets.npy",
                    npy::Array::from(npy::DType::F32, grid, offsets));
}

static int runRequantize() {
  ref::FloatTensor x;
  ref::TileLayout from, to;
  ref::BitsSpec bits;
  if (!readTensor(inputs[0], x) || !getLayout(x.shape.size(), from) ||
      !getBits(x.shape, from, bits))
    return 1;
  if (toTileOpt.empty())
    return fail("requantize needs --to-tile");
  std::vector<int64_t> perm(permOpt.begin(), permOpt.end());
  if (!perm.empty()) {
    std::vector<int64_t> sorted = perm;
    llvm::sort(sorted);
    bool valid = sorted.size() == x.shape.size();
    for (size_t i = 0; valid && i < sorted.size(); ++i)
      valid = sorted[i] == static_cast<int64_t>(i);
    if (!valid)
      return fail("--perm must be a permutation of the " +
                  Twine(x.shape.size()) + " dims");
  }
  int toBits = toBitsOpt ? toBitsOpt : bitsOpt;
  if (!parseLayout(x.shape.size(), toTileOpt, toDimsOpt, "to-tile", "to-dims",
                   to) ||
      !checkBits(toBits))
    return 1;
  ref::TiledTensor t =
      ref::quantizeTiled(x, from, bits, formOpt, roundingOpt, seedOpt);
  ref::BitsSpec newBits;
  newBits.uniform = toBits;
  ref::QuantForm form =
      toFormOpt.getNumOccurrences() ? toFormOpt.getValue() : formOpt.getValue();
  ref::TiledTensor r =
      ref::requantizeTiled(t, to, newBits, form, roundingOpt, seedOpt,
                           perm.empty() ? nullptr : &perm);
  return writeTiled(r) ? 0 : 1;
}

static int runMatmul() {
  if (inputs.size() != 2)
    return fail("matmul takes two inputs");
  ref::FloatTensor a, b;
  if (!readTensor(inputs[0], a) || !readTensor(inputs[1], b))
    return 1;
  ref::TileLayout la, lb;
  if (!getLayout(a.shape.size(), la) || !getLayout(b.shape.size(), lb))
    return 1;
  int bitsB = bitsBOpt ? bitsBOpt : bitsOpt;
  if (!checkBits(bitsOpt) || !checkBits(bitsB))
    return 1;
  ref::BitsSpec ba, bb;
  ba.uniform = bitsOpt;
  bb.uniform = bitsB;
  ref::TiledTensor ta = ref::quantizeTiled(a, la, ba, formOpt);
  ref::TiledTensor tb = ref::quantizeTiled(b, lb, bb, formOpt);
  ref::MatmulOperand oa{&ta, nullptr, transA}, ob{&tb, nullptr, transB};
  ref::FloatTensor c;
  ref::Status st = ref::matmulTiled(oa, ob, bf16Product, c);
  if (!st.ok)
    return fail(st.message);
  if (!output.empty() &&
      !writeArray(output, npy::Array::from(npy::DType::F32, c.shape, c.data)))
    return 1;
  outs() << "matmul: " << ref::numElements(c.shape) << " outputs\n";
  return 0;
}

/// Copies a list option of `n` values, each at least `minimum`, into `out`
/// if it was given.
static bool getList(const cl::list<int64_t> &opt, StringRef name, size_t n,
                    int64_t minimum, int64_t *out) {
  if (opt.empty())
    return true;
  bool valid = opt.size() == n;
  for (int64_t v : opt)
    valid &= v >= minimum;
  if (!valid) {
    fail("--" + name + " takes " + Twine(n) + " values of at least " +
         Twine(minimum));
    return false;
  }
  llvm::copy(opt, out);
  return true;
}

static int runConv2d() {
  if (inputs.size() != 2)
    return fail("conv2d takes two inputs: an NHWC input and a KRSC filter");
  ref::FloatTensor x, w;
  if (!readTensor(inputs[0], x) || !readTensor(inputs[1], w))
    return 1;
  if (x.shape.size() != 4 || w.shape.size() != 4 || x.shape[3] != w.shape[3])
    return fail("conv2d needs an NHWC input and a KRSC filter with the same C");
  ref::Conv2DParams params;
  if (!getList(strideOpt, "stride", 2, 1, params.stride) ||
      !getList(dilationOpt, "dilation", 2, 1, params.dilation) ||
      !getList(padOpt, "pad", 4, 0, params.pad))
    return 1;
  ref::TileLayout layout;
  int bitsB = bitsBOpt ? bitsBOpt : bitsOpt;
  if (!parseLayout(4, tileOpt, "0,3", "tile", "dims", layout) ||
      !checkBits(bitsOpt) || !checkBits(bitsB))
    return 1;
  ref::BitsSpec bx, bw;
  bx.uniform = bitsOpt;
  bw.uniform = bitsB;
  ref::TiledTensor tx = ref::quantizeTiled(x, layout, bx, formOpt);
  ref::TiledTensor tw = ref::quantizeTiled(w, layout, bw, formOpt);
  ref::FloatTensor y;
  ref::Status st = ref::conv2dTiled(tx, tw, params, bf16Product, y);
  if (!st.ok)
    return fail(st.message);
  if (!output.empty() &&
      !writeArray(output, npy::Array::from(npy::DType::F32, y.shape, y.data)))
    return 1;
  outs() << "conv2d: " << ref::numElements(y.shape) << " outputs\n";
  return 0;
}

static int runSearch() {
  ref::FloatTensor x;
  if (!readTensor(inputs[0], x))
    return 1;
  ref::BitSearchOptions o;
  o.low = lowOpt;
  o.high = highOpt;
  o.init = initOpt;
  o.min = minOpt;
  o.max = maxOpt;
  o.step = stepOpt;
  o.farStep = farStepOpt;
  o.farMargin = farMarginOpt;
  if (o.step < 1 || o.farStep < 0 || o.farMargin < 0)
    return fail("--step must be at least 1, --far-step and --far-margin at "
                "least 0");
  if (!(o.low >= 0 && o.low < o.high))
    return fail("thresholds must satisfy 0 <= low < high");
  if (!(2 <= o.min && o.min <= o.init && o.init <= o.max && o.max <= 16))
    return fail("bit widths must satisfy 2 <= min <= init <= max <= 16");
  ref::TileLayout layout;
  if (!getLayout(x.shape.size(), layout))
    return 1;
  if (perTile) {
    for (const ref::BitSearchResult &r :
         ref::searchBitWidthPerTile(x, layout, formOpt, o))
      outs() << "bits " << r.bits << " error " << format("%.17g", r.error)
             << "\n";
    return 0;
  }
  ref::BitSearchResult r = ref::searchBitWidthTiled(x, layout, formOpt, o);
  outs() << "bits " << r.bits << " error " << format("%.17g", r.error)
         << " iterations " << r.iterations << "\n";
  return 0;
}

static int runPostprocess() {
  ref::FloatTensor acc;
  ref::TileLayout layout;
  if (!checkBits(bitsOpt) || !readTensor(inputs[0], acc) ||
      !getLayout(acc.shape.size(), layout))
    return 1;
  std::optional<float> given;
  if (!std::isnan(layerScaleOpt))
    given = static_cast<float>(layerScaleOpt);
  if (given && computeLayerScale)
    return fail("--layer-scale and --compute-layer-scale exclude each other");
  ref::BitsSpec bits;
  bits.uniform = bitsOpt;
  ref::PostprocessResult r =
      ref::postprocess(acc, given, computeLayerScale,
                       reluOpt ? ref::Activation::Relu : ref::Activation::None,
                       layout, bits, formOpt, roundingOpt, seedOpt);
  if (!writeTiled(r.out))
    return 1;
  outs() << "layer scale " << format("%.9g", r.layerScale) << "\n";
  return 0;
}

static int runWeightUpdate() {
  if (inputs.size() != 2)
    return fail("weight-update takes two inputs (w, dw)");
  ref::FloatTensor w, dw;
  ref::TileLayout layout;
  if (!checkBits(bitsOpt) || !readTensor(inputs[0], w) ||
      !readTensor(inputs[1], dw) || !getLayout(w.shape.size(), layout))
    return 1;
  if (w.shape != dw.shape)
    return fail("w and dw must have the same shape");
  ref::BitsSpec bits;
  bits.uniform = bitsOpt;
  ref::TiledTensor tw = ref::quantizeTiled(w, layout, bits, formOpt);
  ref::TiledTensor updated = ref::weightUpdate(
      tw, dw, static_cast<float>(lrOpt), roundingOpt, seedOpt);
  return writeTiled(updated) ? 0 : 1;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  tq::initToolOptions({&toolOptions});
  cl::ParseCommandLineOptions(argc, argv,
                              "tile-quant reference numerics on .npy files\n");
  if (quantizeCmd)
    return runQuantize();
  if (requantizeCmd)
    return runRequantize();
  if (matmulCmd)
    return runMatmul();
  if (conv2dCmd)
    return runConv2d();
  if (searchCmd)
    return runSearch();
  if (postprocessCmd)
    return runPostprocess();
  if (weightUpdateCmd)
    return runWeightUpdate();
  return fail("expected a command: quantize, requantize, matmul, conv2d, "
              "search, postprocess or weight-update (see --help)");
}
