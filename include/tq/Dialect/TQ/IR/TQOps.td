//===- TQOps.td - tile-quant operations ---------------------*- tablegen -*-===//
#ifndef TQ_OPS_TD
#define TQ_OPS_TD

include "tq/Dialect/TQ/IR/TQDialect.td"
include "tq/Dialect/TQ/IR/TQEnums.td"
include "tq/Dialect/TQ/IR/TQTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

def TQ_FloatTensor : RankedTensorOf<[AnyFloat]>;
def TQ_TiledOrFloat : AnyTypeOf<[TQ_TiledTensor, TQ_FloatTensor]>;
// A run-time bit width: one for the tensor (i32) or one per tile.
def TQ_BitWidthValue : AnyTypeOf<[I32, RankedTensorOf<[I32]>]>;

//===----------------------------------------------------------------------===//
// quantize / dequantize / requantize
//===----------------------------------------------------------------------===//

def TQ_QuantizeOp : TQ_Op<"quantize", [Pure, AttrSizedOperandSegments]> {
  let summary = "quantize a float tensor into tiles, each with its own scale";
  let description = [{
    Splits `input` into the tiles of the result type and quantizes each tile
    with its own parameters (SPEC T3, A2). With `qmax = 2^(N-1) - 1`:

    ```
    step = f · 2^s                       (per tile, from the scale kind)
    q    = clamp(round((x - o) / step), -qmax, qmax)
    ```

    The parameters are computed from the tile's data unless `scales` (one
    f32 step per tile, in the tile-grid shape) is given; with `refresh` (an
    `i1`), only when it is false: a training step keeps its parameters for
    several iterations this way (SPEC A6, `tq-update-interval`). An
    all-zero tile has step 0 and quantizes to 0. NaN quantizes to 0 and
    ±Inf saturate to ±qmax; neither takes part in the scale computation.

    The bit width comes from the type, or from `bits`: an `i32` when the
    type's width is `?`, a tile-grid `tensor<...xi32>` when it is
    `per_tile` (both usually produced by `tq.adaptive_bit_width`).
    `rounding` defaults to nearest-even; `stochastic` needs a `seed`. With
    `seed_offset` (an `i32`), the noise is that of seed `seed` +
    `seed_offset` (modulo 2^32): a training step passes its iteration, so
    that each step rounds with fresh noise.

    ```mlir
    %q = tq.quantize %x : tensor<64x128xf32>
           -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
    %r = tq.quantize %x bits(%n : i32) rounding stochastic {seed = 7 : i64}
           : tensor<64x128xf32>
           -> !tq.tiled<64x128xi16:?, f32, tile = 32x32, dims = [0, 1], scale = pow2>
    %g = tq.quantize %dy rounding stochastic seed_offset(%iteration)
           {seed = 3 : i64} : tensor<64x128xf32>
           -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
    %k = tq.quantize %x scales(%s : tensor<2x4xf32>) refresh(%due)
           : tensor<64x128xf32>
           -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
    ```
  }];
  let arguments = (ins TQ_FloatTensor:$input,
                       Optional<RankedTensorOf<[F32]>>:$scales,
                       Optional<I1>:$refresh,
                       Optional<TQ_BitWidthValue>:$bits,
                       Optional<I32>:$seed_offset,
                       DefaultValuedAttr<TQ_RoundingModeAttr,
                         "::mlir::tq::RoundingMode::nearest_even">:$rounding,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs TQ_TiledTensor:$result);
  let builders = [
    // Scales computed per tile, fixed bit width, nearest-even rounding.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input), [{
      build($_builder, $_state, result, input, ::mlir::Value(),
            ::mlir::Value(), ::mlir::Value(), ::mlir::Value(),
            ::mlir::tq::RoundingMode::nearest_even, ::mlir::IntegerAttr());
    }]>
  ];
  let assemblyFormat = [{
    $input (`scales` `(` $scales^ `:` qualified(type($scales)) `)`)?
    (`refresh` `(` $refresh^ `)`)?
    (`bits` `(` $bits^ `:` qualified(type($bits)) `)`)?
    (`rounding` `` $rounding^)?
    (`seed_offset` `(` $seed_offset^ `)`)?
    attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TQ_DequantizeOp : TQ_Op<"dequantize", [Pure]> {
  let summary = "expand a tiled tensor back to floats";
  let description = [{
    `x̂ = q · step + o` for every element, with its tile's parameters. The
    bit width is not needed. `tq.dequantize(tq.quantize(%c))` folds to `%c`
    when `%c` is a constant that the round trip reproduces bit for bit.

    ```mlir
    %x = tq.dequantize %q
           : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
           -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins TQ_TiledTensor:$input);
  let results = (outs TQ_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TQ_StepsOp : TQ_Op<"steps", [Pure]> {
  let summary = "the per-tile steps of a tiled tensor";
  let description = [{
    The step of every tile of `input` (its scale: `x̂ = q · step + o`), in
    the tile-grid shape. They can be given back to `tq.quantize ... scales`
    to quantize with the same parameters later: the training step keeps
    them across iterations this way, recomputing them only when its update
    interval ends (SPEC A6, `tq-update-interval`).

    ```mlir
    %s = tq.steps %q
           : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
           -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins TQ_TiledTensor:$input);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def TQ_RequantizeOp : TQ_Op<"requantize", [Pure]> {
  let summary = "quantize again with another bit width, scale kind or tiling";
  let description = [{
    Equivalent to `tq.quantize(tq.dequantize(input))` into the result type:
    every tile of the result gets freshly computed parameters. This is the
    op that re-reads data, so the passes count it.

    | change                    | cost |
    |---------------------------|------|
    | same type                 | none: folds to the input |
    | bits, scale kind, offset  | one pass over the data |
    | tile shape or split dims  | one pass over the data |
    | `permutation`             | transposes too: the only legal transpose of non-square tiles |

    With `permutation`, result dimension `i` is input dimension
    `permutation[i]`. A dynamic result bit width takes `bits`. The
    requantization of a `tq.constant` is evaluated at compile time.

    ```mlir
    // 8-bit → 4-bit, same tiles.
    %r = tq.requantize %q
           : !tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
           -> !tq.tiled<64x64xi4:4, f32, tile = 32x32, dims = [0, 1], scale = f32>
    // Transpose per-vector (1xV) scaled data: requires re-quantization.
    %t = tq.requantize %v permutation([1, 0])
           : !tq.tiled<64x128xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32>
           -> !tq.tiled<128x64xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32>
    ```
  }];
  let arguments = (ins TQ_TiledTensor:$input,
                       Optional<TQ_BitWidthValue>:$bits,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation,
                       DefaultValuedAttr<TQ_RoundingModeAttr,
                         "::mlir::tq::RoundingMode::nearest_even">:$rounding,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs TQ_TiledTensor:$result);
  let assemblyFormat = [{
    $input (`bits` `(` $bits^ `:` qualified(type($bits)) `)`)?
    (`permutation` `(` $permutation^ `)`)?
    (`rounding` `` $rounding^)?
    attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

// A constant's quantized data: a dense literal, or a dense resource blob of
// i8 or i16 (large weights), printed once at the end of the module instead
// of as a hex literal in the op.
def TQ_IntValuesAttr : Attr<
    CPred<"::llvm::isa<::mlir::DenseIntElementsAttr, "
          "::mlir::DenseI8ResourceElementsAttr, "
          "::mlir::DenseI16ResourceElementsAttr>($_self)">,
    "integer elements (a dense literal, or an i8 or i16 dense resource)"> {
  let storageType = "::mlir::ElementsAttr";
  let returnType = "::mlir::ElementsAttr";
  let convertFromStorage = "::llvm::cast<::mlir::ElementsAttr>($_self)";
}

def TQ_ConstantOp : TQ_Op<"constant", [Pure]> {
  let summary = "a tiled tensor whose data and per-tile parameters are known";
  let description = [{
    Holds quantized data (`values`, in the storage type and the logical
    shape) and one step per tile (`scales`, f32, in the tile-grid shape),
    plus one offset per tile for offset scale kinds and one bit width per
    tile (`tile_bits`, i8) for `per_tile` types. `tq-quantize-constants`
    produces it from `tq.quantize` of a float constant with the reference
    numerics, so compile-time weights are bit-identical to what the
    reference library computes. Large data (256 elements or more, i8 or
    i16 storage) is a dense resource blob (`dense_resource<key>`), as the
    importer keeps large float weights.

    ```mlir
    %w = tq.constant {values = dense<[[1, -2], [3, 127]]> : tensor<2x2xi8>,
                      scales = dense<0.5> : tensor<1x1xf32>}
           : !tq.tiled<2x2xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
    ```
  }];
  let arguments = (ins TQ_IntValuesAttr:$values,
                       FloatElementsAttr<32>:$scales,
                       OptionalAttr<FloatElementsAttr<32>>:$offsets,
                       OptionalAttr<AnyIntElementsAttr>:$tile_bits);
  let results = (outs TQ_TiledTensor:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

def TQ_TransposeOp : TQ_Op<"transpose", [Pure]> {
  let summary = "transpose square-tiled data, reusing every scale (T4)";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`. Each tile's
    data is transposed in place and the tile grid is permuted; every scale,
    point position, offset and bit width is reused unchanged: no
    re-quantization and no rescan of the data (SPEC T4). The result's split
    dims are the positions the input's split dims move to.

    With non-square tiles (`1×V`, `V×1`) a permutation that reverses the
    order of the two split dims would turn row vectors into column vectors,
    which scales along the wrong dimension: it is rejected and must be
    written as `tq.requantize ... permutation(...)`. Permutations that keep
    the split dims in order are legal for every tile shape.

    `transpose(transpose(x))` composes; an identity permutation folds away.

    ```mlir
    %wt = tq.transpose %w [1, 0]
            : !tq.tiled<256x64xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
            -> !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
    ```
  }];
  let arguments = (ins TQ_TiledTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs TQ_TiledTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// compute
//===----------------------------------------------------------------------===//

def TQ_MatmulOp : TQ_Op<"matmul", [Pure]> {
  let summary = "tiled matrix product with per-tile scales and f32 accumulation";
  let description = [{
    `C = op(A) · op(B)` where `op` transposes the two innermost dims when
    `transpose_a` / `transpose_b` is set (the backward forms
    `dX = dY·Wᵀ`, `dW = Xᵀ·dY`). Leading dimensions are batch dimensions
    and must match. Each tiled operand must be split on its two innermost
    dims, and the tile extents along the contracting dim (the K-tile) must
    agree. For K-tile `t` (SPEC T5):

    ```
    C[i,j] = Σ_t  p(sA(i,t) · sB(t,j)) · Σ_{k∈t} qA[i,k] · qB[k,j]
    ```

    with the integer partial sum in int32, `p` the identity or a rounding of
    the scale product to bf16 (`scale_product = #tq.scale_product<bf16>`),
    and the sum over `t` in f32 in increasing `t`. The verifier rejects
    K-tiles whose int32 partial sum could overflow
    (`K-tile · qmaxA · qmaxB > 2^31 - 1`).

    In the mixed case one operand is a float tensor: the partial sum
    `Σ_k qA[i,k] · B[k,j]` is taken in f32 and multiplied by `sA(i,t)` alone.

    | lhs        | rhs        | partial sum | scale |
    |------------|------------|-------------|-------|
    | tiled      | tiled      | int32       | sA·sB |
    | tiled      | float      | f32         | sA    |
    | float      | tiled      | f32         | sB    |

    Operands with offsets are not supported: requantize them first.

    ```mlir
    %c = tq.matmul %x, %w
           : !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>,
             !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
           -> tensor<64x128xf32>
    // dX = dY · Wᵀ without re-quantizing W.
    %dx = tq.matmul %dy, %w {transpose_b}
           : !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>,
             !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
           -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins TQ_TiledOrFloat:$lhs, TQ_TiledOrFloat:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       DefaultValuedAttr<TQ_ScaleProductAttr,
                         "::mlir::tq::ScaleProduct::exact">:$scale_product);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$lhs,
                   "::mlir::Value":$rhs, "bool":$transposeA,
                   "bool":$transposeB), [{
      build($_builder, $_state, result, lhs, rhs, transposeA, transposeB,
            ::mlir::tq::ScaleProduct::exact);
    }]>
  ];
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TQ_Conv2DOp : TQ_Op<"conv2d", [Pure]> {
  let summary = "tiled 2-D convolution, NHWC activations and KRSC weights";
  let description = [{
    `input` is `[N, H, W, C]` split on (N, C) and `filter` is `[K, R, S, C]`
    split on (K, C) (SPEC T2); their tile extents along C must agree. The
    result is `[N, P, Q, K]` f32 with
    `P = (H + pad_top + pad_bottom - dil_h·(R-1) - 1) / stride_h + 1` (and
    likewise Q). For each output element the sum runs over `r`, then `s`,
    then C-tiles `t`, each term being an int32 partial sum over the tile
    times the product of the input tile's and the filter tile's scales
    (as `tq.matmul`). Padding contributes zeros.

    ```mlir
    %y = tq.conv2d %x, %w {strides = array<i64: 1, 1>,
                           padding = array<i64: 1, 1, 1, 1>}
           : !tq.tiled<8x14x14x64xi8:8, f32, tile = 32x32, dims = [0, 3], scale = f32>,
             !tq.tiled<32x3x3x64xi8:8, f32, tile = 32x32, dims = [0, 3], scale = f32>
           -> tensor<8x14x14x32xf32>
    ```
  }];
  let arguments = (ins TQ_TiledTensor:$input, TQ_TiledTensor:$filter,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
      DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
      DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
      DefaultValuedAttr<TQ_ScaleProductAttr,
                        "::mlir::tq::ScaleProduct::exact">:$scale_product);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` qualified(type($input)) `,` qualified(type($filter)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TQ_PostprocessOp : TQ_Op<"postprocess", [Pure, AttrSizedOperandSegments]> {
  let summary = "per-layer scale, nonlinearity and requantization into tiles (T6)";
  let description = [{
    Applied to an accumulated f32 output `L`, in this order (SPEC T6):

    1. per-layer scale `s_layer`: given by the `layer_scale` operand, or
       computed (`compute_layer_scale`) as `max|L| / qmax` with the result
       type's bit width, or 1; then `y = L / s_layer` (0 when `s_layer` is 0);
    2. the nonlinearity `activation` (`none` or `relu`);
    3. quantization of `y` into the result's tiles with freshly computed
       per-tile scales (as `tq.quantize`).

    The second result is `s_layer`, so that `x ≈ dequantize(result) · s_layer`.

    ```mlir
    %y, %s = tq.postprocess %acc {activation = #tq.activation<relu>,
                                  compute_layer_scale}
           : tensor<64x128xf32>
           -> !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                       Optional<F32>:$layer_scale,
                       Optional<TQ_BitWidthValue>:$bits,
                       UnitAttr:$compute_layer_scale,
                       DefaultValuedAttr<TQ_ActivationAttr,
                         "::mlir::tq::Activation::none">:$activation,
                       DefaultValuedAttr<TQ_RoundingModeAttr,
                         "::mlir::tq::RoundingMode::nearest_even">:$rounding,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs TQ_TiledTensor:$result, F32:$applied_layer_scale);
  let assemblyFormat = [{
    $input (`layer_scale` `(` $layer_scale^ `)`)?
    (`bits` `(` $bits^ `:` qualified(type($bits)) `)`)?
    (`rounding` `` $rounding^)? attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TQ_WeightUpdateOp : TQ_Op<"weight_update",
    [Pure, AllTypesMatch<["weight", "result"]>]> {
  let summary = "W ← W − η·dW, requantized into W's tiles (T7)";
  let description = [{
    Dequantizes `weight` and `grad` (a float tensor, or tiled), computes
    `W - lr · dW` in f32 element by element and quantizes the result into
    the weight's type with freshly computed per-tile scales. This is the
    datapath unit's element-wise subtraction (SPEC P1, T7).

    ```mlir
    %w2 = tq.weight_update %w, %dw, %lr
            : !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>,
              tensor<256x128xf32>
    ```
  }];
  let arguments = (ins TQ_TiledTensor:$weight, TQ_TiledOrFloat:$grad,
                       F32:$lr,
                       DefaultValuedAttr<TQ_RoundingModeAttr,
                         "::mlir::tq::RoundingMode::nearest_even">:$rounding,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs TQ_TiledTensor:$result);
  let assemblyFormat = [{
    $weight `,` $grad `,` $lr (`rounding` `` $rounding^)? attr-dict
    `:` qualified(type($weight)) `,` qualified(type($grad))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// adaptive bit width
//===----------------------------------------------------------------------===//

def TQ_AdaptiveBitWidthOp : TQ_Op<"adaptive_bit_width", [Pure]> {
  let summary = "choose a bit width from the measured quantization error (A3/A4)";
  let description = [{
    Runs the bit-width search of SPEC A4 on `input` for quantization into
    `target` (a tiled type whose width is `?` or `per_tile`): starting from
    `init` bits, quantize, measure the error (A3)

    ```
    diff_bit = log2( Σ|x̂ᵢ - xᵢ| / Σ|xᵢ| + 1 )
    ```

    and move `N` up by `step` while the error is above `high`, down while it
    is below `low`, until it lies between the two or `N` reaches `min` /
    `max`. When `far_step` is set, moves whose error is more than
    `far_margin` beyond the threshold use `far_step` (variable step).
    A search that would oscillate stops at the larger width.

    | target bits | result | searched over |
    |-------------|--------|---------------|
    | `?`         | `i32`  | the whole tensor (one N) |
    | `per_tile`  | `tensor<grid x i32>` | each tile on its own |

    ```mlir
    %n = tq.adaptive_bit_width %x for
           !tq.tiled<64x64xi16:?, f32, tile = 32x32, dims = [0, 1], scale = f32>
           {low = 0.01 : f32, high = 0.05 : f32, init = 8 : i64}
           : tensor<64x64xf32> -> i32
    ```
  }];
  let arguments = (ins TQ_FloatTensor:$input,
                       TypeAttrOf<TQ_TiledTensor>:$target,
                       F32Attr:$low, F32Attr:$high,
                       DefaultValuedAttr<I64Attr, "8">:$init,
                       DefaultValuedAttr<I64Attr, "2">:$min,
                       DefaultValuedAttr<I64Attr, "16">:$max,
                       DefaultValuedAttr<I64Attr, "1">:$step,
                       OptionalAttr<I64Attr>:$far_step,
                       OptionalAttr<F32Attr>:$far_margin);
  let results = (outs TQ_BitWidthValue:$result);
  let assemblyFormat = [{
    $input `for` $target attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CPU kernel building blocks (produced and consumed by tq-to-cpu)
//===----------------------------------------------------------------------===//

def TQ_DotU8S8Op : TQ_Op<"dot_u8s8", [Pure,
    AllTypesMatch<["acc", "result"]>, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "4-way u8 x s8 dot product accumulated into int32 lanes";
  let description = [{
    For each int32 lane `l`:
    `result[l] = acc[l] + Σ_{b<4} zext(lhs[4l+b]) · sext(rhs[4l+b])`,
    wrapping on overflow. This is x86's `vpdpbusd` (AVX-512 VNNI, or
    AVX-VNNI on 8 lanes). `convert-tq-to-cpu` emits it in its matmul
    kernels and `convert-tq-cpu-intrinsics` turns it into the LLVM
    intrinsic once bufferization is done (the op is pure, the intrinsic
    call is not known to be).

    ```mlir
    %r = tq.dot_u8s8 %acc, %u, %s : vector<16xi32>, vector<64xi8>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [I32]>:$acc,
                       VectorOfRankAndType<[1], [I8]>:$lhs,
                       VectorOfRankAndType<[1], [I8]>:$rhs);
  let results = (outs VectorOfRankAndType<[1], [I32]>:$result);
  let assemblyFormat = [{
    $acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs)
  }];
  let hasVerifier = 1;
}

def TQ_DotU8S8PairsOp : TQ_Op<"dot_u8s8_pairs", [Pure,
    AllTypesMatch<["acc", "result"]>, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "4-way u8 x s8 dot product through saturated int16 pair sums";
  let description = [{
    For each int32 lane `l`:
    `result[l] = acc[l] + sat16(p(4l) + p(4l+1)) + sat16(p(4l+2) + p(4l+3))`
    where `p(i) = zext(lhs[i]) · sext(rhs[i])` and `sat16` clamps to
    [-32768, 32767]; the final adds wrap on overflow. This is x86's
    `vpmaddubsw`, then `vpmaddwd` with ones and `vpaddd` (AVX2 on 8 lanes,
    AVX-512 BW on 16). With `lhs` in [0, 127] and any `rhs` no pair sum
    saturates (2 · 127 · 128 = 32512), and the result is `tq.dot_u8s8`'s:
    `convert-tq-to-cpu` emits it on AVX2 only for activations known not to
    be negative (`tq.nonnegative_input`). `convert-tq-cpu-intrinsics` turns
    it into the LLVM intrinsics.

    ```mlir
    %r = tq.dot_u8s8_pairs %acc, %u, %s : vector<8xi32>, vector<32xi8>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [I32]>:$acc,
                       VectorOfRankAndType<[1], [I8]>:$lhs,
                       VectorOfRankAndType<[1], [I8]>:$rhs);
  let results = (outs VectorOfRankAndType<[1], [I32]>:$result);
  let assemblyFormat = [{
    $acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs)
  }];
  let hasVerifier = 1;
}

def TQ_DotI16Op : TQ_Op<"dot_i16", [Pure,
    AllTypesMatch<["acc", "result"]>, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "2-way int16 dot product accumulated into int32 lanes";
  let description = [{
    For each int32 lane `l`:
    `result[l] = acc[l] + sext(lhs[2l])·sext(rhs[2l]) +
    sext(lhs[2l+1])·sext(rhs[2l+1])`, wrapping on overflow. This is x86's
    `vpmaddwd` followed by `vpaddd` (AVX2 on 8 lanes, AVX-512 BW on 16):
    the int8 kernel of CPUs without VNNI, with both operands widened to
    int16. `convert-tq-cpu-intrinsics` turns it into the LLVM intrinsic.

    ```mlir
    %r = tq.dot_i16 %acc, %a, %b : vector<8xi32>, vector<16xi16>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [I32]>:$acc,
                       VectorOfRankAndType<[1], [I16]>:$lhs,
                       VectorOfRankAndType<[1], [I16]>:$rhs);
  let results = (outs VectorOfRankAndType<[1], [I32]>:$result);
  let assemblyFormat = [{
    $acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs)
  }];
  let hasVerifier = 1;
}

#endif // TQ_OPS_TD
