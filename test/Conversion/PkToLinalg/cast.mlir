// pk.cast becomes a generic converting each element as NumPy's astype does.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @casts
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK: arith.extsi %{{.*}} : i8 to i64
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: arith.cmpi ne, %{{.*}}, %[[ZERO]] : i64
// CHECK: arith.uitofp %{{.*}} : i1 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[FZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK: arith.cmpf une, %{{.*}}, %[[FZERO]] : bf16
// CHECK: arith.extui %{{.*}} : i1 to i32
pk.kernel @casts(%x: !pk.ref<3xi32>, %o: !pk.ref<3xi32>) {
  %0 = pk.load %x : !pk.ref<3xi32> -> tensor<3xi32>
  %1 = pk.cast %0 : tensor<3xi32> -> tensor<3xf64>
  %2 = pk.cast %1 : tensor<3xf64> -> tensor<3xf32>
  %3 = pk.cast %2 : tensor<3xf32> -> tensor<3xi8>
  %4 = pk.cast %3 : tensor<3xi8> -> tensor<3xi64>
  %5 = pk.cast %4 : tensor<3xi64> -> tensor<3xi1>
  %6 = pk.cast %5 : tensor<3xi1> -> tensor<3xf16>
  %7 = pk.cast %6 : tensor<3xf16> -> tensor<3xbf16>
  %8 = pk.cast %7 : tensor<3xbf16> -> tensor<3xi1>
  %9 = pk.cast %8 : tensor<3xi1> -> tensor<3xi32>
  pk.store %9, %o : tensor<3xi32> -> !pk.ref<3xi32>
  pk.return
}
