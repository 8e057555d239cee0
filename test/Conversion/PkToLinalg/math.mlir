// Math functions become math dialect ops in generic bodies; sigmoid is
// 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) (no overflow); log1p and expm1 are built from log and exp with the
// corrections that keep small arguments exact (not math.log1p/math.expm1,
// which math-to-llvm and math-to-spirv expand as log(1 + x), exp(x) - 1);
// log1p multiplies log(1 + x) by x / ((1 + x) - 1), a ratio near 1, so
// that huge x does not overflow, and expm1 multiplies exp(x) - 1 by
// x / log(exp(x)), for the same reason. float16 computes in float32.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @math
// CHECK: math.exp
// CHECK: math.log
// CHECK-NOT: math.log1p
// CHECK: ^bb0(%[[L1P_X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[U:.*]] = arith.addf %{{.*}}, %[[L1P_X]] : f32
// CHECK: %[[LOG_U:.*]] = math.log %[[U]] : f32
// CHECK: %[[U_MINUS_ONE:.*]] = arith.subf %[[U]], %{{.*}} : f32
// CHECK: %[[RATIO:.*]] = arith.divf %[[L1P_X]], %[[U_MINUS_ONE]] : f32
// CHECK: arith.mulf %[[LOG_U]], %[[RATIO]] : f32
// CHECK: arith.select %{{.*}}, %[[L1P_X]], %{{.*}} : f32
// CHECK-NOT: math.expm1
// CHECK: ^bb0(%[[EM1_X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[EXP_X:.*]] = math.exp %[[EM1_X]] : f32
// CHECK: %[[EXP_MINUS_ONE:.*]] = arith.subf %[[EXP_X]], %{{.*}} : f32
// CHECK: %[[LOG_EXP:.*]] = math.log %[[EXP_X]] : f32
// CHECK: %[[EM1_RATIO:.*]] = arith.divf %[[EM1_X]], %[[LOG_EXP]] : f32
// CHECK: arith.mulf %[[EXP_MINUS_ONE]], %[[EM1_RATIO]] : f32
// CHECK: arith.select %{{.*}}, %[[EM1_X]], %{{.*}} : f32
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: math.tanh
// CHECK: math.erf
// CHECK: math.sin
// CHECK: math.cos
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[ABS]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[POS:.*]] = arith.cmpf oge, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[NUM:.*]] = arith.select %[[POS]], %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT: %[[SIG:.*]] = arith.divf %[[NUM]], %[[SUM]] : f32
// CHECK: math.powf
pk.kernel @math(%x: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.exp %0 : tensor<4xf32>
  %2 = pk.log %1 : tensor<4xf32>
  %3 = pk.log1p %2 : tensor<4xf32>
  %4 = pk.expm1 %3 : tensor<4xf32>
  %5 = pk.sqrt %4 : tensor<4xf32>
  %6 = pk.rsqrt %5 : tensor<4xf32>
  %t = pk.tanh %6 : tensor<4xf32>
  %7 = pk.erf %t : tensor<4xf32>
  %8 = pk.sin %7 : tensor<4xf32>
  %9 = pk.cos %8 : tensor<4xf32>
  %10 = pk.floor %9 : tensor<4xf32>
  %11 = pk.ceil %10 : tensor<4xf32>
  %12 = pk.sigmoid %11 : tensor<4xf32>
  %13 = pk.pow %12, %0 : tensor<4xf32>
  pk.store %13, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// float16 math computes in float32 and rounds once, as NumPy's does.
// CHECK-LABEL: func.func @half
// CHECK: ^bb0(%[[H:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: math.exp %[[W]] : f32
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
pk.kernel @half(%x: !pk.ref<4xf16>, %o: !pk.ref<4xf16>) {
  %0 = pk.load %x : !pk.ref<4xf16> -> tensor<4xf16>
  %1 = pk.expm1 %0 : tensor<4xf16>
  pk.store %1, %o : tensor<4xf16> -> !pk.ref<4xf16>
  pk.return
}
