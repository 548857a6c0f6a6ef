// RUN: tq-opt %s --tq-cpu-select-clamps | FileCheck %s

// CHECK-LABEL: func.func @relu(
// CHECK-SAME: %[[X:.*]]: vector<16xf32>
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[GT:.*]] = arith.cmpf ugt, %[[X]], %[[Z]] : vector<16xf32>
// CHECK: %[[R:.*]] = arith.select %[[GT]], %[[X]], %[[Z]] : vector<16xi1>, vector<16xf32>
// CHECK-NOT: arith.maximumf
// CHECK: return %[[R]]
func.func @relu(%x: vector<16xf32>) -> vector<16xf32> {
  %z = arith.constant dense<0.0> : vector<16xf32>
  %r = arith.maximumf %x, %z : vector<16xf32>
  return %r : vector<16xf32>
}

// Clip to [-1, 6], the constant first or second, on scalars.
// CHECK-LABEL: func.func @clip(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK-DAG: %[[LO:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 6.000000e+00 : f32
// CHECK: %[[GT:.*]] = arith.cmpf ugt, %[[X]], %[[LO]] : f32
// CHECK: %[[M:.*]] = arith.select %[[GT]], %[[X]], %[[LO]] : f32
// CHECK: %[[LT:.*]] = arith.cmpf ult, %[[M]], %[[HI]] : f32
// CHECK: %[[R:.*]] = arith.select %[[LT]], %[[M]], %[[HI]] : f32
// CHECK: return %[[R]]
func.func @clip(%x: f32) -> f32 {
  %lo = arith.constant -1.0 : f32
  %hi = arith.constant 6.0 : f32
  %m = arith.maximumf %lo, %x : f32
  %r = arith.minimumf %m, %hi : f32
  return %r : f32
}

// Left alone: the zero the op would not take (maximumf(+0, -0) is +0, not
// the constant; minimumf(-0, +0) is -0), a NaN constant, no constant.
// CHECK-LABEL: func.func @kept(
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK-NOT: arith.select
func.func @kept(%x: f32, %y: f32) -> (f32, f32, f32, f32) {
  %nz = arith.constant -0.0 : f32
  %pz = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %a = arith.maximumf %x, %nz : f32
  %b = arith.minimumf %x, %pz : f32
  %c = arith.maximumf %x, %nan : f32
  %d = arith.minimumf %x, %y : f32
  return %a, %b, %c, %d : f32, f32, f32, f32
}
