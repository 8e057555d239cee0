// RUN: pk-opt %s --pk-approximate-math-for-spirv | FileCheck %s

// float32 erf becomes arithmetic that convert-math-to-spirv can lower, with
// the argument's sign (erf(-0.0) is -0.0).
// CHECK-LABEL: func.func @erf_f32
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: %[[SIGNED:.*]] = math.copysign %{{.*}}, %[[X]] : f32
// CHECK: return %[[SIGNED]]
func.func @erf_f32(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// GLSL has no float64 transcendentals: the op stays, for
// convert-math-to-spirv to reject; other math ops are not touched.
// CHECK-LABEL: func.func @erf_f64
// CHECK: math.erf %{{.*}} : f64
// CHECK: math.exp %{{.*}} : f32
func.func @erf_f64(%x: f64, %y: f32) -> (f64, f32) {
  %0 = math.erf %x : f64
  %1 = math.exp %y : f32
  return %0, %1 : f64, f32
}
