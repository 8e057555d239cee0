// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-vectorize-packed-matmul{parallel-threshold=100},canonicalize))' | FileCheck %s
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-vectorize-packed-matmul{parallel-threshold=0},canonicalize))' | FileCheck %s --check-prefix=SERIAL

// The packs the matmul's panels come from are loops over the packed
// layout's outer dimensions that move one tile per step as a vector: read
// from the source (past its end, the padding value: the reads are not in
// bounds there), transposed into the tile's order when the tile's
// dimensions are, and written whole. The loops step through the outer
// dimensions in the source's order (B's column panels innermost: its rows
// are read contiguously). Large packs run in parallel over the source's
// outermost dimension.
// CHECK-LABEL: func.func @transposed
// CHECK: %[[PAD:.*]] = arith.constant 1.500000e+00 : f32
// CHECK: scf.forall (%[[ROWS:.*]]) in (3) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<3x3x8x4xf32>)
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][0, %[[ROWS]], 0, 0] [3, 1, 8, 4]
// CHECK: scf.for %[[COLS:.*]] = %c0 to %c3 step %c1 iter_args(%[[T:.*]] = %[[SLICE]])
// CHECK-DAG: %[[C:.*]] = arith.muli %[[COLS]], %c8
// CHECK-DAG: %[[R:.*]] = arith.muli %[[ROWS]], %c4
// CHECK: %[[V:.*]] = vector.transfer_read %arg0[%[[R]], %[[C]]], %[[PAD]] : tensor<10x20xf32>, vector<4x8xf32>
// CHECK: %[[W:.*]] = vector.transpose %[[V]], [1, 0] : vector<4x8xf32> to vector<8x4xf32>
// CHECK: vector.transfer_write %[[W]], %[[T]][%[[COLS]], %c0, %c0, %c0] {in_bounds = [true, true]} : vector<8x4xf32>, tensor<3x1x8x4xf32>
// CHECK: tensor.parallel_insert_slice {{.*}} into %[[OUT]][0, %[[ROWS]], 0, 0] [3, 1, 8, 4]
// CHECK-NOT: linalg.pack
// SERIAL-LABEL: func.func @transposed
// SERIAL-NOT: scf.forall
// SERIAL: scf.for {{.*}} -> (tensor<3x3x8x4xf32>)
// SERIAL: scf.for {{.*}} -> (tensor<3x3x8x4xf32>)
// SERIAL: vector.transfer_read
func.func @transposed(%s: tensor<10x20xf32>) -> tensor<3x3x8x4xf32> {
  %pad = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<3x3x8x4xf32>
  %p = linalg.pack %s padding_value(%pad : f32) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 4] into %e : tensor<10x20xf32> -> tensor<3x3x8x4xf32>
  return %p : tensor<3x3x8x4xf32>
}

// Leading untiled dimensions (batches) are looped over too; tiles that
// divide their dimensions are read in bounds.
// CHECK-LABEL: func.func @batch
// CHECK: scf.forall (%[[B:.*]]) in (5)
// CHECK: scf.for %[[I:.*]] = %c0 to %c4
// CHECK: scf.for %[[J:.*]] = %c0 to %c2
// CHECK: vector.transfer_read %arg0[%[[B]], %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<5x16x8xi8>, vector<4x4xi8>
// CHECK: vector.transfer_write {{.*}}[%c0, %[[I]], %[[J]], %c0, %c0] {in_bounds = [true, true]} : vector<4x4xi8>, tensor<1x4x2x4x4xi8>
func.func @batch(%s: tensor<5x16x8xi8>) -> tensor<5x4x2x4x4xi8> {
  %e = tensor.empty() : tensor<5x4x2x4x4xi8>
  %p = linalg.pack %s inner_dims_pos = [1, 2] inner_tiles = [4, 4] into %e : tensor<5x16x8xi8> -> tensor<5x4x2x4x4xi8>
  return %p : tensor<5x4x2x4x4xi8>
}

// A pack that leaves a trailing dimension untiled is a reshape and a
// transpose, as upstream lowers it.
// CHECK-LABEL: func.func @untiled_inner
// CHECK: tensor.expand_shape
// CHECK: linalg.transpose
func.func @untiled_inner(%s: tensor<16x8xf32>) -> tensor<4x8x4xf32> {
  %e = tensor.empty() : tensor<4x8x4xf32>
  %p = linalg.pack %s inner_dims_pos = [0] inner_tiles = [4] into %e : tensor<16x8xf32> -> tensor<4x8x4xf32>
  return %p : tensor<4x8x4xf32>
}

// A vector packs one row of the result per step (small: not in
// parallel); a pack without inner tiles is a transpose, as upstream lowers
// it.
// CHECK-LABEL: func.func @vector_pack
// CHECK: scf.for %[[I:.*]] = %c0 to %c3 step %c1
// CHECK: %[[AT:.*]] = arith.muli %[[I]], %c4
// CHECK: vector.transfer_read %arg0[%[[AT]]], %{{.*}} : tensor<10xf32>, vector<4xf32>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<4xf32>, tensor<3x4xf32>
// CHECK-LABEL: func.func @no_tiles
// CHECK: linalg.transpose
func.func @vector_pack(%s: tensor<10xf32>) -> tensor<3x4xf32> {
  %pad = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %p = linalg.pack %s padding_value(%pad : f32) inner_dims_pos = [0] inner_tiles = [4] into %e : tensor<10xf32> -> tensor<3x4xf32>
  return %p : tensor<3x4xf32>
}

func.func @no_tiles(%s: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %e = tensor.empty() : tensor<6x4xf32>
  %p = linalg.pack %s outer_dims_perm = [1, 0] inner_dims_pos = [] inner_tiles = [] into %e : tensor<4x6xf32> -> tensor<6x4xf32>
  return %p : tensor<6x4xf32>
}

// Dynamic sizes: the loops run to the destination's sizes, the reads may
// pass the source's end (not in bounds), and whether the outermost
// dimension runs in parallel is decided at run time, on the number of
// elements moved (an scf.if between the forall and serial loops).
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: %[[ROWS:.*]] = tensor.dim %arg1, %c0
// CHECK-DAG: %[[COLS:.*]] = tensor.dim %arg1, %c1
// CHECK: %[[N:.*]] = arith.muli %[[ROWS]], %[[COLS]]
// CHECK: %[[ELEMENTS:.*]] = arith.muli %[[N]], %c32
// CHECK: %[[LARGE:.*]] = arith.cmpi sge, %[[ELEMENTS]], %c100
// CHECK: scf.if %[[LARGE]] -> (tensor<?x?x8x4xf32>) {
// CHECK: scf.forall (%{{.*}}) in (%[[ROWS]]) shared_outs(%{{.*}} = %arg1)
// CHECK: vector.transfer_read %arg0[%{{.*}}, %{{.*}}], %{{.*}} : tensor<?x?xf32>, vector<8x4xf32>
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %[[ROWS]] step %c1 iter_args(%{{.*}} = %arg1)
// CHECK: scf.for %{{.*}} = %c0 to %[[COLS]] step %c1
// CHECK: vector.transfer_read %arg0[%{{.*}}, %{{.*}}], %{{.*}} : tensor<?x?xf32>, vector<8x4xf32>
// SERIAL-LABEL: func.func @dynamic
// SERIAL-NOT: scf.if
// SERIAL-NOT: scf.forall
// SERIAL: vector.transfer_read
func.func @dynamic(%s: tensor<?x?xf32>, %e: tensor<?x?x8x4xf32>) -> tensor<?x?x8x4xf32> {
  %pad = arith.constant 0.0 : f32
  %p = linalg.pack %s padding_value(%pad : f32) inner_dims_pos = [0, 1] inner_tiles = [8, 4] into %e : tensor<?x?xf32> -> tensor<?x?x8x4xf32>
  return %p : tensor<?x?x8x4xf32>
}
