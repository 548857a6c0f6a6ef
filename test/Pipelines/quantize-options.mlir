// Bad tq-quantize options: one line that names the option, a non-zero
// exit, and no dump of the module (an error used to print the whole
// module after it: 5 KB for a small model). Options that were accepted
// without effect are errors too.
// RUN: not tq-opt %s -tq-quantize="tile=0" 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not tq-opt %s -tq-quantize="keep-float=nosuchnode" 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: not tq-opt %s -tq-quantize="policy=adaptive tile-candidates=0,16" 2>&1 | FileCheck %s --check-prefix=CANDIDATES
// RUN: not tq-opt %s -tq-quantize="policy=adaptive weight-bits=4" 2>&1 | FileCheck %s --check-prefix=WEIGHTBITS
// RUN: not tq-opt %s -tq-quantize="act-bits=1" 2>&1 | FileCheck %s --check-prefix=BITS
// A keep-float entry may be an op name or a layer (its name location).
// RUN: tq-opt %s -tq-quantize="keep-float=linalg.matmul" | FileCheck %s --check-prefix=KEPT
// RUN: tq-opt %s -tq-quantize="keep-float=fc2" | FileCheck %s --check-prefix=LAYER

// TILE: error: tile must be positive, got 0
// TILE-NOT: see current operation
// KEEP: error: keep-float 'nosuchnode' names no op (such as linalg.matmul) or layer (an ONNX node name, or function#ordinal) of the input
// KEEP-NOT: see current operation
// CANDIDATES: error: tile-candidates must be positive, got 0
// CANDIDATES-NOT: see current operation
// WEIGHTBITS: error: tq-quantize: weight-bits has no effect with policy=adaptive (the widths are searched in [min-bits, max-bits])
// BITS: error: act-bits must be in [2, 16], got 1
// BITS-NOT: see current operation

// KEPT-NOT: tq.matmul
// LAYER: tq.matmul
// LAYER-NOT: tq.matmul
// LAYER: linalg.matmul
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x16xf32>
  %i1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%i1 : tensor<8x16xf32>) -> tensor<8x16xf32> loc("fc1")
  %e2 = tensor.empty() : tensor<8x4xf32>
  %i2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%i2 : tensor<8x4xf32>) -> tensor<8x4xf32> loc("fc2")
  return %y : tensor<8x4xf32>
}
