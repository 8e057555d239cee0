// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-vectorize-matvec{vector-bits=512 parallel-threshold=1000 min-iterations=1000 sum-block=0},canonicalize))' | FileCheck %s
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-vectorize-matvec{vector-bits=512 parallel-threshold=0 min-iterations=1000 sum-block=0},canonicalize))' | FileCheck %s --check-prefix=SERIAL
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-vectorize-matvec{vector-bits=512 parallel-threshold=1000 min-iterations=1000 sum-block=64},canonicalize))' | FileCheck %s --check-prefix=BLOCKS

// (For the dynamic sizes below: the largest multiple of 8 rows, half the
// columns in whole tiles of 64.)
// CHECK-DAG: #[[$EIGHTS:.*]] = affine_map<()[s0, s1] -> ((s0 floordiv 8) * 8, s1)>
// CHECK-DAG: #[[$HALF:.*]] = affine_map<()[s0] -> (4096, ((s0 + 127) floordiv 128) * 64)>

// A @ x: 8-row tiles in parallel, 64 columns (4 x 16 float32) per step,
// each row's products summed as a reassociated tree into the 8 row sums
// carried in registers; the 3 columns the tiles do not divide follow in
// each row tile (while its rows are in cache) as vectors of 3; the 3 rows
// left over are one thinner tile.
// CHECK-LABEL: func.func @rows
// CHECK: scf.forall (%[[R:.*]]) = (0) to (64) step (8)
// CHECK: %[[SUMS:.*]] = vector.transfer_read {{.*}} : tensor<8xf32>, vector<8xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c128 step %c64 iter_args(%{{.*}} = %[[SUMS]]) -> (vector<8xf32>)
// CHECK: tensor.extract_slice %arg0[%[[R]], %[[K]]] [8, 64]
// CHECK: arith.mulf {{.*}} : vector<8x64xf32>
// CHECK-COUNT-8: vector.reduction <add>, {{.*}} fastmath<reassoc> : vector<64xf32> into f32
// CHECK: scf.yield {{.*}} : vector<8xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<8x3xf32>, vector<8x3xf32>
// CHECK-COUNT-8: vector.reduction <add>, {{.*}} fastmath<reassoc> : vector<3xf32> into f32
// CHECK: scf.forall.in_parallel
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (vector<3xf32>)
// CHECK: vector.transfer_read {{.*}} : tensor<3x3xf32>, vector<3x3xf32>
// CHECK-NOT: linalg.generic
func.func @rows(%a: tensor<67x131xf32>, %x: tensor<131xf32>, %o: tensor<67xf32>) -> tensor<67xf32> {
  %r = linalg.matvec ins(%a, %x : tensor<67x131xf32>, tensor<131xf32>) outs(%o : tensor<67xf32>) -> tensor<67xf32>
  return %r : tensor<67xf32>
}

// x @ A: blocks of columns in parallel (1088 = 576 + 512), each adding 8
// rows of A times their x at a time to 64 columns of the result, rows
// outermost (A streams row by row); the rows and columns the steps do not
// divide stay generic ops.
// CHECK-LABEL: func.func @columns
// CHECK: scf.forall (%[[B:.*]]) = (0) to (1088) step (576)
// CHECK: scf.for %[[K:.*]] = %c0 to %c128 step %c8
// CHECK: scf.for %[[N:.*]] = %c0 to %{{.*}} step %c64
// CHECK: vector.transfer_read {{.*}} : tensor<8x64xf32>, vector<8x64xf32>
// CHECK: arith.mulf {{.*}} : vector<8x64xf32>
// CHECK-COUNT-8: arith.addf {{.*}} : vector<64xf32>
// CHECK: vector.transfer_write {{.*}} : vector<64xf32>, tensor<64xf32>
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<3xf32>, tensor<3x1088xf32>)
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<131xf32>, tensor<131x12xf32>)
func.func @columns(%x: tensor<131xf32>, %a: tensor<131x1100xf32>, %o: tensor<1100xf32>) -> tensor<1100xf32> {
  %r = linalg.vecmat ins(%x, %a : tensor<131xf32>, tensor<131x1100xf32>) outs(%o : tensor<1100xf32>) -> tensor<1100xf32>
  return %r : tensor<1100xf32>
}

// Rows shorter than a tile (8 columns): tiles of all of each row, no K
// loop.
// CHECK-LABEL: func.func @thin
// CHECK: scf.forall (%{{.*}}) = (0) to (4096) step (8)
// CHECK-NOT: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<8x8xf32>, vector<8x8xf32>
// CHECK-COUNT-8: vector.reduction <add>, {{.*}} : vector<8xf32> into f32
func.func @thin(%a: tensor<4096x8xf32>, %x: tensor<8xf32>, %o: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = linalg.matvec ins(%a, %x : tensor<4096x8xf32>, tensor<8xf32>) outs(%o : tensor<4096xf32>) -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// Too thin for vectors (3 columns; x @ A of 3 outputs): unchanged.
// CHECK-LABEL: func.func @thinnest
// CHECK: linalg.matvec
// CHECK: linalg.vecmat
func.func @thinnest(%a: tensor<4096x3xf32>, %x: tensor<3xf32>, %y: tensor<4096xf32>, %o: tensor<4096xf32>, %p: tensor<3xf32>) -> (tensor<4096xf32>, tensor<3xf32>) {
  %r = linalg.matvec ins(%a, %x : tensor<4096x3xf32>, tensor<3xf32>) outs(%o : tensor<4096xf32>) -> tensor<4096xf32>
  %s = linalg.vecmat ins(%y, %a : tensor<4096xf32>, tensor<4096x3xf32>) outs(%p : tensor<3xf32>) -> tensor<3xf32>
  return %r, %s : tensor<4096xf32>, tensor<3xf32>
}

// x @ A of 20 outputs: one block of all 20 columns, 8 rows a step.
// CHECK-LABEL: func.func @few_columns
// CHECK: scf.for %{{.*}} step %c8
// CHECK: vector.transfer_read {{.*}} : tensor<8x20xf32>, vector<8x20xf32>
// CHECK-NOT: linalg.generic
func.func @few_columns(%x: tensor<1000xf32>, %a: tensor<1000x20xf32>, %o: tensor<20xf32>) -> tensor<20xf32> {
  %r = linalg.vecmat ins(%x, %a : tensor<1000xf32>, tensor<1000x20xf32>) outs(%o : tensor<20xf32>) -> tensor<20xf32>
  return %r : tensor<20xf32>
}

// Fewer rows than a tile: one tile of all of them (8 + 5 for 13 rows: the
// rows a tile leaves over are a thinner tile, not a loop nest).
// CHECK-LABEL: func.func @few_rows
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// CHECK-COUNT-8: vector.reduction <add>
// CHECK: vector.transfer_read {{.*}} : tensor<8x44xf32>, vector<8x44xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (vector<5xf32>)
// CHECK-COUNT-5: vector.reduction <add>
// CHECK: vector.transfer_read {{.*}} : tensor<5x44xf32>, vector<5x44xf32>
// CHECK-NOT: linalg.generic
func.func @few_rows(%a: tensor<13x300xf32>, %x: tensor<300xf32>, %o: tensor<13xf32>) -> tensor<13xf32> {
  %r = linalg.matvec ins(%a, %x : tensor<13x300xf32>, tensor<300xf32>) outs(%o : tensor<13xf32>) -> tensor<13xf32>
  return %r : tensor<13xf32>
}

// A dot product is one row: 64-product trees added in order.
// CHECK-LABEL: func.func @dot
// CHECK: scf.for %{{.*}} = %c0 to %c960 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (vector<f32>)
// CHECK: vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<64xf32> into f32
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<40xf32>, tensor<40xf32>)
func.func @dot(%a: tensor<1000xf32>, %b: tensor<1000xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.dot ins(%a, %b : tensor<1000xf32>, tensor<1000xf32>) outs(%o : tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// Dynamic sizes: rows of at least one vector (16 float32) are vector code,
// where an scf.if on the count of multiply-adds (from the threshold on)
// chooses the parallel copy or the serial one. Each splits at the largest
// multiple of a tile, whose tiles are whole and static (8 x 64 here), the
// columns they leave over a loop of at most one masked 8 x 64 step in each
// row tile (no branch: bufferization would copy the tile's sums), their
// masked-off products -0.0 in the sums; the rows left over are serial
// (no parallel region for fewer than 8 rows): at most one tile of 4 rows,
// then of 2, then one row (several rows' sums side by side: one row's
// are a single chain of additions).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>, %[[X:.*]]: tensor<?xf32>
// CHECK-DAG: %[[NOTHING:.*]] = arith.constant dense<-0.000000e+00> : vector<64xf32>
// CHECK-DAG: %[[K:.*]] = tensor.dim %[[A]], %c1
// CHECK: %[[WIDE:.*]] = arith.cmpi sge, %[[K]], %c16
// CHECK: scf.if %[[WIDE]]
// CHECK-DAG: %[[M:.*]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[K2:.*]] = tensor.dim %[[A]], %c1
// CHECK: %[[COUNT:.*]] = arith.muli %[[M]], %[[K2]]
// CHECK: %[[LARGE:.*]] = arith.cmpi sge, %[[COUNT]], %c1000
// CHECK: scf.if %[[LARGE]]
// CHECK: %[[MAIN:.*]] = affine.min #[[$EIGHTS]]()
// CHECK: scf.forall (%[[R:.*]]) = (0) to (%[[MAIN]]) step (8)
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c64 iter_args(%{{.*}}) -> (vector<8xf32>)
// CHECK: tensor.extract_slice %[[A]][%[[R]], %{{.*}}] [8, 64] [1, 1] : tensor<?x?xf32> to tensor<8x64xf32>
// CHECK-COUNT-8: vector.reduction <add>, {{.*}} fastmath<reassoc> : vector<64xf32> into f32
// CHECK-NOT: scf.if
// CHECK: scf.for %{{.*}} step %c64 iter_args(%{{.*}}) -> (tensor<8xf32>)
// CHECK: %[[REST:.*]] = vector.create_mask %c8, %{{.*}} : vector<8x64xi1>
// CHECK: vector.transfer_read %{{.*}}[%c0, %c0], %{{.*}}, %[[REST]] {{.*}} : tensor<8x?xf32>, vector<8x64xf32>
// CHECK: %[[SUMMED:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NOTHING]] : vector<64xi1>, vector<64xf32>
// CHECK: vector.reduction <add>, %[[SUMMED]]
// CHECK-NOT: vector.mask
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c4
// CHECK: -> (vector<4xf32>)
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c2
// CHECK: -> (vector<2xf32>)
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK: -> (vector<f32>)
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c8
// CHECK: -> (vector<8xf32>)
// CHECK-NOT: scf.forall
// CHECK: scf.yield
// Rows shorter than one vector: the loop nest, over all of A.
// CHECK: linalg.generic {{.*}} ins(%[[A]], %{{[a-z0-9]+}} : tensor<?x?xf32>, tensor<?xf32>)
// Without threads (parallel-threshold=0), short rows are still decided
// at run time; the tiles are serial.
// SERIAL-LABEL: func.func @dynamic_rows
// SERIAL: %[[WIDE:.*]] = arith.cmpi sge, %{{.*}}, %c16
// SERIAL: scf.if %[[WIDE]]
// SERIAL-NOT: scf.forall
// SERIAL: scf.for %{{.*}} = %c0 to %{{.*}} step %c8
// SERIAL: } else {
// SERIAL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x?xf32>, tensor<?xf32>)
func.func @dynamic_rows(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %o: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.matvec ins(%a, %x : tensor<?x?xf32>, tensor<?xf32>) outs(%o : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// x @ A with dynamic sizes: in parallel, blocks of half the columns
// (rounded up to tiles; at least one, at most 4096); serially, blocks of
// 4096; 8 rows times 64 columns a step, static.
// CHECK-LABEL: func.func @dynamic_columns
// CHECK: scf.if
// CHECK: %[[ATMOST:.*]] = affine.min #[[$HALF]]()
// CHECK: %[[BLOCK:.*]] = affine.max #{{.*}}()[%[[ATMOST]]]
// CHECK: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (%[[BLOCK]])
// CHECK: scf.for %{{.*}} step %c8
// CHECK: scf.for %{{.*}} step %c64
// CHECK: vector.transfer_read {{.*}} : tensor<8x64xf32>, vector<8x64xf32>
// CHECK-COUNT-8: arith.addf {{.*}} : vector<64xf32>
// The columns the tiles leave over: masked steps of 32 (in parallel here),
// each summing every row into a register, read and written once.
// CHECK: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (32)
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<32xi1>
// CHECK: %[[START:.*]] = vector.transfer_read %{{.*}}, %[[MASK]] {{.*}} : tensor<?xf32>, vector<32xf32>
// CHECK: %[[SUMS:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[START]]) -> (vector<32xf32>)
// CHECK: vector.transfer_read %{{.*}}, %[[MASK]] {{.*}} : tensor<?xf32>, vector<32xf32>
// CHECK: vector.transfer_write %[[SUMS]], %{{.*}}, %[[MASK]]
// CHECK: } else {
// CHECK: scf.for %{{.*}} step %c4096
// CHECK: scf.for %{{.*}} step %c8
// CHECK: scf.for %{{.*}} step %c64
// CHECK: vector.transfer_read {{.*}} : tensor<8x64xf32>, vector<8x64xf32>
func.func @dynamic_columns(%x: tensor<?xf32>, %a: tensor<?x?xf32>, %o: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.vecmat ins(%x, %a : tensor<?xf32>, tensor<?x?xf32>) outs(%o : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Long sums in blocks (sum-block=64 here; the RUN lines above take K in
// one sum). x @ A over 200 rows: the 8 rows past 3 whole blocks first,
// from zero; then the blocks as a batch of x @ A (A viewed as 3 x 64 x 128)
// in parallel with the column blocks, each summing its 64 rows from zero
// into its own row of partials; then 4 -> 2 -> 1 partials pairwise, and
// the total added to the result.
// BLOCKS-LABEL: func.func @long_columns
// BLOCKS-SAME: (%[[X:[a-z0-9]+]]: tensor<200xf32>, %{{[a-z0-9]+}}: tensor<200x128xf32>, %[[O:[a-z0-9]+]]: tensor<128xf32>)
// BLOCKS: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<128xf32>
// BLOCKS: tensor.extract_slice %[[X]][192] [8] [1]
// BLOCKS: scf.forall (%{{.*}}) = (0) to (128) step (64) shared_outs(%{{.*}} = %[[ZERO]])
// BLOCKS: %[[SLOTS:.*]] = linalg.fill {{.*}} -> tensor<4x128xf32>
// BLOCKS: tensor.expand_shape {{.*}} output_shape [3, 64, 128] : tensor<192x128xf32> into tensor<3x64x128xf32>
// BLOCKS: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (128, 3) step (64, 1) {{.*}} -> (tensor<3x128xf32>)
// BLOCKS: scf.for %{{.*}} = %c0 to %c64 step %c8
// BLOCKS: vector.transfer_read {{.*}} : tensor<8x64xf32>, vector<8x64xf32>
// BLOCKS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x128xf32>, tensor<2x128xf32>)
// BLOCKS: arith.addf {{.*}} fastmath<reassoc>
// BLOCKS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x128xf32>, tensor<1x128xf32>)
// BLOCKS: linalg.generic {{.*}} ins(%{{.*}} : tensor<128xf32>) outs(%[[O]] : tensor<128xf32>)
func.func @long_columns(%x: tensor<200xf32>, %a: tensor<200x128xf32>, %o: tensor<128xf32>) -> tensor<128xf32> {
  %r = linalg.vecmat ins(%x, %a : tensor<200xf32>, tensor<200x128xf32>) outs(%o : tensor<128xf32>) -> tensor<128xf32>
  return %r : tensor<128xf32>
}

// A dot product's blocks are 8 times longer (its chunks already sum in
// parallel lanes): 1100 elements are 2 blocks of 512 in parallel and 76
// more.
// BLOCKS-LABEL: func.func @long_dot
// BLOCKS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<76xf32>, tensor<76xf32>)
// BLOCKS: tensor.expand_shape {{.*}} output_shape [2, 512] : tensor<1024xf32> into tensor<2x512xf32>
// BLOCKS: scf.forall (%{{.*}}) in (2) {{.*}} -> (tensor<2xf32>)
// BLOCKS: vector.reduction <add>, {{.*}} fastmath<reassoc> : vector<64xf32> into f32
func.func @long_dot(%a: tensor<1100xf32>, %b: tensor<1100xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.dot ins(%a, %b : tensor<1100xf32>, tensor<1100xf32>) outs(%o : tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// Integer sums are exact in any order: one sum.
// BLOCKS-LABEL: func.func @integer_columns
// BLOCKS-NOT: tensor.expand_shape
// BLOCKS: return
func.func @integer_columns(%x: tensor<200xi32>, %a: tensor<200x128xi32>, %o: tensor<128xi32>) -> tensor<128xi32> {
  %r = linalg.vecmat ins(%x, %a : tensor<200xi32>, tensor<200x128xi32>) outs(%o : tensor<128xi32>) -> tensor<128xi32>
  return %r : tensor<128xi32>
}

// A dynamic K: blocks where it comes at least two blocks long (an scf.if),
// a dynamic count of them combined level by level (scf.while); shorter
// ones as before.
// BLOCKS-LABEL: func.func @dynamic_long_columns
// BLOCKS-SAME: (%[[X:[a-z0-9]+]]: tensor<?xf32>
// BLOCKS: %[[K:.*]] = tensor.dim %[[X]], %c0
// BLOCKS: %[[LONG:.*]] = arith.cmpi sge, %[[K]], %c128
// BLOCKS: scf.if %[[LONG]]
// BLOCKS: tensor.expand_shape {{.*}} : tensor<?x?xf32> into tensor<?x64x?xf32>
// BLOCKS: scf.forall
// BLOCKS: scf.while
// BLOCKS: } else {
// BLOCKS-NOT: tensor.expand_shape
// BLOCKS: scf.forall
// BLOCKS: return
func.func @dynamic_long_columns(%x: tensor<?xf32>, %a: tensor<?x?xf32>, %o: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.vecmat ins(%x, %a : tensor<?xf32>, tensor<?x?xf32>) outs(%o : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Boolean operands stay as they are (vectors of i1 are bits; memory holds
// a byte per boolean).
// CHECK-LABEL: func.func @booleans
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
#bool_x = affine_map<(d0, d1, d2) -> (d2)>
#bool_a = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#bool_o = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @booleans(%x: tensor<300xi1>, %a: tensor<2x300x64xi1>, %o: tensor<2x64xi64>) -> tensor<2x64xi64> {
  %r = linalg.generic {indexing_maps = [#bool_x, #bool_a, #bool_o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %a : tensor<300xi1>, tensor<2x300x64xi1>) outs(%o : tensor<2x64xi64>) {
  ^bb0(%in: i1, %in_0: i1, %out: i64):
    %0 = arith.extui %in : i1 to i64
    %1 = arith.extui %in_0 : i1 to i64
    %2 = arith.muli %0, %1 : i64
    %3 = arith.addi %out, %2 : i64
    linalg.yield %3 : i64
  } -> tensor<2x64xi64>
  return %r : tensor<2x64xi64>
}
