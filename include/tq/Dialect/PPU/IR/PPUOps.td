//===- PPUOps.td - PPU instruction-level dialect ------------*- tablegen -*-===//
#ifndef PPU_OPS_TD
#define PPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"

def PPU_Dialect : Dialect {
  let name = "ppu";
  let cppNamespace = "::mlir::ppu";
  let summary = "Instructions of the PPU model, one op per instruction";
  let description = [{
    The `ppu` dialect mirrors the PPU instruction set
    (`tq/Target/PPUISA/ISA.h`, `docs/PPU.md`): a `ppu.program` fixes the machine
    (V, MAC units, memory sizes) and holds bindings of host tensors and a
    straight-line list of instructions. `tq-translate` writes a program as
    the versioned binary stream or the text listing, and reads a listing
    back. Every address, flag and bit width is checked against the machine
    by the verifier, with the instruction set's own rules.
  }];
}

class PPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<PPU_Dialect, mnemonic, traits # [HasParent<"ProgramOp">]>;

def PPU_Buffer : I32EnumAttr<"Buffer", "data buffer", [
    I32EnumAttrCase<"a", 0>, I32EnumAttrCase<"b", 1>]> {
  let cppNamespace = "::mlir::ppu";
}

def PPU_ProgramOp : Op<PPU_Dialect, "program",
    [Symbol, NoTerminator, SingleBlock, IsolatedFromAbove]> {
  let summary = "a PPU instruction stream for one machine";
  let description = [{
    The machine the stream is compiled for, recorded in the stream header:
    the simulator rejects a stream compiled for another machine.

    ```mlir
    ppu.program @gemm V = 16 mac = 16 ub = 1024 rows = 8 acc = 64 fmem = 4096 {
      ppu.binding "x" [40, 48] at 0
      ppu.binding "y" [40, 48] at 12 {output}
      ppu.quant ub[0], fmem[0] bits 8
      ppu.halt
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I32Attr:$V, I32Attr:$mac,
                       I32Attr:$ub, I32Attr:$rows, I32Attr:$acc,
                       I32Attr:$fmem);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `V` `=` $V `mac` `=` $mac `ub` `=` $ub `rows` `=` $rows
    `acc` `=` $acc `fmem` `=` $fmem attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def PPU_LaunchOp : Op<PPU_Dialect, "launch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run a program on the PPU from host code";
  let description = [{
    Host code (the schedule of a module split by `tq-partition-ppu`) runs
    `kernel` on the PPU: operand `i` is written to the program's input
    binding `arg<i>` (a `tensor<i32>` to its width input `arg<i>`: a bit
    width chosen at run time), result `i` read from its output binding
    `result<i>`.

    ```mlir
    %y = ppu.launch @main_ppu1(%x) : (tensor<4x8x8x1xf32>) -> tensor<4x8x8x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       Variadic<AnyRankedTensor>:$args);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
}

def PPU_BindingOp : PPU_Op<"binding"> {
  let summary = "a host tensor (2-D, or 4-D NHWC/KRSC) in fmem tiles";
  let description = [{
    The named host tensor (an input, or with `output` an output) occupies
    consecutive fmem tiles from `base`, in row-major tile order: 2-D tensors
    split on (rows, cols), 4-D ones on their first and last dims.

    ```mlir
    ppu.binding "y" [40, 32] at 9 {output}
    ```
  }];
  let arguments = (ins StrAttr:$name, UnitAttr:$output,
                       DenseI64ArrayAttr:$shape, I32Attr:$base);
  let assemblyFormat = [{
    $name $shape `at` $base attr-dict
  }];
}

def PPU_WidthInputOp : PPU_Op<"width_input"> {
  let summary = "a run-time bit width the host writes into a width register";
  let description = [{
    Before the program runs, the host writes the named input, a bit width
    in [2, 16], into width register `reg`; `quant`, `req` and `post` read
    it with `bits w<reg>`. This is how a width chosen at run time from the
    measured quantization error (`tq.adaptive_bit_width`, SPEC A4) reaches
    a kernel compiled once.
    ```mlir
    ppu.width_input "arg1" register 0
    ppu.quant ub[4], fmem[2] bits w0
    ```
  }];
  let arguments = (ins StrAttr:$name, I32Attr:$reg);
  let assemblyFormat = "$name `register` $reg attr-dict";
}

def PPU_ConstOp : PPU_Op<"const"> {
  let summary = "a tile quantized at compile time, in the unified buffer";
  let description = [{
    Placed in the unified buffer before the program runs (the stream's
    constant section): V*V values in row-major order and the tile's step,
    or, with `rows` / `cols`, one step per row (1 x V vectors) or per
    column (V x 1), laid out as `ppu.quant` with those flags lays a tile.
    The steps are an elements attribute, which prints every float so that
    it reads back to the same bits.

    ```mlir
    ppu.const ub[3] bits 4 step 2.500000e-01 values [1, -2, 0, 7]
    ppu.const ub[4] bits 8 rows steps dense<[1.0, 0.5]> : tensor<2xf32>
        values [1, -2, 0, 7]
    ```
  }];
  let arguments = (ins I32Attr:$slot, I32Attr:$bits,
                       OptionalAttr<F32Attr>:$step, UnitAttr:$rows,
                       UnitAttr:$cols, OptionalAttr<FloatElementsAttr<32>>:$steps,
                       DenseI32ArrayAttr:$values);
  let assemblyFormat = [{
    `ub` `[` $slot `]` `bits` $bits (`step` $step^)? (`rows` $rows^)?
    (`cols` $cols^)? (`steps` $steps^)? `values` $values attr-dict
  }];
  let extraClassDeclaration = [{
    /// The stream's form of the tile.
    ::tq::ppu::ConstTile getConstTile();
  }];
  let hasVerifier = 1;
}

class PPU_InstrOp<string mnemonic, string opSummary>
    : PPU_Op<mnemonic> {
  let summary = opSummary;
  let hasVerifier = 1;
}

def PPU_QuantOp : PPU_InstrOp<"quant", "QUANT: quantize an fmem tile into the unified buffer"> {
  let description = [{
    `ub[dst] <- fmem[src]` at `bits` (a width, or `w<r>`: the width in
    register r, see `ppu.width_input`), the scale(s) computed from the tile
    (per tile, or per row / column with `rows` / `cols`; `pow2` for
    power-of-two steps).

    ```mlir
    ppu.quant ub[0], fmem[0] bits 8 {rows}
    ```
  }];
  let arguments = (ins I32Attr:$dst, I32Attr:$src, I32Attr:$bits,
                       UnitAttr:$pow2, UnitAttr:$row_vectors,
                       UnitAttr:$col_vectors);
  let assemblyFormat = "`ub` `[` $dst `]` `,` `fmem` `[` $src `]` `bits` custom<Bits>($bits) attr-dict";
}

def PPU_LoadOp : PPU_InstrOp<"load", "LOAD: fetch a tile into a data buffer"> {
  let description = [{
    `a|b[dst] <- ub[src]`, transposed by the datapath unit with `transpose`
    (the scales travel with the data).

    ```mlir
    ppu.load b[1], ub[3] {transpose}
    ```
  }];
  let arguments = (ins PPU_Buffer:$buffer, I32Attr:$dst, I32Attr:$src,
                       UnitAttr:$transpose);
  let assemblyFormat = "$buffer `[` $dst `]` `,` `ub` `[` $src `]` attr-dict";
}

def PPU_MacOp : PPU_InstrOp<"mac", "MAC: V MAC units multiply two buffered tiles"> {
  let description = [{
    `acc[dst] (=|+=) a[a] * b[b]`: int32 partial sums times the product of
    the scales (rounded to bf16 with `bf16`), added to the accumulator with
    `accumulate`.

    ```mlir
    ppu.mac acc[0], a[0], b[1] {accumulate}
    ```
  }];
  let arguments = (ins I32Attr:$dst, I32Attr:$a, I32Attr:$b,
                       UnitAttr:$accumulate, UnitAttr:$bf16);
  let assemblyFormat = "`acc` `[` $dst `]` `,` `a` `[` $a `]` `,` `b` `[` $b `]` attr-dict";
}

def PPU_PostOp : PPU_InstrOp<"post", "POST: layer scale, ReLU and quantization of an accumulator tile"> {
  let description = [{
    Divides by `layer_scale` when given, applies ReLU with `relu`, and
    quantizes the tile with a fresh scale (T6).

    ```mlir
    ppu.post ub[5], acc[0] bits 8 {layer_scale = 5.000000e-01 : f32, relu}
    ```
  }];
  let arguments = (ins I32Attr:$dst, I32Attr:$src, I32Attr:$bits,
                       UnitAttr:$relu, UnitAttr:$pow2,
                       OptionalAttr<F32Attr>:$layer_scale);
  let assemblyFormat = "`ub` `[` $dst `]` `,` `acc` `[` $src `]` `bits` custom<Bits>($bits) attr-dict";
}

def PPU_StoreOp : PPU_InstrOp<"store", "STORE: an accumulator tile to fmem"> {
  let description = [{
    ```mlir
    ppu.store fmem[9], acc[0]
    ```
  }];
  let arguments = (ins I32Attr:$dst, I32Attr:$src);
  let assemblyFormat = "`fmem` `[` $dst `]` `,` `acc` `[` $src `]` attr-dict";
}

def PPU_WUpdOp : PPU_InstrOp<"wupd", "WUPD: weight update in the datapath unit"> {
  let description = [{
    `ub[dst] <- ub[dst] - lr * acc[src]`, requantized with the weight's
    bit width and scale layout.

    ```mlir
    ppu.wupd ub[1], acc[0] lr 1.250000e-01
    ```
  }];
  let arguments = (ins I32Attr:$dst, I32Attr:$src, F32Attr:$lr,
                       UnitAttr:$pow2);
  let assemblyFormat = "`ub` `[` $dst `]` `,` `acc` `[` $src `]` `lr` $lr attr-dict";
}

def PPU_ReqOp : PPU_InstrOp<"req", "REQ: requantize a unified-buffer tile"> {
  let description = [{
    ```mlir
    ppu.req ub[1], ub[1] bits 8 {col_vectors}
    ```
  }];
  let arguments = (ins I32Attr:$dst, I32Attr:$src, I32Attr:$bits,
                       UnitAttr:$pow2, UnitAttr:$row_vectors,
                       UnitAttr:$col_vectors);
  let assemblyFormat = "`ub` `[` $dst `]` `,` `ub` `[` $src `]` `bits` custom<Bits>($bits) attr-dict";
}

def PPU_DeqOp : PPU_InstrOp<"deq", "DEQ: a quantized tile back to host memory as f32"> {
  let description = [{
    ```mlir
    ppu.deq fmem[7], ub[1]
    ```
  }];
  let arguments = (ins I32Attr:$dst, I32Attr:$src);
  let assemblyFormat = "`fmem` `[` $dst `]` `,` `ub` `[` $src `]` attr-dict";
}

def PPU_HaltOp : PPU_InstrOp<"halt", "HALT: end of the stream"> {
  let arguments = (ins);
  let assemblyFormat = "attr-dict";
}

#endif // PPU_OPS_TD
