//===- TQDialect.td - tile-quant dialect definition --------*- tablegen -*-===//
#ifndef TQ_DIALECT_TD
#define TQ_DIALECT_TD

include "mlir/IR/OpBase.td"

def TQ_Dialect : Dialect {
  let name = "tq";
  let cppNamespace = "::mlir::tq";
  let summary = "Tensors of scaled V×V tiles and the ops that compute on them";
  let description = [{
    The `tq` dialect models neural-network tensors quantized in tiles: a
    tensor is split along two of its dimensions (the *split dims*) into tiles
    of `R×C` elements (square `V×V` by default) and every tile carries its
    own quantization parameters (a scale, optionally a power-of-two point
    position and an offset). Because a square tile and its transpose share
    one scale, the backward-pass GEMMs `dX = dY·Wᵀ` and `dW = Xᵀ·dY` read
    transposed operands without re-quantizing them (`tq.transpose`).

    Quantization is adaptive: the bit width `N` may be static, carried by an
    SSA value at run time, or chosen per tile (`tq.adaptive_bit_width`).

    The numerics of every op are defined by the reference library
    `tq/Runtime/Quant.h`; the formulas are repeated in each op's
    description.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class TQ_Op<string mnemonic, list<Trait> traits = []>
    : Op<TQ_Dialect, mnemonic, traits>;

#endif // TQ_DIALECT_TD
