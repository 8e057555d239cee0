// Elementwise operations become parallel linalg.generic ops with arith bodies.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @float_ops
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} {{.*}} outs(%[[E0]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: arith.negf
pk.kernel @float_ops(%x: !pk.ref<2x4xf32>, %o: !pk.ref<2x4xf32>) {
  %0 = pk.load %x : !pk.ref<2x4xf32> -> tensor<2x4xf32>
  %1 = pk.add %0, %0 : tensor<2x4xf32>
  %2 = pk.sub %1, %0 : tensor<2x4xf32>
  %3 = pk.mul %2, %0 : tensor<2x4xf32>
  %4 = pk.div %3, %0 : tensor<2x4xf32>
  %5 = pk.neg %4 : tensor<2x4xf32>
  pk.store %5, %o : tensor<2x4xf32> -> !pk.ref<2x4xf32>
  pk.return
}

// Integer negation is 0 - x (wrapping).
// CHECK-LABEL: func.func @int_ops
// CHECK: arith.addi
// CHECK: arith.subi
// CHECK: arith.muli
// CHECK: ^bb0(%[[IN:.*]]: i16, %{{.*}}: i16):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i16
// CHECK-NEXT: %[[NEG:.*]] = arith.subi %[[ZERO]], %[[IN]] : i16
// CHECK-NEXT: linalg.yield %[[NEG]] : i16
pk.kernel @int_ops(%x: !pk.ref<8xi16>, %o: !pk.ref<8xi16>) {
  %0 = pk.load %x : !pk.ref<8xi16> -> tensor<8xi16>
  %1 = pk.add %0, %0 : tensor<8xi16>
  %2 = pk.sub %1, %0 : tensor<8xi16>
  %3 = pk.mul %2, %0 : tensor<8xi16>
  %4 = pk.neg %3 : tensor<8xi16>
  pk.store %4, %o : tensor<8xi16> -> !pk.ref<8xi16>
  pk.return
}
