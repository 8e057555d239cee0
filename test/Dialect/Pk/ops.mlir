// Every pk operation and type, printed, parsed and printed again.
// RUN: pk-opt %s | pk-opt | FileCheck %s
// RUN: pk-opt %s --mlir-print-op-generic | pk-opt | FileCheck %s
// RUN: pk-opt %s > %t.custom && pk-opt %t.custom > %t.again && diff %t.custom %t.again
// RUN: pk-opt %s --mlir-print-op-generic > %t.generic && pk-opt %t.generic --mlir-print-op-generic > %t.generic.again && diff %t.generic %t.generic.again

// CHECK-LABEL: pk.kernel @fma
// CHECK-SAME: (%[[A:.*]]: !pk.ref<4xf32>, %[[B:.*]]: !pk.ref<4xf32>, %[[C:.*]]: !pk.ref<4xf32>, %[[O:.*]]: !pk.ref<4xf32>)
// CHECK: %[[V0:.*]] = pk.load %[[A]] : !pk.ref<4xf32> -> tensor<4xf32>
// CHECK: %[[V1:.*]] = pk.load %[[B]] : !pk.ref<4xf32> -> tensor<4xf32>
// CHECK: %[[V2:.*]] = pk.mul %[[V0]], %[[V1]] : tensor<4xf32>
// CHECK: %[[V3:.*]] = pk.load %[[C]] : !pk.ref<4xf32> -> tensor<4xf32>
// CHECK: %[[V4:.*]] = pk.add %[[V2]], %[[V3]] : tensor<4xf32>
// CHECK: pk.store %[[V4]], %[[O]] : tensor<4xf32> -> !pk.ref<4xf32>
// CHECK: pk.return
pk.kernel @fma(%a: !pk.ref<4xf32>, %b: !pk.ref<4xf32>, %c: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.load %b : !pk.ref<4xf32> -> tensor<4xf32>
  %2 = pk.mul %0, %1 : tensor<4xf32>
  %3 = pk.load %c : !pk.ref<4xf32> -> tensor<4xf32>
  %4 = pk.add %2, %3 : tensor<4xf32>
  pk.store %4, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// CHECK-LABEL: pk.kernel @arithmetic
// CHECK: pk.sub %{{.*}}, %{{.*}} : tensor<2x3xf64>
// CHECK: pk.div %{{.*}}, %{{.*}} : tensor<2x3xf64>
// CHECK: pk.neg %{{.*}} : tensor<2x3xf64>
pk.kernel @arithmetic(%x: !pk.ref<2x3xf64>, %y: !pk.ref<2x3xf64>, %o: !pk.ref<2x3xf64>) {
  %0 = pk.load %x : !pk.ref<2x3xf64> -> tensor<2x3xf64>
  %1 = pk.load %y : !pk.ref<2x3xf64> -> tensor<2x3xf64>
  %2 = pk.sub %0, %1 : tensor<2x3xf64>
  %3 = pk.div %2, %1 : tensor<2x3xf64>
  %4 = pk.neg %3 : tensor<2x3xf64>
  pk.store %4, %o : tensor<2x3xf64> -> !pk.ref<2x3xf64>
  pk.return
}

// CHECK-LABEL: pk.kernel @element_types
// CHECK-SAME: !pk.ref<8xf16>, %{{.*}}: !pk.ref<8xbf16>, %{{.*}}: !pk.ref<8xi1>, %{{.*}}: !pk.ref<8xi8>, %{{.*}}: !pk.ref<8xi16>, %{{.*}}: !pk.ref<8xi32>, %{{.*}}: !pk.ref<8xi64>
// CHECK: pk.mul %{{.*}}, %{{.*}} : tensor<8xf16>
// CHECK: pk.add %{{.*}}, %{{.*}} : tensor<8xbf16>
// CHECK: pk.load %{{.*}} : !pk.ref<8xi1> -> tensor<8xi1>
// CHECK: pk.neg %{{.*}} : tensor<8xi8>
// CHECK: pk.sub %{{.*}}, %{{.*}} : tensor<8xi16>
// CHECK: pk.mul %{{.*}}, %{{.*}} : tensor<8xi32>
// CHECK: pk.add %{{.*}}, %{{.*}} : tensor<8xi64>
pk.kernel @element_types(%h: !pk.ref<8xf16>, %bf: !pk.ref<8xbf16>, %m: !pk.ref<8xi1>, %i8: !pk.ref<8xi8>, %i16: !pk.ref<8xi16>, %i32: !pk.ref<8xi32>, %i64: !pk.ref<8xi64>) {
  %0 = pk.load %h : !pk.ref<8xf16> -> tensor<8xf16>
  %1 = pk.mul %0, %0 : tensor<8xf16>
  pk.store %1, %h : tensor<8xf16> -> !pk.ref<8xf16>
  %2 = pk.load %bf : !pk.ref<8xbf16> -> tensor<8xbf16>
  %3 = pk.add %2, %2 : tensor<8xbf16>
  pk.store %3, %bf : tensor<8xbf16> -> !pk.ref<8xbf16>
  %4 = pk.load %m : !pk.ref<8xi1> -> tensor<8xi1>
  pk.store %4, %m : tensor<8xi1> -> !pk.ref<8xi1>
  %5 = pk.load %i8 : !pk.ref<8xi8> -> tensor<8xi8>
  %6 = pk.neg %5 : tensor<8xi8>
  pk.store %6, %i8 : tensor<8xi8> -> !pk.ref<8xi8>
  %7 = pk.load %i16 : !pk.ref<8xi16> -> tensor<8xi16>
  %8 = pk.sub %7, %7 : tensor<8xi16>
  pk.store %8, %i16 : tensor<8xi16> -> !pk.ref<8xi16>
  %9 = pk.load %i32 : !pk.ref<8xi32> -> tensor<8xi32>
  %10 = pk.mul %9, %9 : tensor<8xi32>
  pk.store %10, %i32 : tensor<8xi32> -> !pk.ref<8xi32>
  %11 = pk.load %i64 : !pk.ref<8xi64> -> tensor<8xi64>
  %12 = pk.add %11, %11 : tensor<8xi64>
  pk.store %12, %i64 : tensor<8xi64> -> !pk.ref<8xi64>
  pk.return
}

// CHECK-LABEL: pk.kernel @ranks
// CHECK-SAME: !pk.ref<f32>, %{{.*}}: !pk.ref<2x3x4xf32>, %{{.*}}: !pk.ref<0xf32>
// CHECK: pk.load %{{.*}} : !pk.ref<f32> -> tensor<f32>
// CHECK: pk.broadcast %{{.*}} : tensor<f32> -> tensor<2x3x4xf32>
// CHECK: pk.store %{{.*}}, %{{.*}} : tensor<0xf32> -> !pk.ref<0xf32>
pk.kernel @ranks(%s: !pk.ref<f32>, %t: !pk.ref<2x3x4xf32>, %empty: !pk.ref<0xf32>) {
  %0 = pk.load %s : !pk.ref<f32> -> tensor<f32>
  %1 = pk.broadcast %0 : tensor<f32> -> tensor<2x3x4xf32>
  pk.store %1, %t : tensor<2x3x4xf32> -> !pk.ref<2x3x4xf32>
  %2 = pk.load %empty : !pk.ref<0xf32> -> tensor<0xf32>
  pk.store %2, %empty : tensor<0xf32> -> !pk.ref<0xf32>
  pk.return
}

// CHECK-LABEL: pk.kernel @constants
// CHECK: pk.constant dense<2.500000e+00> : tensor<4xf32>
// CHECK: pk.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK: pk.constant dense<7> : tensor<i32>
// CHECK: pk.constant dense<[true, false]> : tensor<2xi1>
pk.kernel @constants(%o: !pk.ref<4xf32>, %i: !pk.ref<i32>, %m: !pk.ref<2xi1>) {
  %0 = pk.constant dense<2.5> : tensor<4xf32>
  %1 = pk.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %2 = pk.mul %0, %1 : tensor<4xf32>
  pk.store %2, %o : tensor<4xf32> -> !pk.ref<4xf32>
  %3 = pk.constant dense<7> : tensor<i32>
  pk.store %3, %i : tensor<i32> -> !pk.ref<i32>
  %4 = pk.constant dense<[true, false]> : tensor<2xi1>
  pk.store %4, %m : tensor<2xi1> -> !pk.ref<2xi1>
  pk.return
}

// CHECK-LABEL: pk.kernel @casts
// CHECK: pk.cast %{{.*}} : tensor<4xi32> -> tensor<4xf64>
// CHECK: pk.cast %{{.*}} : tensor<4xf64> -> tensor<4xi1>
// CHECK: pk.cast %{{.*}} : tensor<4xi1> -> tensor<4xbf16>
pk.kernel @casts(%x: !pk.ref<4xi32>, %o: !pk.ref<4xbf16>) {
  %0 = pk.load %x : !pk.ref<4xi32> -> tensor<4xi32>
  %1 = pk.cast %0 : tensor<4xi32> -> tensor<4xf64>
  %2 = pk.cast %1 : tensor<4xf64> -> tensor<4xi1>
  %3 = pk.cast %2 : tensor<4xi1> -> tensor<4xbf16>
  pk.store %3, %o : tensor<4xbf16> -> !pk.ref<4xbf16>
  pk.return
}

// CHECK-LABEL: pk.kernel @broadcasts
// CHECK: pk.broadcast %{{.*}} : tensor<3xf32> -> tensor<2x3xf32>
// CHECK: pk.broadcast %{{.*}} : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: pk.broadcast %{{.*}} : tensor<1x3xf32> -> tensor<5x2x3xf32>
pk.kernel @broadcasts(%row: !pk.ref<3xf32>, %col: !pk.ref<2x1xf32>, %one: !pk.ref<1x3xf32>, %o: !pk.ref<2x3xf32>, %o3: !pk.ref<5x2x3xf32>) {
  %0 = pk.load %row : !pk.ref<3xf32> -> tensor<3xf32>
  %1 = pk.broadcast %0 : tensor<3xf32> -> tensor<2x3xf32>
  %2 = pk.load %col : !pk.ref<2x1xf32> -> tensor<2x1xf32>
  %3 = pk.broadcast %2 : tensor<2x1xf32> -> tensor<2x3xf32>
  %4 = pk.add %1, %3 : tensor<2x3xf32>
  pk.store %4, %o : tensor<2x3xf32> -> !pk.ref<2x3xf32>
  %5 = pk.load %one : !pk.ref<1x3xf32> -> tensor<1x3xf32>
  %6 = pk.broadcast %5 : tensor<1x3xf32> -> tensor<5x2x3xf32>
  pk.store %6, %o3 : tensor<5x2x3xf32> -> !pk.ref<5x2x3xf32>
  pk.return
}

// CHECK-LABEL: pk.kernel @matmuls
// CHECK: pk.matmul %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
// CHECK: pk.matmul %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2xf32>
// CHECK: pk.matmul %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3x4xf32> -> tensor<4xf32>
// CHECK: pk.matmul %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
// CHECK: pk.matmul %{{.*}}, %{{.*}} : tensor<5x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
// CHECK: pk.matmul %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<5x3x4xf32> -> tensor<5x4xf32>
pk.kernel @matmuls(%a: !pk.ref<2x3xf32>, %b: !pk.ref<3x4xf32>, %v: !pk.ref<3xf32>, %x: !pk.ref<5x2x3xf32>, %y: !pk.ref<5x3x4xf32>,
                   %o1: !pk.ref<2x4xf32>, %o2: !pk.ref<2xf32>, %o3: !pk.ref<4xf32>, %o4: !pk.ref<f32>, %o5: !pk.ref<5x2x4xf32>, %o6: !pk.ref<5x4xf32>) {
  %a0 = pk.load %a : !pk.ref<2x3xf32> -> tensor<2x3xf32>
  %b0 = pk.load %b : !pk.ref<3x4xf32> -> tensor<3x4xf32>
  %v0 = pk.load %v : !pk.ref<3xf32> -> tensor<3xf32>
  %x0 = pk.load %x : !pk.ref<5x2x3xf32> -> tensor<5x2x3xf32>
  %y0 = pk.load %y : !pk.ref<5x3x4xf32> -> tensor<5x3x4xf32>
  %0 = pk.matmul %a0, %b0 : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  pk.store %0, %o1 : tensor<2x4xf32> -> !pk.ref<2x4xf32>
  %1 = pk.matmul %a0, %v0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2xf32>
  pk.store %1, %o2 : tensor<2xf32> -> !pk.ref<2xf32>
  %2 = pk.matmul %v0, %b0 : tensor<3xf32>, tensor<3x4xf32> -> tensor<4xf32>
  pk.store %2, %o3 : tensor<4xf32> -> !pk.ref<4xf32>
  %3 = pk.matmul %v0, %v0 : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  pk.store %3, %o4 : tensor<f32> -> !pk.ref<f32>
  %4 = pk.matmul %x0, %y0 : tensor<5x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  pk.store %4, %o5 : tensor<5x2x4xf32> -> !pk.ref<5x2x4xf32>
  %5 = pk.matmul %v0, %y0 : tensor<3xf32>, tensor<5x3x4xf32> -> tensor<5x4xf32>
  pk.store %5, %o6 : tensor<5x4xf32> -> !pk.ref<5x4xf32>
  pk.return
}

// Every store counts (the last one wins) and a ref may be read back after
// it was written: the order of loads and stores is kept.
// CHECK-LABEL: pk.kernel @store_then_load
// CHECK: pk.store %{{.*}}, %[[O:.*]] : tensor<4xi32> -> !pk.ref<4xi32>
// CHECK-NEXT: %[[R:.*]] = pk.load %[[O]] : !pk.ref<4xi32> -> tensor<4xi32>
// CHECK-NEXT: %[[S:.*]] = pk.add %[[R]], %[[R]] : tensor<4xi32>
// CHECK-NEXT: pk.store %[[S]], %[[O]] : tensor<4xi32> -> !pk.ref<4xi32>
pk.kernel @store_then_load(%x: !pk.ref<4xi32>, %o: !pk.ref<4xi32>) {
  %0 = pk.load %x : !pk.ref<4xi32> -> tensor<4xi32>
  pk.store %0, %o : tensor<4xi32> -> !pk.ref<4xi32>
  %1 = pk.load %o : !pk.ref<4xi32> -> tensor<4xi32>
  %2 = pk.add %1, %1 : tensor<4xi32>
  pk.store %2, %o : tensor<4xi32> -> !pk.ref<4xi32>
  pk.return
}

// CHECK-LABEL: pk.kernel @choices
// CHECK: %[[LT:.*]] = pk.lt %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.le %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.gt %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.ge %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.eq %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.ne %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.maximum %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.minimum %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: pk.abs %{{.*}} : tensor<4xf32>
// CHECK: pk.select %[[LT]], %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>
pk.kernel @choices(%x: !pk.ref<4xf32>, %y: !pk.ref<4xf32>, %o: !pk.ref<4xf32>, %m: !pk.ref<4xi1>) {
  %a = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %b = pk.load %y : !pk.ref<4xf32> -> tensor<4xf32>
  %lt = pk.lt %a, %b : tensor<4xf32>
  %le = pk.le %a, %b : tensor<4xf32>
  %gt = pk.gt %a, %b : tensor<4xf32>
  %ge = pk.ge %a, %b : tensor<4xf32>
  %eq = pk.eq %a, %b : tensor<4xf32>
  %ne = pk.ne %a, %b : tensor<4xf32>
  %max = pk.maximum %a, %b : tensor<4xf32>
  %min = pk.minimum %max, %b : tensor<4xf32>
  %abs = pk.abs %min : tensor<4xf32>
  %sel = pk.select %lt, %abs, %a : tensor<4xi1>, tensor<4xf32>
  pk.store %sel, %o : tensor<4xf32> -> !pk.ref<4xf32>
  %both = pk.maximum %le, %gt : tensor<4xi1>
  %some = pk.minimum %ge, %eq : tensor<4xi1>
  %all = pk.maximum %both, %some : tensor<4xi1>
  %any = pk.maximum %all, %ne : tensor<4xi1>
  pk.store %any, %m : tensor<4xi1> -> !pk.ref<4xi1>
  pk.return
}

// CHECK-LABEL: pk.kernel @math
// CHECK: pk.exp %{{.*}} : tensor<4xf64>
// CHECK: pk.log %{{.*}} : tensor<4xf64>
// CHECK: pk.log1p %{{.*}} : tensor<4xf64>
// CHECK: pk.expm1 %{{.*}} : tensor<4xf64>
// CHECK: pk.sqrt %{{.*}} : tensor<4xf64>
// CHECK: pk.rsqrt %{{.*}} : tensor<4xf64>
// CHECK: pk.tanh %{{.*}} : tensor<4xf64>
// CHECK: pk.sin %{{.*}} : tensor<4xf64>
// CHECK: pk.cos %{{.*}} : tensor<4xf64>
// CHECK: pk.floor %{{.*}} : tensor<4xf64>
// CHECK: pk.ceil %{{.*}} : tensor<4xf64>
// CHECK: pk.sigmoid %{{.*}} : tensor<4xf64>
// CHECK: pk.pow %{{.*}}, %{{.*}} : tensor<4xf64>
pk.kernel @math(%x: !pk.ref<4xf64>, %o: !pk.ref<4xf64>) {
  %0 = pk.load %x : !pk.ref<4xf64> -> tensor<4xf64>
  %1 = pk.exp %0 : tensor<4xf64>
  %2 = pk.log %1 : tensor<4xf64>
  %3 = pk.log1p %2 : tensor<4xf64>
  %4 = pk.expm1 %3 : tensor<4xf64>
  %5 = pk.sqrt %4 : tensor<4xf64>
  %6 = pk.rsqrt %5 : tensor<4xf64>
  %7 = pk.tanh %6 : tensor<4xf64>
  %8 = pk.sin %7 : tensor<4xf64>
  %9 = pk.cos %8 : tensor<4xf64>
  %10 = pk.floor %9 : tensor<4xf64>
  %11 = pk.ceil %10 : tensor<4xf64>
  %12 = pk.sigmoid %11 : tensor<4xf64>
  %13 = pk.pow %12, %0 : tensor<4xf64>
  pk.store %13, %o : tensor<4xf64> -> !pk.ref<4xf64>
  pk.return
}

// CHECK-LABEL: pk.kernel @reductions
// CHECK: pk.reduce_sum %{{.*}} axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: pk.reduce_max %{{.*}} axes = [0, 1] keep_dims : tensor<4x8xf32> -> tensor<1x1xf32>
// CHECK: pk.reduce_min %{{.*}} axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
pk.kernel @reductions(%x: !pk.ref<4x8xf32>, %s: !pk.ref<4xf32>, %m: !pk.ref<1x1xf32>, %n: !pk.ref<8xf32>) {
  %0 = pk.load %x : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %1 = pk.reduce_sum %0 axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  pk.store %1, %s : tensor<4xf32> -> !pk.ref<4xf32>
  %2 = pk.reduce_max %0 axes = [0, 1] keep_dims : tensor<4x8xf32> -> tensor<1x1xf32>
  pk.store %2, %m : tensor<1x1xf32> -> !pk.ref<1x1xf32>
  %3 = pk.reduce_min %0 axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
  pk.store %3, %n : tensor<8xf32> -> !pk.ref<8xf32>
  pk.return
}

// CHECK-LABEL: pk.kernel @floor_division
// CHECK: pk.floordiv %{{.*}}, %{{.*}} : tensor<4xi64>
// CHECK: pk.rem %{{.*}}, %{{.*}} : tensor<4xi64>
pk.kernel @floor_division(%x: !pk.ref<4xi64>, %o: !pk.ref<4xi64>) {
  %a = pk.load %x : !pk.ref<4xi64> -> tensor<4xi64>
  %q = pk.floordiv %a, %a : tensor<4xi64>
  %r = pk.rem %q, %a : tensor<4xi64>
  pk.store %r, %o : tensor<4xi64> -> !pk.ref<4xi64>
  pk.return
}

// CHECK-LABEL: pk.kernel @slices
// CHECK: pk.extract_slice %{{.*}} offsets [1, 0] sizes [2, 4] strides [1, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
// CHECK: pk.extract_slice %{{.*}} offsets [3, 7] sizes [1, 8] strides [1, -1] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: pk.insert_slice %{{.*}} into %{{.*}} offsets [0, 0] sizes [1, 8] strides [1, 1] : tensor<8xf32> -> tensor<4x8xf32>
pk.kernel @slices(%x: !pk.ref<4x8xf32>, %s: !pk.ref<2x4xf32>, %o: !pk.ref<4x8xf32>) {
  %0 = pk.load %x : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %1 = pk.extract_slice %0 offsets [1, 0] sizes [2, 4] strides [1, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
  pk.store %1, %s : tensor<2x4xf32> -> !pk.ref<2x4xf32>
  %2 = pk.extract_slice %0 offsets [3, 7] sizes [1, 8] strides [1, -1] : tensor<4x8xf32> -> tensor<8xf32>
  %3 = pk.insert_slice %2 into %0 offsets [0, 0] sizes [1, 8] strides [1, 1] : tensor<8xf32> -> tensor<4x8xf32>
  pk.store %3, %o : tensor<4x8xf32> -> !pk.ref<4x8xf32>
  pk.return
}

// Dynamic sizes: refs and tensors with `?`, pk.dim, broadcasts given their
// dynamic sizes.
// CHECK-LABEL: pk.kernel @dynamic
// CHECK-SAME: (%[[X:.*]]: !pk.ref<?x4xf32>, %[[O:.*]]: !pk.ref<?x4xf32>)
// CHECK: %[[N:.*]] = pk.dim %[[X]][0] : !pk.ref<?x4xf32>
// CHECK: %[[V:.*]] = pk.load %[[X]] : !pk.ref<?x4xf32> -> tensor<?x4xf32>
// CHECK: %[[S:.*]] = pk.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[B:.*]] = pk.broadcast %[[S]] sizes(%[[N]]) : tensor<f32> -> tensor<?x4xf32>
// CHECK: pk.mul %[[V]], %[[B]] : tensor<?x4xf32>
// CHECK: pk.reduce_max %{{.*}} axes = [1] keep_dims : tensor<?x4xf32> -> tensor<?x1xf32>
pk.kernel @dynamic(%x: !pk.ref<?x4xf32>, %o: !pk.ref<?x4xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?x4xf32>
  %0 = pk.load %x : !pk.ref<?x4xf32> -> tensor<?x4xf32>
  %1 = pk.constant dense<2.0> : tensor<f32>
  %2 = pk.broadcast %1 sizes(%n) : tensor<f32> -> tensor<?x4xf32>
  %3 = pk.mul %0, %2 : tensor<?x4xf32>
  %4 = pk.reduce_max %3 axes = [1] keep_dims : tensor<?x4xf32> -> tensor<?x1xf32>
  %5 = pk.broadcast %4 sizes(%n) : tensor<?x1xf32> -> tensor<?x4xf32>
  %6 = pk.sub %3, %5 : tensor<?x4xf32>
  pk.store %6, %o : tensor<?x4xf32> -> !pk.ref<?x4xf32>
  pk.return
}

// Slices of dimensions that vary: a constant offset, a size computed by
// pk.slice_size from the size sliced (x[1:-1], x[::2]).
// CHECK-LABEL: pk.kernel @dynamic_slices
// CHECK: %[[N:.*]] = pk.dim %{{.*}}[0] : !pk.ref<?x4xf32>
// CHECK: %[[M:.*]] = pk.slice_size %[[N]] offset 2 step 1
// CHECK: %[[H:.*]] = pk.slice_size %[[N]] offset 0 step 2
// CHECK: pk.extract_slice %{{.*}} offsets [1, 0] sizes [%[[M]], 4] strides [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: pk.extract_slice %{{.*}} offsets [0, 1] sizes [%[[H]], 1] strides [2, 1] : tensor<?x4xf32> -> tensor<?xf32>
// CHECK: pk.insert_slice %{{.*}} into %{{.*}} offsets [1, 0] sizes [%[[M]], 4] strides [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: pk.insert_slice %{{.*}} into %{{.*}} offsets [0, 1] sizes [%[[H]], 1] strides [2, 1] : tensor<?xf32> -> tensor<?x4xf32>
pk.kernel @dynamic_slices(%x: !pk.ref<?x4xf32>, %o: !pk.ref<?x4xf32>, %p: !pk.ref<?x4xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?x4xf32>
  %m = pk.slice_size %n offset 2 step 1
  %h = pk.slice_size %n offset 0 step 2
  %0 = pk.load %x : !pk.ref<?x4xf32> -> tensor<?x4xf32>
  %1 = pk.extract_slice %0 offsets [1, 0] sizes [%m, 4] strides [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = pk.extract_slice %0 offsets [0, 1] sizes [%h, 1] strides [2, 1] : tensor<?x4xf32> -> tensor<?xf32>
  %3 = pk.load %o : !pk.ref<?x4xf32> -> tensor<?x4xf32>
  %4 = pk.insert_slice %1 into %3 offsets [1, 0] sizes [%m, 4] strides [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  pk.store %4, %o : tensor<?x4xf32> -> !pk.ref<?x4xf32>
  %5 = pk.load %p : !pk.ref<?x4xf32> -> tensor<?x4xf32>
  %6 = pk.insert_slice %2 into %5 offsets [0, 1] sizes [%h, 1] strides [2, 1] : tensor<?xf32> -> tensor<?x4xf32>
  pk.store %6, %p : tensor<?x4xf32> -> !pk.ref<?x4xf32>
  pk.return
}

// Slices of a constant size of dimensions that vary (x[:4], x[2],
// x[3::-1]): the kernel needs those dimensions long enough.
// CHECK-LABEL: pk.kernel @fixed_slices
// CHECK: pk.extract_slice %{{.*}} offsets [0, 2] sizes [4, 1] strides [1, 1] : tensor<?x?xf32> -> tensor<4xf32>
// CHECK: pk.extract_slice %{{.*}} offsets [3, 0] sizes [4, 1] strides [-1, 1] : tensor<?x?xf32> -> tensor<4x1xf32>
pk.kernel @fixed_slices(%x: !pk.ref<?x?xf32>, %o: !pk.ref<4xf32>, %p: !pk.ref<4x1xf32>) {
  %0 = pk.load %x : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.extract_slice %0 offsets [0, 2] sizes [4, 1] strides [1, 1] : tensor<?x?xf32> -> tensor<4xf32>
  pk.store %1, %o : tensor<4xf32> -> !pk.ref<4xf32>
  %2 = pk.extract_slice %0 offsets [3, 0] sizes [4, 1] strides [-1, 1] : tensor<?x?xf32> -> tensor<4x1xf32>
  pk.store %2, %p : tensor<4x1xf32> -> !pk.ref<4x1xf32>
  pk.return
}

// Slices counted from the end (x[-3:], x[-1], x[:-3:-1]) start at the size
// less some elements.
// CHECK-LABEL: pk.kernel @slices_from_the_end
// CHECK: %[[N:.*]] = pk.dim %{{.*}}[0] : !pk.ref<?xf32>
// CHECK: %[[N3:.*]] = pk.slice_size %[[N]] offset 3 step 1
// CHECK: %[[N1:.*]] = pk.slice_size %[[N]] offset 1 step 1
// CHECK: pk.extract_slice %{{.*}} offsets [%[[N3]]] sizes [3] strides [1] : tensor<?xf32> -> tensor<3xf32>
// CHECK: pk.extract_slice %{{.*}} offsets [%[[N1]]] sizes [2] strides [-1] : tensor<?xf32> -> tensor<2xf32>
// CHECK: pk.insert_slice %{{.*}} into %{{.*}} offsets [%[[N1]]] sizes [1] strides [1] : tensor<f32> -> tensor<?xf32>
pk.kernel @slices_from_the_end(%x: !pk.ref<?xf32>, %o: !pk.ref<3xf32>, %p: !pk.ref<2xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %n3 = pk.slice_size %n offset 3 step 1
  %n1 = pk.slice_size %n offset 1 step 1
  %0 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.extract_slice %0 offsets [%n3] sizes [3] strides [1] : tensor<?xf32> -> tensor<3xf32>
  pk.store %1, %o : tensor<3xf32> -> !pk.ref<3xf32>
  %2 = pk.extract_slice %0 offsets [%n1] sizes [2] strides [-1] : tensor<?xf32> -> tensor<2xf32>
  pk.store %2, %p : tensor<2xf32> -> !pk.ref<2xf32>
  %3 = pk.extract_slice %0 offsets [0] sizes [1] strides [1] : tensor<?xf32> -> tensor<f32>
  %4 = pk.insert_slice %3 into %0 offsets [%n1] sizes [1] strides [1] : tensor<f32> -> tensor<?xf32>
  pk.store %4, %x : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// Backwards from the end to the start (x[::-1], x[-3::-2]): a dynamic
// offset and a dynamic size.
// CHECK-LABEL: pk.kernel @reversed
// CHECK: pk.extract_slice %{{.*}} offsets [%{{.*}}] sizes [%{{.*}}] strides [-1] : tensor<?xf32> -> tensor<?xf32>
// CHECK: pk.extract_slice %{{.*}} offsets [%{{.*}}] sizes [%{{.*}}] strides [-2] : tensor<?xf32> -> tensor<?xf32>
pk.kernel @reversed(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>, %p: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %n1 = pk.slice_size %n offset 1 step 1
  %n3 = pk.slice_size %n offset 3 step 1
  %h = pk.slice_size %n offset 2 step 2
  %p3 = pk.dim %p[0] : !pk.ref<?xf32>
  %0 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.extract_slice %0 offsets [%n1] sizes [%n] strides [-1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %1, %o : tensor<?xf32> -> !pk.ref<?xf32>
  %2 = pk.extract_slice %0 offsets [%n3] sizes [%h] strides [-2] : tensor<?xf32> -> tensor<?xf32>
  %3 = pk.load %p : !pk.ref<?xf32> -> tensor<?xf32>
  %4 = pk.insert_slice %2 into %3 offsets [0] sizes [%h] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %4, %p : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// A mean over a dimension that varies divides by its count.
// CHECK-LABEL: pk.kernel @dynamic_mean
// CHECK: %[[N:.*]] = pk.dim %{{.*}}[1] : !pk.ref<?x?xf32>
// CHECK: %[[C:.*]] = pk.count %[[N]] factor 1 : tensor<f32>
// CHECK: %[[B:.*]] = pk.broadcast %[[C]] sizes(%{{.*}}) : tensor<f32> -> tensor<?x1xf32>
// CHECK: pk.div %{{.*}}, %[[B]] : tensor<?x1xf32>
// CHECK: pk.count %{{.*}}, %[[N]] factor 4 : tensor<i64>
pk.kernel @dynamic_mean(%x: !pk.ref<?x?xf32>, %o: !pk.ref<?x1xf32>) {
  %r = pk.dim %x[0] : !pk.ref<?x?xf32>
  %n = pk.dim %x[1] : !pk.ref<?x?xf32>
  %0 = pk.load %x : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.reduce_sum %0 axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
  %c = pk.count %n factor 1 : tensor<f32>
  %b = pk.broadcast %c sizes(%r) : tensor<f32> -> tensor<?x1xf32>
  %2 = pk.div %1, %b : tensor<?x1xf32>
  %k = pk.count %r, %n factor 4 : tensor<i64>
  pk.store %2, %o : tensor<?x1xf32> -> !pk.ref<?x1xf32>
  pk.return
}
