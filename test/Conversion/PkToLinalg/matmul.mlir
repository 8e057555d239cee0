// pk.matmul becomes a named linalg contraction accumulating into zeros, or a
// generic contraction for the batched shapes named ops do not cover; batch
// dimensions that one operand broadcasts join the other's rows or columns.
// RUN: pk-opt %s --convert-pk-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @named
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[F]] : tensor<2x4xf32>)
// CHECK: linalg.matvec ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>)
// CHECK: linalg.vecmat ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3x4xf32>)
// CHECK: linalg.dot ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<5x2x3xf32>, tensor<5x3x4xf32>)
pk.kernel @named(%a: !pk.ref<2x3xf32>, %b: !pk.ref<3x4xf32>, %v: !pk.ref<3xf32>, %x: !pk.ref<5x2x3xf32>, %y: !pk.ref<5x3x4xf32>,
                 %o1: !pk.ref<2x4xf32>, %o2: !pk.ref<2xf32>, %o3: !pk.ref<4xf32>, %o4: !pk.ref<f32>, %o5: !pk.ref<5x2x4xf32>) {
  %a0 = pk.load %a : !pk.ref<2x3xf32> -> tensor<2x3xf32>
  %b0 = pk.load %b : !pk.ref<3x4xf32> -> tensor<3x4xf32>
  %v0 = pk.load %v : !pk.ref<3xf32> -> tensor<3xf32>
  %x0 = pk.load %x : !pk.ref<5x2x3xf32> -> tensor<5x2x3xf32>
  %y0 = pk.load %y : !pk.ref<5x3x4xf32> -> tensor<5x3x4xf32>
  %0 = pk.matmul %a0, %b0 : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  pk.store %0, %o1 : tensor<2x4xf32> -> !pk.ref<2x4xf32>
  %1 = pk.matmul %a0, %v0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2xf32>
  pk.store %1, %o2 : tensor<2xf32> -> !pk.ref<2xf32>
  %2 = pk.matmul %v0, %b0 : tensor<3xf32>, tensor<3x4xf32> -> tensor<4xf32>
  pk.store %2, %o3 : tensor<4xf32> -> !pk.ref<4xf32>
  %3 = pk.matmul %v0, %v0 : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  pk.store %3, %o4 : tensor<f32> -> !pk.ref<f32>
  %4 = pk.matmul %x0, %y0 : tensor<5x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  pk.store %4, %o5 : tensor<5x2x4xf32> -> !pk.ref<5x2x4xf32>
  pk.return
}

// -----

// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @generic_contraction
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-NEXT: ^bb0(%[[L:.*]]: i32, %[[R:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[L]], %[[R]] : i32
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[ACC]], %[[P]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
pk.kernel @generic_contraction(%a: !pk.ref<2x2x4x3xi32>, %v: !pk.ref<3xi32>, %o: !pk.ref<2x2x4xi32>) {
  %a0 = pk.load %a : !pk.ref<2x2x4x3xi32> -> tensor<2x2x4x3xi32>
  %v0 = pk.load %v : !pk.ref<3xi32> -> tensor<3xi32>
  %m = pk.matmul %a0, %v0 : tensor<2x2x4x3xi32>, tensor<3xi32> -> tensor<2x2x4xi32>
  pk.store %m, %o : tensor<2x2x4xi32> -> !pk.ref<2x2x4xi32>
  pk.return
}

// -----

// Batch dimensions of one operand only (the other a pk.broadcast of size-1
// or missing dimensions): one product of the operands themselves. A's own
// batch dimension (2) joins its rows, after the shared one (3): A is copied
// into (3, 2, 1, 8) and collapsed to (3, 2, 8); B is read where it is, not
// broadcast; C comes back as (3, 2, 1, 5) and is copied into the result's
// order.
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @broadcast_batches
// CHECK: %[[B:.*]] = bufferization.to_tensor %arg1
// CHECK: %[[A:.*]] = linalg.generic {indexing_maps = [#[[SWAP]], #[[ID]]], {{.*}} outs(%{{.*}} : tensor<3x2x1x8xf32>)
// CHECK: %[[AM:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0], [1, 2], [3]] : tensor<3x2x1x8xf32> into tensor<3x2x8xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%[[AM]], %[[B]] : tensor<3x2x8xf32>, tensor<3x8x5xf32>)
// CHECK: %[[C:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3]] output_shape [3, 2, 1, 5]
// CHECK: linalg.generic {indexing_maps = [#[[SWAP]], #[[ID]]], {{.*}} ins(%[[C]] : tensor<3x2x1x5xf32>) outs(%{{.*}} : tensor<2x3x1x5xf32>)
pk.kernel @broadcast_batches(%a: !pk.ref<2x3x1x8xf32>, %b: !pk.ref<3x8x5xf32>, %o: !pk.ref<2x3x1x5xf32>) {
  %a0 = pk.load %a : !pk.ref<2x3x1x8xf32> -> tensor<2x3x1x8xf32>
  %b0 = pk.load %b : !pk.ref<3x8x5xf32> -> tensor<3x8x5xf32>
  %bb = pk.broadcast %b0 : tensor<3x8x5xf32> -> tensor<2x3x8x5xf32>
  %m = pk.matmul %a0, %bb : tensor<2x3x1x8xf32>, tensor<2x3x8x5xf32> -> tensor<2x3x1x5xf32>
  pk.store %m, %o : tensor<2x3x1x5xf32> -> !pk.ref<2x3x1x5xf32>
  pk.return
}

// -----

// Dynamic batch sizes as static ones: a batch of rows through one matrix
// (a linear layer over a batch of sequences) is one matmul of A's rows,
// and C's expansion holds two dynamic sizes in a group (B and T, from A).
// CHECK-LABEL: func.func @dynamic_batches
// CHECK: %[[A:.*]] = bufferization.to_tensor %{{.*}} : memref<?x?x?xf32>
// CHECK: %[[W:.*]] = bufferization.to_tensor %{{.*}} : memref<?x?xf32>
// CHECK: %[[AM:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1], [2]] : tensor<?x?x?xf32> into tensor<?x?xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[AM]], %[[W]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2]] output_shape [%{{.*}}, %{{.*}}, %{{.*}}] : tensor<?x?xf32> into tensor<?x?x?xf32>
// CHECK-NOT: linalg.generic
pk.kernel @dynamic_batches(%a: !pk.ref<?x?x?xf32>, %w: !pk.ref<?x?xf32>, %o: !pk.ref<?x?x?xf32>) {
  %a0 = pk.load %a : !pk.ref<?x?x?xf32> -> tensor<?x?x?xf32>
  %w0 = pk.load %w : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %b = pk.dim %a[0] : !pk.ref<?x?x?xf32>
  %k = pk.dim %w[0] : !pk.ref<?x?xf32>
  %n = pk.dim %w[1] : !pk.ref<?x?xf32>
  %ww = pk.broadcast %w0 sizes(%b, %k, %n) : tensor<?x?xf32> -> tensor<?x?x?xf32>
  %m = pk.matmul %a0, %ww : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  pk.store %m, %o : tensor<?x?x?xf32> -> !pk.ref<?x?x?xf32>
  pk.return
}

// -----

// B's own batch dimension joins its columns: B is copied into (8, 3, 5)
// and collapsed to (8, 15); A, already in order, is read where it is.
// CHECK-LABEL: func.func @columns
// CHECK: %[[A:.*]] = bufferization.to_tensor %arg0
// CHECK: %[[BT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x3x5xf32>)
// CHECK: %[[BM:.*]] = tensor.collapse_shape %[[BT]] {{\[\[}}0], [1, 2]] : tensor<8x3x5xf32> into tensor<8x15xf32>
// CHECK: linalg.matmul ins(%[[A]], %[[BM]] : tensor<4x8xf32>, tensor<8x15xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [4, 3, 5]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4x5xf32>)
pk.kernel @columns(%a: !pk.ref<4x8xf32>, %b: !pk.ref<3x8x5xf32>, %o: !pk.ref<3x4x5xf32>) {
  %a0 = pk.load %a : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %b0 = pk.load %b : !pk.ref<3x8x5xf32> -> tensor<3x8x5xf32>
  %ab = pk.broadcast %a0 : tensor<4x8xf32> -> tensor<3x4x8xf32>
  %m = pk.matmul %ab, %b0 : tensor<3x4x8xf32>, tensor<3x8x5xf32> -> tensor<3x4x5xf32>
  pk.store %m, %o : tensor<3x4x5xf32> -> !pk.ref<3x4x5xf32>
  pk.return
}
