// `//` and `%` follow NumPy: floats through fmod moved to the divisor's sign
// (npy_divmod), integers through truncating division with the divisors 0
// and -1 made safe first (both are undefined in LLVM and SPIR-V). The
// remainder's generic keeps the unused quotient until canonicalization.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @floats
// CHECK: linalg.generic
// CHECK: arith.remf
// CHECK: arith.cmpf olt
// CHECK: math.copysign
// CHECK: math.floor
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: linalg.generic
// CHECK: arith.remf
// CHECK: arith.select
// CHECK: linalg.yield
pk.kernel @floats(%x: !pk.ref<8xf64>, %y: !pk.ref<8xf64>, %q: !pk.ref<8xf64>, %r: !pk.ref<8xf64>) {
  %a = pk.load %x : !pk.ref<8xf64> -> tensor<8xf64>
  %b = pk.load %y : !pk.ref<8xf64> -> tensor<8xf64>
  %div = pk.floordiv %a, %b : tensor<8xf64>
  %rem = pk.rem %a, %b : tensor<8xf64>
  pk.store %div, %q : tensor<8xf64> -> !pk.ref<8xf64>
  pk.store %rem, %r : tensor<8xf64> -> !pk.ref<8xf64>
  pk.return
}

// CHECK-LABEL: func.func @integers
// CHECK: linalg.generic
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[MINUS_ONE:.*]] = arith.constant -1 : i32
// CHECK: %[[BY_ZERO:.*]] = arith.cmpi eq, %{{.*}}, %[[ZERO]]
// CHECK: %[[BY_MINUS_ONE:.*]] = arith.cmpi eq, %{{.*}}, %[[MINUS_ONE]]
// CHECK: %[[UNSAFE:.*]] = arith.ori %[[BY_ZERO]], %[[BY_MINUS_ONE]]
// CHECK: %[[SAFE:.*]] = arith.select %[[UNSAFE]], %[[ONE]], %{{.*}} : i32
// CHECK: %[[QUOTIENT:.*]] = arith.divsi %{{.*}}, %[[SAFE]]
// CHECK: arith.muli %[[QUOTIENT]], %[[SAFE]]
// CHECK: arith.select %[[BY_ZERO]], %[[ZERO]]
// CHECK: linalg.generic
// CHECK: arith.divsi
// CHECK: linalg.yield
pk.kernel @integers(%x: !pk.ref<8xi32>, %y: !pk.ref<8xi32>, %q: !pk.ref<8xi32>, %r: !pk.ref<8xi32>) {
  %a = pk.load %x : !pk.ref<8xi32> -> tensor<8xi32>
  %b = pk.load %y : !pk.ref<8xi32> -> tensor<8xi32>
  %div = pk.floordiv %a, %b : tensor<8xi32>
  %rem = pk.rem %a, %b : tensor<8xi32>
  pk.store %div, %q : tensor<8xi32> -> !pk.ref<8xi32>
  pk.store %rem, %r : tensor<8xi32> -> !pk.ref<8xi32>
  pk.return
}
