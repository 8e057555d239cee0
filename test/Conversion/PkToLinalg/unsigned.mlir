// Unsigned integers lower to signless ones of their width; the operations
// where the sign matters become their unsigned forms.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%{{.*}}: memref<4xi8>, %{{.*}}: memref<4xi8>, %{{.*}}: memref<4xi8>)
// CHECK: arith.constant dense<-1> : tensor<4xi8>
// CHECK: arith.addi %{{.*}} : i8
// CHECK: arith.maxui %{{.*}} : i8
// CHECK: arith.minui %{{.*}} : i8
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.subi
// CHECK-NOT: ui8
pk.kernel @arithmetic(%x: !pk.ref<4xui8>, %y: !pk.ref<4xui8>,
                      %o: !pk.ref<4xui8>) {
  %a = pk.load %x : !pk.ref<4xui8> -> tensor<4xui8>
  %b = pk.load %y : !pk.ref<4xui8> -> tensor<4xui8>
  %c = pk.constant dense<255> : tensor<4xui8>
  %0 = pk.add %a, %c : tensor<4xui8>
  %1 = pk.maximum %0, %b : tensor<4xui8>
  %2 = pk.minimum %1, %a : tensor<4xui8>
  %3 = pk.floordiv %2, %b : tensor<4xui8>
  %4 = pk.rem %3, %b : tensor<4xui8>
  %5 = pk.neg %4 : tensor<4xui8>
  %6 = pk.abs %5 : tensor<4xui8>
  pk.store %6, %o : tensor<4xui8> -> !pk.ref<4xui8>
  pk.return
}

// CHECK-LABEL: func.func @compare_and_cast
// CHECK: arith.cmpi ult, %{{.*}} : i16
// CHECK: arith.extui %{{.*}} : i16 to i64
// CHECK: arith.uitofp %{{.*}} : i16 to f32
// CHECK: arith.fptoui %{{.*}} : f32 to i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
pk.kernel @compare_and_cast(%x: !pk.ref<4xui16>, %y: !pk.ref<4xui16>,
                            %z: !pk.ref<4xi8>, %o: !pk.ref<4xi1>,
                            %p: !pk.ref<4xi64>, %q: !pk.ref<4xui32>,
                            %r: !pk.ref<4xui32>) {
  %a = pk.load %x : !pk.ref<4xui16> -> tensor<4xui16>
  %b = pk.load %y : !pk.ref<4xui16> -> tensor<4xui16>
  %s = pk.load %z : !pk.ref<4xi8> -> tensor<4xi8>
  %0 = pk.lt %a, %b : tensor<4xui16>
  %1 = pk.cast %a : tensor<4xui16> -> tensor<4xi64>
  %2 = pk.cast %a : tensor<4xui16> -> tensor<4xf32>
  %3 = pk.cast %2 : tensor<4xf32> -> tensor<4xui32>
  %4 = pk.cast %s : tensor<4xi8> -> tensor<4xui32>
  pk.store %0, %o : tensor<4xi1> -> !pk.ref<4xi1>
  pk.store %1, %p : tensor<4xi64> -> !pk.ref<4xi64>
  pk.store %3, %q : tensor<4xui32> -> !pk.ref<4xui32>
  pk.store %4, %r : tensor<4xui32> -> !pk.ref<4xui32>
  pk.return
}

// CHECK-LABEL: func.func @reductions
// CHECK: arith.constant 0 : i32
// CHECK: arith.maxui
// CHECK: arith.constant -1 : i32
// CHECK: arith.minui
pk.kernel @reductions(%x: !pk.ref<4x8xui32>, %o: !pk.ref<4xui32>,
                      %p: !pk.ref<8xui32>) {
  %a = pk.load %x : !pk.ref<4x8xui32> -> tensor<4x8xui32>
  %0 = pk.reduce_max %a axes = [1] : tensor<4x8xui32> -> tensor<4xui32>
  %1 = pk.reduce_min %a axes = [0] : tensor<4x8xui32> -> tensor<8xui32>
  pk.store %0, %o : tensor<4xui32> -> !pk.ref<4xui32>
  pk.store %1, %p : tensor<8xui32> -> !pk.ref<8xui32>
  pk.return
}
