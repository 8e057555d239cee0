// Math functions become math dialect ops in generic bodies; sigmoid is
// 1 / (1 + exp(-x)).
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @math
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.log1p
// CHECK: math.expm1
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: math.tanh
// CHECK: math.sin
// CHECK: math.cos
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT: %[[SIG:.*]] = arith.divf %[[ONE]], %[[SUM]] : f32
// CHECK: math.powf
pk.kernel @math(%x: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.exp %0 : tensor<4xf32>
  %2 = pk.log %1 : tensor<4xf32>
  %3 = pk.log1p %2 : tensor<4xf32>
  %4 = pk.expm1 %3 : tensor<4xf32>
  %5 = pk.sqrt %4 : tensor<4xf32>
  %6 = pk.rsqrt %5 : tensor<4xf32>
  %7 = pk.tanh %6 : tensor<4xf32>
  %8 = pk.sin %7 : tensor<4xf32>
  %9 = pk.cos %8 : tensor<4xf32>
  %10 = pk.floor %9 : tensor<4xf32>
  %11 = pk.ceil %10 : tensor<4xf32>
  %12 = pk.sigmoid %11 : tensor<4xf32>
  %13 = pk.pow %12, %0 : tensor<4xf32>
  pk.store %13, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}
