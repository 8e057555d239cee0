// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-inline-cpu-math{vector-bits=256}))' | FileCheck %s
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-inline-cpu-math{vector-bits=512}))' | FileCheck %s --check-prefix=AVX512

// float32 tanh, exp and log, scalar or vector, become arithmetic (tanh:
// -m / (2 + m) with m = expm1(-2|x|), in one branch, with x's sign; |x|
// clamped at 10 by a select that keeps NaN; 2^k from the bits of
// -2|x| / ln 2 + 1.5 * 2^23 + 127, no conversion); float64 stays for libm.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: %[[CLAMP:.*]] = arith.constant 1.000000e+01 : f32
// CHECK: %[[ABS:.*]] = math.absf %arg0
// CHECK: %[[ABOVE:.*]] = arith.cmpf olt, %[[CLAMP]], %[[ABS]]
// CHECK: arith.select %[[ABOVE]], %[[CLAMP]], %[[ABS]]
// CHECK-NOT: arith.fptosi
// CHECK: arith.shli
// CHECK: arith.divf
// CHECK: math.copysign
// CHECK-NOT: arith.select
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

// exp: x clamped to [-104, 89], k = roundeven(x log2 e), r = x - k ln 2 in
// two parts, 2^k as two powers of two built from exponent bits; NaN kept.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK: arith.maxnumf
// CHECK: arith.minnumf
// CHECK: math.roundeven
// CHECK: arith.fptosi {{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.shrsi
// CHECK: arith.shli
// CHECK: arith.bitcast {{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: arith.cmpf uno
// CHECK: arith.select
func.func @exp(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x : vector<8xf32>
  return %e : vector<8xf32>
}

// With AVX-512, a scalar exp (which loops vectorize) applies 2^k with one
// ldexp (vscalefps); vectors keep the two powers of two (the LLVM dialect's
// ldexp takes scalars); without it, scalars keep them too.
// CHECK-LABEL: func.func @exp_scalar
// CHECK-NOT: llvm.intr.ldexp
// CHECK: arith.shli
// AVX512-LABEL: func.func @exp_scalar
// AVX512: %[[K:.*]] = arith.fptosi %{{.*}} : f32 to i32
// AVX512: llvm.intr.ldexp(%{{.*}}, %[[K]]) : (f32, i32) -> f32
// AVX512-NOT: arith.shli
// AVX512: arith.cmpf uno
// AVX512-LABEL: func.func @exp_double
// AVX512: llvm.intr.ldexp(%{{.*}}, %{{.*}}) : (f64, i32) -> f64
// AVX512-LABEL: func.func @exp_vector
// AVX512-NOT: llvm.intr.ldexp
// AVX512: arith.shli {{.*}} : vector<16xi32>
func.func @exp_scalar(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}
func.func @exp_double(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}
func.func @exp_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x : vector<16xf32>
  return %e : vector<16xf32>
}

// log: subnormals scaled by 2^23, the exponent and mantissa from the bits,
// then +inf, zeros and negative (or NaN) arguments.
// CHECK-LABEL: func.func @log
// CHECK-NOT: math.log
// CHECK-DAG: arith.constant 0x4B000000 : f32
// CHECK-DAG: arith.constant 0xFF800000 : f32
// CHECK-DAG: arith.constant 0x7FC00000 : f32
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.sitofp
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf ult
// CHECK: arith.select
func.func @log(%x: f32) -> f32 {
  %l = math.log %x : f32
  return %l : f32
}

// float64 exp as Cephes' Pade form; float64 log stays for libm.
// CHECK-LABEL: func.func @double_exp_log
// CHECK-NOT: math.exp
// CHECK: arith.divf {{.*}} : f64
// CHECK: arith.shli {{.*}} : i64
// CHECK: math.log {{.*}} : f64
func.func @double_exp_log(%x: f64) -> f64 {
  %e = math.exp %x : f64
  %l = math.log %e : f64
  return %l : f64
}

// erf: -expm1(-|x| S(|x|)) with x's sign: |x| clamped at 3.92 by a select
// that keeps NaN, S's constant 2 / sqrt(pi) in two parts, no division and
// no branch; float64 stays for libm.
// CHECK-LABEL: func.func @erf
// CHECK-NOT: math.erf
// CHECK: %[[LIMIT:.*]] = arith.constant 3.920000e+00 : f32
// CHECK: %[[ABS:.*]] = math.absf %arg0
// CHECK: %[[ABOVE:.*]] = arith.cmpf olt, %[[LIMIT]], %[[ABS]]
// CHECK: arith.select %[[ABOVE]], %[[LIMIT]], %[[ABS]]
// CHECK-NOT: arith.divf
// CHECK: arith.shli
// CHECK-NOT: arith.divf
// CHECK: math.copysign
// CHECK-NOT: arith.select
// CHECK: math.erf {{.*}} : f64
func.func @erf(%x: f32, %y: f64) -> (f32, f64) {
  %e = math.erf %x : f32
  %f = math.erf %y : f64
  return %e, %f : f32, f64
}
