// RUN: tq-opt %s -split-input-file -tq-split-grouped-convs | FileCheck %s
// RUN: tq-opt %s -split-input-file -tq-split-grouped-convs=min-channels=0 | FileCheck %s --check-prefix=ALL
// RUN: not tq-opt %s -split-input-file -tq-split-grouped-convs=min-channels=-1 2>&1 | FileCheck %s --check-prefix=BAD

// Two groups of 4 channels (min-channels = 4): one plain convolution per
// group on slices of the input, the constant filter split into constants,
// each group's init filled again, the results inserted into the grouped
// output.
// CHECK-LABEL: func.func @wide(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x4x8x8xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-DAG: %[[W0:.*]] = arith.constant dense<1.500000e+00> : tensor<3x4x3x3xf32>
// CHECK: %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 1, 4, 8, 8] [1, 1, 1, 1, 1] : tensor<1x2x4x8x8xf32> to tensor<1x4x8x8xf32>
// CHECK: %[[I0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x3x6x6xf32>)
// CHECK: %[[Y0:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X0]], %[[W0]] : {{.*}}) outs(%[[I0]] :
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[Y0]] into %{{.*}}[0, 0, 0, 0, 0] [1, 1, 3, 6, 6]
// CHECK: %[[X1:.*]] = tensor.extract_slice %[[X]][0, 1, 0, 0, 0]
// CHECK: %[[Y1:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X1]], %[[W0]] :
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[Y1]] into %[[R0]][0, 1, 0, 0, 0]
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: return %[[R1]]
func.func @wide(%x: tensor<1x2x4x8x8xf32>) -> tensor<1x2x3x6x6xf32> {
  %w = arith.constant dense<1.5> : tensor<2x3x4x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x6x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x6x6xf32>) -> tensor<1x2x3x6x6xf32>
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x2x4x8x8xf32>, tensor<2x3x4x3x3xf32>) outs(%i : tensor<1x2x3x6x6xf32>) -> tensor<1x2x3x6x6xf32>
  return %y : tensor<1x2x3x6x6xf32>
}

// -----

// Depthwise (one channel per group) stays one op unless min-channels = 0;
// a filter computed at run time is sliced, and so is an init that is not
// a fill.
// CHECK-LABEL: func.func @depthwise(
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// ALL-LABEL: func.func @depthwise(
// ALL-SAME: %[[X:.*]]: tensor<1x3x1x5x5xf32>, %[[W:.*]]: tensor<3x1x1x3x3xf32>, %[[I:.*]]: tensor<1x3x1x3x3xf32>
// ALL-COUNT-3: tensor.extract_slice %[[W]]
// ALL-NOT: linalg.conv_2d_ngchw_gfchw
func.func @depthwise(%x: tensor<1x3x1x5x5xf32>, %w: tensor<3x1x1x3x3xf32>, %i: tensor<1x3x1x3x3xf32>) -> tensor<1x3x1x3x3xf32> {
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x3x1x5x5xf32>, tensor<3x1x1x3x3xf32>) outs(%i : tensor<1x3x1x3x3xf32>) -> tensor<1x3x1x3x3xf32>
  return %y : tensor<1x3x1x3x3xf32>
}

// BAD: error: min-channels must be 0 or more, got -1
