// RUN: tq-opt %s -split-input-file -verify-diagnostics
// One case per !tq.tiled verifier and parser message.

// expected-error @+1 {{tiled tensor must have rank >= 2, got 1}}
func.func private @f(!tq.tiled<64xi8:8, f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{storage type must be i4, i8 or i16, got 'i7'}}
func.func private @f(!tq.tiled<64x64xi7:4, f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{storage type must be i4, i8 or i16, got 'ui8'}}
func.func private @f(!tq.tiled<64x64xui8:8, f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{bit width must be in [2, 16], got 1}}
func.func private @f(!tq.tiled<64x64xi8:1, f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{bit width must be in [2, 16], got 17}}
func.func private @f(!tq.tiled<64x64xi16:17, f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{storage type 'i4' is narrower than the bit width 8}}
func.func private @f(!tq.tiled<64x64xi4:8, f32, tile = 32x32, dims = [0, 1]>)

// -----

// The bound of a run-time width is a width that fits the storage.
// expected-error @+1 {{storage type 'i8' is narrower than the bit width 9}}
func.func private @f(!tq.tiled<64x64xi8:?(9), f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{bit width must be in [2, 16], got 1}}
func.func private @f(!tq.tiled<64x64xi8:per_tile(1), f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{expressed type must be f32, f16 or bf16, got 'f64'}}
func.func private @f(!tq.tiled<64x64xi8:8, f64, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{tile shape must have 2 sizes, got 3}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 32x32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{tile sizes must be positive, got 0x32}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 0x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{tiles must be square (VxV) or per-vector (1xV, Vx1), got 16x32}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 16x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{split dim 2 is out of range for rank 2}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [0, 2]>)

// -----

// expected-error @+1 {{split dims must be distinct, got [1, 1]}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [1, 1]>)

// -----

// expected-error @+1 {{split dims must be in increasing order, got [1, 0]}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [1, 0]>)

// -----

// expected-error @+1 {{expected an integer storage type, got 'f32'}}
func.func private @f(!tq.tiled<64x64xf32:8, f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{expected a bit width: an integer, '?' or 'per_tile'}}
func.func private @f(!tq.tiled<64x64xi8:many, f32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{expected a float expressed type, got 'i32'}}
func.func private @f(!tq.tiled<64x64xi8:8, i32, tile = 32x32, dims = [0, 1]>)

// -----

// expected-error @+1 {{unknown scale kind 'log'; expected f32, pow2 or pow2_f32}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [0, 1], scale = log>)

// -----

// expected-error @+1 {{expected 'scale' or 'offset' after ',' in a !tq.tiled type}}
func.func private @f(!tq.tiled<64x64xi8:8, f32, tile = 32x32, dims = [0, 1], zero>)

// -----

// expected-error @+1 {{bit width must be in [2, 16], got 0}}
func.func private @f(!tq.tiled<64x64xi16:?(0), f32, tile = 32x32, dims = [0, 1]>)
