// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-sink-index-computations-for-spirv))' | FileCheck %s

// Constants and the arithmetic on them move into the launch; the buffer's
// size stays on the host (a SPIR-V kernel cannot read it) and reaches the
// body from above, as a kernel argument once outlined.
// CHECK-LABEL: func.func @sink
// CHECK: %[[N:.*]] = memref.dim
// CHECK: gpu.launch
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[K:.*]] = arith.muli %[[TWO]], %[[FOUR]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[K]]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[N]]]
func.func @sink(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %k = arith.muli %c2, %c4 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    memref.store %zero, %a[%k] : memref<?xf32>
    memref.store %zero, %a[%n] : memref<?xf32>
    gpu.terminator
  }
  return
}
