// RUN: tq-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(tq-cpu-split-batch{chunks=2}))" | FileCheck %s
// RUN: not tq-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(tq-cpu-split-batch{chunks=0}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tq-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(tq-cpu-split-batch{chunks=2 whole=true}))" | FileCheck %s --check-prefix=WHOLE
// A public function on 64 images becomes an scf.forall over two shares of
// 32, each running the body on its images; test/Integration/CPU/threads.py
// checks on the bundled models that the bits do not change.

// BAD: tq-cpu-split-batch: chunks must be at least 1, got 0

// With `whole` (tq-to-cpu on one thread), the same: the shares take the
// whole function.
// WHOLE-LABEL: func.func @mlp
// WHOLE: scf.forall (%{{.*}}) in (2)
// WHOLE: tq.matmul {{.*}} -> tensor<32x10xf32>
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<64x40xf32>) -> tensor<64x10xf32>
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<64x10xf32>
// CHECK: %[[R:.*]] = scf.forall (%[[T:.*]]) in (2) shared_outs(%[[O:.*]] = %[[OUT]])
// CHECK: %[[AT:.*]] = arith.muli %[[T]], %c32
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][%[[AT]], 0] [32, 40] [1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[S]] : tensor<32x40xf32>)
// CHECK: tq.quantize %[[C]] : tensor<32x40xf32> -> !tq.tiled<32x40xi8:8, f32, tile = 32x32, dims = [0, 1]{{.*}}>
// CHECK: tq.matmul {{.*}} -> tensor<32x10xf32>
// CHECK: linalg.fill {{.*}} -> tensor<32x10xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} outs({{.*}} : tensor<32x10xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[Y]] into %[[O]][%[[AT]], 0] [32, 10] [1, 1]
// CHECK: return %[[R]]
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @mlp(%x: tensor<64x40xf32>) -> tensor<64x10xf32> {
  %w = tq.constant {scales = dense<0.01> : tensor<1x2xf32>, values = dense<3> : tensor<10x40xi8>} : !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %b = arith.constant dense<0.5> : tensor<10xf32>
  %zero = arith.constant 0.0 : f32
  %q = tq.quantize %x : tensor<64x40xf32> -> !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %m = tq.matmul %q, %w {transpose_b} : !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x10xf32>
  %e = tensor.empty() : tensor<64x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x10xf32>) -> tensor<64x10xf32>
  %y = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<64x10xf32>, tensor<10xf32>) outs(%f : tensor<64x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %r = arith.maximumf %s, %o : f32
    linalg.yield %r : f32
  } -> tensor<64x10xf32>
  return %y : tensor<64x10xf32>
}

// -----

// Tokens of an image on the rows (64 images of 8): a share is 256 rows,
// eight whole tiles of 32, and the batched product keeps its images.
// CHECK-LABEL: func.func @tokens
// CHECK: scf.forall
// CHECK: tensor.collapse_shape {{.*}} : tensor<32x8x16xf32> into tensor<256x16xf32>
// CHECK: tq.quantize {{.*}} -> !tq.tiled<256x16xi8:8, f32, tile = 32x32, dims = [0, 1]{{.*}}>
// CHECK: tensor.expand_shape {{.*}} output_shape [32, 8, 16] : tensor<256x16xf32> into tensor<32x8x16xf32>
// CHECK: tq.transpose {{.*}} -> !tq.tiled<32x16x8xi8:8, f32, tile = 32x32, dims = [1, 2]{{.*}}>
// CHECK: tq.matmul {{.*}} -> tensor<32x8x8xf32>
func.func @tokens(%x: tensor<64x8x16xf32>) -> tensor<64x8x8xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<64x8x16xf32> into tensor<512x16xf32>
  %q = tq.quantize %c : tensor<512x16xf32> -> !tq.tiled<512x16xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %q : !tq.tiled<512x16xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<512x16xf32>
  %e = tensor.expand_shape %d [[0, 1], [2]] output_shape [64, 8, 16] : tensor<512x16xf32> into tensor<64x8x16xf32>
  %k = tq.quantize %e : tensor<64x8x16xf32> -> !tq.tiled<64x8x16xi8:8, f32, tile = 32x32, dims = [1, 2]>
  %kt = tq.transpose %k [0, 2, 1] : !tq.tiled<64x8x16xi8:8, f32, tile = 32x32, dims = [1, 2]> -> !tq.tiled<64x16x8xi8:8, f32, tile = 32x32, dims = [1, 2]>
  %s = tq.matmul %k, %kt : !tq.tiled<64x8x16xi8:8, f32, tile = 32x32, dims = [1, 2]>, !tq.tiled<64x16x8xi8:8, f32, tile = 32x32, dims = [1, 2]> -> tensor<64x8x8xf32>
  return %s : tensor<64x8x8xf32>
}

// -----

// Shares of 24 rows would cut a 32-row tile in two: not split.
// CHECK-LABEL: func.func @straddle
// CHECK-NOT: scf.forall
// CHECK: return
func.func @straddle(%x: tensor<48x40xf32>) -> tensor<48x40xf32> {
  %q = tq.quantize %x : tensor<48x40xf32> -> !tq.tiled<48x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %q : !tq.tiled<48x40xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<48x40xf32>
  return %d : tensor<48x40xf32>
}

// -----

// A width chosen at run time is one per tensor: not split.
// CHECK-LABEL: func.func @runtime_width
// CHECK-NOT: scf.forall
// CHECK: return
func.func @runtime_width(%x: tensor<64x32xf32>, %n: i32) -> tensor<64x32xf32> {
  %q = tq.quantize %x bits(%n : i32) : tensor<64x32xf32> -> !tq.tiled<64x32xi16:?, f32, tile = 32x32, dims = [0, 1]>
  %d = tq.dequantize %q : !tq.tiled<64x32xi16:?, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x32xf32>
  return %d : tensor<64x32xf32>
}

// -----

// A sum over the images: not split.
// CHECK-LABEL: func.func @over_images
// CHECK-NOT: scf.forall
// CHECK: return
#in = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d1)>
func.func @over_images(%x: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#in, #sum], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<64x16xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [#in, #sum, #in], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<64x16xf32>, tensor<16xf32>) outs(%e2 : tensor<64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// 3 images do not make two equal shares; a private function is not split.
// CHECK-LABEL: func.func @odd
// CHECK-NOT: scf.forall
// CHECK-LABEL: func.func private @inner
// CHECK-NOT: scf.forall
// CHECK: return
func.func @odd(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  return %x : tensor<3x8xf32>
}
func.func private @inner(%x: tensor<64x8xf32>) -> tensor<64x8xf32> {
  return %x : tensor<64x8xf32>
}

// -----

// 16 images in tiles of 8: split in two shares of 8, but not with `whole`
// (fewer than 32 images a share).
// CHECK-LABEL: func.func @small_batch
// CHECK: scf.forall
// CHECK: tq.matmul {{.*}} -> tensor<8x10xf32>
// WHOLE-LABEL: func.func @small_batch
// WHOLE-NOT: scf.forall
// WHOLE: return
func.func @small_batch(%x: tensor<16x40xf32>) -> tensor<16x10xf32> {
  %w = tq.constant {scales = dense<0.01> : tensor<2x5xf32>, values = dense<3> : tensor<10x40xi8>} : !tq.tiled<10x40xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %q = tq.quantize %x : tensor<16x40xf32> -> !tq.tiled<16x40xi8:8, f32, tile = 8x8, dims = [0, 1]>
  %m = tq.matmul %q, %w {transpose_b} : !tq.tiled<16x40xi8:8, f32, tile = 8x8, dims = [0, 1]>, !tq.tiled<10x40xi8:8, f32, tile = 8x8, dims = [0, 1]> -> tensor<16x10xf32>
  return %m : tensor<16x10xf32>
}

// -----

// Elementwise ops only: split into shares (the whole function is), but not
// with `whole`: without a product there is nothing to keep in cache.
// CHECK-LABEL: func.func @elementwise_only
// CHECK: scf.forall
// WHOLE-LABEL: func.func @elementwise_only
// WHOLE-NOT: scf.forall
// WHOLE: return
func.func @elementwise_only(%x: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %e = tensor.empty() : tensor<64x16xf32>
  %y = linalg.exp ins(%x : tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// A body that reads the batch loop's index (ONNX Trilu's mask) would see a
// share's rows, not the whole batch's: not split.
// CHECK-LABEL: func.func @reads_batch_index
// CHECK-NOT: scf.forall
// CHECK: linalg.index 0
// CHECK: return
// WHOLE-LABEL: func.func @reads_batch_index
// WHOLE-NOT: scf.forall
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @reads_batch_index(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sge, %i, %j : index
    %r = arith.select %keep, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

// A slice that drops a dim (a group of a grouped convolution's input, as
// tq-partition-ppu leaves it in the host code) is not taken: the shares
// would hold it undropped. Here nothing is left to split.
// CHECK-LABEL: func.func @rank_reducing_slice
// CHECK-NOT: scf.forall
// CHECK: tensor.extract_slice {{.*}} : tensor<2x2x2x8x8xf32> to tensor<2x2x8x8xf32>
func.func @rank_reducing_slice(%x: tensor<2x4x8x8xf32>) -> tensor<2x8x8x2xf32> {
  %e = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 8, 8] : tensor<2x4x8x8xf32> into tensor<2x2x2x8x8xf32>
  %s = tensor.extract_slice %e[0, 0, 0, 0, 0] [2, 1, 2, 8, 8] [1, 1, 1, 1, 1] : tensor<2x2x2x8x8xf32> to tensor<2x2x8x8xf32>
  %o = tensor.empty() : tensor<2x8x8x2xf32>
  %t = linalg.transpose ins(%s : tensor<2x2x8x8xf32>) outs(%o : tensor<2x8x8x2xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<2x8x8x2xf32>
}

// -----

// An op with effects that does not read the batch would run once per
// share: not split.
// CHECK-LABEL: func.func @effects
// CHECK-NOT: scf.forall
// CHECK: call @log()
func.func private @log()
func.func @effects(%x: tensor<64x8xf32>) -> tensor<64x8xf32> {
  func.call @log() : () -> ()
  return %x : tensor<64x8xf32>
}

// -----

// A region that reads an image tensor from above (here not through the
// op's operands): not split.
// CHECK-LABEL: func.func @region_reads_images
// CHECK-NOT: scf.forall
// CHECK: scf.if
func.func @region_reads_images(%x: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %true = arith.constant true
  %r = scf.if %true -> (tensor<64x8xf32>) {
    scf.yield %x : tensor<64x8xf32>
  } else {
    scf.yield %x : tensor<64x8xf32>
  }
  return %r : tensor<64x8xf32>
}

// -----

// A training step: the forward product and the gradient's quantization run
// per share, the weight and bias gradients (sums over the images) after.
// The weights are quantized once, before. The stochastic rounding of a
// share draws the noise of its rows' places in the whole tensor: share t
// starts at element 320·t, and the seed moves by 320·K⁻¹ (K = 0x9E3779B9)
// per share, 1609280320 modulo 2^32. The tiled values read after the
// shares leave as their values and steps and are put together again.
// With `whole`, not split: the sums would be left after the shares.
// WHOLE-LABEL: func.func @step
// WHOLE-NOT: scf.forall
// WHOLE: return
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[W:[^:]*]]: tensor<10x40xf32> {tq.parameter}, %[[X:[^:]*]]: tensor<64x40xf32> {tq.batch}, %[[DY:[^:]*]]: tensor<64x10xf32> {tq.batch}, %[[IT:[^:]*]]: i32)
// CHECK: %[[WQ:.*]] = tq.quantize %[[W]]
// CHECK: %[[R:.*]]:6 = scf.forall (%[[T:.*]]) in (2) shared_outs(
// CHECK: %[[Q:.*]] = tq.quantize {{.*}} : tensor<32x40xf32> -> !tq.tiled<32x40xi8
// CHECK: tq.matmul %[[Q]], %[[WQ]] {transpose_b}
// CHECK: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK: %[[SHIFT:.*]] = arith.muli %[[T32]], %c1609280320_i32
// CHECK: %[[OFF:.*]] = arith.addi %[[IT]], %[[SHIFT]]
// CHECK: %[[GQ:.*]] = tq.quantize {{.*}} rounding stochastic seed_offset(%[[OFF]]) {seed = 3 : i64} : tensor<32x10xf32>
// CHECK: tq.matmul %[[GQ]], %[[WQ]] : {{.*}} -> tensor<32x40xf32>
// CHECK-DAG: builtin.unrealized_conversion_cast %[[GQ]] : !tq.tiled<32x10xi8{{.*}}> to tensor<32x10xi8>, tensor<1x1xf32>
// CHECK-DAG: builtin.unrealized_conversion_cast %[[Q]] : !tq.tiled<32x40xi8{{.*}}> to tensor<32x40xi8>, tensor<1x2xf32>
// CHECK: scf.forall.in_parallel
// CHECK-COUNT-6: tensor.parallel_insert_slice
// CHECK: %[[GQW:.*]] = builtin.unrealized_conversion_cast %[[R]]#{{.*}}, %[[R]]#{{.*}} : tensor<64x10xi8>, tensor<2x1xf32> to !tq.tiled<64x10xi8
// CHECK: %[[QW:.*]] = builtin.unrealized_conversion_cast %[[R]]#{{.*}}, %[[R]]#{{.*}} : tensor<64x40xi8>, tensor<2x2xf32> to !tq.tiled<64x40xi8
// CHECK: %[[DW:.*]] = tq.matmul %[[GQW]], %[[QW]] {transpose_a}
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: return %[[DW]], %[[DB]], %[[R]]#
#rows = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @step(%w: tensor<10x40xf32> {tq.parameter}, %x: tensor<64x40xf32> {tq.batch}, %dy: tensor<64x10xf32> {tq.batch}, %it: i32) -> (tensor<10x40xf32>, tensor<10xf32>, tensor<64x40xf32>) {
  %q = tq.quantize %x : tensor<64x40xf32> -> !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %wq = tq.quantize %w : tensor<10x40xf32> -> !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %m = tq.matmul %q, %wq {transpose_b} : !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x10xf32>
  %e = tensor.empty() : tensor<64x10xf32>
  %g = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%m, %dy : tensor<64x10xf32>, tensor<64x10xf32>) outs(%e : tensor<64x10xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<64x10xf32>
  %gq = tq.quantize %g rounding stochastic seed_offset(%it) {seed = 3 : i64} : tensor<64x10xf32> -> !tq.tiled<64x10xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %dx = tq.matmul %gq, %wq : !tq.tiled<64x10xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x40xf32>
  %dw = tq.matmul %gq, %q {transpose_a} : !tq.tiled<64x10xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<10x40xf32>
  %zero = arith.constant 0.0 : f32
  %e10 = tensor.empty() : tensor<10xf32>
  %f10 = linalg.fill ins(%zero : f32) outs(%e10 : tensor<10xf32>) -> tensor<10xf32>
  %db = linalg.generic {indexing_maps = [#rows, #col], iterator_types = ["reduction", "parallel"]} ins(%g : tensor<64x10xf32>) outs(%f10 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  return %dw, %db, %dx : tensor<10x40xf32>, tensor<10xf32>, tensor<64x40xf32>
}

// -----

// Without a matmul or a convolution in the shares, a function with ops
// left after them is not split: the fork would cost more than it saves.
// CHECK-LABEL: func.func @no_product
// CHECK-NOT: scf.forall
// CHECK: return
func.func @no_product(%x: tensor<64x16xf32>) -> (tensor<64x16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<64x16xf32>
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%y : tensor<64x16xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %o, %a : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  return %y, %s : tensor<64x16xf32>, tensor<16xf32>
}

// -----

// Pooling's gradient writes strided slices of an empty tensor: the empty
// tensor and its slices are cut to the share where the share uses them.
// CHECK-LABEL: func.func @strided_slices
// CHECK: scf.forall
// CHECK: %[[E:.*]] = tensor.empty() : tensor<32x8x4xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[E]][0, 0, 1] [32, 8, 2] [1, 1, 2]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<32x8x2xf32>)
// CHECK: tensor.insert_slice %[[Y]] into %[[E]][0, 0, 1] [32, 8, 2] [1, 1, 2]
func.func @strided_slices(%x: tensor<64x8x2xf32>) -> tensor<64x8x4xf32> {
  %e = tensor.empty() : tensor<64x8x4xf32>
  %s = tensor.extract_slice %e[0, 0, 1] [64, 8, 2] [1, 1, 2] : tensor<64x8x4xf32> to tensor<64x8x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<64x8x2xf32>) outs(%s : tensor<64x8x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<64x8x2xf32>
  %r = tensor.insert_slice %y into %e[0, 0, 1] [64, 8, 2] [1, 1, 2] : tensor<64x8x2xf32> into tensor<64x8x4xf32>
  return %r : tensor<64x8x4xf32>
}

// -----

// A layout op whose result only the ops after the shares read runs after
// them: the matmul's result leaves the shares as it is, and is transposed
// whole. With `whole`, not split.
// WHOLE-LABEL: func.func @sink
// WHOLE-NOT: scf.forall
// WHOLE: return
// CHECK-LABEL: func.func @sink
// CHECK: scf.forall
// CHECK: tq.matmul
// CHECK-NOT: linalg.transpose
// CHECK: tensor.parallel_insert_slice {{.*}} : tensor<32x10xf32> into tensor<64x10xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<64x10xf32>) outs(%{{.*}} : tensor<10x64xf32>)
func.func @sink(%w: tensor<10x40xf32> {tq.parameter}, %x: tensor<64x40xf32>) -> tensor<10xf32> {
  %q = tq.quantize %x : tensor<64x40xf32> -> !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %wq = tq.quantize %w : tensor<10x40xf32> -> !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %m = tq.matmul %q, %wq {transpose_b} : !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x10xf32>
  %e = tensor.empty() : tensor<10x64xf32>
  %t = linalg.transpose ins(%m : tensor<64x10xf32>) outs(%e : tensor<10x64xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e10 = tensor.empty() : tensor<10xf32>
  %f10 = linalg.fill ins(%zero : f32) outs(%e10 : tensor<10xf32>) -> tensor<10xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<10x64xf32>) outs(%f10 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<10xf32>
  return %s : tensor<10xf32>
}

// -----

// A layout op that the return reads stays in the shares: a function with
// nothing to run after them is split whole.
// CHECK-LABEL: func.func @ends_in_layout
// CHECK: scf.forall
// CHECK: tensor.collapse_shape {{.*}} : tensor<32x16xf32> into tensor<512xf32>
// CHECK: tensor.parallel_insert_slice {{.*}} : tensor<512xf32> into tensor<1024xf32>
func.func @ends_in_layout(%x: tensor<64x16xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<64x16xf32>
  %c = tensor.collapse_shape %y [[0, 1]] : tensor<64x16xf32> into tensor<1024xf32>
  return %c : tensor<1024xf32>
}

// -----

// A tiled value with offsets has no CPU lowering to leave the shares as:
// not split (convert-tq-to-cpu then reports it).
// CHECK-LABEL: func.func @offsets
// CHECK-NOT: scf.forall
// CHECK: return
func.func @offsets(%x: tensor<64x40xf32>, %w: tensor<10x40xf32> {tq.parameter}) -> (tensor<64x10xf32>, !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1], offset>) {
  %q = tq.quantize %x : tensor<64x40xf32> -> !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1], offset>
  %p = tq.quantize %x : tensor<64x40xf32> -> !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %wq = tq.quantize %w : tensor<10x40xf32> -> !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]>
  %m = tq.matmul %p, %wq {transpose_b} : !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1]>, !tq.tiled<10x40xi8:8, f32, tile = 32x32, dims = [0, 1]> -> tensor<64x10xf32>
  return %m, %q : tensor<64x10xf32>, !tq.tiled<64x40xi8:8, f32, tile = 32x32, dims = [0, 1], offset>
}
