// Reductions become generics with reduction iterators accumulating from the
// operation's identity; kept dimensions come back through expand_shape.
// Float sums may be reassociated (so that LLVM vectorizes them with several
// partial sums); float max/min are associative anyway.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reduce
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[ROWS]]], iterator_types = ["parallel", "reduction"]} {{.*}} outs(%[[INIT]] : tensor<4xf32>)
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: arith.constant 2147483647 : i32
// CHECK: arith.minsi
pk.kernel @reduce(%x: !pk.ref<4x8xf32>, %i: !pk.ref<4x8xi32>, %s: !pk.ref<4xf32>, %m: !pk.ref<4x1xf32>, %n: !pk.ref<8xi32>) {
  %0 = pk.load %x : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %1 = pk.reduce_sum %0 axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  pk.store %1, %s : tensor<4xf32> -> !pk.ref<4xf32>
  %2 = pk.reduce_max %0 axes = [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
  pk.store %2, %m : tensor<4x1xf32> -> !pk.ref<4x1xf32>
  %3 = pk.load %i : !pk.ref<4x8xi32> -> tensor<4x8xi32>
  %4 = pk.reduce_min %3 axes = [0] : tensor<4x8xi32> -> tensor<8xi32>
  pk.store %4, %n : tensor<8xi32> -> !pk.ref<8xi32>
  pk.return
}
