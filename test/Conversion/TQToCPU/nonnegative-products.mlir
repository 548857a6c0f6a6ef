// RUN: tq-opt %s -tq-to-cpu=target=avx2 -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-to-cpu=target=avx512 -split-input-file | FileCheck %s --check-prefix=AVX512

// Through the whole pipeline: a matmul and a convolution whose inputs are
// quantized from a ReLU's output are marked by tq-cpu-mark-nonnegative
// and, on AVX2, multiply with vpmaddubsw (the matmul quantizing its lhs in
// its loop nest); a product of a tensor of unknown sign keeps vpmaddwd.
// AVX-512 has vpdpbusd for all.

!f = tensor<64x64xf32>
!aq = !tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [0, 1]>
!bq = !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]>

// CHECK-LABEL: llvm.func @relu_matmul_kernel(
// CHECK: llvm.x86.avx2.pmadd.ub.sw
// AVX512-NOT: pmadd.ub.sw
// AVX512-NOT: pmaddubs
func.func @relu_matmul(%x: !f, %w: !bq) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !f
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : !f) outs(%e : !f) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> !f
  %q = tq.quantize %r : !f -> !aq
  %c = tq.matmul %q, %w : !aq, !bq -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// -----

!f = tensor<64x64xf32>
!aq = !tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [0, 1]>
!bq = !tq.tiled<64x32xi8:8, f32, tile = 32x32, dims = [0, 1]>

// CHECK-LABEL: llvm.func @signed_matmul_kernel(
// CHECK-NOT: llvm.x86.avx2.pmadd.ub.sw
// CHECK: llvm.x86.avx2.pmadd.wd
// CHECK-NOT: llvm.x86.avx2.pmadd.ub.sw
func.func @signed_matmul(%x: !f, %w: !bq) -> tensor<64x32xf32> {
  %q = tq.quantize %x : !f -> !aq
  %c = tq.matmul %q, %w : !aq, !bq -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// -----

!t = tensor<2x6x6x16xf32>
!xq = !tq.tiled<2x6x6x16xi8:8, f32, tile = 16x16, dims = [0, 3]>
!wq = !tq.tiled<16x3x3x16xi8:8, f32, tile = 16x16, dims = [0, 3]>
// CHECK-LABEL: llvm.func @relu_conv_kernel(
// CHECK: llvm.x86.avx2.pmadd.ub.sw
func.func @relu_conv(%x: !t, %w: !wq) -> tensor<2x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : !t) outs(%e : !t) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %zero, %a : f32
    linalg.yield %m : f32
  } -> !t
  %q = tq.quantize %r : !t -> !xq
  %c = tq.conv2d %q, %w : !xq, !wq -> tensor<2x4x4x16xf32>
  return %c : tensor<2x4x4x16xf32>
}
