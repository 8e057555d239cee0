// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=512},canonicalize,pk-vectorize-packed-matmul{parallel-threshold=1000},canonicalize))' | FileCheck %s
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=512},canonicalize,pk-vectorize-packed-matmul{parallel-threshold=0},canonicalize))' | FileCheck %s --check-prefix=SERIAL
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=512},canonicalize,pk-vectorize-packed-matmul{k-panel-bytes=256 b-block-bytes=2048},canonicalize))' | FileCheck %s --check-prefix=CHUNKS
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=512},canonicalize,pk-vectorize-packed-matmul{parallel-threshold=1000 b-block-bytes=8192},canonicalize))' | FileCheck %s --check-prefix=NBLOCKS
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-pack-matmul{vector-bits=512},canonicalize,pk-vectorize-packed-matmul{parallel-threshold=0 sum-run=12},canonicalize))' | FileCheck %s --check-prefix=RUNS

// Row panels in parallel (scf.forall), column panels and K blocks in
// scf.for loops; the 8 x 32 C tile starts from zero (C is not filled: one
// chunk of K covers all of it), is carried in registers (a vector
// iter_arg) and written after the K loop, into a padded C in row-major
// order whose slice is the result; each K step is broadcast-times-row FMAs.
// The packs are loops that move a tile per step, reading zeros past the
// operands' ends (vectorize-packed-matmul-packs.mlir).
// CHECK-LABEL: func.func @odd
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK-NOT: linalg.pack
// CHECK: %[[PAD:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.forall (%{{.*}}) in (13)
// CHECK: vector.transfer_read %arg0[%{{.*}}, %{{.*}}], %[[PAD]] : tensor<100x30xf32>, vector<8x4xf32>
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: vector.transfer_read %arg1[%{{.*}}, %{{.*}}], %[[PAD]] : tensor<30x70xf32>, vector<4x32xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[C:.*]] = tensor.empty() : tensor<13x8x3x32xf32>
// CHECK: scf.forall (%[[M:.*]]) in (13) shared_outs(%{{.*}} = %[[C]])
// CHECK: scf.for %[[N:.*]] = %c0 to %c3
// CHECK: scf.for %[[K:.*]] = %c0 to %c8 {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK: vector.transfer_read {{.*}}[%[[M]], %[[K]], %c0, %c0]{{.*}} : tensor<13x8x8x4xf32>, vector<8x4xf32>
// CHECK: vector.transfer_read {{.*}}[%[[N]], %[[K]], %c0, %c0]{{.*}} : tensor<3x8x4x32xf32>, vector<4x32xf32>
// CHECK-COUNT-32: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield {{.*}} : vector<8x32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8x1x32xf32>, tensor<1x8x3x32xf32>
// CHECK: scf.forall.in_parallel
// CHECK: %[[PADDED:.*]] = tensor.collapse_shape {{.*}} : tensor<13x8x3x32xf32> into tensor<104x96xf32>
// CHECK: tensor.extract_slice %[[PADDED]][0, 0] [100, 70] [1, 1] : tensor<104x96xf32> to tensor<100x70xf32>
// CHECK-NOT: pk.packed_matmul
// CHECK-NOT: linalg.unpack
// With 256 bytes of an A row panel (2 blocks of 8 x 4 float32), K's 8
// blocks run in chunks of 2, outermost; with 2 KiB of B per chunk (2
// column panels), N in blocks of 2. Each chunk sums its tiles from zero;
// the first chunk's are C (zero-filled, not read), the others' are added
// to C's.
// CHUNKS-LABEL: func.func @odd
// CHUNKS: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHUNKS: scf.for %[[C:.*]] = %c0 to %c8 step %c2
// CHUNKS: scf.for %{{.*}} = %c0 to %c3 step %c2
// CHUNKS: scf.forall (%{{.*}}) in (13)
// CHUNKS: %[[SUMS:.*]] = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHUNKS-COUNT-32: vector.fma
// CHUNKS: %[[FIRST:.*]] = arith.cmpi eq, %[[C]], %c0
// CHUNKS: scf.if %[[FIRST]] -> (vector<8x32xf32>)
// CHUNKS-NEXT: scf.yield %[[SUMS]]
// CHUNKS-NEXT: } else {
// CHUNKS-NEXT: %[[OLD:.*]] = vector.transfer_read
// CHUNKS-NEXT: %[[TOTAL:.*]] = arith.addf %[[OLD]], %[[SUMS]] : vector<8x32xf32>
// CHUNKS-NEXT: scf.yield %[[TOTAL]]
// K's 8 steps of 4 (K padded to 32) in runs of 3 steps (12 of K; the
// last run shorter), each summed from zero and added to the running total.
// RUNS-LABEL: func.func @odd
// RUNS: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// RUNS: %[[TOTAL:.*]] = scf.for %[[FROM:.*]] = %c0 to %c8 step %c3 iter_args(%[[SOFAR:.*]] = %[[ZERO]]) -> (vector<8x32xf32>)
// RUNS-NEXT: %[[NEXT:.*]] = arith.addi %[[FROM]], %c3
// RUNS-NEXT: %[[END:.*]] = arith.minsi %[[NEXT]], %c8
// RUNS-NEXT: %[[SUMS:.*]] = scf.for %{{.*}} = %[[FROM]] to %[[END]] step %c1 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// RUNS-COUNT-32: vector.fma
// RUNS: %[[ADDED:.*]] = arith.addf %[[SOFAR]], %[[SUMS]] : vector<8x32xf32>
// RUNS-NEXT: scf.yield %[[ADDED]]
// RUNS: vector.transfer_write %[[TOTAL]]
// SERIAL-LABEL: func.func @odd
// SERIAL-NOT: scf.forall
// SERIAL: scf.for
// SERIAL: vector.fma
func.func @odd(%a: tensor<100x30xf32>, %b: tensor<30x70xf32>) -> tensor<100x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x70xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<100x70xf32>) -> tensor<100x70xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x30xf32>, tensor<30x70xf32>) outs(%c : tensor<100x70xf32>) -> tensor<100x70xf32>
  return %r : tensor<100x70xf32>
}

// Integers: the same tile of multiply-adds on i32 vectors; batches run in
// parallel (then row panels do not); C is not zero-filled here, so the
// tiles, summed from zero, are added to it after the K loop.
// CHECK-LABEL: func.func @batch
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0> : vector<8x32xi32>
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4x8x8x2x32xi32>)
// CHECK-NOT: scf.forall
// CHECK: %[[SUMS:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<8x32xi32>)
// CHECK: arith.muli {{.*}} : vector<32xi32>
// CHECK: arith.addi {{.*}} : vector<32xi32>
// CHECK: %[[OLD:.*]] = vector.transfer_read
// CHECK-NEXT: arith.addi %[[OLD]], %[[SUMS]] : vector<8x32xi32>
func.func @batch(%a: tensor<4x64x32xi32>, %b: tensor<4x32x64xi32>, %c: tensor<4x64x64xi32>) -> tensor<4x64x64xi32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xi32>, tensor<4x32x64xi32>) outs(%c : tensor<4x64x64xi32>) -> tensor<4x64x64xi32>
  return %r : tensor<4x64x64xi32>
}

// An elementwise producer of an operand (here float16 -> float32) is
// computed while packing it: the pack's transpose is a generic that
// casts, and no float32 copy of the operand is made.
// CHECK-LABEL: func.func @cast
// CHECK-NOT: tensor.empty() : tensor<64x64xf32>
// CHECK: tensor.expand_shape %arg0 {{.*}} into tensor<8x8x16x4xf16>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x8x16x4xf16>) outs(%{{.*}} : tensor<8x16x8x4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.extf
// CHECK: scf.forall
func.func @cast(%a: tensor<64x64xf16>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %a32 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x64xf16>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a32, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// An elementwise consumer of the product (bias, tanh) runs on each register
// tile as the K loop leaves it, in registers, one row of the tile at a
// time: the loops tile the consumer, the product fuses into them, and the
// tiles of the result go to its destination (no C is left). With blocks of
// N around the row panels as well. With K in chunks, C is final only after
// the last chunk: the consumer stays a pass over C.
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[BIAS:.*]] = tensor.expand_shape %arg2 {{.*}} into tensor<2x32xf32>
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<8x8x2x32xf32>)
// CHECK: scf.for %[[N:.*]] = %c0 to %c2 {{.*}} iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x8x2x32xf32>)
// CHECK: %[[TILE:.*]] = scf.for {{.*}} -> (vector<8x32xf32>)
// CHECK: vector.fma
// CHECK: %[[ROW:.*]] = vector.transfer_read %[[BIAS]][%[[N]], %c0]{{.*}} : tensor<2x32xf32>, vector<32xf32>
// CHECK: %[[FIRST:.*]] = vector.extract %[[TILE]][0] : vector<32xf32> from vector<8x32xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[FIRST]], %[[ROW]] : vector<32xf32>
// CHECK-COUNT-7: arith.addf {{.*}} : vector<32xf32>
// CHECK: math.tanh %[[SUM]] : vector<32xf32>
// CHECK-COUNT-7: math.tanh {{.*}} : vector<32xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[OUT]][%c0, %c0, %[[N]], %c0] {{.*}} : vector<8x1x32xf32>, tensor<1x8x2x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
// SERIAL-LABEL: func.func @epilogue
// SERIAL: scf.for {{.*}} -> (tensor<8x8x2x32xf32>)
// SERIAL: scf.for {{.*}} -> (tensor<1x8x2x32xf32>)
// SERIAL: vector.fma
// SERIAL: math.tanh {{.*}} : vector<32xf32>
// SERIAL-NOT: linalg.generic
// SERIAL: return
// NBLOCKS-LABEL: func.func @epilogue
// NBLOCKS: scf.for {{.*}} -> (tensor<8x8x2x32xf32>)
// NBLOCKS: scf.forall (%{{.*}}) in (8) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<8x8x1x32xf32>)
// NBLOCKS: vector.fma
// NBLOCKS: math.tanh {{.*}} : vector<32xf32>
// NBLOCKS-NOT: linalg.generic
// NBLOCKS: return
// CHUNKS-LABEL: func.func @epilogue
// CHUNKS: scf.forall
// CHUNKS: tensor.collapse_shape
// CHUNKS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x64xf32>, tensor<64xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @epilogue(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %p = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  %o = tensor.empty() : tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %bias : tensor<64x64xf32>, tensor<64xf32>) outs(%o : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// Dynamic sizes (pk-pack-matmul's run-time choice). Up to 16 row panels
// (128 rows): column panels in parallel, each packing its panel of B (a
// tensor of its own, read from B's rows) before every row panel uses it.
// Else chunks of K of at most 512 blocks and blocks of as many column
// panels as keep a chunk of B in 1 MiB, 2048 panel-steps of K (a short K
// at run time: every panel in one block; affine.min: the last chunk and
// block shorter), row panels in parallel, the
// first chunk's tiles started from zero; C's tiled layout is then copied
// into the result. The product too small to pack stays as it was.
// CHECK-LABEL: func.func @dynamic
// CHECK: scf.if %{{.*}} -> (tensor<?x?xf32>) {
// CHECK: %[[FEW:.*]] = arith.cmpi sle, %{{.*}}, %c128 : index
// CHECK: scf.if %[[FEW]] -> (tensor<?x?xf32>) {
// CHECK: scf.forall (%{{.*}}) in (%{{.*}}) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<?x8x?x32xf32>)
// CHECK: %[[B:.*]] = tensor.extract_slice %arg1
// CHECK: %[[PANEL:.*]] = tensor.empty(%{{.*}}) : tensor<1x?x4x32xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[PANEL]])
// CHECK: vector.transfer_read %[[B]]
// CHECK: vector.fma
// CHECK: linalg.copy
// CHECK: } else {
// CHECK: scf.for %[[K:.*]] = %c0 to %{{.*}} step %c512 iter_args
// CHECK: %[[CHUNK:.*]] = affine.min
// CHECK: %[[STEPS:.*]] = arith.maxsi %[[CHUNK]], %c1 : index
// CHECK: %[[PANELS:.*]] = arith.divui %c2048, %[[STEPS]] : index
// CHECK: %[[BLOCK:.*]] = arith.maxsi %[[PANELS]], %c1 : index
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %[[BLOCK]] iter_args
// CHECK: scf.forall
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %c0
// CHECK: scf.if %[[FIRST]] -> (vector<8x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: tensor.collapse_shape
// CHECK: linalg.copy
// CHECK: } else {
// CHECK: linalg.matmul
func.func @dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A few row panels (3 of 8 rows) and more column panels (16): the column
// panels run in parallel, each packing its panel of B into a tensor of its
// own (from B's slice, read in bounds), then every row panel's tiles
// across K read it while it is in cache.
// CHECK-LABEL: func.func @few_row_panels
// CHECK: %[[A:.*]] = scf.forall (%{{.*}}) in (3) {{.*}} -> (tensor<3x64x8x4xf32>)
// CHECK: scf.forall (%{{.*}}) in (16) {{.*}} -> (tensor<3x8x16x32xf32>)
// CHECK: %[[B:.*]] = tensor.extract_slice %arg1
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x64x4x32xf32>
// CHECK: %[[PANEL:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK: vector.transfer_read %[[B]]{{.*}} {in_bounds = [true, true]} : tensor<256x32xf32>, vector<4x32xf32>
// CHECK: scf.for %[[ROWS:.*]] = %c0 to %c3
// CHECK: scf.for %[[K:.*]] = %c0 to %c64 {{.*}} -> (vector<8x32xf32>)
// CHECK: vector.transfer_read %[[A]][%[[ROWS]], %[[K]], %c0, %c0]
// CHECK: vector.transfer_read %[[PANEL]][%c0, %[[K]], %c0, %c0]
// CHECK-COUNT-32: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.pack
func.func @few_row_panels(%a: tensor<24x256xf32>, %b: tensor<256x512xf32>) -> tensor<24x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<24x512xf32>) -> tensor<24x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<24x256xf32>, tensor<256x512xf32>) outs(%c : tensor<24x512xf32>) -> tensor<24x512xf32>
  return %r : tensor<24x512xf32>
}

// One panel of rows (a product of 4 rows, tiles of 4 x 32): its 16 column
// panels run in parallel instead, each across all of K, so that B's panels
// pass once; C is written in its tiled layout.
// CHECK-LABEL: func.func @few_rows
// CHECK: scf.forall (%{{.*}}) in (16) {{.*}} -> (tensor<1x4x16x32xf32>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %cst) -> (vector<4x32xf32>)
// CHECK-COUNT-4: vector.fma {{.*}} : vector<32xf32>
// SERIAL-LABEL: func.func @few_rows
// SERIAL-NOT: scf.forall
// SERIAL: vector.fma
func.func @few_rows(%a: tensor<4x256xf32>, %b: tensor<256x512xf32>) -> tensor<4x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x512xf32>) -> tensor<4x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x256xf32>, tensor<256x512xf32>) outs(%c : tensor<4x512xf32>) -> tensor<4x512xf32>
  return %r : tensor<4x512xf32>
}
