// tq-to-cpu gives the intermediate buffers of a function one allocation
// (tq-cpu-plan-buffers): the two buffers between the three layers are views
// of it, and the call makes one malloc and one free.
// RUN: tq-opt %s -tq-to-cpu=target=generic | FileCheck %s
// CHECK-LABEL: llvm.func @main(
// CHECK: llvm.call @malloc
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.call @free
// CHECK-NOT: llvm.call @free
// CHECK: llvm.return
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.exp ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %f = tensor.empty() : tensor<64xf32>
  %b = linalg.exp ins(%a : tensor<64xf32>) outs(%f : tensor<64xf32>) -> tensor<64xf32>
  %g = tensor.empty() : tensor<64xf32>
  %c = linalg.exp ins(%b : tensor<64xf32>) outs(%g : tensor<64xf32>) -> tensor<64xf32>
  return %c : tensor<64xf32>
}
