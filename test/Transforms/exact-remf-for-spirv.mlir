// arith.remf becomes an exact remainder on the operands' bits (no OpFRem),
// checked here by structure and by running it on the CPU.
// RUN: pk-opt %s --split-input-file --pk-exact-remf-for-spirv | FileCheck %s
// RUN: pk-opt %s --split-input-file --pk-exact-remf-for-spirv --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @rem_f32
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK-NOT: arith.remf
// CHECK: arith.bitcast %[[X]] : f32 to i32
// CHECK: scf.for {{.*}} step %c39 iter_args
// CHECK: arith.remui
// CHECK: arith.shli
// The loop runs at most (254 - 2) / 39 + 1 = 7 times (pk-check-loop-budget
// counts with this).
// CHECK: } {pk.max_trip_count = 7 : i64}
// CHECK: arith.uitofp %{{.*}} : i64 to f32
// CHECK: math.copysign
func.func @rem_f32(%x: f32, %y: f32) -> f32 {
  %0 = arith.remf %x, %y : f32
  return %0 : f32
}

// float64 takes 10 quotient bits per iteration, at most 205 iterations;
// float16 computes in f32.
// CHECK-LABEL: func.func @rem_f64_f16
// CHECK: scf.for {{.*}} step %c10
// CHECK: } {pk.max_trip_count = 205 : i64}
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @rem_f64_f16(%x: f64, %y: f64, %u: f16, %v: f16) -> (f64, f16) {
  %0 = arith.remf %x, %y : f64
  %1 = arith.remf %u, %v : f16
  return %0, %1 : f64, f16
}

// fmod(1e30, 3.3) needs ~100 quotient bits: x - y * trunc(x / y) gives 0 or
// garbage; the exact remainder is 2.61345768 (float32).
// EXEC: {{^}}2.61346{{$}}
// fmod(-7.5, 2) = -1.5; fmod(5, inf) = 5; fmod(1, 0) and fmod(inf, 1) NaN.
// EXEC-NEXT: {{^}}-1.5{{$}}
// EXEC-NEXT: {{^}}5{{$}}
// EXEC-NEXT: {{^-?nan$}}
// EXEC-NEXT: {{^-?nan$}}
// Same exponent; subnormal operands (5 and 2 units); -0.0 keeps its sign.
// EXEC-NEXT: {{^}}7.0295e-17{{$}}
// EXEC-NEXT: {{^}}1.4013e-45{{$}}
// EXEC-NEXT: {{^}}-0{{$}}
// float64: fmod(1e300, 7.0) = 1, float16: fmod(1, 1) = 0.
// EXEC-NEXT: {{^}}1{{$}}
// EXEC-NEXT: {{^}}0{{$}}
func.func @main() {
  %x0 = arith.constant 1.0e30 : f32
  %y0 = arith.constant 3.3 : f32
  %r0 = func.call @rem_f32(%x0, %y0) : (f32, f32) -> f32
  vector.print %r0 : f32
  %x1 = arith.constant -7.5 : f32
  %y1 = arith.constant 2.0 : f32
  %r1 = func.call @rem_f32(%x1, %y1) : (f32, f32) -> f32
  vector.print %r1 : f32
  %x2 = arith.constant 5.0 : f32
  %y2 = arith.constant 0x7F800000 : f32
  %r2 = func.call @rem_f32(%x2, %y2) : (f32, f32) -> f32
  vector.print %r2 : f32
  %x3 = arith.constant 1.0 : f32
  %y3 = arith.constant 0.0 : f32
  %r3 = func.call @rem_f32(%x3, %y3) : (f32, f32) -> f32
  vector.print %r3 : f32
  %x4 = arith.constant 0x7F800000 : f32
  %y4 = arith.constant 1.0 : f32
  %r4 = func.call @rem_f32(%x4, %y4) : (f32, f32) -> f32
  vector.print %r4 : f32
  %x5 = arith.constant 2.1612641e-16 : f32
  %y5 = arith.constant 1.4583139e-16 : f32
  %r5 = func.call @rem_f32(%x5, %y5) : (f32, f32) -> f32
  vector.print %r5 : f32
  %x6 = arith.constant 7.0e-45 : f32
  %y6 = arith.constant 2.8e-45 : f32
  %r6 = func.call @rem_f32(%x6, %y6) : (f32, f32) -> f32
  vector.print %r6 : f32
  %x7 = arith.constant -0.0 : f32
  %y7 = arith.constant 1.0 : f32
  %r7 = func.call @rem_f32(%x7, %y7) : (f32, f32) -> f32
  vector.print %r7 : f32
  %big = arith.constant 1.0e300 : f64
  %seven = arith.constant 7.0 : f64
  %h = arith.constant 1.0 : f16
  %r64, %r16 = func.call @rem_f64_f16(%big, %seven, %h, %h) : (f64, f64, f16, f16) -> (f64, f16)
  vector.print %r64 : f64
  %r16x = arith.extf %r16 : f16 to f32
  vector.print %r16x : f32
  return
}
