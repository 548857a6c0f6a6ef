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
// A is read in place; B packed at run time, a panel's group of 4 k at a
// time: 4 rows of 32 columns loaded as vectors (columns past N masked off),
// interleaved into 128 bytes, in offset binary for VNNI.
// AVX512-COUNT-4: vector.maskedload %{{.*}} : memref<128x32xi8>, vector<32xi1>, vector<32xi8> into vector<32xi8>
// AVX512: vector.shuffle %{{.*}}, %{{.*}} [0, 32, 64, 96, 1, 33, 65, 97, 2, 34,
// AVX512: arith.xori %{{.*}}, %{{.*}} : vector<128xi8>
// AVX512: vector.store %{{.*}} : memref<1x32x128xi8>, vector<128xi8>
// AVX512: tq.dot_u8s8 %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi32>, vector<64xi8>
// VNNI256: tq.dot_u8s8 %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<32xi8>
// A is widened to int16 once, 16 bytes at a time; B's bytes as they are
// loaded, in pairs of k.
// AVX2-NOT: tq.dot_u8s8
// AVX2: vector.load %{{.*}} : memref<64x128xi8>, vector<16xi8>
// AVX2-NEXT: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// AVX2-NEXT: vector.store %{{.*}} : memref<64x128xi16>, vector<16xi16>
// AVX2: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// AVX2: tq.dot_i16 %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<16xi16>
// GENERIC-NOT: tq.dot_u8s8
// GENERIC: arith.muli %{{.*}}, %{{.*}} : vector<16xi32>
// Each K-tile: int32 sums to f32, times sA·sB, added (no FMA).
// CHECK: arith.sitofp %{{.*}} : vector<{{8|16}}xi32> to vector<{{8|16}}xf32>
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// N = 32 is whole column blocks: every vector of C is inside, stored
// without a mask.
// CHECK-NOT: vector.maskedstore
// CHECK: vector.store %{{.*}} : memref<64x32xf32>, vector<{{8|16}}xf32>
// CHECK-NOT: vector.maskedstore
// CHECK-LABEL: func.func @ragged(
// N = 40 ends inside the second column panel: the micro-tiles of the first
// store their vectors as they are, the last panel's are masked to the
// columns left.
// CHECK: %[[INSIDE:.*]] = arith.cmpi ule, %{{.*}}, %c40 : index
// CHECK-NEXT: scf.if %[[INSIDE]] {
// CHECK-NOT: vector.maskedstore
// CHECK: vector.store %{{.*}} : memref<64x40xf32>, vector<{{8|16}}xf32>
// CHECK-NOT: vector.maskedstore
// CHECK: } else {
// CHECK: vector.maskedstore %{{.*}} : memref<64x40xf32>, vector<{{8|16}}xi1>, vector<{{8|16}}xf32>
// PAR-LABEL: func.func @gemm(
// PAR: scf.parallel
// PAR: tq.dot_u8s8
// LLVM-LABEL: llvm.func @gemm(
// LLVM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
func.func @gemm(%a: !A, %b: !B) -> tensor<64x32xf32> {
  %c = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

!B40 = !tq.tiled<128x40xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
func.func @ragged(%a: !A, %b: !B40) -> tensor<64x40xf32> {
  %c = tq.matmul %a, %b : !A, !B40 -> tensor<64x40xf32>
  return %c : tensor<64x40xf32>
}

// K = 40: the second K-tile holds 8 values and zeros after them in packed
// A. Each K-tile's first 2 steps (24 dot products of the 6 x 2 micro-tile)
// come first; the 6 steps left run for the first K-tile only.
// CHECK-LABEL: func.func @short_k(
// AVX512: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// AVX512-COUNT-24: tq.dot_u8s8
// AVX512-NEXT: scf.if %[[LAST]] -> (vector<16xi32>
// AVX512-NEXT: scf.yield
// AVX512-NEXT: } else {
// AVX512-COUNT-72: tq.dot_u8s8
// AVX512-NEXT: scf.yield
!A40 = !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
!BK40 = !tq.tiled<40x32xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
func.func @short_k(%a: !A40, %b: !BK40) -> tensor<64x32xf32> {
  %c = tq.matmul %a, %b : !A40, !BK40 -> tensor<64x32xf32>
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
// AVX2: vector.store %{{.*}} : memref<64x128xi16>, vector<16xi16>
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

// The elementwise generic after a product (here through an expand_shape
// of its rows) is applied as the kernel stores C: per vector, the bias
// loaded, added and the ReLU taken before the store. The generic is gone
// and the expand_shape reads the kernel's result.
// CHECK-LABEL: func.func @epilogue(
// CHECK-NOT: linalg.generic
// CHECK: %[[BIAS:.*]] = bufferization.to_buffer %{{.*}} : tensor<32xf32>
// CHECK: %[[B:.*]] = vector.load %[[BIAS]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %{{.*}}, %[[B]] : vector<{{8|16}}xf32>
// CHECK-NEXT: %[[Z:.*]] = vector.broadcast
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[S]], %[[Z]]
// CHECK-NEXT: vector.store %[[R]]
// CHECK-NOT: linalg.generic
// CHECK: %[[T:.*]] = bufferization.to_tensor
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.*]] = tensor.expand_shape %[[T]]
// CHECK: return %[[X]]
func.func @epilogue(%a: !A, %b: !B, %bias: tensor<32xf32>) -> tensor<2x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  %x = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 32, 32] : tensor<64x32xf32> into tensor<2x32x32xf32>
  %e = tensor.empty() : tensor<2x32x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, i, j) -> (n, i, j)>, affine_map<(n, i, j) -> (j)>, affine_map<(n, i, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %bias : tensor<2x32x32xf32>, tensor<32xf32>) outs(%e : tensor<2x32x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<2x32x32xf32>
  return %r : tensor<2x32x32xf32>
}

// Left to run after the kernel: a product that is also returned, and one
// whose generic reads a tensor computed after the product (the kernel's
// stores come before it).
// CHECK-LABEL: func.func @no_epilogue(
// CHECK-COUNT-3: linalg.generic
// CHECK: return
func.func @no_epilogue(%a: !A, %b: !B, %r: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %c = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.mulf %p, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %d = tq.matmul %a, %b : !A, !B -> tensor<64x32xf32>
  %late = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.negf %p : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d, %late : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %c, %y, %z : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}

// Bᵀ (N×K) at run time, of whole blocks of 16 groups of 4 k: each group is
// a 32-bit word of a row, so a panel is its rows transposed as words, in
// blocks of 16 rows x 16 words (64 bytes each) transposed in registers.
// AVX512-LABEL: func.func @transposed_b(
// AVX512-COUNT-16: vector.bitcast %{{.*}} : vector<64xi8> to vector<16xi32>
// AVX512: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17
// AVX512: vector.bitcast %{{.*}} : vector<16xi32> to vector<64xi8>
// AVX512: arith.xori %{{.*}}, %{{.*}} : vector<64xi8>
// AVX512: vector.store %{{.*}} : memref<1x32x128xi8>, vector<64xi8>
!BT = !tq.tiled<32x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
func.func @transposed_b(%a: !A, %b: !BT) -> tensor<64x32xf32> {
  %c = tq.matmul %a, %b {transpose_b} : !A, !BT -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// A known not to be negative (tq.nonnegative_input), on AVX2 vpmaddubsw on
// A's bytes as they are (no int16 copy), B packed in groups of 4 k as for
// VNNI but not offset (no xori, no row sums). Other targets are unchanged.
// AVX2-LABEL: func.func @nonnegative_a(
// AVX2-NOT: xori
// AVX2-NOT: memref<64x128xi16>
// AVX2: tq.dot_u8s8_pairs %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi32>, vector<32xi8>
// AVX2-NOT: tq.dot_i16
// AVX512-LABEL: func.func @nonnegative_a(
// AVX512: arith.xori
// AVX512: tq.dot_u8s8 %
func.func @nonnegative_a(%a: !A, %b: !BT) -> tensor<64x32xf32> {
  %c = tq.matmul %a, %b {transpose_b, tq.nonnegative_input} : !A, !BT -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}

// A row of 24 bytes widened for vpmaddwd: 16 at once, then 8 one by one.
// AVX2-LABEL: func.func @widen_short_rows(
// AVX2: %[[AP:.*]] = memref.alloc() {{.*}} : memref<64x24xi16>
// AVX2: scf.for %[[I:.*]] = %c0{{.*}} to %c64{{.*}} step %c1
// AVX2: scf.for %[[K:.*]] = %c0{{.*}} to %c16{{.*}} step %c16
// AVX2: vector.load %{{.*}}[%[[I]], %[[K]]] : memref<64x24xi8>, vector<16xi8>
// AVX2: vector.store %{{.*}}, %[[AP]][%[[I]], %[[K]]] : memref<64x24xi16>, vector<16xi16>
// AVX2: scf.for %[[J:.*]] = %c16{{.*}} to %c24{{.*}} step %c1
// AVX2: %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<64x24xi8>
// AVX2: %[[W:.*]] = arith.extsi %[[V]] : i8 to i16
// AVX2: memref.store %[[W]], %[[AP]][%[[I]], %[[J]]] : memref<64x24xi16>
!A24 = !tq.tiled<64x24xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
!B24 = !tq.tiled<24x16xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>
func.func @widen_short_rows(%a: !A24, %b: !B24) -> tensor<64x16xf32> {
  %c = tq.matmul %a, %b : !A24, !B24 -> tensor<64x16xf32>
  return %c : tensor<64x16xf32>
}

// 20 rows in micro-tiles of 6: the three whole ones, in one loop, index
// their rows as they are (one pointer into A for LLVM); the last, on its
// own, reads rows 20 to 23 as row 19 and stores only the rows below 20.
!A20 = !tq.tiled<20x128xi8:8, f32, tile = 32x32, dims = [0, 1], scale = f32>
// AVX512-LABEL: func.func @partial_micro_tile(
// AVX512: %[[END:.*]] = arith.minui %{{.*}}, %c18 : index
// AVX512: scf.for %{{.*}} = %{{.*}} to %[[END]] step %c6 {
// AVX512-NOT: arith.minui %{{.*}}, %c19
// AVX512-NOT: arith.cmpi ult, %{{.*}}, %c20
// AVX512: tq.dot_u8s8
// AVX512-NOT: arith.minui %{{.*}}, %c19
// AVX512-NOT: arith.cmpi ult, %{{.*}}, %c20
// AVX512: %[[LAST:.*]] = arith.cmpi ugt, %{{.*}}, %c18{{.*}} : index
// AVX512-NEXT: scf.if %[[LAST]] {
// AVX512-COUNT-6: arith.minui %{{.*}}, %c19{{.*}} : index
// AVX512: tq.dot_u8s8
// AVX512: arith.cmpi ult, %{{.*}}, %c20{{.*}} : index
// AVX512: vector.store %{{.*}} : memref<20x32xf32>, vector<16xf32>
// With 2 threads, two blocks of 12 rows: the second holds the partial
// micro-tile, under the scf.if inside the shared loop.
// PAR-LABEL: func.func @partial_micro_tile(
// PAR: scf.parallel
// PAR: scf.for %{{.*}} step %c6 {
// PAR-NOT: arith.minui %{{.*}}, %c19
// PAR: tq.dot_u8s8
// PAR: %[[LAST:.*]] = arith.cmpi ugt, %{{.*}}, %c18{{.*}} : index
// PAR-NEXT: scf.if %[[LAST]] {
// PAR: arith.minui %{{.*}}, %c19{{.*}} : index
func.func @partial_micro_tile(%a: !A20, %b: !B) -> tensor<20x32xf32> {
  %c = tq.matmul %a, %b : !A20, !B -> tensor<20x32xf32>
  return %c : tensor<20x32xf32>
}
