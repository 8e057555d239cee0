// View expansions whose group holds several dynamic sizes become casts of
// the source's buffer (MLIR 22's expand-strided-metadata crashes on them);
// others are left to expand-strided-metadata.
// RUN: pk-opt %s --pk-expand-shapes-as-casts | FileCheck %s
// RUN: pk-opt %s --pk-expand-shapes-as-casts --expand-strided-metadata | FileCheck %s --check-prefix=LOWERED

// CHECK-DAG: #[[PRODUCT:.*]] = affine_map<()[s0, s1] -> (s0 * s1)>
// CHECK-LABEL: func.func @rows_of_batches
// CHECK-SAME: (%[[M:.*]]: memref<?x?xf32>, %[[B:.*]]: index, %[[T:.*]]: index)
// CHECK: %[[N:.*]] = memref.dim %[[M]]
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[M]]
// CHECK: %[[OUTER:.*]] = affine.apply #[[PRODUCT]]()[%[[STRIDES]]#0, %[[T]]]
// CHECK-NEXT: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[T]], %[[N]]], strides: [%[[OUTER]], %[[STRIDES]]#0, 1]
// CHECK-NOT: memref.expand_shape
// LOWERED-LABEL: func.func @rows_of_batches
// LOWERED-NOT: memref.expand_shape
func.func @rows_of_batches(%m: memref<?x?xf32>, %b: index, %t: index) -> memref<?x?x?xf32> {
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c1 : memref<?x?xf32>
  %v = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %t, %n]
      : memref<?x?xf32> into memref<?x?x?xf32>
  return %v : memref<?x?x?xf32>
}

// A strided source: each group's strides from the source dimension's.
// CHECK-LABEL: func.func @strided
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata
// CHECK: %[[INNER:.*]] = affine.apply #[[PRODUCT]]()[%[[STRIDES]]#1, %{{.*}}]
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[OFFSET]]], sizes: [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], strides: [%{{.*}}, %[[STRIDES]]#0, %[[INNER]], %[[STRIDES]]#1]
func.func @strided(%m: memref<?x?xf32, strided<[?, ?], offset: ?>>, %a: index, %b: index, %c: index, %d: index) -> memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>> {
  %v = memref.expand_shape %m [[0, 1], [2, 3]] output_shape [%a, %b, %c, %d]
      : memref<?x?xf32, strided<[?, ?], offset: ?>> into memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
  return %v : memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
}

// One dynamic size per group: left as it is.
// CHECK-LABEL: func.func @one_dynamic_size
// CHECK: memref.expand_shape
// CHECK-NOT: memref.reinterpret_cast
func.func @one_dynamic_size(%m: memref<?x64xf32>, %b: index) -> memref<?x4x64xf32> {
  %v = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, 4, 64]
      : memref<?x64xf32> into memref<?x4x64xf32>
  return %v : memref<?x4x64xf32>
}
