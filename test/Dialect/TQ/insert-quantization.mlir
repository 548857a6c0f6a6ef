// RUN: tq-opt %s -tq-insert-quantization -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-insert-quantization="tile=16 act-bits=4 weight-bits=12 scale=pow2" -split-input-file | FileCheck %s --check-prefix=OPTS
// RUN: tq-opt %s -tq-insert-quantization="quantize=weights" -split-input-file | FileCheck %s --check-prefix=WEIGHTS
// RUN: tq-opt %s -tq-insert-quantization="grad-rounding=stochastic seed=40" -split-input-file | FileCheck %s --check-prefix=SR
// RUN: tq-opt %s -tq-insert-quantization="quantize=activations" -split-input-file | FileCheck %s --check-prefix=ACTS
// keep-float names must match an op or layer of the module, so these two
// runs take the whole file as one module.
// RUN: tq-opt %s -tq-insert-quantization="keep-float=linalg.matmul" | FileCheck %s --check-prefix=KEEP
// RUN: tq-opt %s -tq-insert-quantization="keep-float=backward#1,fc" | FileCheck %s --check-prefix=LAYER

// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<256x128xf32>
// CHECK: %[[QX:.*]] = tq.quantize %arg0 : tensor<64x256xf32> -> !tq.tiled<64x256xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: %[[QW:.*]] = tq.quantize %[[W]] : tensor<256x128xf32> -> !tq.tiled<256x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: %[[Y:.*]] = tq.matmul %[[QX]], %[[QW]] : {{.*}} -> tensor<64x128xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return %[[Y]]
// OPTS-LABEL: func.func @matmul
// OPTS: tq.quantize %arg0 : tensor<64x256xf32> -> !tq.tiled<64x256xi4:4, f32, tile = 16x16, dims = [0, 1], scale = pow2>
// OPTS: tq.quantize %{{.*}} : tensor<256x128xf32> -> !tq.tiled<256x128xi16:12, f32, tile = 16x16, dims = [0, 1], scale = pow2>
// WEIGHTS-LABEL: func.func @matmul
// WEIGHTS: %[[QW:.*]] = tq.quantize %{{.*}} : tensor<256x128xf32> -> !tq.tiled<256x128xi8:8
// WEIGHTS: tq.matmul %arg0, %[[QW]] : tensor<64x256xf32>, !tq.tiled<256x128xi8:8
// ACTS-LABEL: func.func @matmul
// ACTS: %[[QX:.*]] = tq.quantize %arg0
// ACTS: tq.matmul %[[QX]], %{{.*}} : !tq.tiled<64x256xi8:8, {{.*}}>, tensor<256x128xf32>
// KEEP-LABEL: func.func @matmul
// KEEP-NOT: tq.
// KEEP: linalg.matmul
func.func @matmul(%x: tensor<64x256xf32>) -> tensor<64x128xf32> {
  %w = arith.constant dense<0.5> : tensor<256x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// A non-zero init is added back in f32; tq.keep_float leaves an op alone.
// A layer named by its location can be kept in float by name.
// LAYER-LABEL: func.func @init_and_keep
// LAYER-NOT: tq.
// LAYER: linalg.matmul {tq.roles
// LAYER: linalg.matmul {tq.keep_float
// CHECK-LABEL: func.func @init_and_keep
// CHECK: %[[Y:.*]] = tq.matmul
// CHECK: %[[S:.*]] = arith.addf %[[Y]], %arg1 : tensor<64x128xf32>
// CHECK: linalg.matmul {tq.keep_float
// CHECK: return %[[S]]
func.func @init_and_keep(%x: tensor<64x256xf32>, %b: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %w = arith.constant dense<0.5> : tensor<256x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%b : tensor<64x128xf32>) -> tensor<64x128xf32> loc("fc")
  %y2 = linalg.matmul {tq.keep_float} ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%b : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y, %y2 : tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

// T4, T7: the backward GEMMs read transposed operands through the matmul's
// transpose flags: no transpose of data, no requantization; gradients get
// grad-bits.
// CHECK-LABEL: func.func @backward
// CHECK: %[[DY:.*]] = tq.quantize %arg0 : tensor<64x128xf32> -> !tq.tiled<64x128xi8:8
// CHECK: %[[W:.*]] = tq.quantize %arg1 : tensor<256x128xf32> -> !tq.tiled<256x128xi8:8
// CHECK: tq.matmul %[[DY]], %[[W]] {transpose_b} : {{.*}} -> tensor<64x256xf32>
// CHECK: %[[X:.*]] = tq.quantize %arg2
// CHECK: tq.matmul %[[X]], %{{.*}} {transpose_a} : {{.*}} -> tensor<256x128xf32>
// CHECK-NOT: tq.requantize
// With grad-rounding=stochastic, the gradient's quantizations round
// stochastically, each with its own seed; the others to nearest.
// SR-LABEL: func.func @backward
// SR: tq.quantize %arg0 rounding stochastic {seed = 40 : i64}
// SR: tq.quantize %arg1 : tensor<256x128xf32>
// SR: tq.quantize %arg2 : tensor<64x256xf32>
// SR: tq.quantize %arg0 rounding stochastic {seed = 41 : i64}
// SR-NOT: seed_offset
// The second layer of @backward (function#ordinal) kept in float by name.
// LAYER-LABEL: func.func @backward
// LAYER: tq.matmul %{{.*}}, %{{.*}} {transpose_b}
// LAYER: linalg.matmul
func.func @backward(%dy: tensor<64x128xf32> {tq.role = #tq.role<output_grad>},
                    %w: tensor<256x128xf32> {tq.parameter}, %x: tensor<64x256xf32>,
                    %i1: tensor<64x256xf32>, %i2: tensor<256x128xf32>) -> (tensor<64x256xf32>, tensor<256x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %a1 = linalg.fill ins(%zero : f32) outs(%i1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %w : tensor<64x128xf32>, tensor<256x128xf32>) outs(%a1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<256x128xf32>) -> tensor<256x128xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<64x256xf32>, tensor<64x128xf32>) outs(%a2 : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %dx, %dw : tensor<64x256xf32>, tensor<256x128xf32>
}

// -----

// In a function with an i32 argument marked {tq.iteration} (a training
// step's), the stochastic quantizations offset their seeds by it at run
// time; the others are as before.
// SR-LABEL: func.func @backward_iteration
// SR: tq.quantize %arg0 rounding stochastic seed_offset(%arg5) {seed = {{[0-9]+}} : i64}
// SR: tq.quantize %arg1 : tensor<256x128xf32>
// SR: tq.quantize %arg2 : tensor<64x256xf32>
// SR: tq.quantize %arg0 rounding stochastic seed_offset(%arg5) {seed = {{[0-9]+}} : i64}
func.func @backward_iteration(%dy: tensor<64x128xf32> {tq.role = #tq.role<output_grad>},
                              %w: tensor<256x128xf32> {tq.parameter}, %x: tensor<64x256xf32>,
                              %i1: tensor<64x256xf32>, %i2: tensor<256x128xf32>,
                              %it: i32 {tq.iteration}) -> (tensor<64x256xf32>, tensor<256x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %a1 = linalg.fill ins(%zero : f32) outs(%i1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %w : tensor<64x128xf32>, tensor<256x128xf32>) outs(%a1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<256x128xf32>) -> tensor<256x128xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<64x256xf32>, tensor<64x128xf32>) outs(%a2 : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %dx, %dw : tensor<64x256xf32>, tensor<256x128xf32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul
// CHECK: tq.quantize %arg0 : tensor<4x64x32xf32> -> !tq.tiled<4x64x32xi8:8, f32, tile = 32x32, dims = [1, 2], scale = f32>
// CHECK: tq.matmul {{.*}} -> tensor<4x64x16xf32>
// KEEP-LABEL: func.func @batch_matmul
// KEEP: tq.matmul
func.func @batch_matmul(%a: tensor<4x64x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf32>, tensor<4x32x16xf32>) outs(%acc : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  return %y : tensor<4x64x16xf32>
}

// -----

// A zero tensor.pad on H and W becomes the padding of tq.conv2d.
// CHECK-LABEL: func.func @conv
// CHECK: %[[QX:.*]] = tq.quantize %arg0 : tensor<2x8x8x16xf32> -> !tq.tiled<2x8x8x16xi8:8, f32, tile = 32x32, dims = [0, 3], scale = f32>
// CHECK: %[[QF:.*]] = tq.quantize %{{.*}} : tensor<32x3x3x16xf32> -> !tq.tiled<32x3x3x16xi8:8, f32, tile = 32x32, dims = [0, 3], scale = f32>
// CHECK: tq.conv2d %[[QX]], %[[QF]] {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : {{.*}} -> tensor<2x4x4x32xf32>
// WEIGHTS-LABEL: func.func @conv
// WEIGHTS: linalg.conv_2d_nhwc_fhwc
func.func @conv(%x: tensor<2x8x8x16xf32>) -> tensor<2x4x4x32xf32> {
  %f = arith.constant dense<1.0> : tensor<32x3x3x16xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x8x8x16xf32> to tensor<2x10x10x16xf32>
  %e = tensor.empty() : tensor<2x4x4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4x32xf32>) -> tensor<2x4x4x32xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %f : tensor<2x10x10x16xf32>, tensor<32x3x3x16xf32>) outs(%acc : tensor<2x4x4x32xf32>) -> tensor<2x4x4x32xf32>
  return %y : tensor<2x4x4x32xf32>
}

// -----

// NCHW x FCHW (as the ONNX importer emits): tiles split (N, C) / (K, C) =
// [0, 1]; tq.transpose moves C innermost for tq.conv2d, keeping the split
// dims in order, so every scale is reused (no requantization); the NHWC
// result goes back to NCHW in float. Zero padding on H and W is folded.
// CHECK-LABEL: func.func @conv_nchw
// CHECK: %[[QX:.*]] = tq.quantize %arg0 : tensor<2x16x8x8xf32> -> !tq.tiled<2x16x8x8xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: %[[QF:.*]] = tq.quantize %{{.*}} : tensor<32x16x3x3xf32> -> !tq.tiled<32x16x3x3xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK: %[[TX:.*]] = tq.transpose %[[QX]] [0, 2, 3, 1] : {{.*}} -> !tq.tiled<2x8x8x16xi8:8, f32, tile = 32x32, dims = [0, 3], scale = f32>
// CHECK: %[[TF:.*]] = tq.transpose %[[QF]] [0, 2, 3, 1] : {{.*}} -> !tq.tiled<32x3x3x16xi8:8, f32, tile = 32x32, dims = [0, 3], scale = f32>
// CHECK: %[[Y:.*]] = tq.conv2d %[[TX]], %[[TF]] {padding = array<i64: 1, 1, 1, 1>} : {{.*}} -> tensor<2x8x8x32xf32>
// CHECK: linalg.transpose ins(%[[Y]] : tensor<2x8x8x32xf32>) outs(%{{.*}} : tensor<2x32x8x8xf32>) permutation = [0, 3, 1, 2]
// CHECK-NOT: tq.requantize
func.func @conv_nchw(%x: tensor<2x16x8x8xf32>) -> tensor<2x32x8x8xf32> {
  %f = arith.constant dense<1.0> : tensor<32x16x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x16x8x8xf32> to tensor<2x16x10x10xf32>
  %e = tensor.empty() : tensor<2x32x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %f : tensor<2x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%acc : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  return %y : tensor<2x32x8x8xf32>
}
