//===- Passes.td - tile-quant conversion passes -------------*- tablegen -*-===//
#ifndef TQ_CONVERSION_PASSES_TD
#define TQ_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTQToPPU : Pass<"convert-tq-to-ppu", "::mlir::ModuleOp"> {
  let summary = "Lower tq functions to PPU instruction programs";
  let description = [{
    Turns each `func.func` computing on `tq` values into a `ppu.program`
    for the machine given by the options (recorded in the stream header):

    - f32 arguments become input bindings `arg<i>` in host memory (fmem),
      returned f32 tensors output bindings `result<i>`;
    - `tq.quantize` becomes one `QUANT` per tile into unified-buffer slots,
      `tq.requantize` one `REQ` per tile;
    - `tq.matmul` becomes, for each output tile, a loop over K-tiles of
      `LOAD a` / `LOAD b` (transposed operands read through the datapath
      unit's transpose, scales reused) and `MAC`, alternating data-buffer
      rows (double buffering when `rows` >= 2); the accumulated tile is
      `POST`ed into the unified buffer for a `tq.postprocess` (a constant
      per-layer scale, ReLU and requantization, T6), `STORE`d for a returned result, and applied
      in place to the weight of a `tq.weight_update` (`WUPD`, T7; constant
      learning rate);
    - a returned tiled value goes back to the host dequantized (`DEQ`).

    Unified-buffer slots are released after a value's last use and reused
    first-fit, so the buffer holds the live values only. A quantized lhs of
    a matmul that does not fit is quantized inside the matmul one row panel
    at a time (tiling to the buffer's capacity; every tile is still
    quantized once). A program whose live values exceed `ub` otherwise is an
    error naming the op (no spilling yet).

    Supported: static 2-D shapes split on [0, 1], tiles V×V, 1×V or V×1
    with the machine's V, fixed widths, `f32` or `pow2` scales without
    offsets, nearest-even rounding. Anything else is an error naming the op
    and the reason, as is a program that does not fit the machine.
  }];
  let options = [
    Option<"v", "v", "int64_t", /*default=*/"16", "Tile size V">,
    Option<"mac", "mac", "int64_t", /*default=*/"0",
           "Vector MAC units (0: V)">,
    Option<"ub", "ub", "int64_t", /*default=*/"0",
           "Unified buffer capacity, in tiles (0: what the program needs)">,
    Option<"rows", "rows", "int64_t", /*default=*/"2",
           "Tile slots per data buffer">,
    Option<"acc", "acc", "int64_t", /*default=*/"64",
           "Accumulator tiles">,
    Option<"fmem", "fmem", "int64_t", /*default=*/"0",
           "Host memory, in tiles (0: what the program needs)">
  ];
  let dependentDialects = ["::mlir::ppu::PPUDialect"];
}

#endif // TQ_CONVERSION_PASSES_TD
