// Dynamic sizes: a fresh tensor takes each `?` from an operand read along
// it (tensor.dim), a broadcast from its sizes, a reduction's init from its
// operand. Every caller's buffer is used through a view whose sizes are its
// size classes' (memref.dim of the first buffer of the class) and whose
// strides are computed from them (refs are C-contiguous): pk.dim is one of
// those sizes.
// RUN: pk-opt %s --split-input-file --convert-pk-to-linalg --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<?x?xf32>, %[[B:[a-z0-9]+]]: memref<?xf32>, %[[O:[a-z0-9]+]]: memref<?x1xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x?xf32>
// CHECK: %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x?xf32>
// CHECK: %[[XV:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]], %[[M]]], strides: [%[[M]], 1] : memref<?x?xf32> to memref<?x?xf32>
// CHECK: %[[BV:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[M]]], strides: [1] : memref<?xf32> to memref<?xf32>
// CHECK: memref.reinterpret_cast %[[O]] to offset: [0], sizes: [%[[N]], 1], strides: [1, 1] : memref<?x1xf32> to memref<?x1xf32>
// CHECK-DAG: %[[X0:.*]] = bufferization.to_tensor %[[XV]] restrict : memref<?x?xf32> to tensor<?x?xf32>
// CHECK-DAG: %[[B0:.*]] = bufferization.to_tensor %[[BV]] restrict : memref<?xf32> to tensor<?xf32>
// CHECK-NOT: memref.dim
// The broadcast's result: its sizes.
// CHECK: %[[E0:.*]] = tensor.empty(%[[N]], %[[M]]) : tensor<?x?xf32>
// CHECK: %[[BB:.*]] = linalg.generic {{.*}} ins(%[[B0]] : tensor<?xf32>) outs(%[[E0]] : tensor<?x?xf32>)
// The sum's: its operands' sizes.
// CHECK: %[[D0:.*]] = tensor.dim %[[X0]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[D1:.*]] = tensor.dim %[[X0]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[E1:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X0]], %[[BB]] : tensor<?x?xf32>, tensor<?x?xf32>) outs(%[[E1]] : tensor<?x?xf32>)
// The reduction's init: the kept dimension of its operand.
// CHECK: %[[D2:.*]] = tensor.dim %[[SUM]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[E2:.*]] = tensor.empty(%[[D2]]) : tensor<?xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<?xf32>) -> tensor<?xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[SUM]] : tensor<?x?xf32>) outs(%[[INIT]] : tensor<?xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
pk.kernel @rows(%x: !pk.ref<?x?xf32>, %b: !pk.ref<?xf32>, %o: !pk.ref<?x1xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?x?xf32>
  %m = pk.dim %x[1] : !pk.ref<?x?xf32>
  %0 = pk.load %x : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.load %b : !pk.ref<?xf32> -> tensor<?xf32>
  %2 = pk.broadcast %1 sizes(%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
  %3 = pk.add %0, %2 : tensor<?x?xf32>
  %4 = pk.reduce_max %3 axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
  pk.store %4, %o : tensor<?x1xf32> -> !pk.ref<?x1xf32>
  pk.return
}

// -----

// A scalar broadcast to a dynamic shape (how a traced kernel's scalar
// operands become dynamic).
// CHECK-LABEL: func.func @scale
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?xf64>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xf64>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%{{.*}} : tensor<f64>) outs(%[[E]] : tensor<?xf64>)
pk.kernel @scale(%x: !pk.ref<?xf64>, %o: !pk.ref<?xf64>) {
  %n = pk.dim %x[0] : !pk.ref<?xf64>
  %0 = pk.load %x : !pk.ref<?xf64> -> tensor<?xf64>
  %1 = pk.constant dense<2.0> : tensor<f64>
  %2 = pk.broadcast %1 sizes(%n) : tensor<f64> -> tensor<?xf64>
  %3 = pk.mul %0, %2 : tensor<?xf64>
  pk.store %3, %o : tensor<?xf64> -> !pk.ref<?xf64>
  pk.return
}

// -----

// A product's dynamic sizes are its operands': A's rows, B's columns, and
// the batches of the operand that has them.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[M:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x4xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[M]]) : tensor<?x4xf32>
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} outs(%[[E]] : tensor<?x4xf32>)
// CHECK: linalg.matmul ins({{.*}} : tensor<?x4xf32>, tensor<4x4xf32>) outs(%[[Z]] : tensor<?x4xf32>)
pk.kernel @matmul(%a: !pk.ref<?x4xf32>, %b: !pk.ref<4x4xf32>, %o: !pk.ref<?x4xf32>) {
  %0 = pk.load %a : !pk.ref<?x4xf32> -> tensor<?x4xf32>
  %1 = pk.load %b : !pk.ref<4x4xf32> -> tensor<4x4xf32>
  %2 = pk.matmul %0, %1 : tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
  pk.store %2, %o : tensor<?x4xf32> -> !pk.ref<?x4xf32>
  pk.return
}

// CHECK-LABEL: func.func @batch_matvec
// CHECK: %[[B:.*]] = tensor.dim %[[A:.*]], %{{.*}} : tensor<?x?x?xf32>
// CHECK: %[[M:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x?x?xf32>
// CHECK: tensor.empty(%[[B]], %[[M]]) : tensor<?x?xf32>
pk.kernel @batch_matvec(%a: !pk.ref<?x?x?xf32>, %x: !pk.ref<?xf32>, %o: !pk.ref<?x?xf32>) {
  %0 = pk.load %a : !pk.ref<?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %2 = pk.matmul %0, %1 : tensor<?x?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  pk.store %2, %o : tensor<?x?xf32> -> !pk.ref<?x?xf32>
  pk.return
}

// -----

// A count is a product in index arithmetic, then the nearest float (through
// float64, exact below 2^53) or a wrapped integer, as a 0-d tensor.
// CHECK-LABEL: func.func @count
// CHECK: %[[N:.*]] = memref.dim %arg0, %c1
// CHECK: %[[P:.*]] = arith.muli %{{.*}}, %[[N]] : index
// CHECK: %[[I:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK: %[[D:.*]] = arith.sitofp %[[I]] : i64 to f64
// CHECK: %[[F:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK: tensor.from_elements %[[F]] : tensor<f32>
// CHECK: arith.trunci %{{.*}} : i64 to i32
pk.kernel @count(%x: !pk.ref<?x?xf32>, %o: !pk.ref<?x1xf32>, %p: !pk.ref<i32>) {
  %r = pk.dim %x[0] : !pk.ref<?x?xf32>
  %n = pk.dim %x[1] : !pk.ref<?x?xf32>
  %0 = pk.load %x : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.reduce_sum %0 axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
  %c = pk.count %n factor 3 : tensor<f32>
  %b = pk.broadcast %c sizes(%r) : tensor<f32> -> tensor<?x1xf32>
  %2 = pk.div %1, %b : tensor<?x1xf32>
  pk.store %2, %o : tensor<?x1xf32> -> !pk.ref<?x1xf32>
  %k = pk.count %r, %n factor 1 : tensor<i32>
  pk.store %k, %p : tensor<i32> -> !pk.ref<i32>
  pk.return
}
