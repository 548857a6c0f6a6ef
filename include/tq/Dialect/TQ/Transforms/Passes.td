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

#endif // TQ_DIALECT_TQ_TRANSFORMS_PASSES_TD
