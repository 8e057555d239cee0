// Conversions to the 16-bit floats leave no compiler-rt helper call: f64 ->
// f16 rounds to float32 to odd first (then once to float16: exactly
// NumPy's result), f64 -> bf16 likewise (ml_dtypes' result), and
// bf16 <-> f32 become bit operations. Checked by structure and by running
// the rounding on the CPU.
// RUN: pk-opt %s --pk-expand-narrow-float-conversions | FileCheck %s
// RUN: pk-opt %s --pk-expand-narrow-float-conversions --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @f64_to_f16
// CHECK-SAME: (%[[D:.*]]: f64)
// CHECK: %[[NEAREST:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK: %[[BACK:.*]] = arith.extf %[[NEAREST]] : f32 to f64
// CHECK: arith.cmpf one, %[[BACK]], %[[D]] : f64
// CHECK: arith.bitcast %[[NEAREST]] : f32 to i32
// CHECK: arith.ori
// CHECK: %[[ODD:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %[[ODD]] : f32 to f16
func.func @f64_to_f16(%d: f64) -> f16 {
  %0 = arith.truncf %d : f64 to f16
  return %0 : f16
}

// CHECK-LABEL: func.func @bf16
// CHECK: arith.cmpf one
// CHECK-NOT: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
func.func @bf16(%d: f64, %h: bf16) -> (bf16, f64) {
  %0 = arith.truncf %d : f64 to bf16
  %1 = arith.extf %h : bf16 to f64
  return %0, %1 : bf16, f64
}

// Two emulated bf16 operations (as arith-emulate-unsupported-floats leaves
// them, conversions marked `contract`) keep the rounding between them: the
// pair of conversions is expanded, not folded away.
// CHECK-LABEL: func.func @rounding_between
// CHECK: arith.addf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.mulf
func.func @rounding_between(%a: f32, %b: f32) -> f32 {
  %0 = arith.addf %a, %b : f32
  %1 = arith.truncf %0 fastmath<contract> : f32 to bf16
  %2 = arith.extf %1 fastmath<contract> : bf16 to f32
  %3 = arith.mulf %2, %b : f32
  return %3 : f32
}

// The float16 bits of each rounding, as NumPy's astype gives them:
// 1 + 2^-11 + 2^-40 rounds up (0x3C01 = 15361; through float32 to nearest,
// a tie, it would round down to 15360); 1 + 2^-11 is a tie to even
// (15360), 1 + 3 * 2^-11 too (0x3C02 = 15362); 65519.99 is 65504 (0x7BFF =
// 31743) and 65520 overflows (0x7C00 = 31744); 2^-25 ties to 0 and
// 2^-25 + 2^-60 is the least subnormal (1); -0.0 is 0x8000 (-32768).
// EXEC: 15361
// EXEC-NEXT: 15360
// EXEC-NEXT: 15362
// EXEC-NEXT: 31743
// EXEC-NEXT: 31744
// EXEC-NEXT: 0
// EXEC-NEXT: 1
// EXEC-NEXT: -32768
// bfloat16: 2^40 + 2^32 + 1 rounds up to 0x5381 = 21377 (through float32
// to nearest, 2^40 + 2^32, a tie, it became 0x5380); 1 + 2^-8 ties to even
// (0x3F80 = 16256).
// EXEC-NEXT: 21377
// EXEC-NEXT: 16256
func.func @print_bf16(%d: f64) {
  %zero = arith.constant 0.0 : bf16
  %h, %unused = func.call @bf16(%d, %zero) : (f64, bf16) -> (bf16, f64)
  %bits = arith.bitcast %h : bf16 to i16
  vector.print %bits : i16
  return
}
func.func @print(%d: f64) {
  %h = func.call @f64_to_f16(%d) : (f64) -> f16
  %bits = arith.bitcast %h : f16 to i16
  vector.print %bits : i16
  return
}

func.func @main() {
  %c0 = arith.constant 1.0004882812509095 : f64
  func.call @print(%c0) : (f64) -> ()
  %c1 = arith.constant 1.00048828125 : f64
  func.call @print(%c1) : (f64) -> ()
  %c2 = arith.constant 1.00146484375 : f64
  func.call @print(%c2) : (f64) -> ()
  %c3 = arith.constant 65519.99 : f64
  func.call @print(%c3) : (f64) -> ()
  %c4 = arith.constant 65520.0 : f64
  func.call @print(%c4) : (f64) -> ()
  %c5 = arith.constant 2.9802322387695312e-08 : f64
  func.call @print(%c5) : (f64) -> ()
  %c6 = arith.constant 2.9802322388562674e-08 : f64
  func.call @print(%c6) : (f64) -> ()
  %c7 = arith.constant -0.0 : f64
  func.call @print(%c7) : (f64) -> ()
  %c8 = arith.constant 1103806595073.0 : f64
  func.call @print_bf16(%c8) : (f64) -> ()
  %c9 = arith.constant 1.00390625 : f64
  func.call @print_bf16(%c9) : (f64) -> ()
  return
}
