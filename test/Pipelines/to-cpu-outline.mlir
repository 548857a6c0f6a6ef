// tq-to-cpu outlines each loop nest into a noinline kernel (equal nests
// share one) and marks the glue optnone; outline-kernels=false keeps one
// function.
// RUN: tq-opt %s -tq-to-cpu=target=generic | FileCheck %s --check-prefix=ON
// RUN: tq-opt %s -tq-to-cpu="target=generic outline-kernels=false" | FileCheck %s --check-prefix=OFF
// ON: llvm.func @main_kernel(
// ON-SAME: passthrough = ["noinline"]
// ON-NOT: llvm.func @main_kernel_0(
// ON: llvm.func @main(
// ON-SAME: passthrough = ["noinline", "optnone"]
// ON-COUNT-2: llvm.call @main_kernel(
// OFF-NOT: _kernel
// OFF-NOT: passthrough
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.exp ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %f = tensor.empty() : tensor<64xf32>
  %b = linalg.exp ins(%a : tensor<64xf32>) outs(%f : tensor<64xf32>) -> tensor<64xf32>
  return %b : tensor<64xf32>
}
