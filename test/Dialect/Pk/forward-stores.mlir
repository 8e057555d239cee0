// RUN: pk-opt %s --pass-pipeline='builtin.module(pk.kernel(pk-forward-stores))' --split-input-file | FileCheck %s

// A load after a store reads the stored value; the overwritten store goes.
// CHECK-LABEL: pk.kernel @store_then_load
// CHECK-SAME: (%[[X:.*]]: !pk.ref<4xf32>, %[[O:.*]]: !pk.ref<4xf32>)
// CHECK-NEXT: %[[V:.*]] = pk.load %[[X]]
// CHECK-NEXT: %[[S:.*]] = pk.add %[[V]], %[[V]]
// CHECK-NEXT: pk.store %[[S]], %[[O]]
// CHECK-NEXT: pk.return
pk.kernel @store_then_load(%x: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  %1 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
  %2 = pk.add %1, %1 : tensor<4xf32>
  pk.store %2, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// Repeated loads before any store are one load; a load of the original
// contents stays valid after the ref is written (stores move to the end).
// CHECK-LABEL: pk.kernel @read_then_overwrite
// CHECK-SAME: (%[[O:.*]]: !pk.ref<4xi32>, %[[P:.*]]: !pk.ref<4xi32>)
// CHECK-NEXT: %[[OLD:.*]] = pk.load %[[O]]
// CHECK-NEXT: %[[NEW:.*]] = pk.mul %[[OLD]], %[[OLD]]
// CHECK-NEXT: %[[USE:.*]] = pk.add %[[OLD]], %[[OLD]]
// CHECK-NEXT: pk.store %[[NEW]], %[[O]]
// CHECK-NEXT: pk.store %[[USE]], %[[P]]
// CHECK-NEXT: pk.return
pk.kernel @read_then_overwrite(%o: !pk.ref<4xi32>, %p: !pk.ref<4xi32>) {
  %0 = pk.load %o : !pk.ref<4xi32> -> tensor<4xi32>
  %1 = pk.mul %0, %0 : tensor<4xi32>
  pk.store %1, %o : tensor<4xi32> -> !pk.ref<4xi32>
  %2 = pk.load %o : !pk.ref<4xi32> -> tensor<4xi32>
  %3 = pk.load %o : !pk.ref<4xi32> -> tensor<4xi32>
  %again = pk.add %0, %0 : tensor<4xi32>
  pk.store %again, %p : tensor<4xi32> -> !pk.ref<4xi32>
  pk.return
}

// -----

// Stores to different refs keep their order.
// CHECK-LABEL: pk.kernel @two_outputs
// CHECK: pk.store %{{.*}}, %arg1
// CHECK-NEXT: pk.store %{{.*}}, %arg2
// CHECK-NEXT: pk.return
pk.kernel @two_outputs(%x: !pk.ref<2xf64>, %o: !pk.ref<2xf64>, %p: !pk.ref<2xf64>) {
  %0 = pk.load %x : !pk.ref<2xf64> -> tensor<2xf64>
  pk.store %0, %o : tensor<2xf64> -> !pk.ref<2xf64>
  %1 = pk.neg %0 : tensor<2xf64>
  pk.store %1, %p : tensor<2xf64> -> !pk.ref<2xf64>
  pk.return
}
