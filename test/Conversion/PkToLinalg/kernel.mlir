// The kernel, its refs, loads and stores.
// RUN: pk-opt %s --convert-pk-to-linalg --split-input-file | FileCheck %s

// A kernel becomes a function over memrefs with a C interface; loaded refs
// become one restrict to_tensor each; a ref that is only written is the
// restrict destination of its value.
// CHECK-LABEL: func.func @fma
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[O:.*]]: memref<4xf32>)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-DAG: %[[TA:.*]] = bufferization.to_tensor %[[A]] restrict : memref<4xf32> to tensor<4xf32>
// CHECK-DAG: %[[TB:.*]] = bufferization.to_tensor %[[B]] restrict : memref<4xf32> to tensor<4xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[TA]], %[[TB]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: bufferization.materialize_in_destination %[[SUM]] in restrict writable %[[O]] : (tensor<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: return
pk.kernel @fma(%a: !pk.ref<4xf32>, %b: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.load %b : !pk.ref<4xf32> -> tensor<4xf32>
  %2 = pk.add %0, %1 : tensor<4xf32>
  pk.store %2, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// A ref that is read and written is a writable tensor (bufferization may
// update it in place where its old contents are dead), and its value is
// materialized without `restrict`: the old contents may still be read.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[O:.*]]: memref<2x3xi32>)
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[O]] restrict writable : memref<2x3xi32> to tensor<2x3xi32>
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%[[T]], %[[T]] : tensor<2x3xi32>, tensor<2x3xi32>)
// CHECK: bufferization.materialize_in_destination %[[V]] in writable %[[O]]
pk.kernel @in_place(%o: !pk.ref<2x3xi32>) {
  %0 = pk.load %o : !pk.ref<2x3xi32> -> tensor<2x3xi32>
  %1 = pk.mul %0, %0 : tensor<2x3xi32>
  pk.store %1, %o : tensor<2x3xi32> -> !pk.ref<2x3xi32>
  pk.return
}

// -----

// Rank-0 refs and constants.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[S:.*]]: memref<f64>)
// CHECK: %[[C:.*]] = arith.constant dense<2.500000e+00> : tensor<f64>
// CHECK: bufferization.materialize_in_destination %[[C]] in restrict writable %[[S]] : (tensor<f64>, memref<f64>) -> ()
pk.kernel @scalar(%s: !pk.ref<f64>) {
  %0 = pk.constant dense<2.5> : tensor<f64>
  pk.store %0, %s : tensor<f64> -> !pk.ref<f64>
  pk.return
}
