// Comparisons, maximum/minimum, abs and select become generics with arith
// and math bodies, with NumPy's NaN and boolean semantics.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @floats
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf une
// maximum: the first operand when greater or NaN, else the second (NumPy's
// order for 0.0 and -0.0); minimum likewise when smaller.
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[FIRST:.*]] = arith.ori %[[GT]], %[[NAN]] : i1
// CHECK-NEXT: arith.select %[[FIRST]], %[[X]], %[[Y]] : f32
// CHECK: arith.cmpf olt
// CHECK-NEXT: arith.cmpf uno
// CHECK: math.absf
// CHECK: ^bb0(%[[C:.*]]: i1, %[[T:.*]]: f32, %[[F:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.select %[[C]], %[[T]], %[[F]] : f32
pk.kernel @floats(%x: !pk.ref<4xf32>, %o: !pk.ref<4xf32>, %m: !pk.ref<4xi1>) {
  %a = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %lt = pk.lt %a, %a : tensor<4xf32>
  %ne = pk.ne %a, %a : tensor<4xf32>
  %max = pk.maximum %a, %a : tensor<4xf32>
  %min = pk.minimum %max, %a : tensor<4xf32>
  %abs = pk.abs %min : tensor<4xf32>
  %sel = pk.select %lt, %abs, %a : tensor<4xi1>, tensor<4xf32>
  pk.store %sel, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.store %ne, %m : tensor<4xi1> -> !pk.ref<4xi1>
  pk.return
}

// Signed integers; booleans compare unsigned (False < True), and their
// maximum and minimum are logical or and and (SPIR-V has no i1 max/min).
// CHECK-LABEL: func.func @ints_and_bools
// CHECK: arith.cmpi sge
// CHECK: arith.maxsi
// CHECK: math.absi
// CHECK: arith.cmpi ult
// CHECK: arith.ori
// CHECK: arith.andi
pk.kernel @ints_and_bools(%x: !pk.ref<4xi64>, %o: !pk.ref<4xi64>, %m: !pk.ref<4xi1>) {
  %a = pk.load %x : !pk.ref<4xi64> -> tensor<4xi64>
  %ge = pk.ge %a, %a : tensor<4xi64>
  %max = pk.maximum %a, %a : tensor<4xi64>
  %abs = pk.abs %max : tensor<4xi64>
  pk.store %abs, %o : tensor<4xi64> -> !pk.ref<4xi64>
  %lt = pk.lt %ge, %ge : tensor<4xi1>
  %or = pk.maximum %lt, %ge : tensor<4xi1>
  %and = pk.minimum %or, %ge : tensor<4xi1>
  pk.store %and, %m : tensor<4xi1> -> !pk.ref<4xi1>
  pk.return
}
