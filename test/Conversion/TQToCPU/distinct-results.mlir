// RUN: tq-opt %s -tq-cpu-distinct-results | FileCheck %s
// A tensor returned twice gets a copy for its second result; function
// arguments and single results are left alone.

// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>
// CHECK: %[[Y:.*]] = math.tanh %[[X]]
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[Y]]) : tensor<2x3xf32>
// CHECK: return %[[Y]], %[[C]], %[[X]], %[[X]] :
func.func @twice(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %y = math.tanh %x : tensor<2x3xf32>
  return %y, %y, %x, %x : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @three(
// CHECK: %[[Y:.*]] = math.exp
// CHECK: %[[C1:.*]] = bufferization.alloc_tensor() copy(%[[Y]])
// CHECK: %[[C2:.*]] = bufferization.alloc_tensor() copy(%[[Y]])
// CHECK: return %[[Y]], %[[C1]], %[[C2]] :
func.func @three(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y = math.exp %x : tensor<4xf32>
  return %y, %y, %y : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @once(
// CHECK-NOT: alloc_tensor
// CHECK: return
func.func @once(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = math.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
