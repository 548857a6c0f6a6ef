// RUN: tq-opt %s -tq-quantize-constants -split-input-file | FileCheck %s
// RUN: tq-opt %s -tq-quantize-constants=max-elements=3 -split-input-file | FileCheck %s --check-prefix=SMALL

// f32 scale: step = 4 / 127; values round(x / step).
// CHECK-LABEL: func.func @scaled
// CHECK: %[[Q:.*]] = tq.constant {scales = dense<0.0314960629> : tensor<1x1xf32>, values = dense<{{\[\[}}32, -64], [16, 127]]> : tensor<2x2xi8>} : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = f32>
// CHECK-NEXT: return %[[Q]]
// SMALL-LABEL: func.func @scaled
// SMALL: tq.quantize
func.func @scaled() -> !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]> {
  %c = arith.constant dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>
  %q = tq.quantize %c : tensor<2x2xf32> -> !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
  return %q : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1]>
}

// -----

// Power of two: s = ceil(log2(4 / 127)) = ceil(-4.99) = -4, step 2^-4
// (2^-5 * 127 < 4 would clip the largest value).
// CHECK-LABEL: func.func @pow2
// CHECK: tq.constant {scales = dense<6.250000e-02> : tensor<1x1xf32>, values = dense<{{\[\[}}16, -32], [8, 64]]> : tensor<2x2xi8>}
func.func @pow2() -> !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = pow2> {
  %c = arith.constant dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>
  %q = tq.quantize %c : tensor<2x2xf32> -> !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = pow2>
  return %q : !tq.tiled<2x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = pow2>
}

// -----

// Offset: o = (4 + -2) / 2 = 1, Z2 = 3, step 3 / 7 at 4 bits; two tiles of
// 1x2, the second one all zero (step 0, offset 0).
// CHECK-LABEL: func.func @offset_partial
// CHECK: tq.constant {offsets = dense<{{\[\[}}1.000000e+00, 0.000000e+00]]> : tensor<1x2xf32>, scales = dense<{{\[\[}}0.428571433, 0.000000e+00]]> : tensor<1x2xf32>, values = dense<{{\[\[}}7, -7, 0]]> : tensor<1x3xi4>}
func.func @offset_partial() -> !tq.tiled<1x3xi4:4, f32, tile = 2x2, dims = [0, 1], offset> {
  %c = arith.constant dense<[[4.0, -2.0, 0.0]]> : tensor<1x3xf32>
  %q = tq.quantize %c : tensor<1x3xf32> -> !tq.tiled<1x3xi4:4, f32, tile = 2x2, dims = [0, 1], offset>
  return %q : !tq.tiled<1x3xi4:4, f32, tile = 2x2, dims = [0, 1], offset>
}

// -----

// Run-time bit widths are not evaluated at compile time.
// CHECK-LABEL: func.func @dynamic_bits
// CHECK: tq.quantize
func.func @dynamic_bits(%n: i32) -> !tq.tiled<2x2xi8:?, f32, tile = 2x2, dims = [0, 1]> {
  %c = arith.constant dense<1.0> : tensor<2x2xf32>
  %q = tq.quantize %c bits(%n : i32) : tensor<2x2xf32> -> !tq.tiled<2x2xi8:?, f32, tile = 2x2, dims = [0, 1]>
  return %q : !tq.tiled<2x2xi8:?, f32, tile = 2x2, dims = [0, 1]>
}

// -----

// A weight held as a dense resource (how tq-import-onnx writes large
// initializers) is quantized at compile time too.
// CHECK-LABEL: func.func @resource
// CHECK-NOT: tq.quantize
// CHECK: tq.constant {scales = dense<{{\[}}[0.0314960629], [0.0629921257]]> : tensor<2x1xf32>, values = dense<{{\[}}[32, 64], [95, 127], [79, 95], [111, 127]]> : tensor<4x2xi8>}
func.func @resource() -> !tq.tiled<4x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = f32> {
  %w = arith.constant dense_resource<w0> : tensor<4x2xf32>
  %q = tq.quantize %w : tensor<4x2xf32> -> !tq.tiled<4x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = f32>
  return %q : !tq.tiled<4x2xi8:8, f32, tile = 2x2, dims = [0, 1], scale = f32>
}
{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041"
    }
  }
#-}

// -----

// From 256 elements on, the data is a dense resource blob named after the
// layer (its location), printed once at the end of the module; i16
// storage too. Blob: its alignment (4 bytes), then the values. Equal
// values stay a splat.
// CHECK-LABEL: func.func @large
// CHECK: tq.constant {scales = dense<0.00787401571> : tensor<1x1xf32>, values = dense_resource<fc.q> : tensor<16x16xi8>}
// CHECK: tq.constant {{.*}}values = dense_resource<fc16.q> : tensor<16x16xi16>}
// CHECK: tq.constant {{.*}}values = dense<127> : tensor<16x16xi8>}
// CHECK: fc.q: "0x01000000{{(7F81)+}}"
// CHECK: fc16.q: "0x02000000{{(FF0701F8)+}}"
func.func @large() -> (!tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]>, !tq.tiled<16x16xi16:12, f32, tile = 16x16, dims = [0, 1]>, !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]>) {
  %c = arith.constant dense<[[1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0]]> : tensor<16x16xf32>
  %one = arith.constant dense<1.0> : tensor<16x16xf32>
  %q = tq.quantize %c : tensor<16x16xf32> -> !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]> loc("fc")
  %r = tq.quantize %c : tensor<16x16xf32> -> !tq.tiled<16x16xi16:12, f32, tile = 16x16, dims = [0, 1]> loc("fc16")
  %s = tq.quantize %one : tensor<16x16xf32> -> !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]> loc("splat")
  return %q, %r, %s : !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]>, !tq.tiled<16x16xi16:12, f32, tile = 16x16, dims = [0, 1]>, !tq.tiled<16x16xi8:8, f32, tile = 16x16, dims = [0, 1]>
}
