// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-inline-cpu-math))' | FileCheck %s

// float32 tanh, scalar or vector, becomes arithmetic (a clamped rational
// polynomial, tiny inputs kept as they are); float64 tanh stays for libm.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: math.tanh
// CHECK: arith.divf
// CHECK: arith.select
func.func @scalar(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}

// CHECK-LABEL: func.func @vector
// CHECK-NOT: math.tanh
// CHECK: arith.divf {{.*}} : vector<16xf32>
func.func @vector(%x: vector<16xf32>) -> vector<16xf32> {
  %t = math.tanh %x : vector<16xf32>
  return %t : vector<16xf32>
}

// CHECK-LABEL: func.func @double
// CHECK: math.tanh {{.*}} : f64
func.func @double(%x: f64) -> f64 {
  %t = math.tanh %x : f64
  return %t : f64
}
