// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-linearize-dynamic-buffers-for-gpu))' --split-input-file --verify-diagnostics | FileCheck %s

// A parameter of dynamic sizes and a view of another with the first's
// sizes (pk-to-linalg's size classes): both indexed as one-dimensional
// buffers, at i * m + j: the parameter's m read after its definition, the
// view's its stride operand.
// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>)
// CHECK-DAG: %[[FA:.*]] = memref.collapse_shape %[[A]] {{\[}}[0, 1]] : memref<?x?xf32> into memref<?xf32>
// CHECK-DAG: %[[FB:.*]] = memref.collapse_shape %[[B]] {{\[}}[0, 1]] : memref<?x?xf32> into memref<?xf32>
// CHECK-DAG: %[[MA:.*]] = memref.dim %[[A]], %c1
// CHECK-DAG: %[[M:.*]] = memref.dim %[[A]], %c1_{{[0-9]+}} :
// CHECK: memref.reinterpret_cast %[[B]] {{.*}} strides: [%[[M]], 1]
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: %[[ROW:.*]] = arith.muli %[[I]], %[[MA]]
// CHECK: %[[AT:.*]] = arith.addi %[[ROW]], %[[J]]
// CHECK: memref.load %[[FA]][%[[AT]]] : memref<?xf32>
// CHECK: %[[ROW2:.*]] = arith.muli %[[I]], %[[M]]
// CHECK: %[[AT2:.*]] = arith.addi %[[ROW2]], %[[J]]
// CHECK: memref.store %{{.*}}, %[[FB]][%[[AT2]]] : memref<?xf32>
func.func @views(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  %v = memref.reinterpret_cast %b to offset: [0], sizes: [%n, %m], strides: [%m, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    memref.store %x, %v[%i, %j] : memref<?x?xf32, strided<[?, 1]>>
  }
  return
}

// -----

// Static strides past a dynamic size, an offset and a stride of the view's:
// offset + i * 8 + j * 2 on the allocation's flat buffer. One dimension of
// identity layout stays as it is.
// CHECK-LABEL: func.func @allocation
// CHECK: %[[ALLOC:.*]] = memref.alloc(%{{.*}}) : memref<?x8xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[ALLOC]]
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c8
// CHECK: %[[AT:.*]] = arith.addi %c3, %[[ROW]]
// CHECK: %[[COL:.*]] = arith.muli %{{.*}}, %c2
// CHECK: %[[AT2:.*]] = arith.addi %[[AT]], %[[COL]]
// CHECK: memref.load %[[FLAT]][%[[AT2]]] : memref<?xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
func.func @allocation(%n: index, %o: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.alloc(%n) : memref<?x8xf32>
  %v = memref.reinterpret_cast %t to offset: [3], sizes: [%n, 2], strides: [8, 2] : memref<?x8xf32> to memref<?x2xf32, strided<[8, 2], offset: 3>>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %v[%i, %c1] : memref<?x2xf32, strided<[8, 2], offset: 3>>
    memref.store %x, %o[%i] : memref<?xf32>
  }
  return
}

// -----

// Static shapes are SPIR-V's to linearize: untouched.
// CHECK-LABEL: func.func @static
// CHECK-NOT: collapse_shape
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x5xf32>
func.func @static(%a: memref<4x5xf32>, %i: index, %j: index) -> f32 {
  %x = memref.load %a[%i, %j] : memref<4x5xf32>
  return %x : f32
}

// -----

func.func @unknown_layout(%a: memref<?x?xf32>, %i: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.subview %a[%i, 1] [%i, %i] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  // expected-error @below {{indexes a buffer of dynamic sizes that is neither a parameter, an allocation nor a view of one}}
  %x = memref.load %s[%c0, %c1] : memref<?x?xf32, strided<[?, 1], offset: ?>>
  return %x : f32
}
