// RUN: tq-opt %s -convert-tq-cpu-intrinsics | FileCheck %s

// Each dot product of the CPU kernels becomes its x86 intrinsics:
// vpdpbusd; vpmaddwd and an add; vpmaddubsw, vpmaddwd with ones and an add.

// CHECK-LABEL: func.func @dots
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// CHECK: %[[P:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: arith.addi %{{.*}}, %[[P]] : vector<8xi32>
// The unsigned operand (%u) first, then the signed one (%s).
// CHECK: %[[U:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%arg5, %arg6) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK: %[[ONES:.*]] = arith.constant dense<1> : vector<16xi16>
// CHECK: %[[Q:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[U]], %[[ONES]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: arith.addi %{{.*}}, %[[Q]] : vector<8xi32>
// CHECK: %[[U16:.*]] = llvm.call_intrinsic "llvm.x86.avx512.pmaddubs.w.512"(%{{.*}}, %{{.*}}) : (vector<64xi8>, vector<64xi8>) -> vector<32xi16>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.pmaddw.d.512"(%[[U16]], %{{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<16xi32>
// CHECK-NOT: tq.dot
func.func @dots(%acc16: vector<16xi32>, %b64: vector<64xi8>, %acc8: vector<8xi32>,
                %b32: vector<32xi8>, %h16: vector<16xi16>, %u: vector<32xi8>,
                %s: vector<32xi8>)
    -> (vector<16xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<16xi32>) {
  %0 = tq.dot_u8s8 %acc16, %b64, %b64 : vector<16xi32>, vector<64xi8>
  %1 = tq.dot_u8s8 %acc8, %b32, %b32 : vector<8xi32>, vector<32xi8>
  %2 = tq.dot_i16 %acc8, %h16, %h16 : vector<8xi32>, vector<16xi16>
  %3 = tq.dot_u8s8_pairs %acc8, %u, %s : vector<8xi32>, vector<32xi8>
  %4 = tq.dot_u8s8_pairs %acc16, %b64, %b64 : vector<16xi32>, vector<64xi8>
  return %0, %1, %2, %3, %4 : vector<16xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<16xi32>
}
