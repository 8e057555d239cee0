// RUN: pk-opt %s --pk-approximate-math-for-spirv | FileCheck %s
// RUN: pk-opt %s --pk-approximate-math-for-spirv=float64=false | FileCheck %s --check-prefix=F32POW
// RUN: pk-opt %s --pk-approximate-math-for-spirv --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s --check-prefix=EXEC

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

// Other math ops are not touched.
// CHECK-LABEL: func.func @others
// CHECK: math.sqrt %{{.*}} : f32
// CHECK: math.sqrt %{{.*}} : f64
func.func @others(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.sqrt %x : f32
  %1 = math.sqrt %y : f64
  return %0, %1 : f32, f64
}

// pow is |x| ** y in float64 arithmetic (or exp(y * log|x|) in float32
// without float64) with C's special cases spelled out (GLSL's pow is
// undefined for x <= 0).
// CHECK-LABEL: func.func @pow
// CHECK-NOT: math.powf
// CHECK: math.absf
// CHECK: math.floor
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: arith.fptosi %{{.*}} : f64 to i64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.cmpf uno
// CHECK-NOT: math.log
// CHECK-NOT: math.exp
// F32POW-LABEL: func.func @pow
// F32POW-NOT: f64
// F32POW: arith.cmpf uno
func.func @pow(%x: f32, %y: f32) -> f32 {
  %0 = math.powf %x, %y : f32
  return %0 : f32
}

// sin and cos of |x| >= 2 reduce |x| modulo pi/2 in 64-bit integer
// arithmetic (Payne-Hanek) and pick the quadrant.
// CHECK-LABEL: func.func @sin_cos
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.muli %{{.*}} : i64
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: math.sin
// CHECK: math.cos
func.func @sin_cos(%x: f32) -> (f32, f32) {
  %0 = math.sin %x : f32
  %1 = math.cos %x : f32
  return %0, %1 : f32, f32
}

// tanh saturates exactly; log of subnormals and exp into them are scaled;
// log and exp become polynomials (GLSL's are loose).
// CHECK-LABEL: func.func @tanh_log_exp
// CHECK: arith.cmpf oge
// CHECK: math.copysign
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: math.log
// CHECK-NOT: math.exp
// CHECK: return
func.func @tanh_log_exp(%x: f32) -> (f32, f32, f32) {
  %0 = math.tanh %x : f32
  %1 = math.log %x : f32
  %2 = math.exp %x : f32
  return %0, %1, %2 : f32, f32, f32
}

// Run on the CPU, the expansions give NumPy's float32 results.
// sin and cos of 1e30, 3e38 and -1e10 (needing 120+ bits of 2/pi), of 1e5,
// 7 and 1.5:
// EXEC: -0.791163
// EXEC-NEXT: -0.611605
// EXEC-NEXT: 0.874905
// EXEC-NEXT: -0.484295
// EXEC-NEXT: 0.487506
// EXEC-NEXT: 0.87312
// EXEC-NEXT: 0.0357488
// EXEC-NEXT: -0.999361
// EXEC-NEXT: 0.656987
// EXEC-NEXT: 0.753902
// EXEC-NEXT: 0.997495
// EXEC-NEXT: 0.0707372
// pow: (-2) ** 2.5 = nan, 0 ** -0.5 = inf, -0 ** -3 = -inf, (-8) ** 3 = -512,
// 2 ** -0.5, inf ** 0 = 1, 1 ** nan = 1, (-1) ** inf = 1, 0.5 ** -inf = inf:
// EXEC-NEXT: {{^-?nan$}}
// EXEC-NEXT: inf
// EXEC-NEXT: -inf
// EXEC-NEXT: -512
// EXEC-NEXT: 0.707107
// EXEC-NEXT: 1
// EXEC-NEXT: 1
// EXEC-NEXT: 1
// EXEC-NEXT: inf
// tanh(20) = 1, tanh(1e-30) = 1e-30, log(1e-40) = -92.1034, exp(-95) =
// 5.521e-42:
// EXEC-NEXT: 1
// EXEC-NEXT: 1e-30
// EXEC-NEXT: -92.1034
// EXEC-NEXT: 5.52112e-42
// pow correctly rounded, as bits: 7 ** -1, 3 ** 0.5, 0.1 ** 2, 1e10 ** -0.5
// (NumPy's float32 power is an ulp off on the first three), 2 ** -149 (the
// smallest subnormal), 2 ** -150.5 (0):
// EXEC-NEXT: 1041385765
// EXEC-NEXT: 1071494103
// EXEC-NEXT: 1008981771
// EXEC-NEXT: 925353388
// EXEC-NEXT: 1
// EXEC-NEXT: 0
func.func @print_sin_cos(%x: f32) {
  %s, %c = func.call @sin_cos(%x) : (f32) -> (f32, f32)
  vector.print %s : f32
  vector.print %c : f32
  return
}

func.func @print_pow(%x: f32, %y: f32) {
  %p = func.call @pow(%x, %y) : (f32, f32) -> f32
  vector.print %p : f32
  return
}

func.func @print_pow_bits(%x: f32, %y: f32) {
  %p = func.call @pow(%x, %y) : (f32, f32) -> f32
  %bits = arith.bitcast %p : f32 to i32
  vector.print %bits : i32
  return
}

func.func @main() {
  %a = arith.constant 1.0e30 : f32
  func.call @print_sin_cos(%a) : (f32) -> ()
  %b = arith.constant 3.0e38 : f32
  func.call @print_sin_cos(%b) : (f32) -> ()
  %c = arith.constant -1.0e10 : f32
  func.call @print_sin_cos(%c) : (f32) -> ()
  %d = arith.constant 1.0e5 : f32
  func.call @print_sin_cos(%d) : (f32) -> ()
  %e = arith.constant 7.0 : f32
  func.call @print_sin_cos(%e) : (f32) -> ()
  %f = arith.constant 1.5 : f32
  func.call @print_sin_cos(%f) : (f32) -> ()
  %m2 = arith.constant -2.0 : f32
  %p25 = arith.constant 2.5 : f32
  func.call @print_pow(%m2, %p25) : (f32, f32) -> ()
  %zero = arith.constant 0.0 : f32
  %mhalf = arith.constant -0.5 : f32
  func.call @print_pow(%zero, %mhalf) : (f32, f32) -> ()
  %mzero = arith.constant -0.0 : f32
  %m3 = arith.constant -3.0 : f32
  func.call @print_pow(%mzero, %m3) : (f32, f32) -> ()
  %m8 = arith.constant -8.0 : f32
  %three = arith.constant 3.0 : f32
  func.call @print_pow(%m8, %three) : (f32, f32) -> ()
  %two = arith.constant 2.0 : f32
  func.call @print_pow(%two, %mhalf) : (f32, f32) -> ()
  %inf = arith.constant 0x7F800000 : f32
  func.call @print_pow(%inf, %zero) : (f32, f32) -> ()
  %one = arith.constant 1.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  func.call @print_pow(%one, %nan) : (f32, f32) -> ()
  %m1 = arith.constant -1.0 : f32
  func.call @print_pow(%m1, %inf) : (f32, f32) -> ()
  %half = arith.constant 0.5 : f32
  %minf = arith.constant 0xFF800000 : f32
  func.call @print_pow(%half, %minf) : (f32, f32) -> ()
  %twenty = arith.constant 20.0 : f32
  %tiny = arith.constant 1.0e-30 : f32
  %sub = arith.constant 1.0e-40 : f32
  %m95 = arith.constant -95.0 : f32
  %t0, %l0, %x0 = func.call @tanh_log_exp(%twenty) : (f32) -> (f32, f32, f32)
  vector.print %t0 : f32
  %t1, %l1, %x1 = func.call @tanh_log_exp(%tiny) : (f32) -> (f32, f32, f32)
  vector.print %t1 : f32
  %t2, %l2, %x2 = func.call @tanh_log_exp(%sub) : (f32) -> (f32, f32, f32)
  vector.print %l2 : f32
  %t3, %l3, %x3 = func.call @tanh_log_exp(%m95) : (f32) -> (f32, f32, f32)
  vector.print %x3 : f32
  %seven = arith.constant 7.0 : f32
  func.call @print_pow_bits(%seven, %m1) : (f32, f32) -> ()
  func.call @print_pow_bits(%three, %half) : (f32, f32) -> ()
  %tenth = arith.constant 0.1 : f32
  func.call @print_pow_bits(%tenth, %two) : (f32, f32) -> ()
  %big = arith.constant 1.0e10 : f32
  func.call @print_pow_bits(%big, %mhalf) : (f32, f32) -> ()
  %m149 = arith.constant -149.0 : f32
  func.call @print_pow_bits(%two, %m149) : (f32, f32) -> ()
  %m150 = arith.constant -150.5 : f32
  func.call @print_pow_bits(%two, %m150) : (f32, f32) -> ()
  return
}
