// SPEC A8 round trip: choose the parameters (adaptive widths, per tile for
// the weights), write them, quantize again from the file: the same IR and
// the same file.
// RUN: tq-opt %S/../../../docs/examples/mlp-train.mlir -tq-quantize="tile=16 policy=adaptive per-tile low=0.02 high=0.06 calibration-out=%t.json" -o %t.a.mlir
// RUN: tq-opt %S/../../../docs/examples/mlp-train.mlir -tq-quantize="tile=16 calibration=%t.json calibration-out=%t.again.json" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: diff %t.json %t.again.json
// RUN: FileCheck %s --input-file=%t.json
// Static policy with the file: the file wins (same IR again).
// RUN: tq-opt %S/../../../docs/examples/mlp-train.mlir -tq-quantize="tile=32 weight-bits=4 calibration=%t.json" -o %t.c.mlir
// RUN: diff %t.a.mlir %t.c.mlir
// The export pass alone, to stdout.
// RUN: tq-opt %s -tq-export-calibration -o /dev/null | FileCheck %s --check-prefix=EXPORT

// CHECK: "name": "mlp_train#0"
// CHECK: "op": "tq.matmul"
// CHECK: "adaptive": {
// CHECK: "type": "!tq.tiled<8x32xi8:per_tile, f32, tile = 16x16, dims = [0, 1], scale = f32>"
// CHECK: "record": "{average_bits = {{.*}}, max_error = {{.*}}}"
// CHECK: "tile_bits": [
// CHECK: "type": "!tq.tiled<32x32xi8:per_tile
// CHECK: "name": "mlp_train#3"
// CHECK: "version": 1

// EXPORT: "name": "fc1"
// EXPORT: "float": true
// EXPORT: "type": "!tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>"
func.func @named(%x: tensor<64x256xf32>, %w: !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1]>) -> tensor<64x128xf32> {
  %y = tq.matmul %x, %w : tensor<64x256xf32>, !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x128xf32> loc("fc1")
  return %y : tensor<64x128xf32>
}
