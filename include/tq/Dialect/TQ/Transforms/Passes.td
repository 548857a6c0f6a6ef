//===- Passes.td - tile-quant dialect passes ----------------*- tablegen -*-===//
#ifndef TQ_DIALECT_TQ_TRANSFORMS_PASSES_TD
#define TQ_DIALECT_TQ_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TQQuantizeConstants : Pass<"tq-quantize-constants"> {
  let summary = "Quantize constant tensors at compile time into tq.constant";
  let description = [{
    Replaces every `tq.quantize` whose input is a float constant (and whose
    scales and bit width are not run-time values) by a `tq.constant` holding
    the quantized data and the per-tile scales, offsets and bit widths, as
    computed by the reference numerics library. Constant weights are thus
    quantized once, bit-identically to the golden model.

    Example:

    ```mlir
    %c = arith.constant dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>
    %q = tq.quantize %c : tensor<2x2xf32>
           -> !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = pow2>
    ```

    becomes

    ```mlir
    %q = tq.constant {scales = dense<3.125000e-02> : tensor<1x1xf32>,
                      values = dense<[[32, -64], [16, 127]]> : tensor<2x2xi8>}
           : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = pow2>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 24",
           "Leave constants with more elements than this as tq.quantize">
  ];
  let dependentDialects = ["::mlir::tq::TQDialect"];
}

def TQSplitGroupedConvs : Pass<"tq-split-grouped-convs"> {
  let summary = "Split grouped convolutions whose groups are wide enough to tile";
  let description = [{
    The importer keeps a grouped or depthwise convolution as one
    `linalg.conv_2d_ngchw_gfchw` (input `[N, G, C/G, H, W]`, filter
    `[G, K/G, C/G, R, S]`), so that a network of depthwise layers stays a
    few hundred ops. tile-quant quantizes plain convolutions, so this pass
    rewrites a grouped convolution whose groups contract at least
    `min-channels` input channels each into one
    `linalg.conv_2d_nchw_fchw` per group, on slices of the input and the
    filter (a constant filter is split into constants, quantized at
    compile time), inserted into the grouped result. Narrower groups, and
    depthwise convolutions (one channel per group), stay one op and run in
    float: their V×V tiles along C would be mostly padding.

    ```mlir
    %y = linalg.conv_2d_ngchw_gfchw ins(%x, %w : tensor<1x2x8x10x10xf32>,
           tensor<2x4x8x3x3xf32>) outs(%i : tensor<1x2x4x8x8xf32>) -> ...
    // becomes, for g = 0 and 1,
    %xg = tensor.extract_slice %x[0, g, 0, 0, 0] [1, 1, 8, 10, 10] ...
            to tensor<1x8x10x10xf32>
    %yg = linalg.conv_2d_nchw_fchw ins(%xg, %wg : ...) outs(%ig : ...)
    %y1 = tensor.insert_slice %yg into %y0[0, g, 0, 0, 0] [1, 1, 4, 8, 8] ...
    ```
  }];
  let options = [
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"4",
           "Split groups of at least this many input channels (0: all)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TQChooseSplitDims : Pass<"tq-choose-split-dims"> {
  let summary = "Infer the role of each compute operand and choose its split dims";
  let description = [{
    Annotates every compute op that tile-quant quantizes (`linalg.matmul`
    and its transposed forms, `linalg.batch_matmul`,
    `linalg.conv_2d_nhwc_fhwc`, `linalg.conv_2d_nchw_fchw`) with the role
    of its two inputs
    (`tq.roles`) and the dims their tiles split (`tq.split_dims`), SPEC T2:

    | operand                | role                      | split dims |
    |------------------------|---------------------------|------------|
    | matmul lhs / rhs       | by producer (see below)   | the two innermost (rows, cols) |
    | conv input `[N,H,W,C]` | activation / gradient     | (N, C) = [0, 3] |
    | conv filter `[K,R,S,C]`| weight                    | (K, C) = [0, 3] |
    | conv input `[N,C,H,W]` | activation / gradient     | (N, C) = [0, 1] |
    | conv filter `[K,C,R,S]`| weight                    | (K, C) = [0, 1] |

    Roles come from how a value is produced: constants and function
    arguments marked `tq.parameter` are weights; a function argument may
    state its role (`{tq.role = #tq.role<output_grad>}`); reshapes,
    transposes, slices and casts keep their source's role; the product of a
    gradient with a weight is an activation gradient, with an activation a
    weight gradient; everything else is an activation.

    Attributes already present on an op are kept (that is how a user
    overrides the choice for one op); malformed ones are an error. The
    options `act-dims`, `weight-dims` and `grad-dims` override the split
    dims of every operand of that role (of the rank they fit).

    ```mlir
    %y = linalg.matmul {tq.roles = [#tq.role<activation>, #tq.role<weight>],
                        tq.split_dims = [array<i64: 0, 1>, array<i64: 0, 1>]}
           ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) ...
    ```
  }];
  let options = [
    ListOption<"actDims", "act-dims", "int64_t",
               "Split dims of activations, e.g. 0,3">,
    ListOption<"weightDims", "weight-dims", "int64_t",
               "Split dims of weights">,
    ListOption<"gradDims", "grad-dims", "int64_t",
               "Split dims of gradients">
  ];
  let dependentDialects = ["::mlir::tq::TQDialect"];
}

def TQInsertQuantization : Pass<"tq-insert-quantization"> {
  let summary = "Rewrite float compute ops into tiled quantized tq ops";
  let description = [{
    Replaces each compute op recognized by `tq-choose-split-dims` (using its
    `tq.roles` / `tq.split_dims`, or computing them) by `tq.quantize` of its
    inputs and a `tq.matmul` / `tq.conv2d`; a non-zero init is added back in
    f32. Zero padding (`tensor.pad`) in front of a convolution becomes the
    padding of `tq.conv2d`. An NCHW convolution reaches `tq.conv2d` through
    `tq.transpose` of its quantized operands (C innermost: the split dims
    keep their order, so every scale is reused) and its NHWC result is
    transposed back in f32. Bit widths follow the operand's role; tiles are
    `tile`×`tile`; the storage type is the narrowest of i4, i8, i16.
    Layers are named by their location when it is a name (an ONNX node),
    else `function#ordinal` (the order of compute ops in the function).

    `granularity` chooses the subsets that get their own parameters (A1):
    `tile` (V×V), `vector` (1×V along the contracted dim, the per-vector
    scaling of the prior art), `channel` (a whole row or column: per output
    channel for weights, per sample for activations) or `tensor` (one
    scale per 2-D slice). All are `!tq.tiled` types, so policies can be
    compared on the same program.

    `policy` chooses where bit widths come from:

    | policy     | constant operands        | other operands |
    |------------|--------------------------|----------------|
    | `static`   | `weight-bits` etc.       | `act-bits`, `grad-bits` |
    | `adaptive` | the role's width, refined at compile time by `tq-adaptive-bit-width` | `tq.adaptive_bit_width` at run time (`low`, `high`, `min-bits`, `max-bits`, `per-tile`); with `run-time-search=false`, `act-bits`, `grad-bits` |
    | `schedule` | by epoch (T8)            | by epoch: `schedule = 0-75:4,76-86:8` selects the width from the function argument marked `tq.epoch`; later epochs keep the last width |

    With `quantize=weights` (or `activations`) only one operand of a matmul
    is quantized: the mixed case of SPEC T5. Ops listed in `keep-float`, or
    carrying `tq.keep_float`, stay in float, and so do the gradient GEMMs
    of a training step (`tq.gradient_of`) whose forward layer does.

    A K-tile whose int32 partial sum could overflow for the chosen widths is
    an error naming the op.
  }];
  let options = [
    Option<"tile", "tile", "int64_t", /*default=*/"32",
           "Tile size V (tiles are VxV)">,
    Option<"actBits", "act-bits", "int64_t", /*default=*/"8",
           "Bit width of activations">,
    Option<"weightBits", "weight-bits", "int64_t", /*default=*/"8",
           "Bit width of weights">,
    Option<"gradBits", "grad-bits", "int64_t", /*default=*/"8",
           "Bit width of gradients">,
    Option<"gradRounding", "grad-rounding", "::mlir::tq::RoundingMode",
           /*default=*/"::mlir::tq::RoundingMode::nearest_even",
           "Rounding of gradients: nearest_even, or stochastic "
           "(seeded, deterministic; offset at run time by the function's "
           "i32 argument marked tq.iteration, if any)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tq::RoundingMode::nearest_even,
                        "nearest_even", "round to nearest, ties to even"),
             clEnumValN(::mlir::tq::RoundingMode::stochastic, "stochastic",
                        "round up with probability frac(v)"))}]>,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of the first stochastic rounding (the next ones count up)">,
    Option<"scaleKind", "scale", "::mlir::tq::ScaleKind",
           /*default=*/"::mlir::tq::ScaleKind::f32",
           "Scale representation of every tile",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tq::ScaleKind::f32, "f32", "f32 scale"),
             clEnumValN(::mlir::tq::ScaleKind::pow2, "pow2",
                        "power-of-two point position"),
             clEnumValN(::mlir::tq::ScaleKind::pow2_f32, "pow2_f32",
                        "point position and f32 factor"))}]>,
    Option<"operands", "quantize", "::mlir::tq::QuantizeOperands",
           /*default=*/"::mlir::tq::QuantizeOperands::all",
           "Which matmul operands to quantize",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tq::QuantizeOperands::all, "all",
                        "both operands"),
             clEnumValN(::mlir::tq::QuantizeOperands::weights, "weights",
                        "only weights (mixed case)"),
             clEnumValN(::mlir::tq::QuantizeOperands::activations,
                        "activations", "only non-weights (mixed case)"))}]>,
    Option<"granularity", "granularity", "::mlir::tq::Granularity",
           /*default=*/"::mlir::tq::Granularity::tile",
           "Subsets with their own parameters (SPEC A1)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tq::Granularity::tile, "tile", "VxV tiles"),
             clEnumValN(::mlir::tq::Granularity::vector, "vector",
                        "1xV vectors along the contracted dim"),
             clEnumValN(::mlir::tq::Granularity::channel, "channel",
                        "one scale per row/column (per channel or batch)"),
             clEnumValN(::mlir::tq::Granularity::tensor, "tensor",
                        "one scale per 2-D slice"))}]>,
    Option<"policy", "policy", "::mlir::tq::BitWidthPolicy",
           /*default=*/"::mlir::tq::BitWidthPolicy::fixed",
           "Where bit widths come from",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tq::BitWidthPolicy::fixed, "static",
                        "per role (act-bits, weight-bits, grad-bits)"),
             clEnumValN(::mlir::tq::BitWidthPolicy::adaptive, "adaptive",
                        "from the quantization error (A4)"),
             clEnumValN(::mlir::tq::BitWidthPolicy::schedule, "schedule",
                        "from the epoch (T8), see `schedule`"))}]>,
    Option<"low", "low", "double", /*default=*/"0.005",
           "policy=adaptive: lower error threshold">,
    Option<"high", "high", "double", /*default=*/"0.02",
           "policy=adaptive: upper error threshold">,
    Option<"minBits", "min-bits", "int64_t", /*default=*/"2",
           "policy=adaptive: smallest width">,
    Option<"maxBits", "max-bits", "int64_t", /*default=*/"8",
           "policy=adaptive: largest width (sets the storage type)">,
    Option<"perTile", "per-tile", "bool", /*default=*/"false",
           "policy=adaptive: one width per tile">,
    Option<"runTimeSearch", "run-time-search", "bool", /*default=*/"true",
           "policy=adaptive: search the widths of the tensors computed at "
           "run time too; false keeps them at act-bits and grad-bits and "
           "searches only the constants' widths (at compile time)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "policy=schedule: epochs and widths, e.g. 0-75:4,76-86:8">,
    ListOption<"tileCandidates", "tile-candidates", "int64_t",
               "policy=adaptive: choose each layer's tile size among these: "
               "the one whose constant operand needs the fewest bits per "
               "element in the error band, its tile scales included (ties: "
               "the larger tile)">,
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "Calibration file (A8) written by tq-export-calibration: its "
           "layers are quantized as recorded">,
    ListOption<"keepFloat", "keep-float", "std::string",
               "Op names (linalg.batch_matmul) or layer names (a name "
               "location, or function#ordinal) to leave in float; each must "
               "match one in the input">,
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"4",
           "Leave in float a convolution with fewer input channels (per "
           "group), or a matmul with a shorter contraction, than this: its "
           "tiles would be mostly padding (a 1-channel image padded to "
           "V = 32 channels is 32 times the work), with the gradient GEMMs "
           "of such a layer in a training step; 0 quantizes every layer">
  ];
  let dependentDialects = ["::mlir::tq::TQDialect",
                           "::mlir::arith::ArithDialect"];
}

def TQFoldTransposes : Pass<"tq-fold-transposes"> {
  let summary = "Fold transposes into matmul operands and share quantizations (T4)";
  let description = [{
    Makes each tensor quantized once, with transposed uses reading it
    through the matmul's transpose flags (SPEC T4, T7):

    1. `tq.matmul` of `tq.quantize(linalg.transpose(%x))` or of
       `tq.transpose(%q)` (swapping the two innermost dims) reads `%x` /
       `%q` with the operand's transpose flag flipped instead.
       Any other `tq.quantize(linalg.transpose(%x))` becomes
       `tq.transpose(tq.quantize(%x))` where `tq.transpose` can move the
       tiles (square tiles, or split dims kept in order): the backward
       convolutions of a training step read the forward's tiles this way.
    2. When one value is quantized into several types, the first
       quantization is kept and the others become `tq.requantize` of it: the
       float data of a layer is gone once it is quantized, as on the PPU.

    With square tiles a tensor and its transpose have the same tiled type,
    so step 2 finds nothing to requantize. With per-vector (1×V) tiles the
    forward pass needs the vectors along one dim and the transposed use
    along the other: each such use costs a requantization. Both counts are
    pass statistics; as Debian's LLVM is built without statistics, the
    `report` option also states them as a remark.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the counts">
  ];
  let statistics = [
    Statistic<"numFolded", "folded-transposes",
              "Transposes folded into matmul operands (scales reused)">,
    Statistic<"numRequantized", "requantizations",
              "Quantizations replaced by a requantization">
  ];
  let dependentDialects = ["::mlir::tq::TQDialect"];
}

def TQAdaptiveBitWidth : Pass<"tq-adaptive-bit-width"> {
  let summary = "Choose the bit width of constant tensors from their data (A3/A4)";
  let description = [{
    For every `tq.quantize` of a float constant (typically a weight), runs
    the bit-width search of SPEC A4 on the real data with the op's tiles and
    scale kind: quantize, measure the error `diff_bit` (A3), widen while it
    is above `high`, narrow while below `low`, within [`min-bits`,
    `max-bits`]. The result type gets the chosen width (and the narrowest
    storage for it); with `per-tile`, every tile gets its own width
    (`per_tile` type, widths as a constant operand), except in a tensor
    read through `tq.transpose` (a convolution filter's layout change),
    whose widths would have to be permuted with its tiles: it gets one
    width, and its record says so (`per_tile = "one width: ..."`).

    The choice and its error are recorded on the op (kept by
    `tq-quantize-constants`):

    ```mlir
    %w = tq.quantize %c {tq.bit_width = {bits = 6 : i64, error = 0.0061 : f64}}
           : tensor<256x128xf32> -> !tq.tiled<256x128xi8:6, ...>
    %v = tq.quantize %d bits(%b : tensor<8x4xi32>)
           {tq.bit_width = {average_bits = 5.25 : f64, max_error = 0.009 : f64}}
           : tensor<256x128xf32> -> !tq.tiled<256x128xi8:per_tile, ...>
    ```

    With `reuse` (SPEC A5), a tensor whose mean and max of |x| are within
    `reuse-mean` / `reuse-max` (relative) of the previous searched tensor's,
    in program order, takes that tensor's width without a search; the record
    then says `reused = true`.

    The width is capped where a consumer `tq.matmul` / `tq.conv2d` could
    overflow its int32 partial sum. Quantizations whose result feeds other
    ops than these and `tq.dequantize` keep their width.
  }];
  let options = [
    Option<"low", "low", "double", /*default=*/"0.005",
           "Lower error threshold: narrow below it">,
    Option<"high", "high", "double", /*default=*/"0.02",
           "Upper error threshold: widen above it">,
    Option<"initBits", "init-bits", "int64_t", /*default=*/"8",
           "Width the search starts from">,
    Option<"minBits", "min-bits", "int64_t", /*default=*/"2",
           "Smallest width">,
    Option<"maxBits", "max-bits", "int64_t", /*default=*/"8",
           "Largest width">,
    Option<"step", "step", "int64_t", /*default=*/"1",
           "Width change per step">,
    Option<"farStep", "far-step", "int64_t", /*default=*/"0",
           "Larger step when the error is far from the band (0: off)">,
    Option<"farMargin", "far-margin", "double", /*default=*/"0.0",
           "Distance from the threshold beyond which far-step applies">,
    Option<"perTile", "per-tile", "bool", /*default=*/"false",
           "Choose one width per tile instead of per tensor">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per tensor with its width and error">,
    Option<"reuse", "reuse", "bool", /*default=*/"false",
           "Reuse the previous tensor's width when its statistics are close "
           "(SPEC A5)">,
    Option<"reuseMean", "reuse-mean", "double", /*default=*/"0.1",
           "reuse: largest relative difference of mean |x|">,
    Option<"reuseMax", "reuse-max", "double", /*default=*/"0.1",
           "reuse: largest relative difference of max |x|">
  ];
  let dependentDialects = ["::mlir::tq::TQDialect",
                           "::mlir::arith::ArithDialect"];
}

def TQExportCalibration : Pass<"tq-export-calibration"> {
  let summary = "Write each layer's quantization parameters to a JSON file (A8)";
  let description = [{
    Writes, for every `tq.matmul` / `tq.conv2d`, the tiled type of each
    operand, its per-tile widths, the configuration of its run-time
    bit-width search and the record of the compile-time search, to `file`
    ("-" for standard output). `tq-insert-quantization{calibration=...}`
    (and `tq-quantize{calibration=...}`) reads the file back to quantize
    without searching again; the format is documented in
    `tq/Dialect/TQ/Transforms/Calibration.h`. Layers are named by their
    location when it is a name, else `function#ordinal`.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Output file (- for stdout)">
  ];
}

def TQFusePostprocess : Pass<"tq-fuse-postprocess"> {
  let summary = "Fuse activation and requantization of layer outputs (T6)";
  let description = [{
    The output of a tiled `tq.matmul` / `tq.conv2d` that is quantized again
    for the next layer, directly or after a ReLU (`linalg.generic` computing
    `max(x, 0)`), becomes one `tq.postprocess`: nonlinearity, then
    requantization into tiles with fresh scales (SPEC T6), which the
    backends run in the accumulator's loop nest (A7).

    ```mlir
    %acc = tq.matmul %x, %w : ... -> tensor<64x128xf32>
    %r = linalg.generic ... max(%acc, 0) ...
    %q = tq.quantize %r : tensor<64x128xf32> -> !tq.tiled<...>
    ```

    becomes

    ```mlir
    %acc = tq.matmul %x, %w : ... -> tensor<64x128xf32>
    %q, %s = tq.postprocess %acc {activation = #tq.activation<relu>}
               : tensor<64x128xf32> -> !tq.tiled<...>
    ```
  }];
  let dependentDialects = ["::mlir::tq::TQDialect"];
  let statistics = [
    Statistic<"numFused", "fused-outputs", "Layer outputs fused into tq.postprocess">,
    Statistic<"numRelu", "fused-relus", "ReLUs fused into tq.postprocess">
  ];
}

def TQTrainingStep : Pass<"tq-training-step", "::mlir::ModuleOp"> {
  let summary = "Generate a training step from a float forward function";
  let description = [{
    From a forward function in the float form `tq-import-onnx` produces
    (`function`, one `[B, K]` f32 result: the logits), this pass adds two
    functions to the module:

    - `@train_step(params..., momenta..., inputs..., labels, lr, epoch,
      iteration) -> (new params..., new momenta..., loss, logits)`: the forward pass,
      the mean softmax cross-entropy against `labels` (`tensor<Bxi64>`
      class indices), the gradients of every parameter, and one SGD step
      with momentum μ and weight decay λ on f32 master weights:
      `v ← μ·v + g + λ·p`, `p ← p − lr·v` (`lr` is a `tensor<f32>`; with
      `momentum=0` there are no momenta). `epoch` (an `i32` from 0, marked
      `tq.epoch`) is what `tq-quantize policy=schedule` keys the widths on
      (SPEC T8); `iteration` (an `i32`, marked `tq.iteration`) is what
      `tq-quantize grad-rounding=stochastic` offsets its seeds by, so that
      every step rounds with fresh noise. The inputs with the batch as
      their first dim and `labels` are marked `tq.batch`: one sample per
      row, which `tq-cpu-split-batch` shares among the threads;
    - `@predict(params..., inputs..., epoch) -> logits`: the forward pass
      with the parameters as arguments;
    - `@initial_parameters() -> (params...)`: their values in the forward
      function, where training starts from.

    The forward function stays, unless `keep-forward=false` (as
    `tq-train` sets: `policy=schedule` needs an epoch argument in every
    function it quantizes).

    The parameters are the f32 tensor constants the function uses (or
    those named in `parameters`), in program order; each becomes an argument marked `tq.parameter` and named
    `tq.name` after the constant's location (the ONNX initializer).

    Gradients are derived op by op (reverse mode): element-wise
    `linalg.generic` bodies of arith and math ops (bias, ReLU, residual
    adds, sigmoid, tanh, frozen normalization), broadcasts (their gradient
    is reduced over the broadcast dims), `linalg.matmul`,
    `linalg.conv_2d_nchw_fchw` (any stride and dilation), NCHW max and sum
    pooling (a max routes dY to the first maximum of each window, as torch
    does), reshapes, pads, slices and transposes. ReLU's gradient reads
    its output (0 where it is at most 0, else dY, as torch does). The
    gradient GEMMs are `linalg.matmul`s on transposed operands marked with
    their roles (SPEC T2, T7): `dX = dY·Wᵀ` and `dW = Xᵀ·dY`; when the
    forward product reads `Wᵀ` (a Gemm with transB), `dW = dYᵀ·X` in W's
    layout (the same sums, without transposing the result). A
    convolution with unit strides and dilations gets two convolutions, also
    marked: `dW = (Xᵀ ⋆ dYᵀ)ᵀ`, whose contraction is the batch, and
    `dX = pad(dY, K − 1) ⋆ flip(W)ᵀ`, for the source of the input's padding;
    other convolutions get `dW = dYᵀ·im2col(X)` and `dX = col2im(dY·W)`.
    `tq-quantize` then quantizes all three roles on V×V tiles, and
    `tq-fold-transposes` reads the stored tiles transposed (SPEC T4): a
    convolution's `Xᵀ` reads the forward's tiles of X. A max pool whose
    windows do not overlap routes dY in one generic over its windows; when
    its input is a ReLU's output that the pool alone reads, that generic
    also applies the ReLU's rule and gives the gradient of the ReLU's input
    (the same bits, without a pass of its own). An op on the path with no
    rule is an error naming it.

    Each forward GEMM is numbered (`tq.layer`), and each gradient GEMM
    carries the number of the one it differentiates (`tq.gradient_of`):
    `tq-quantize` leaves the gradients of a layer it leaves in float in
    float too.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The forward function">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "SGD momentum μ in [0, 1)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 weight decay λ >= 0">,
    Option<"keepForward", "keep-forward", "bool", /*default=*/"true",
           "Keep the forward function">,
    ListOption<"parameters", "parameters", "std::string",
               "Train only the constants of these names (default: all f32 "
               "tensor constants); tq-train passes the model's initializers, "
               "so that tables the importer builds (pooling divisors) stay "
               "constant">
  ];
  let dependentDialects = ["::mlir::tq::TQDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def TQUpdateInterval : Pass<"tq-update-interval", "::mlir::ModuleOp"> {
  let summary = "Keep quantization parameters across training iterations (A6)";
  let description = [{
    Lets the caller of a training step keep each operand's quantization
    parameters for several iterations and recompute them only when its
    target iteration interval ends (SPEC A6). In `function`, every
    `tq.quantize` that computes its steps from its data with a fixed bit
    width (of weights only with `weights-only`) gets its steps from the
    caller instead:

    - the function takes, after its arguments, `refresh`
      (`tensor<Nxi32>`, one flag per such quantization) and the steps of
      each (`tensor<grid x f32>`, named `<layer> weight #i.steps` or
      `<layer> data #i.steps` for activations and gradients);
    - where `refresh[i]` is not 0 the steps are computed from the data, as
      before (the same bits); elsewhere the given ones are used, and
      values beyond their range saturate;
    - the steps used are returned after the results, in the same order and
      with the same names.

    `tq-train --update-interval` computes the intervals from the returned
    steps. Quantizations with a run-time width (`policy=adaptive` or
    `schedule`) are left as they are; with none to keep, the function is
    unchanged.

    ```mlir
    %f = tq.quantize %x : tensor<64x128xf32> -> !t
    // becomes
    %r = tensor.extract %refresh[%c0] : tensor<3xi32>
    %due = arith.cmpi ne, %r, %c0_i32 : i32
    %f = tq.quantize %x scales(%steps0 : tensor<4x8xf32>) refresh(%due)
           : tensor<64x128xf32> -> !t
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"train_step\"",
           "The training step">,
    Option<"weightsOnly", "weights-only", "bool", /*default=*/"false",
           "Keep the parameters of weights only (activations and gradients "
           "are then quantized afresh every iteration)">
  ];
  let dependentDialects = ["::mlir::tq::TQDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TQPartitionPPU : Pass<"tq-partition-ppu", "::mlir::ModuleOp"> {
  let summary = "Split functions into PPU kernels and host functions";
  let description = [{
    A quantized program mixes tile computations (`tq` ops) with the float
    glue between layers (bias adds, pooling, layout transposes), which the
    PPU does not run. This pass splits every function that has `tq` ops
    into a sequence of segments, each a new public function:

    Each outlined function is marked `tq.outlined`, and:

    - a *kernel* (`tq.device = "ppu"`) holds a run of `tq` ops; the
      `tq-to-ppu` pipeline compiles it to an instruction stream;
    - a *host* function (`tq.device = "cpu"`) holds a run of the other ops;
      `tq-to-cpu` compiles it.

    The function itself becomes the schedule (`tq.schedule`): a call of
    each segment in order. A function with nothing for the PPU stays whole
    and is marked `tq.device = "cpu"`. Segments are formed by list scheduling in
    program order, switching device only when nothing of the current
    device is ready, so their number is small and each is convex. Constants
    and `tensor.empty` are cloned into every segment that uses them.

    Only tensors cross between segments: a `!tq.tiled` value that another
    segment reads is made again there (its producers back to tensors are
    cloned; quantization is deterministic, so the bits are the same). A
    returned `!tq.tiled` value is an error. A run-time bit width (an `i32`)
    crosses as a `tensor<i32>`, which a kernel reads as a width input.

    A `tq` op the PPU cannot run stays on the host (the CPU backend runs
    every `tq` op), and so does every `tq` op that reads its tiled results:
    batched (3-D) or mixed products, stochastic rounding, given scales or
    per-tile widths, offsets, `pow2_f32` scales. The run-time bit-width
    search (`tq.adaptive_bit_width`, A4) runs on the host too, but its
    result is only a width: the quantization at that width and the layers
    it feeds run on the PPU.

    Before splitting, a layout transpose of a quantized tensor
    (`tq.transpose(tq.quantize(x))`, one width) becomes a float transpose
    on the host followed by the quantization, which selects the same tiles
    and hence gives the same bits.

    ```mlir
    func.func @f(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
      %q = tq.quantize %x : ...
      %y = tq.matmul %q, %w : ... -> tensor<8x4xf32>
      %r = linalg.generic ... relu(%y) ...
      return %r : tensor<8x4xf32>
    }
    ```

    becomes

    ```mlir
    func.func @f(%x: tensor<8x16xf32>) -> tensor<8x4xf32>
        attributes {tq.schedule} {
      %0 = call @f_ppu0(%x) : (tensor<8x16xf32>) -> tensor<8x4xf32>
      %1 = call @f_cpu1(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      return %1 : tensor<8x4xf32>
    }
    func.func @f_ppu0(...) attributes {tq.device = "ppu"} { ... }
    func.func @f_cpu1(...) attributes {tq.device = "cpu"} { ... }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "PPU kernels outlined">,
    Statistic<"numHost", "host-functions", "Host functions outlined">,
    Statistic<"numOnHost", "tq-ops-on-host",
              "tq ops the PPU cannot run, left on the host">,
    Statistic<"numHoisted", "hoisted-transposes",
              "Layout transposes moved to the host before quantization">
  ];
}

#endif // TQ_DIALECT_TQ_TRANSFORMS_PASSES_TD
