// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=512}))' | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=256}))' | FileCheck %s --check-prefixes=CHECK,AVX2

// (B read in place below: (m1, n1, k1, m0, n0, k0) -> (k1, k0, n1, n0).)
// AVX512: #[[BMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d5, d1, d4)>

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

// A few rows times a matrix (a small batch of inputs through a layer):
// tiles of all 4 rows, so that nothing is padded. C then has one panel of
// rows, which reads each panel of B once: B is read in place, through a
// view of its layout split into tiles, not packed.
// CHECK-LABEL: func.func @few_rows
// AVX512: linalg.pack %arg0 {{.*}} inner_tiles = [4, 4] {{.*}} : tensor<4x256xf32> -> tensor<1x64x4x4xf32>
// AVX512: tensor.expand_shape %arg2 {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 16, 32]
// AVX512: %[[B:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2, 3]] output_shape [64, 4, 16, 32]
// AVX512: linalg.generic {indexing_maps = [#{{.*}}, #[[BMAP]], #{{.*}}]{{.*}} ins(%{{.*}}, %[[B]] : tensor<1x64x4x4xf32>, tensor<64x4x16x32xf32>)
// AVX512-SAME: attrs = {pk.packed_matmul}
// AVX2: inner_tiles = [4, 4] {{.*}} -> tensor<1x64x4x4xf32>
// AVX2: tensor.expand_shape %arg1 {{\[\[}}0, 1], [2, 3]] output_shape [64, 4, 32, 16]
// CHECK-NOT: linalg.pack %arg1
func.func @few_rows(%a: tensor<4x256xf32>, %b: tensor<256x512xf32>, %c: tensor<4x512xf32>) -> tensor<4x512xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x256xf32>, tensor<256x512xf32>) outs(%c : tensor<4x512xf32>) -> tensor<4x512xf32>
  return %r : tensor<4x512xf32>
}

// Many rows times up to a vector of columns: tiles of one vector per row
// (N padded to a power of two), twice a register tile's rows, which read
// A in place where a count of rows from a register tile's divides M (10
// for 1000 rows with 512-bit vectors). (With 256-bit vectors, 12 columns
// fill two vectors: packed as usual.)
// CHECK-LABEL: func.func @vector_of_columns
// AVX512: linalg.pack %arg1 {{.*}} inner_tiles = [4, 16] {{.*}} : tensor<300x12xf32> -> tensor<1x75x4x16xf32>
// AVX512: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2, 3]] output_shape [100, 10, 75, 4]
// AVX512: %[[P:.*]] = linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<100x10x75x4xf32>, tensor<1x75x4x16xf32>) {{.*}} attrs = {pk.packed_matmul}
// AVX512: linalg.unpack %[[P]] inner_dims_pos = [0, 1] inner_tiles = [10, 16] into %arg2
// AVX512-NOT: linalg.pack %arg0
// AVX2: linalg.pack %arg0 {{.*}} inner_tiles = [6, 4] {{.*}} -> tensor<167x75x6x4xf32>
// CHECK-NOT: linalg.matmul
func.func @vector_of_columns(%a: tensor<1000x300xf32>, %b: tensor<300x12xf32>, %c: tensor<1000x12xf32>) -> tensor<1000x12xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<1000x300xf32>, tensor<300x12xf32>) outs(%c : tensor<1000x12xf32>) -> tensor<1000x12xf32>
  return %r : tensor<1000x12xf32>
}

// A prime count of rows: A packed in panels of 16 (12) rows, padded.
// CHECK-LABEL: func.func @vector_of_columns_padded
// AVX512: linalg.pack %arg0 {{.*}} inner_tiles = [16, 4] {{.*}} : tensor<1009x300xf32> -> tensor<64x75x16x4xf32>
// AVX512: linalg.pack %arg1 {{.*}} inner_tiles = [4, 8] {{.*}} : tensor<300x6xf32> -> tensor<1x75x4x8xf32>
// AVX512: linalg.unpack {{.*}} inner_tiles = [16, 8] into %arg2
// AVX2: linalg.pack %arg0 {{.*}} inner_tiles = [12, 4] {{.*}} : tensor<1009x300xf32> -> tensor<85x75x12x4xf32>
// AVX2: linalg.pack %arg1 {{.*}} inner_tiles = [4, 8] {{.*}} : tensor<300x6xf32> -> tensor<1x75x4x8xf32>
// AVX2: linalg.unpack {{.*}} inner_tiles = [12, 8] into %arg2
func.func @vector_of_columns_padded(%a: tensor<1009x300xf32>, %b: tensor<300x6xf32>, %c: tensor<1009x6xf32>) -> tensor<1009x6xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<1009x300xf32>, tensor<300x6xf32>) outs(%c : tensor<1009x6xf32>) -> tensor<1009x6xf32>
  return %r : tensor<1009x6xf32>
}

// Two columns: vectors of two lanes. The tiles divide C, which is written
// in place, and A, read in place: only B is packed.
// CHECK-LABEL: func.func @two_columns
// CHECK: linalg.pack %arg1 {{.*}} inner_tiles = [4, 2] {{.*}} : tensor<256x2xf32> -> tensor<1x64x4x2xf32>
// AVX512: %[[C:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1], [2, 3]] output_shape [32, 16, 1, 2]
// AVX512: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2, 3]] output_shape [32, 16, 64, 4]
// AVX512: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<32x16x64x4xf32>, tensor<1x64x4x2xf32>) outs(%[[C]] : tensor<32x16x1x2xf32>) attrs = {pk.packed_matmul}
// AVX2: tensor.expand_shape %arg0 {{\[\[}}0, 1], [2, 3]] output_shape [64, 8, 64, 4]
// CHECK-NOT: linalg.pack
// CHECK-NOT: linalg.unpack
func.func @two_columns(%a: tensor<512x256xf32>, %b: tensor<256x2xf32>, %c: tensor<512x2xf32>) -> tensor<512x2xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<512x256xf32>, tensor<256x2xf32>) outs(%c : tensor<512x2xf32>) -> tensor<512x2xf32>
  return %r : tensor<512x2xf32>
}

// A few rows and a few columns: tiles of all 4 rows by 4 columns (N rounded
// up to a power of two). C has one panel of each: both operands are read
// in place, and nothing is packed.
// CHECK-LABEL: func.func @few_of_both
// CHECK: %[[B:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2, 3]] output_shape [1024, 4, 1, 4]
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 1024, 4]
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) {{.*}} attrs = {pk.packed_matmul}
// CHECK-NOT: linalg.pack
func.func @few_of_both(%a: tensor<4x4096xf32>, %b: tensor<4096x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x4096xf32>, tensor<4096x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
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

// Dynamic sizes: whether to pack is decided at run time (M at least a
// tile's rows, 2N at least a tile's columns, K at least a block, and at
// least min-iterations multiply-adds, tested as M x N >= ceil(32768 / K)
// so that nothing overflows), and then whether the tiles divide C. Where
// they do, C is written in its tiled layout, collapsed to the result (which
// pk-compute-in-place places in the caller's buffer); where they do not, C
// is padded in that layout and its slice copied into the result's new
// tensor. A product of fewer columns (from 2: many rows, or few of both)
// packs in tiles of one vector per row, N padded to a vector's lanes, so
// that long K sums in blocks too. The product too small to pack stays as
// it was. The new tensor and its fill are copied into every branch.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[M:.*]] = tensor.dim %arg0, %{{.*}}
// CHECK: %[[N:.*]] = tensor.dim %arg1, %{{.*}}
// CHECK: %[[K:.*]] = tensor.dim %arg0, %{{.*}}
// CHECK: %[[MN:.*]] = arith.muli %[[M]], %[[N]]
// CHECK: %[[K1:.*]] = arith.maxsi %[[K]], %{{.*}}
// CHECK: %[[LEAST:.*]] = arith.ceildivsi %c32768, %[[K1]]
// CHECK: %[[LARGE:.*]] = arith.cmpi sge, %[[MN]], %[[LEAST]]
// CHECK: arith.cmpi sge, %[[M]], %c2
// CHECK: %[[PACK:.*]] = arith.andi %{{.*}}, %[[LARGE]]
// CHECK: scf.if %[[PACK]] -> (tensor<?x?xf32>) {
// AVX512: %[[FEW:.*]] = arith.cmpi sle, %{{.*}}, %c128 : index
// AVX2: %[[FEW:.*]] = arith.cmpi sle, %{{.*}}, %c96 : index
// CHECK: scf.if %[[FEW]] -> (tensor<?x?xf32>) {
// CHECK: attrs = {pk.few_row_panels, pk.packed_matmul}
// CHECK: linalg.copy
// CHECK: } else {
// AVX512: arith.remsi %{{.*}}, %c8
// AVX512: arith.remsi %{{.*}}, %c32
// AVX2: arith.remsi %{{.*}}, %c6
// AVX2: arith.remsi %{{.*}}, %c16
// CHECK: %[[DIVIDE:.*]] = arith.andi
// CHECK: scf.if %[[DIVIDE]] -> (tensor<?x?xf32>) {
// AVX512: linalg.pack %arg0 padding_value({{.*}}) {{.*}} inner_tiles = [8, 4] {{.*}} : tensor<?x?xf32> -> tensor<?x?x8x4xf32>
// AVX512: %[[TILED:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x8x?x32xf32>
// AVX512: %[[ZERO:.*]] = linalg.fill {{.*}} outs(%[[TILED]] : tensor<?x8x?x32xf32>)
// AVX512: %[[P:.*]] = linalg.generic {{.*}} outs(%[[ZERO]] : tensor<?x8x?x32xf32>) attrs = {pk.packed_matmul}
// AVX512: %[[C:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1], [2, 3]] : tensor<?x8x?x32xf32> into tensor<?x?xf32>
// AVX512-NOT: linalg.copy
// AVX512: scf.yield %[[C]]
// CHECK: } else {
// CHECK: %[[RESULT:.*]] = tensor.empty(%arg2, %arg3) : tensor<?x?xf32>
// AVX512: %[[TILED2:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x8x?x32xf32>
// AVX512: %[[P2:.*]] = linalg.generic {{.*}} attrs = {pk.packed_matmul}
// AVX512: %[[PADDED:.*]] = tensor.collapse_shape %[[P2]] {{\[\[}}0, 1], [2, 3]] : tensor<?x8x?x32xf32> into tensor<?x?xf32>
// AVX512: %[[SLICE:.*]] = tensor.extract_slice %[[PADDED]][0, 0] [%{{.*}}, %{{.*}}] [1, 1]
// AVX512: %[[COPY:.*]] = linalg.copy ins(%[[SLICE]] : tensor<?x?xf32>) outs(%[[RESULT]] : tensor<?x?xf32>)
// AVX512: scf.yield %[[COPY]]
// CHECK: } else {
// CHECK: arith.cmpi sge, %{{.*}}, %c2
// CHECK: arith.cmpi sge, %{{.*}}, %c2
// CHECK: scf.if %{{.*}} -> (tensor<?x?xf32>) {
// AVX512: linalg.pack %arg0 {{.*}} inner_tiles = [16, 4] {{.*}} -> tensor<?x?x16x4xf32>
// AVX512: linalg.pack %arg1 {{.*}} inner_tiles = [4, 16] {{.*}} -> tensor<?x?x4x16xf32>
// AVX2: linalg.pack %arg0 {{.*}} inner_tiles = [12, 4] {{.*}} -> tensor<?x?x12x4xf32>
// AVX2: linalg.pack %arg1 {{.*}} inner_tiles = [4, 8] {{.*}} -> tensor<?x?x4x8xf32>
// CHECK: attrs = {pk.packed_matmul}
// CHECK: tensor.extract_slice
// CHECK: linalg.copy
// CHECK: } else {
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} outs(%[[E]]
// CHECK: %[[PLAIN:.*]] = linalg.matmul {{.*}} outs(%[[Z]]
// CHECK: scf.yield %[[PLAIN]]
func.func @dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A dynamic M times a static B that the tiles divide: one row panel
// (M up to a tile's rows) reads B in place, as a static M that small does;
// up to 16 row panels pack B (pk-vectorize-packed-matmul then packs each
// column panel in the loop over them), tagged pk.few_row_panels; more rows
// are packed as in @dynamic.
// CHECK-LABEL: func.func @dynamic_rows
// AVX512: %[[ONE:.*]] = arith.cmpi sle, %{{.*}}, %c8 : index
// AVX2: %[[ONE:.*]] = arith.cmpi sle, %{{.*}}, %c6 : index
// CHECK: scf.if %[[ONE]] -> (tensor<?x512xf32>) {
// CHECK-NOT: linalg.pack %arg1
// CHECK: tensor.expand_shape %arg1
// CHECK: attrs = {pk.few_row_panels, pk.packed_matmul}
// CHECK: linalg.copy
// CHECK: } else {
// AVX512: %[[FEW:.*]] = arith.cmpi sle, %{{.*}}, %c128 : index
// AVX2: %[[FEW:.*]] = arith.cmpi sle, %{{.*}}, %c96 : index
// CHECK: scf.if %[[FEW]] -> (tensor<?x512xf32>) {
// CHECK: linalg.pack %arg1
// CHECK: attrs = {pk.few_row_panels, pk.packed_matmul}
// CHECK: linalg.copy
// CHECK: } else {
// CHECK: linalg.pack %arg1
// CHECK-NOT: pk.few_row_panels
// CHECK: return
func.func @dynamic_rows(%a: tensor<?x256xf32>, %b: tensor<256x512xf32>, %m: index) -> tensor<?x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x256xf32>, tensor<256x512xf32>) outs(%c : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %r : tensor<?x512xf32>
}

// B computed in the kernel (a cast) moves into every branch with the
// product, where the packs fuse it (no full-size float32 B made before the
// choice); it is never read in place.
// CHECK-LABEL: func.func @dynamic_rows_cast
// CHECK-NOT: arith.extf
// CHECK: scf.if
// CHECK-NOT: tensor.expand_shape
// CHECK: arith.extf
// CHECK: linalg.pack
// CHECK: attrs = {pk.few_row_panels, pk.packed_matmul}
// CHECK: } else {
// CHECK: arith.extf
// CHECK: return
func.func @dynamic_rows_cast(%a: tensor<?x256xf32>, %b16: tensor<256x512xf16>, %m: index) -> tensor<?x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<256x512xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b16 : tensor<256x512xf16>) outs(%e16 : tensor<256x512xf32>) {
  ^bb0(%x: f16, %o: f32):
    %y = arith.extf %x : f16 to f32
    linalg.yield %y : f32
  } -> tensor<256x512xf32>
  %e = tensor.empty(%m) : tensor<?x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x256xf32>, tensor<256x512xf32>) outs(%c : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %r : tensor<?x512xf32>
}

// A static N that the tiles do not divide: no branch reads B in place, the
// few row panels are at most N's column panels (4 of 32 columns: 32 rows;
// 7 of 16: 42 rows), and no branch assumes tiles that divide C (its padded
// C would not have the result's type).
// CHECK-LABEL: func.func @dynamic_rows_padded
// CHECK-NOT: tensor.expand_shape %arg1
// AVX512: %[[FEW:.*]] = arith.cmpi sle, %{{.*}}, %c32 : index
// AVX2: %[[FEW:.*]] = arith.cmpi sle, %{{.*}}, %c42 : index
// CHECK: scf.if %[[FEW]] -> (tensor<?x100xf32>) {
// CHECK: attrs = {pk.few_row_panels, pk.packed_matmul}
// CHECK: } else {
// CHECK-NOT: arith.remsi
// CHECK: attrs = {pk.packed_matmul}
// CHECK: tensor.extract_slice
// CHECK: return
func.func @dynamic_rows_padded(%a: tensor<?x250xf32>, %b: tensor<250x100xf32>, %m: index) -> tensor<?x100xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x100xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x100xf32>) -> tensor<?x100xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x250xf32>, tensor<250x100xf32>) outs(%c : tensor<?x100xf32>) -> tensor<?x100xf32>
  return %r : tensor<?x100xf32>
}

// An elementwise consumer of a dynamic product moves into every branch:
// the padded one reads the slice of the padded C (no copy); the others
// update the product's tensor in place where it has the consumer's type.
// CHECK-LABEL: func.func @dynamic_with_consumer
// CHECK: scf.if %{{.*}} -> (tensor<?x?xf16>) {
// CHECK: scf.if %{{.*}} -> (tensor<?x?xf16>) {
// AVX512: %[[C:.*]] = tensor.collapse_shape
// AVX512: linalg.generic {{.*}} ins(%[[C]], %arg2 : tensor<?x?xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<?x?xf16>)
// CHECK: } else {
// AVX512: %[[SLICE:.*]] = tensor.extract_slice
// AVX512-NOT: linalg.copy
// AVX512: %[[OUT:.*]] = tensor.empty(%arg3, %arg4) : tensor<?x?xf16>
// AVX512: %[[R:.*]] = linalg.generic {{.*}} ins(%[[SLICE]], %arg2 : tensor<?x?xf32>, tensor<?xf32>) outs(%[[OUT]] : tensor<?x?xf16>)
// AVX512: scf.yield %[[R]]
// CHECK: } else {
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]], %arg2 : tensor<?x?xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<?x?xf16>)
// CHECK: scf.yield %[[S]]
// CHECK-LABEL: func.func @dynamic_update
// AVX512: %[[C:.*]] = tensor.collapse_shape
// AVX512: linalg.generic {{.*}} ins(%[[C]], %arg2 : tensor<?x?xf32>, tensor<?xf32>) outs(%[[C]] : tensor<?x?xf32>)
// CHECK: } else {
// CHECK: } else {
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]], %arg2 : tensor<?x?xf32>, tensor<?xf32>) outs(%[[P]] : tensor<?x?xf32>)
// CHECK: scf.yield %[[S]]
func.func @dynamic_with_consumer(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %bias: tensor<?xf32>, %m: index, %n: index) -> tensor<?x?xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  %h = tensor.empty(%m, %n) : tensor<?x?xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%h : tensor<?x?xf16>) {
  ^bb0(%x: f32, %y: f32, %o: f16):
    %sum = arith.addf %x, %y : f32
    %t = arith.truncf %sum : f32 to f16
    linalg.yield %t : f16
  } -> tensor<?x?xf16>
  return %s : tensor<?x?xf16>
}

func.func @dynamic_update(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %bias: tensor<?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    linalg.yield %sum : f32
  } -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}

// A dynamic product whose static sizes are too thin (K below a block)
// is never packed: no choice.
// CHECK-LABEL: func.func @dynamic_thin
// CHECK-NOT: scf.if
// CHECK-NOT: linalg.pack
// CHECK: linalg.matmul
func.func @dynamic_thin(%a: tensor<?x3xf32>, %b: tensor<3x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x3xf32>, tensor<3x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
