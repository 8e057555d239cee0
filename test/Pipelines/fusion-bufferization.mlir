// The fused, bufferized form of elementwise kernels is ONE loop nest writing
// straight into the output memref: no temporaries.
// RUN: pk-opt %s --pk-to-linalg-pipeline --pk-fusion-pipeline --pk-bufferization-pipeline --split-input-file | FileCheck %s

// The seed's fma, o = a * b + c.
// CHECK-LABEL: func.func @fma
// CHECK-SAME: (%[[A:.*]]: memref<1024xf32>, %[[B:.*]]: memref<1024xf32>, %[[C:.*]]: memref<1024xf32>, %[[O:.*]]: memref<1024xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]], %[[C]] : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>) outs(%[[O]] : memref<1024xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
pk.kernel @fma(%a: !pk.ref<1024xf32>, %b: !pk.ref<1024xf32>, %c: !pk.ref<1024xf32>, %o: !pk.ref<1024xf32>) {
  %0 = pk.load %a : !pk.ref<1024xf32> -> tensor<1024xf32>
  %1 = pk.load %b : !pk.ref<1024xf32> -> tensor<1024xf32>
  %2 = pk.mul %0, %1 : tensor<1024xf32>
  %3 = pk.load %c : !pk.ref<1024xf32> -> tensor<1024xf32>
  %4 = pk.add %2, %3 : tensor<1024xf32>
  pk.store %4, %o : tensor<1024xf32> -> !pk.ref<1024xf32>
  pk.return
}

// -----

// Two live intermediates in one nest, each its own SSA value.
// CHECK-LABEL: func.func @sum_product
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg4 : memref<8x8xi32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %[[C:.*]]: i32, %[[D:.*]]: i32, %{{.*}}: i32):
// CHECK-DAG: %[[AB:.*]] = arith.addi %[[A]], %[[B]] : i32
// CHECK-DAG: %[[CD:.*]] = arith.addi %[[C]], %[[D]] : i32
// CHECK: %[[P:.*]] = arith.muli %[[AB]], %[[CD]] : i32
// CHECK-NEXT: linalg.yield %[[P]] : i32
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc
pk.kernel @sum_product(%a: !pk.ref<8x8xi32>, %b: !pk.ref<8x8xi32>, %c: !pk.ref<8x8xi32>, %d: !pk.ref<8x8xi32>, %o: !pk.ref<8x8xi32>) {
  %0 = pk.load %a : !pk.ref<8x8xi32> -> tensor<8x8xi32>
  %1 = pk.load %b : !pk.ref<8x8xi32> -> tensor<8x8xi32>
  %2 = pk.add %0, %1 : tensor<8x8xi32>
  %3 = pk.load %c : !pk.ref<8x8xi32> -> tensor<8x8xi32>
  %4 = pk.load %d : !pk.ref<8x8xi32> -> tensor<8x8xi32>
  %5 = pk.add %3, %4 : tensor<8x8xi32>
  %6 = pk.mul %2, %5 : tensor<8x8xi32>
  pk.store %6, %o : tensor<8x8xi32> -> !pk.ref<8x8xi32>
  pk.return
}

// -----

// Broadcasts, casts and scalar constants fuse into the same nest.
// CHECK-LABEL: func.func @affine
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : memref<4x3xf16>, memref<3xf32>) outs(%arg2 : memref<4x3xf32>)
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
pk.kernel @affine(%x: !pk.ref<4x3xf16>, %bias: !pk.ref<3xf32>, %o: !pk.ref<4x3xf32>) {
  %0 = pk.load %x : !pk.ref<4x3xf16> -> tensor<4x3xf16>
  %1 = pk.cast %0 : tensor<4x3xf16> -> tensor<4x3xf32>
  %2 = pk.constant dense<2.0> : tensor<4x3xf32>
  %3 = pk.mul %1, %2 : tensor<4x3xf32>
  %4 = pk.load %bias : !pk.ref<3xf32> -> tensor<3xf32>
  %5 = pk.broadcast %4 : tensor<3xf32> -> tensor<4x3xf32>
  %6 = pk.add %3, %5 : tensor<4x3xf32>
  pk.store %6, %o : tensor<4x3xf32> -> !pk.ref<4x3xf32>
  pk.return
}

// -----

// A matmul followed by elementwise work allocates only the product (it is
// read by the elementwise nest); one of at most 256 bytes, outside loops,
// on the stack (no malloc and free per call).
// CHECK-LABEL: func.func @matmul_bias
// CHECK: %[[P:.*]] = memref.alloca() {{.*}} : memref<4x5xf32>
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.*}} outs(%[[P]] : memref<4x5xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<4x3xf32>, memref<3x5xf32>) outs(%[[P]] : memref<4x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]], %arg2 : memref<4x5xf32>, memref<5xf32>) outs(%arg3 : memref<4x5xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: return
pk.kernel @matmul_bias(%a: !pk.ref<4x3xf32>, %b: !pk.ref<3x5xf32>, %c: !pk.ref<5xf32>, %o: !pk.ref<4x5xf32>) {
  %a0 = pk.load %a : !pk.ref<4x3xf32> -> tensor<4x3xf32>
  %b0 = pk.load %b : !pk.ref<3x5xf32> -> tensor<3x5xf32>
  %m = pk.matmul %a0, %b0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %c0 = pk.load %c : !pk.ref<5xf32> -> tensor<5xf32>
  %cb = pk.broadcast %c0 : tensor<5xf32> -> tensor<4x5xf32>
  %s = pk.add %m, %cb : tensor<4x5xf32>
  pk.store %s, %o : tensor<4x5xf32> -> !pk.ref<4x5xf32>
  pk.return
}

// -----

// A larger product (16x32 float32, 2 KiB) stays on the heap, freed at the
// end.
// CHECK-LABEL: func.func @larger_matmul_bias
// CHECK: %[[P:.*]] = memref.alloc() {{.*}} : memref<16x32xf32>
// CHECK: linalg.matmul {{.*}} outs(%[[P]] : memref<16x32xf32>)
// CHECK: memref.dealloc %[[P]] : memref<16x32xf32>
pk.kernel @larger_matmul_bias(%a: !pk.ref<16x3xf32>, %b: !pk.ref<3x32xf32>, %c: !pk.ref<32xf32>, %o: !pk.ref<16x32xf32>) {
  %a0 = pk.load %a : !pk.ref<16x3xf32> -> tensor<16x3xf32>
  %b0 = pk.load %b : !pk.ref<3x32xf32> -> tensor<3x32xf32>
  %m = pk.matmul %a0, %b0 : tensor<16x3xf32>, tensor<3x32xf32> -> tensor<16x32xf32>
  %c0 = pk.load %c : !pk.ref<32xf32> -> tensor<32xf32>
  %cb = pk.broadcast %c0 : tensor<32xf32> -> tensor<16x32xf32>
  %s = pk.add %m, %cb : tensor<16x32xf32>
  pk.store %s, %o : tensor<16x32xf32> -> !pk.ref<16x32xf32>
  pk.return
}

// -----

// A matmul stored as is computes straight into the output.
// CHECK-LABEL: func.func @matmul_only
// CHECK-NOT: memref.alloc
// CHECK: linalg.fill {{.*}} outs(%arg2 : memref<4x5xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<4x3xf32>, memref<3x5xf32>) outs(%arg2 : memref<4x5xf32>)
pk.kernel @matmul_only(%a: !pk.ref<4x3xf32>, %b: !pk.ref<3x5xf32>, %o: !pk.ref<4x5xf32>) {
  %a0 = pk.load %a : !pk.ref<4x3xf32> -> tensor<4x3xf32>
  %b0 = pk.load %b : !pk.ref<3x5xf32> -> tensor<3x5xf32>
  %m = pk.matmul %a0, %b0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  pk.store %m, %o : tensor<4x5xf32> -> !pk.ref<4x5xf32>
  pk.return
}

// -----

// Writing a ref the kernel also reads, elementwise: computed in place
// (pk-compute-in-place), no temporary, no copy.
// CHECK-LABEL: func.func @update
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%arg1, %arg0 : memref<16xf64>, memref<16xf64>) outs(%arg1 : memref<16xf64>)
// CHECK-NOT: memref.copy
// CHECK: return
pk.kernel @update(%x: !pk.ref<16xf64>, %o: !pk.ref<16xf64>) {
  %0 = pk.load %o : !pk.ref<16xf64> -> tensor<16xf64>
  %1 = pk.load %x : !pk.ref<16xf64> -> tensor<16xf64>
  %2 = pk.add %0, %1 : tensor<16xf64>
  pk.store %2, %o : tensor<16xf64> -> !pk.ref<16xf64>
  pk.return
}

// -----

// The old contents of `o` are still read after the update (by p's value):
// bufferization keeps them, so every read sees the original contents.
// CHECK-LABEL: func.func @update_then_read
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK: return
pk.kernel @update_then_read(%x: !pk.ref<16xf64>, %o: !pk.ref<16xf64>, %p: !pk.ref<16xf64>) {
  %0 = pk.load %o : !pk.ref<16xf64> -> tensor<16xf64>
  %1 = pk.load %x : !pk.ref<16xf64> -> tensor<16xf64>
  %2 = pk.add %0, %1 : tensor<16xf64>
  pk.store %2, %o : tensor<16xf64> -> !pk.ref<16xf64>
  %3 = pk.mul %0, %0 : tensor<16xf64>
  pk.store %3, %p : tensor<16xf64> -> !pk.ref<16xf64>
  pk.return
}

// -----

// o[...] = o[::-1] + x reads other elements than it writes: computed aside
// and copied in, as before.
// CHECK-LABEL: func.func @reversed_update
// CHECK: %[[T:.*]] = memref.alloc
// CHECK: linalg.generic {{.*}} outs(%[[T]] : memref<16xf64>)
// CHECK: memref.copy %[[T]], %arg1
pk.kernel @reversed_update(%x: !pk.ref<16xf64>, %o: !pk.ref<16xf64>) {
  %0 = pk.load %o : !pk.ref<16xf64> -> tensor<16xf64>
  %1 = pk.extract_slice %0 offsets [15] sizes [16] strides [-1] : tensor<16xf64> -> tensor<16xf64>
  %2 = pk.load %x : !pk.ref<16xf64> -> tensor<16xf64>
  %3 = pk.add %1, %2 : tensor<16xf64>
  pk.store %3, %o : tensor<16xf64> -> !pk.ref<16xf64>
  pk.return
}

// -----

// o[1:3] = a[:2] + a[2:][:, ::-1]: the slices of `a` are subviews, the
// reversal is fused into the one generic, which writes straight into a
// subview of `o` (the rest of `o` is untouched): no temporaries.
// CHECK-LABEL: func.func @store_to_slice
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[O:.*]]: memref<4x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[LO:.*]] = memref.subview %[[A]][0, 0] [2, 8] [1, 1]
// CHECK-DAG: %[[HI:.*]] = memref.subview %[[A]][2, 0] [2, 8] [1, 1]
// CHECK-DAG: %[[OUT:.*]] = memref.subview %[[O]][1, 0] [2, 8] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[LO]], %[[HI]] : {{.*}}) outs(%[[OUT]] : {{.*}})
// CHECK-NOT: memref.copy
// CHECK: return
pk.kernel @store_to_slice(%a: !pk.ref<4x8xf32>, %o: !pk.ref<4x8xf32>) {
  %0 = pk.load %a : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %1 = pk.extract_slice %0 offsets [0, 0] sizes [2, 8] strides [1, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
  %2 = pk.extract_slice %0 offsets [2, 7] sizes [2, 8] strides [1, -1] : tensor<4x8xf32> -> tensor<2x8xf32>
  %3 = pk.add %1, %2 : tensor<2x8xf32>
  %4 = pk.load %o : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %5 = pk.insert_slice %3 into %4 offsets [1, 0] sizes [2, 8] strides [1, 1] : tensor<2x8xf32> -> tensor<4x8xf32>
  pk.store %5, %o : tensor<4x8xf32> -> !pk.ref<4x8xf32>
  pk.return
}

// -----

// o[1:] = o[:-1] reads what it overwrites: the slice is copied aside first
// (copies of views are linalg.copy, loop nests like any other op).
// CHECK-LABEL: func.func @overlapping_shift
// CHECK-SAME: (%[[O:.*]]: memref<8xi32>)
// CHECK: %[[FROM:.*]] = memref.subview %[[O]][0] [7] [1]
// CHECK: %[[TMP:.*]] = memref.alloc
// CHECK: linalg.copy ins(%[[FROM]] : {{.*}}) outs(%[[TMP]] : {{.*}})
// CHECK: %[[TO:.*]] = memref.subview %[[O]][1] [7] [1]
// CHECK: linalg.copy ins(%[[TMP]] : {{.*}}) outs(%[[TO]] : {{.*}})
pk.kernel @overlapping_shift(%o: !pk.ref<8xi32>) {
  %0 = pk.load %o : !pk.ref<8xi32> -> tensor<8xi32>
  %1 = pk.extract_slice %0 offsets [0] sizes [7] strides [1] : tensor<8xi32> -> tensor<7xi32>
  %2 = pk.insert_slice %1 into %0 offsets [1] sizes [7] strides [1] : tensor<7xi32> -> tensor<8xi32>
  pk.store %2, %o : tensor<8xi32> -> !pk.ref<8xi32>
  pk.return
}
