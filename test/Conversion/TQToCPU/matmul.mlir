// The matmul kernels convert-tq-to-cpu generates for each target (C3):
// vpdpbusd on 16 or 8 int32 lanes with weights in offset binary, vpmaddwd
// on int16 pairs without VNNI, or portable vectors; constant weights packed
// at compile time.
// RUN: tq-opt %s --convert-tq-to-cpu=target=avx512 | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: tq-opt %s --convert-tq-to-cpu=target=avxvnni | FileCheck %s --check-prefixes=CHECK,VNNI256
// RUN: tq-opt %s --convert-tq-to-cpu=target=avx2 | FileCheck %s --check-prefixes=CHECK,AVX2
// RUN: tq-opt %s --convert-tq-to-cpu=target=generic | FileCheck %s --check-prefixes=CHECK,GENERIC
// RUN: tq-opt %s --convert-tq-to-cpu="target=avx512 threads=2" | FileCheck %s --check-prefix=PAR
// RUN: tq-opt %s --tq-to-cpu=target=avx512 | FileCheck %s --check-prefix=LLVM

!A = !tq.tiled<64x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
!B = !tq.tiled<128x32xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>

// CHECK: module attributes {tq.cpu_target = "[[TARGET:avx512|avxvnni|avx2|generic]]"}
// CHECK-LABEL: func.func @gemm(
// CHECK-SAME: %{{.*}}: tensor<64x128xi8>, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<128x32xi8>, %{{.*}}: tensor<4x1xf32>) -> tensor<64x32xf32>
// A is read in place; B packed at run time (offset binary for VNNI).
// AVX512: arith.xori %{{.*}}, %c-128_i8 : i8
// AVX512: tq.dot_u8s8 %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi32>, vector<64xi8>
// VNNI256: tq.dot_u8s8 %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<32xi8>
// A is widened to int16 once; B's bytes as they are loaded, in pairs of k.
// AVX2-NOT: tq.dot_u8s8
// AVX2: arith.extsi %{{.*}} : i8 to i16
// AVX2: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// AVX2: tq.dot_i16 %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<16xi16>
// GENERIC-NOT: tq.dot_u8s8
// GENERIC: arith.muli %{{.*}}, %{{.*}} : vector<16xi32>
// Each K-tile: int32 sums to f32, times sA·sB, added (no FMA).
// CHECK: arith.sitofp %{{.*}} : vector<{{8|16}}xi32> to vector<{{8|16}}xf32>
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: vector.maskedstore
// PAR-LABEL: func.func @gemm(
// PAR: scf.parallel
// PAR: tq.dot_u8s8
// LLVM-LABEL: llvm.func @gemm(
// LLVM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
func.func @gemm(%a: !A, %b: !B) -> tensor<64x32xf32> {
  %c = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// Constant weights are packed when compiling: [panels][K/4][NR*4] bytes.
// CHECK-LABEL: func.func @const_weights(
// 3 in offset binary is 0x83 (-125); the generic kernel keeps signs.
// AVX512: arith.constant dense<-125> : tensor<1x32x128xi8>
// VNNI256: arith.constant dense<-125> : tensor<2x32x64xi8>
// [panels][K/2][NR*2], signed, for vpmaddwd.
// AVX2: arith.constant dense<3> : tensor<2x64x32xi8>
// GENERIC: arith.constant dense<3> : tensor<1x128x32xi8>
// CHECK-NOT: arith.xori
func.func @const_weights(%a: !A) -> tensor<64x32xf32> {
  %b = tq.constant {values = dense<3> : tensor<128x32xi8>,
                    scales = dense<0.5> : tensor<4x1xf32>} : !B
  %c = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// Weights of at most 4 bits are packed two per byte: 3 + 8 = 0xB in each
// nibble (0xBB = -69), half as many k-groups; the kernel splits the nibbles.
!B4 = !tq.tiled<128x32xi8:4, f32, tile = 32x32, dims = [0, 1], scale = f32>
// CHECK-LABEL: func.func @int4_weights(
// AVX512: arith.constant dense<-69> : tensor<1x16x128xi8>
// AVX512: arith.shrui %{{.*}}, %{{.*}} : vector<64xi8>
// VNNI256: arith.constant dense<-69> : tensor<2x16x64xi8>
// AVX2: arith.constant dense<3> : tensor<2x64x32xi8>
// GENERIC: arith.constant dense<3> : tensor<1x128x32xi8>
func.func @int4_weights(%a: !A) -> tensor<64x32xf32> {
  %b = tq.constant {values = dense<3> : tensor<128x32xi8>,
                    scales = dense<0.5> : tensor<4x1xf32>} : !B4
  %c = tq.matmul %a, %b : !A, !B4 -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// A7: the quantization of the lhs moves into the matmul's loop nest; the
// quantize op leaves only a dead cast of its input behind, and each block
// of rows is quantized (roundeven) before its panels use it.
// CHECK-LABEL: func.func @fused_quantize(
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : tensor<64x128xf32> to tensor<64x128xi8>, tensor<2x4xf32>
// CHECK: scf.for
// CHECK: math.roundeven
// CHECK: scf.for
// AVX512: tq.dot_u8s8
// AVX2: arith.extsi %{{.*}} : i8 to i16
// AVX2: tq.dot_i16
// PAR-LABEL: func.func @fused_quantize(
// PAR: scf.parallel
// PAR: math.roundeven
// PAR: tq.dot_u8s8
func.func @fused_quantize(%x: tensor<64x128xf32>, %b: !B) -> tensor<64x32xf32> {
  %a = tq.quantize %x : tensor<64x128xf32> -> !A
  %c = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// Given steps, and the flag that recomputes them, fuse too: each block
// branches on the flag, computing its tiles' maxima or loading the given
// steps.
// CHECK-LABEL: func.func @fused_given_steps(
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : tensor<64x128xf32> to tensor<64x128xi8>, tensor<2x4xf32>
// CHECK: scf.for
// CHECK: scf.if %{{.*}} {
// CHECK: vector.reduction <maxnumf>
// CHECK: } else {
// CHECK: memref.load %{{.*}} : memref<2x4xf32>
// AVX512: tq.dot_u8s8
func.func @fused_given_steps(%x: tensor<64x128xf32>, %s: tensor<2x4xf32>, %r: i1, %b: !B) -> tensor<64x32xf32> {
  %a = tq.quantize %x scales(%s : tensor<2x4xf32>) refresh(%r) : tensor<64x128xf32> -> !A
  %c = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}
