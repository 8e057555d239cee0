// A kernel for every size: the fma fuses into one loop over the callers'
// buffers (no allocation) whose length is the first array's size at run
// time, and runs through OpenMP from the parallel threshold on; rows of a
// dynamic count reduce as static ones do.
// RUN: pk-opt %s --pk-to-linalg-pipeline --pk-fusion-pipeline --pk-bufferization-pipeline | FileCheck %s --check-prefix=BUF
// RUN: pk-opt %s --pk-cpu-pipeline | FileCheck %s
// RUN: pk-opt %s --pk-to-linalg-pipeline --pk-fusion-pipeline --pk-cpu-tiling-pipeline --pk-bufferization-pipeline | FileCheck %s --check-prefix=TILED

// The other buffers are viewed with the first one's size (one size class).
// BUF-LABEL: func.func @fma
// BUF-NOT: memref.alloc
// BUF: %[[N:.*]] = memref.dim %arg0
// BUF: %[[B:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%[[N]]], strides: [1]
// BUF: %[[C:.*]] = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%[[N]]], strides: [1]
// BUF: %[[O:.*]] = memref.reinterpret_cast %arg3 to offset: [0], sizes: [%[[N]]], strides: [1]
// BUF: linalg.generic {{.*}} ins(%arg0, %[[B]], %[[C]] : memref<?xf32>, memref<?xf32>, memref<?xf32>) outs(%[[O]] : memref<?xf32>)
// BUF-NOT: memref.alloc
// BUF: return
// CHECK-LABEL: llvm.func @kernel.fma(
// CHECK: %[[LARGE:.*]] = llvm.icmp "sge" %arg3, %{{.*}} : i64
// CHECK: llvm.cond_br %[[LARGE]]
// CHECK: omp.parallel
// CHECK: llvm.fmul
// CHECK-LABEL: llvm.func @_mlir_ciface_fma
pk.kernel @fma(%a: !pk.ref<?xf32>, %b: !pk.ref<?xf32>, %c: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %a[0] : !pk.ref<?xf32>
  %0 = pk.load %a : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.load %b : !pk.ref<?xf32> -> tensor<?xf32>
  %2 = pk.load %c : !pk.ref<?xf32> -> tensor<?xf32>
  %3 = pk.mul %0, %1 : tensor<?xf32>
  %4 = pk.add %3, %2 : tensor<?xf32>
  %s = pk.constant dense<2.0> : tensor<f32>
  %5 = pk.broadcast %s sizes(%n) : tensor<f32> -> tensor<?xf32>
  %6 = pk.mul %4, %5 : tensor<?xf32>
  pk.store %6, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// BUF-LABEL: func.func @row_max
// BUF: %[[O:.*]] = memref.reinterpret_cast %arg1
// BUF: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<?x1024xf32>) outs(%[[O]] : memref<?xf32>)
// CHECK-LABEL: llvm.func @kernel.row_max(
// CHECK: llvm.intr.maximum
pk.kernel @row_max(%x: !pk.ref<?x1024xf32>, %o: !pk.ref<?xf32>) {
  %0 = pk.load %x : !pk.ref<?x1024xf32> -> tensor<?x1024xf32>
  %1 = pk.reduce_max %0 axes = [1] : tensor<?x1024xf32> -> tensor<?xf32>
  pk.store %1, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// A stencil over a dimension that varies: the slices are subviews of the
// caller's buffers, computed straight into o's (no allocation), for a
// size n - 2 clamped at 0.
// BUF-LABEL: func.func @stencil
// BUF-NOT: memref.alloc
// BUF: %[[N:.*]] = memref.dim %arg0
// BUF: %[[OV:.*]] = memref.reinterpret_cast %arg1
// BUF: %[[M:.*]] = arith.maxsi
// BUF-DAG: %[[L:.*]] = memref.subview %arg0[0] [%[[M]]] [1]
// BUF-DAG: %[[R:.*]] = memref.subview %arg0[2] [%[[M]]] [1]
// BUF-DAG: %[[O:.*]] = memref.subview %[[OV]][1] [%[[M]]] [1]
// BUF-NOT: memref.alloc
// BUF: linalg.generic {{.*}} ins(%[[L]], %[[R]] : {{.*}}) outs(%[[O]] : {{.*}})
// BUF-NOT: memref.alloc
// BUF: return
// CHECK-LABEL: llvm.func @kernel.stencil(
pk.kernel @stencil(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %l = pk.extract_slice %v offsets [0] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %r = pk.extract_slice %v offsets [2] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %s = pk.add %l, %r : tensor<?xf32>
  %w = pk.load %o : !pk.ref<?xf32> -> tensor<?xf32>
  %i = pk.insert_slice %s into %w offsets [1] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %i, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// A product of dynamic sizes: packed or not, decided at run time, and
// either way written into the caller's buffer (the packed one through a
// padded C in its tiled layout, then a copy; no copy of the result). The
// buffers are viewed with one size per class: M, K and N.
// TILED-LABEL: func.func @matmul
// TILED: %[[A:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%[[M:[a-z0-9_]+]], %[[K:[a-z0-9_]+]]], strides: [%[[K]], 1]
// TILED: %[[B:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%[[K]], %[[N:[a-z0-9_]+]]], strides: [%[[N]], 1]
// TILED: %[[O:.*]] = memref.reinterpret_cast %arg2 to offset: [0], sizes: [%[[M]], %[[N]]], strides: [%[[N]], 1]
// TILED: scf.if
// TILED: linalg.copy ins(%{{.*}} : memref<?x?xf32, strided<[?, 1]>>) outs(%[[O]] : memref<?x?xf32>)
// TILED: } else {
// TILED: linalg.fill ins(%{{.*}} : f32) outs(%[[O]] : memref<?x?xf32>)
// TILED: linalg.matmul ins(%[[A]], %[[B]] : memref<?x?xf32>, memref<?x?xf32>) outs(%[[O]] : memref<?x?xf32>)
// TILED-NOT: memref.copy
// TILED: return
// CHECK-LABEL: llvm.func @kernel.matmul(
// CHECK: omp.parallel
// CHECK: llvm.intr.fmuladd
pk.kernel @matmul(%a: !pk.ref<?x?xf32>, %b: !pk.ref<?x?xf32>, %o: !pk.ref<?x?xf32>) {
  %0 = pk.load %a : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.load %b : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %2 = pk.matmul %0, %1 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  pk.store %2, %o : tensor<?x?xf32> -> !pk.ref<?x?xf32>
  pk.return
}

// Batches that one operand broadcasts: one packed batch_matmul
// (pk-to-linalg's broadcast batches) whose C, of dynamic rows and columns,
// is expanded back to the result's batches; with dynamic batch sizes too
// (C's expansion then holds several dynamic sizes in a group, viewed by
// pk-expand-shapes-as-casts: MLIR 22's expand-strided-metadata crashed).
// CHECK-LABEL: llvm.func @kernel.broadcast_batches(
// CHECK: omp.parallel
// CHECK: llvm.intr.fmuladd
// CHECK-LABEL: llvm.func @kernel.dynamic_broadcast_batches(
pk.kernel @broadcast_batches(%a: !pk.ref<2x3x?x?xf32>, %b: !pk.ref<3x?x?xf32>, %o: !pk.ref<2x3x?x?xf32>) {
  %a0 = pk.load %a : !pk.ref<2x3x?x?xf32> -> tensor<2x3x?x?xf32>
  %b0 = pk.load %b : !pk.ref<3x?x?xf32> -> tensor<3x?x?xf32>
  %k = pk.dim %b[1] : !pk.ref<3x?x?xf32>
  %n = pk.dim %b[2] : !pk.ref<3x?x?xf32>
  %bb = pk.broadcast %b0 sizes(%k, %n) : tensor<3x?x?xf32> -> tensor<2x3x?x?xf32>
  %m = pk.matmul %a0, %bb : tensor<2x3x?x?xf32>, tensor<2x3x?x?xf32> -> tensor<2x3x?x?xf32>
  pk.store %m, %o : tensor<2x3x?x?xf32> -> !pk.ref<2x3x?x?xf32>
  pk.return
}

pk.kernel @dynamic_broadcast_batches(%a: !pk.ref<?x?x?x?xf32>, %b: !pk.ref<?x?x?xf32>, %o: !pk.ref<?x?x?x?xf32>) {
  %a0 = pk.load %a : !pk.ref<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %b0 = pk.load %b : !pk.ref<?x?x?xf32> -> tensor<?x?x?xf32>
  %n0 = pk.dim %a[0] : !pk.ref<?x?x?x?xf32>
  %n1 = pk.dim %b[0] : !pk.ref<?x?x?xf32>
  %n2 = pk.dim %b[1] : !pk.ref<?x?x?xf32>
  %n3 = pk.dim %b[2] : !pk.ref<?x?x?xf32>
  %bb = pk.broadcast %b0 sizes(%n0, %n1, %n2, %n3) : tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
  %m = pk.matmul %a0, %bb : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  pk.store %m, %o : tensor<?x?x?x?xf32> -> !pk.ref<?x?x?x?xf32>
  pk.return
}
