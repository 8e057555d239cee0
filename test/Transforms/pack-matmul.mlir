// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=512}))' | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=256}))' | FileCheck %s --check-prefixes=CHECK,AVX2

// Sizes the tiles don't divide: A, B and C padded with zeros into 8 x 4,
// 4 x 32 and 8 x 32 blocks (6 x 4, 4 x 16 and 6 x 16 with 256-bit vectors),
// B's panels outermost, and the result unpacked into C.
// CHECK-LABEL: func.func @odd
// AVX512: %[[A:.*]] = linalg.pack %arg0 padding_value(%{{.*}} : f32) outer_dims_perm = [0, 1] inner_dims_pos = [0, 1] inner_tiles = [8, 4] into %{{.*}} : tensor<100x30xf32> -> tensor<13x8x8x4xf32>
// AVX512: %[[B:.*]] = linalg.pack %arg1 padding_value(%{{.*}} : f32) outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [4, 32] into %{{.*}} : tensor<30x70xf32> -> tensor<3x8x4x32xf32>
// AVX512: %[[C:.*]] = linalg.pack %arg2 {{.*}} inner_tiles = [8, 32] {{.*}} -> tensor<13x3x8x32xf32>
// AVX512: %[[P:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C]] : {{.*}}) attrs = {pk.packed_matmul}
// AVX512: linalg.unpack %[[P]] inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %arg2
// AVX2: inner_tiles = [6, 4] {{.*}} -> tensor<17x8x6x4xf32>
// AVX2: inner_tiles = [4, 16] {{.*}} -> tensor<5x8x4x16xf32>
// AVX2: attrs = {pk.packed_matmul}
// AVX2: linalg.unpack {{.*}} inner_tiles = [6, 16] into %arg2
// CHECK-NOT: linalg.matmul
func.func @odd(%a: tensor<100x30xf32>, %b: tensor<30x70xf32>, %c: tensor<100x70xf32>) -> tensor<100x70xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<100x30xf32>, tensor<30x70xf32>) outs(%c : tensor<100x70xf32>) -> tensor<100x70xf32>
  return %r : tensor<100x70xf32>
}

// float64: half the lanes, so half the columns per tile. Where the tiles
// divide C, the contraction writes C itself through an expand_shape (its map
// ordered m1, m0, n1, n0) instead of packing and unpacking it.
// CHECK-LABEL: func.func @float64
// AVX512: linalg.pack %arg1 {{.*}} inner_tiles = [4, 16] {{.*}} -> tensor<4x16x4x16xf64>
// AVX512: %[[C:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1], [2, 3]] output_shape [8, 8, 4, 16]
// AVX512: %[[P:.*]] = linalg.generic {{.*}} outs(%[[C]] : tensor<8x8x4x16xf64>) attrs = {pk.packed_matmul}
// AVX512: tensor.collapse_shape %[[P]] {{\[\[}}0, 1], [2, 3]] : tensor<8x8x4x16xf64> into tensor<64x64xf64>
// AVX2: inner_tiles = [4, 8] {{.*}} -> tensor<8x16x4x8xf64>
// AVX2: linalg.unpack {{.*}} inner_tiles = [6, 8] into %arg2
// AVX512-NOT: linalg.unpack
func.func @float64(%a: tensor<64x64xf64>, %b: tensor<64x64xf64>, %c: tensor<64x64xf64>) -> tensor<64x64xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf64>, tensor<64x64xf64>) outs(%c : tensor<64x64xf64>) -> tensor<64x64xf64>
  return %r : tensor<64x64xf64>
}

// Batches stay outermost; integers are packed like floats.
// CHECK-LABEL: func.func @batch
// AVX512: linalg.pack %arg1 outer_dims_perm = [0, 2, 1] inner_dims_pos = [1, 2] inner_tiles = [4, 32] {{.*}} -> tensor<4x2x8x4x32xi32>
// AVX512: tensor.expand_shape %arg2 {{\[\[}}0], [1, 2], [3, 4]] output_shape [4, 8, 8, 2, 32]
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]
// CHECK-SAME: pk.packed_matmul
func.func @batch(%a: tensor<4x64x32xi32>, %b: tensor<4x32x64xi32>, %c: tensor<4x64x64xi32>) -> tensor<4x64x64xi32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xi32>, tensor<4x32x64xi32>) outs(%c : tensor<4x64x64xi32>) -> tensor<4x64x64xi32>
  return %r : tensor<4x64x64xi32>
}

// Below min-iterations (32768 multiply-adds), booleans, memrefs, and thin
// products that would be padded many times over (one row, one column, K
// below a block): as is.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: linalg.pack
// CHECK-COUNT-6: linalg.matmul
// CHECK-NOT: linalg.pack
func.func @kept(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>,
                %p: tensor<64x64xi1>, %q: tensor<64x64xi1>,
                %x: memref<64x64xf32>, %y: memref<64x64xf32>,
                %row: tensor<1x4096xf32>, %tall: tensor<4096x4096xf32>, %col: tensor<4096x1xf32>,
                %r1: tensor<1x4096xf32>, %c1: tensor<4096x1xf32>,
                %k2a: tensor<512x2xf32>, %k2b: tensor<2x512xf32>, %k2c: tensor<512x512xf32>)
    -> (tensor<4x5xf32>, tensor<64x64xi1>, tensor<1x4096xf32>, tensor<4096x1xf32>, tensor<512x512xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  %s = linalg.matmul ins(%p, %q : tensor<64x64xi1>, tensor<64x64xi1>) outs(%q : tensor<64x64xi1>) -> tensor<64x64xi1>
  linalg.matmul ins(%x, %x : memref<64x64xf32>, memref<64x64xf32>) outs(%y : memref<64x64xf32>)
  %t = linalg.matmul ins(%row, %tall : tensor<1x4096xf32>, tensor<4096x4096xf32>) outs(%r1 : tensor<1x4096xf32>) -> tensor<1x4096xf32>
  %u = linalg.matmul ins(%tall, %col : tensor<4096x4096xf32>, tensor<4096x1xf32>) outs(%c1 : tensor<4096x1xf32>) -> tensor<4096x1xf32>
  %v = linalg.matmul ins(%k2a, %k2b : tensor<512x2xf32>, tensor<2x512xf32>) outs(%k2c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r, %s, %t, %u, %v : tensor<4x5xf32>, tensor<64x64xi1>, tensor<1x4096xf32>, tensor<4096x1xf32>, tensor<512x512xf32>
}

// A product stored whole into a caller's buffer: C is a fill of a new
// tensor of the expanded shape, and the store goes through the buffer's
// expanded view, so that bufferization computes the product in the buffer.
// CHECK-LABEL: func.func @stored
// AVX512: %[[E:.*]] = tensor.empty() : tensor<8x8x4x32xf32>
// AVX512: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<8x8x4x32xf32>)
// AVX512: %[[P:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<8x8x4x32xf32>) attrs = {pk.packed_matmul}
// AVX512: %[[V:.*]] = memref.expand_shape %arg2 {{\[\[}}0, 1], [2, 3]] output_shape [8, 8, 4, 32] : memref<64x128xf32> into memref<8x8x4x32xf32>
// AVX512: bufferization.materialize_in_destination %[[P]] in restrict writable %[[V]] : (tensor<8x8x4x32xf32>, memref<8x8x4x32xf32>) -> ()
// AVX512-NOT: tensor.collapse_shape
func.func @stored(%a: tensor<64x64xf32>, %b: tensor<64x128xf32>, %o: memref<64x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<64x128xf32>, memref<64x128xf32>) -> ()
  return
}
