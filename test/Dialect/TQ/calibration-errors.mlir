// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: printf '{"version": 1, "layers": [' > %t.trunc.json
// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.trunc.json 2>&1 | FileCheck %s --check-prefix=TRUNC
// RUN: printf '{"version": 2, "layers": []}' > %t.v2.json
// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.v2.json 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: printf '{"version": 1, "layers": [{"name": "other#0", "op": "tq.matmul", "operands": [{"float": true}, {"float": true}]}]}' > %t.other.json
// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.other.json 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: printf '{"version": 1, "layers": [{"name": "layer#0", "op": "tq.matmul", "operands": [{"float": true}, {"type": "!tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1]>"}]}]}' > %t.shape.json
// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.shape.json 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: printf '{"version": 1, "layers": [{"name": "layer#0", "op": "tq.matmul", "operands": [{"float": true}, {"type": "tensor<4xf32>"}]}]}' > %t.type.json
// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.type.json 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: printf '{"version": 1, "layers": [{"name": "layer#0", "op": "tq.matmul", "operands": [{"float": true}, {"type": "!tq.tiled<256x128xi8:?, f32, tile = 32x32, dims = [0, 1]>"}]}]}' > %t.dyn.json
// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.dyn.json 2>&1 | FileCheck %s --check-prefix=DYN
// RUN: printf '{"version": 1, "layers": [{"name": "layer#0", "op": "tq.matmul", "operands": [{"float": true}]}]}' > %t.ops.json
// RUN: not tq-opt %s -tq-insert-quantization=calibration=%t.ops.json 2>&1 | FileCheck %s --check-prefix=OPS

// MISSING: error: cannot read calibration file: {{.*}}missing.json
// TRUNC: error: malformed calibration file '{{.*}}trunc.json': {{.*}}
// VERSION: error: malformed calibration file '{{.*}}': expected "version": 1
// NOMATCH: error: calibration layer 'other#0' matches no compute op in the input
// SHAPE: error: 'linalg.matmul' op calibration layer 'layer#0' operand #1: type '!tq.tiled<8x8xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>' does not fit the operand of shape 256x128
// TYPE: error: 'linalg.matmul' op calibration layer 'layer#0' operand #1: 'tensor<4xf32>' is not a !tq.tiled type
// DYN: error: 'linalg.matmul' op calibration layer 'layer#0' operand #1: a run-time width needs an "adaptive" record
// OPS: error: malformed calibration file '{{.*}}': layers[0]: expected "name", "op" and two "operands"

func.func @layer(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %i: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
