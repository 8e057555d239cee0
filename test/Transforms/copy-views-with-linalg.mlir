// Copies from or into views become linalg.copy; whole-buffer copies stay.
// RUN: pk-opt %s --pk-copy-views-with-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[A:.*]]: memref<8xi32>, %[[B:.*]]: memref<4xi32>)
// CHECK: %[[EVEN:.*]] = memref.subview %[[A]][0] [4] [2]
// CHECK: linalg.copy ins(%[[EVEN]] : memref<4xi32, strided<[2]>>) outs(%[[B]] : memref<4xi32>)
// CHECK: %[[TAIL:.*]] = memref.subview %[[A]][4] [4] [1]
// CHECK: linalg.copy ins(%[[B]] : memref<4xi32>) outs(%[[TAIL]] : memref<4xi32, strided<[1], offset: 4>>)
// CHECK-NOT: memref.copy
func.func @views(%a: memref<8xi32>, %b: memref<4xi32>) {
  %even = memref.subview %a[0] [4] [2] : memref<8xi32> to memref<4xi32, strided<[2]>>
  memref.copy %even, %b : memref<4xi32, strided<[2]>> to memref<4xi32>
  %tail = memref.subview %a[4] [4] [1] : memref<8xi32> to memref<4xi32, strided<[1], offset: 4>>
  memref.copy %b, %tail : memref<4xi32> to memref<4xi32, strided<[1], offset: 4>>
  return
}

// -----

// CHECK-LABEL: func.func @whole_buffers
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x3xf32> to memref<2x3xf32>
// CHECK-NOT: linalg.copy
func.func @whole_buffers(%a: memref<2x3xf32>, %b: memref<2x3xf32>) {
  memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32>
  return
}

// -----

// A view at offset 0 with unit strides is still a part of its buffer.
// CHECK-LABEL: func.func @prefix
// CHECK: linalg.copy
// CHECK-NOT: memref.copy
func.func @prefix(%a: memref<8xi32>, %b: memref<7xi32>) {
  %head = memref.subview %a[0] [7] [1] : memref<8xi32> to memref<7xi32, strided<[1]>>
  memref.copy %head, %b : memref<7xi32, strided<[1]>> to memref<7xi32>
  return
}
