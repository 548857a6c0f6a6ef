//===- TQTypes.td - tile-quant types ------------------------*- tablegen -*-===//
#ifndef TQ_TYPES_TD
#define TQ_TYPES_TD

include "mlir/IR/AttrTypeBase.td"
include "tq/Dialect/TQ/IR/TQDialect.td"
include "tq/Dialect/TQ/IR/TQEnums.td"

def TQ_TiledType : TypeDef<TQ_Dialect, "Tiled"> {
  let mnemonic = "tiled";
  let summary = "a tensor quantized in tiles, each tile with its own scale";
  let description = [{
    A value of type `!tq.tiled` is a tensor of logical shape `shape` whose
    elements are `N`-bit integers held in the `storage` integer type, split
    along its two *split dims* `[d0, d1]` (`d0 < d1`) into tiles of
    `t0×t1` elements (`t0` along `d0`, `t1` along `d1`). Every other
    dimension is not tiled: each of its indices has its own row of tiles.
    Edge tiles may be partial: the shape need not be a multiple of the tile.

    Each tile has its own quantization parameters, whose form is the *scale
    kind* (SPEC A2, with `qmax = 2^(N-1) - 1`):

    | scale kind | parameters per tile | x ≈ |
    |------------|---------------------|-----|
    | `f32`      | f = Z / qmax        | q · f (+ o) |
    | `pow2`     | s = ⌈log2(Z / qmax)⌉ | q · 2^s (+ o) |
    | `pow2_f32` | s and f = Z / (2^s · qmax) | q · 2^s · f (+ o) |

    where `Z = max|x|` over the tile, or with `offset`, `o = (Zmax+Zmin)/2`
    and `Z = (Zmax-Zmin)/2`. The tile grid of scales has the tensor's shape
    with each split dim `d` replaced by `ceil(shape[d] / t)`.

    The bit width `N` is one of:
    - a number in `[2, 16]` fixed by the type (`i8:8`, `i16:12`),
    - `?`: dynamic, carried by an SSA `i32` value (`tq.adaptive_bit_width`,
      or an epoch schedule) and at most the storage width, or at most `M`
      with `?(M)` (`i16:?(9)`: up to 9 bits in i16 containers, which bounds
      the int32 partial sums by 9-bit operands, not 16-bit ones),
    - `per_tile`: each tile has its own `N`, stored beside its scale; at most
      `M` with `per_tile(M)`.

    Grammar:

    ```
    tiled-type   ::= `!tq.tiled<` shape `x` storage `:` bits `,` float-type
                     `,` `tile` `=` int `x` int `,` `dims` `=` `[` int `,` int `]`
                     (`,` `scale` `=` scale-kind)? (`,` `offset`)? `>`
    bits         ::= int | `?` bound | `per_tile` bound
    bound        ::= (`(` int `)`)?
    storage      ::= `i4` | `i8` | `i16`
    scale-kind   ::= `f32` | `pow2` | `pow2_f32`     (default `f32`)
    ```

    Tiles are square (`V×V`) or per-vector (`1×V` / `V×1`). Only square
    tiles are transposition invariant: see `tq.transpose`.

    Examples:

    ```mlir
    // 8-bit activations [B, C] in 32x32 tiles with f32 scales.
    !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
    // NHWC activations split on (B, C), 4-bit values, power-of-two scales.
    !tq.tiled<8x14x14x64xi4:4, f32, tile = 16x16, dims = [0, 3], scale = pow2>
    // Asymmetric, per-vector (1xV) scaling along K.
    !tq.tiled<128x512xi8:8, f32, tile = 1x32, dims = [0, 1], scale = f32, offset>
    // Bit width chosen at run time, up to 16 bits; up to 9 bits.
    !tq.tiled<64x64xi16:?, f32, tile = 32x32, dims = [0, 1], scale = f32>
    !tq.tiled<64x64xi16:?(9), f32, tile = 32x32, dims = [0, 1], scale = f32>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "logical shape">:$shape,
    "::mlir::IntegerType":$storageType,
    "::mlir::tq::BitsKind":$bitsKind,
    "int64_t":$bits,
    "::mlir::FloatType":$expressedType,
    ArrayRefParameter<"int64_t", "tile shape along the split dims">:$tileShape,
    ArrayRefParameter<"int64_t", "the two split dims">:$splitDims,
    "::mlir::tq::ScaleKind":$scaleKind,
    "bool":$hasOffset
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    bool hasStaticShape() const;
    /// True for V×V tiles: only these are transposition invariant (T4).
    bool isSquare() const { return getTileShape()[0] == getTileShape()[1]; }
    /// The fixed bit width, or when it varies its bound (`?(M)`) or else the
    /// storage width: the largest N any element of this type can have.
    int64_t getMaxBits() const;
    /// Shape of the tile grid (one scale per entry): the logical shape with
    /// each split dim d replaced by ceil(shape[d] / tile).
    ::llvm::SmallVector<int64_t> getGridShape() const;
    /// Tile extent along logical dim `dim` (1 for dims that are not split).
    int64_t getTileExtent(int64_t dim) const;
    /// The same type with another logical shape and split dims.
    TiledType cloneWith(::llvm::ArrayRef<int64_t> shape,
                        ::llvm::ArrayRef<int64_t> tileShape,
                        ::llvm::ArrayRef<int64_t> splitDims) const;
  }];
}

def TQ_TiledTensor : Type<CPred<"::llvm::isa<::mlir::tq::TiledType>($_self)">,
    "tiled quantized tensor", "::mlir::tq::TiledType">;

#endif // TQ_TYPES_TD
