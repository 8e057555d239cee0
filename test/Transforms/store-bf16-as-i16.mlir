// What is left of bfloat16 after its arithmetic moved to float32 (loads,
// stores, moves, constants) is retyped to i16 throughout the module, host
// function and kernel signatures included; constants keep their bits.
// RUN: pk-opt %s --pk-store-bf16-as-i16 | FileCheck %s

// CHECK: memref.global "private" constant @ones : memref<2xi16> = dense<16256>
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%{{.*}}: memref<2xi16>)
// CHECK: memref.get_global @ones : memref<2xi16>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2xi16> to memref<2xi16>
// CHECK-LABEL: func.func @body
// CHECK-SAME: (%[[A:.*]]: memref<2xi16>, %[[I:.*]]: index, %[[C:.*]]: i1)
// CHECK: %[[HALF:.*]] = arith.constant 16128 : i16
// CHECK: %[[X:.*]] = memref.load %[[A]][%[[I]]] : memref<2xi16>
// CHECK: %[[S:.*]] = arith.select %[[C]], %[[X]], %[[HALF]] : i16
// CHECK: memref.store %[[S]], %[[A]][%[[I]]] : memref<2xi16>
// CHECK-NOT: bf16
memref.global "private" constant @ones : memref<2xbf16> = dense<1.0>

func.func @host(%o: memref<2xbf16>) {
  %0 = memref.get_global @ones : memref<2xbf16>
  memref.copy %0, %o : memref<2xbf16> to memref<2xbf16>
  return
}

func.func @body(%a: memref<2xbf16>, %i: index, %c: i1) {
  %half = arith.constant 0.5 : bf16
  %x = memref.load %a[%i] : memref<2xbf16>
  %s = arith.select %c, %x, %half : bf16
  memref.store %s, %a[%i] : memref<2xbf16>
  return
}
