//===- Passes.td - picokernel transformations on upstream IR -*- tablegen -*-===//

#ifndef PICOKERNEL_TRANSFORMS_PASSES_TD
#define PICOKERNEL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PkPackMatmul : Pass<"pk-pack-matmul", "::mlir::func::FuncOp"> {
  let summary = "Pack the operands of large matmuls into register-tile panels";
  let description = [{
    Rewrites each `linalg.matmul` and `linalg.batch_matmul` on tensors with
    at least `min-iterations` multiply-adds and a product that fills its
    register tiles (M and N at least 2, K at least `kb`)
    into a contraction over packed operands (upstream
    `linalg::blockPackMatmul`). A static M below `mb` (a few rows times a
    matrix: a small batch through a layer) takes tiles of all M rows. A
    product of up to a vector's lanes of columns (static N from 2 to
    `nb / 2`) takes tiles of one vector per row (N rounded up to a power of
    two lanes) and twice `mb` rows (as many FMAs per step of K, no more
    registers, no padding to a second vector), or of a count of rows from
    `mb` that divides a static M; where N is dynamic, a product of fewer
    columns than a vector's lanes (from 2, any M) packs in such tiles of
    `nb / 2` columns, padded, so that long sums over K run in blocks.
    Products of one row or column (pk-vectorize-matvec's) stay as they are.
    Where C has one panel of rows, each panel of the right operand is read
    once, and where it has one panel of columns, each of the left operand:
    packing it would only add two passes over it, so with static sizes
    that its tiles divide (and where the kernel does not compute it: a
    cast is made by its pack), the contraction reads it in place, through a
    view of its layout split into tiles (an `expand_shape`). The packs:
    A in panels of `mb` rows (`[M/mb][K/kb][mb][kb]`), B in panels of `nb`
    columns (`[N/nb][K/kb][kb][nb]`) and C in `mb x nb` tiles, padded with
    zeros where the blocks do not divide the sizes and unpacked into the
    result. `mb x nb` is the register tile of the target's vector width
    (`vector-bits`; 0: the host's): with 512-bit vectors, 8 x 32 float32 or
    8 x 16 float64 elements (16 accumulators); with 256-bit ones 6 x 16 or
    6 x 8. `kb` (`k-block`) is the steps of K one register tile takes. The
    packed contraction is tagged for pk-vectorize-packed-matmul.

    With dynamic sizes those conditions are tested at run time (the
    multiply-adds as `M x N >= ceil(min-iterations / K)`, which cannot
    overflow; fewer rows than `mb` are padded: a product of so few rows
    reads B at the speed of memory), then (where M is dynamic) whether C
    has one panel of rows and B is static and divided by the tiles (B is
    then read in place, as for a static M that small), or at most 16 row
    panels and N's column panels (tagged `pk.few_row_panels`: see pk-vectorize-packed-matmul),
    each writing a padded C, then whether the tiles divide C: an
    `scf.if` chooses between those, the packed product writing C in its
    tiled layout, the packed product writing a padded C whose slice is the
    result, and (where N is dynamic) the tiles of one vector per row for
    fewer columns, or else the product as it was. A static size that the
    tiles do not divide gets no branch where they do. The single-use
    elementwise producers of the operands (a cast of B) move into every
    branch, where the packs fuse them; an operand the kernel computes is
    never read in place (its pack makes it instead). The product's single elementwise consumer (whose other operands
    are defined before it) and the new tensors they start from are copied
    into every branch: the consumer then reads the slice of the padded C
    (no copy), and updates the product's tensor in place where it has its
    type.

    Example (512-bit vectors):

    ```mlir
    %p = linalg.matmul ins(%a, %b : tensor<1000x300xf32>, tensor<300x70xf32>)
                       outs(%c : tensor<1000x70xf32>) -> tensor<1000x70xf32>
    // becomes
    %pa = linalg.pack %a padding_value(%zero : f32) ... inner_tiles = [8, 4]
          : tensor<1000x300xf32> -> tensor<125x75x8x4xf32>
    %pb = linalg.pack %b padding_value(%zero : f32) outer_dims_perm = [1, 0]
          ... inner_tiles = [4, 32] : tensor<300x70xf32> -> tensor<3x75x4x32xf32>
    %pc = linalg.generic {pk.packed_matmul} ins(%pa, %pb ...) outs(...)
          -> tensor<125x3x8x32xf32>
    %p = linalg.unpack %pc ... into %c : ... -> tensor<1000x70xf32>
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"0",
           "Bits in one vector register of the target (0: the host's)">,
    Option<"minIterations", "min-iterations", "int64_t",
           /*default=*/"::pk::defaults::kPackMatmulMinIterations",
           "Multiply-adds from which a matmul is packed">,
    Option<"kBlock", "k-block", "int64_t",
           /*default=*/"::pk::defaults::kMatmulKUnroll",
           "Steps of K per register tile (K is padded to a multiple)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkVectorizePackedMatmul : Pass<"pk-vectorize-packed-matmul",
                                   "::mlir::func::FuncOp"> {
  let summary = "Tile packed matmuls into register tiles of FMA vector code";
  let description = [{
    Turns each contraction tagged by pk-pack-matmul into BLIS-style code,
    loops outermost first:

    - batches (`scf.forall` when the matmul has at least
      `parallel-threshold` multiply-adds and there is more than one);
    - chunks of K such that a row panel of A over the chunk is at most
      `k-panel-bytes` (each chunk after the first rereads C); dynamic K and N
      take the longest chunks and blocks, the last ones shorter;
    - blocks of column panels such that their chunk of B
      (`b-block-bytes`) stays in L2 while every row panel passes it (with
      K dynamic, as many as the chunk of K taken at run time leaves room
      for: a short K, one block of every panel);
    - row panels (`scf.forall`, on every core, when the batches are not);
      a product of one row panel (a few rows), or of up to 16 and at least
      as many column panels (tagged `pk.few_row_panels` by pk-pack-matmul
      where M is dynamic), runs its column panels in parallel instead,
      outermost, each across all of K and every row panel, without
      blocks: each task packs its panel of B (with B's elementwise
      producers, a cast) into a tensor of its own just before the row
      panels read it from cache, so that B passes once from memory
      (packing all of B first costs two more passes over it);
    - column panels, then K's blocks: an `mb x nb` tile of vector FMAs
      (`vector.contract` lowered to outer products: one broadcast of an A
      element times a row of B per accumulator row).

    The C tile stays in registers across the K loop: it sums from zero,
    and C's tile, read after the loop, is added to it before it is written
    (so each chunk of K sums on its own before it meets C's running total,
    as BLAS sums: rounding errors grow with the chunk's length and the
    count of chunks, not with K). Within a chunk the tile sums K in runs of
    `sum-run` steps, each from zero and then added to a running total (an
    add per tile vector per run; 2048 steps in order were 3-6x NumPy's
    error). C's rows are written in order. A C that
    is zero-filled is not filled: the first chunk's sums are C. Works on
    tensors, before bufferization (hoisting does not see
    through memref views). Each pack becomes loops over its packed outer
    dimensions, in the order of the operand's dimensions (B's column panels
    innermost: its rows are read contiguously, not a page per step down a
    panel), the first in parallel when large (from `parallel-threshold`
    elements, decided at run time for dynamic sizes; serially inside a
    parallel loop), that move one tile
    per step as a vector, read past the operand's end as the padding value:
    one pass over the operand. A single-use elementwise producer of an
    unpadded pack (a cast, a scale) is instead fused into the transpose of
    the pack's upstream lowering, so that it makes no full-size temporary;
    unpacks become slices.

    An elementwise consumer of the product (bias, activation, residual,
    cast), expanded to C's packed layout, runs on each register tile as the
    K loop leaves it: the loops above tile the consumer
    (`scf::tileConsumerAndFuseProducersUsingSCF`) with the product fused
    into them, the consumer's tile is vectorized and reads the C tile in
    registers, and its vector ops are unrolled to rows of the tile (LLVM
    lowers some only on 1-D vectors). The product then leaves no C at all.
    That needs C final after the K loop, so K in one chunk, and tiles that
    divide C; consumers reading or writing booleans (vectors of i1 would
    move as bits) are left alone. Otherwise the consumer stays a pass over
    C.
  }];
  let options = [
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"::pk::defaults::kParallelThreshold",
           "Multiply-adds from which the column panels run in parallel "
           "(0: never)">,
    Option<"kPanelBytes", "k-panel-bytes", "int64_t",
           /*default=*/"::pk::defaults::kMatmulKPanelBytes",
           "Bytes of an A row panel's chunk of K (the column panels of B "
           "stream past it)">,
    Option<"bBlockBytes", "b-block-bytes", "int64_t",
           /*default=*/"::pk::defaults::kMatmulBBlockBytes",
           "Bytes of the block of B's column panels a chunk of K covers "
           "(kept in L2 while every row panel passes it)">,
    Option<"sumRun", "sum-run", "int64_t",
           /*default=*/"::pk::defaults::kMatmulSumRun",
           "Steps of K a register tile sums from zero before adding them to "
           "its running total (0: all of a chunk)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkVectorizeMatvec : Pass<"pk-vectorize-matvec", "::mlir::func::FuncOp"> {
  let summary = "Tile matrix-vector products into vector code";
  let description = [{
    Rewrites each contraction of a matrix (rows contiguous) with a vector,
    on either side, or of two vectors, possibly batched (`linalg.matvec`,
    `linalg.vecmat`, `linalg.dot` and their generic forms on tensors, at
    least `min-iterations` multiply-adds), into vector code. A matrix of
    one column or one row (`A @ B` with B of K x 1) counts as a vector, and
    the matrix's rows or columns besides the row (`A @ x`: its innermost)
    or column (`x @ A`: its last) are batches: `(b, m, K) @ (K,)`,
    `(b, 1, K) @ (b, K, n)` and `(b, m, K) @ (b, K, 1)` are batches of
    tiles. The shapes:

    - `A @ x`: tiles of 8 rows (all of fewer; the rows 8 leave over as
      one thinner tile, or for a dynamic number a serial loop of one-row
      tiles) times 4 vectors of columns (the target's `vector-bits`; 0:
      the host's; the columns they leave over one more step, masked for a
      dynamic number), each row's 4-vector chunk of products
      summed as a tree (reassociated) and added to the row's sum, kept in
      registers across the columns (so the sum over K is in order by
      chunks: its rounding error grows with K / chunk, not K); a dot
      product `x @ y` (`linalg.dot`) is one such row;
    - `x @ A`: blocks of 16 KiB of the result (4096 float32 columns; at
      least two blocks when they run in parallel), each a loop over A's
      rows adding
      `x[k]` times 8 rows at a time to the block of the result, 4 vectors
      of columns at a time, so that A streams row by row.

    First, float products that sum at least two blocks of K (`sum-block`
    elements for `x @ A`, 8 times as many for `A @ x` and dot products,
    whose chunks already sum in parallel lanes) sum K in blocks, as
    `pk-split-reductions` cuts long sums (its combiner marked `reassoc`):
    each block's sums start from zero, the blocks are a batch dimension
    (tiled as above: in parallel even where the result is narrow), the
    rest of K is one more product, and the partial results combine
    pairwise, as NumPy sums. Rounding errors then grow with the block and
    log K, not with K (a running sum over 2^20 rows of `x @ A` loses 12
    times NumPy's accuracy). A dynamic K is split where it comes that
    long (an `scf.if`).

    The row and column tiles run in parallel (`scf.forall`) when the
    product has at least `parallel-threshold` multiply-adds. The columns
    the tiles do not divide are split off (`linalg::splitOp`): for `A @ x`
    within each row tile, while its rows are in cache, as vectors of their
    number (where that is dynamic, at most one masked step of a tile); for
    `x @ A` (and its rows
    the steps do not divide) as loop nests. Products shorter than one
    column tile keep their loop nest.

    Dynamic sizes split at the largest multiple of a tile known at run
    time (`(n floordiv 8) * 8`), whose tiles are all whole (static shapes,
    vectorized as above); `A @ x`'s rows left over are serial tiles of 4,
    then 2, then 1 row (at most one of each).
    Whether the tiles run in parallel is decided at run time: an `scf.if`
    on the count of multiply-adds chooses between a parallel and a serial
    copy of the product; `A @ x` whose rows are shorter than one vector
    keeps the loop nest (another `scf.if`).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"0",
           "Bits in one vector register of the target (0: the host's)">,
    Option<"minIterations", "min-iterations", "int64_t",
           /*default=*/"::pk::defaults::kMatvecMinIterations",
           "Multiply-adds from which a product is vectorized">,
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"::pk::defaults::kParallelThreshold",
           "Multiply-adds from which the tiles run in parallel (0: never)">,
    Option<"sumBlock", "sum-block", "int64_t",
           /*default=*/"::pk::defaults::kReductionBlock",
           "Elements of K that a block of x @ A sums (A @ x and dot "
           "products: 8 times as many); 0: K in one sum">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkFuseRows : Pass<"pk-fuse-rows", "::mlir::func::FuncOp"> {
  let summary = "Compute reductions and the ops reading them row by row";
  let description = [{
    Tiles each `linalg.generic` on tensors of the
    function's body that reads a reduction's result, directly or through
    other ops (softmax's division, a norm's scaling, logsumexp's `log`),
    over its *row loops*, and fuses into the tile the generics and fills
    that compute its operands (upstream's `tileUsingSCF` and
    `tileAndFuseProducerOfSlice`; each producer slice is fused once even
    when read several times, so a chain of norms stays linear): a row's
    `max`, `exp`, `sum` and division run one after the other while the
    row is in cache, and the temporaries between them are one tile big
    instead of the whole array. Unit dimensions (keepdims results) are dropped first.

    The row loops are the root's parallel loops that index every operand
    computed by another op. A tile takes about `tile-elements` iterations
    of the largest op involved (whole rows, in sizes that divide the
    loops), and there are at least `min-tiles` tiles where there are that
    many rows; fewer rows than that, each of at least two reduction blocks
    (`kReductionBlock`), are left to `pk-split-reductions`, which spreads
    their blocks over the cores. Producers a tile would need whole (a full reduction, a
    column reduction read by every row) are not fused. A root is left
    alone unless a reduction is fused into it. The tiles are an
    `scf.forall` when the largest op runs at least `parallel-threshold`
    iterations, else an `scf.for`; where that count is known only when
    the kernel runs (dynamic sizes), an `scf.if` on it chooses between the
    two (a fork costs microseconds, more than a small softmax).

    An all-parallel fused op producing a tile of the root's result type
    (softmax's `exp`) writes into the root's destination tile, which the
    root then overwrites elementwise; producers fused into two consumers
    are computed once (CSE).

    Example: `o = e / e.sum(axis=1)` with `e = exp(x - x.max(axis=1))` on
    1024 x 1024 float32 becomes an `scf.forall` over 128 tiles of 8 rows:
    a max over the tile's rows into a `tensor<8xf32>`, `exp` into the
    tile of `o`, its sum, and the division in place.
  }];
  let options = [
    Option<"tileElements", "tile-elements", "int64_t",
           /*default=*/"::pk::defaults::kRowTileElements",
           "Iterations of the largest fused op one tile aims at">,
    Option<"minTiles", "min-tiles", "int64_t",
           /*default=*/"::pk::defaults::kMinRowTiles",
           "Tiles the rows are cut into at least (where there are as many)">,
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"::pk::defaults::kParallelThreshold",
           "Iterations from which the tiles run in parallel (0: never)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

def PkSplitReductions : Pass<"pk-split-reductions", "::mlir::func::FuncOp"> {
  let summary = "Split long reductions into parallel blocks and a pairwise combine";
  let description = [{
    Rewrites each `linalg.generic` on tensors that reduces at least twice
    `block-size` elements per result (no static size 0, one result of
    an integer type or a float type with infinities, no `linalg.index` in
    the body, a single combiner that may be regrouped: integer
    add/max/min/and/or/xor, `maximumf`/`minimumf`, and `addf` only with
    `reassoc`) into blocks: its longest reduction loop is cut into blocks of
    `block-size` elements (divided by what its other reduction loops reduce,
    which stay inside each block), run as a new parallel loop right before
    it that writes one partial result per block into dimension 0 of an
    identity-filled tensor. Iterations past the last whole block are
    reduced on their own, from the identity, into one more slot.

    The partial results are then combined pairwise, as NumPy's `sum` adds:
    level by level, `p'[i] = p[i] + p[n - n/2 + i]` (contiguous halves, so
    each level vectorizes; an odd middle element carries over), and the
    total is combined into the original accumulator. A float sum's rounding
    errors then grow with log2(N) instead of N (a serial float32 sum of 1e8
    ones stops at 2^24), and the blocks run on every core. With
    `pairwise=false` (the SPIR-V pipeline) they are instead reduced into
    the accumulator by one reduction op over dimension 0, which
    `pk-reduce-in-workgroups` runs as a workgroup: a kernel instead of one
    per level.

    First, inputs read through constant 0s (broadcast unit dims, such as a
    row's keepdims maximum) are collapsed to drop them, and adjacent
    reduction loops that every operand keeps in order (a full reduction of
    a 2-D array) are folded into one (`linalg::collapseOpIterationDims`).
    A dynamic reduced length (one dynamic reduction loop; the others
    static) is split the same way for whatever length comes: with
    `pairwise`, an `scf.if` runs the op whole when it reduces fewer than
    twice `block-size` elements, and otherwise blocks it (without, it is
    always blocked), with a dynamic count of blocks, a
    rest slot that may be empty, and the pairwise levels in an `scf.while`
    that halves the count of partials until one is left.

    Besides the function's own ops, those directly in the body of one of
    its loops (a tile of rows from `pk-fuse-rows`) are split; deeper ones
    (a matmul's tiles) are left alone.

    Example (`block-size=1024`):

    ```mlir
    %s = linalg.generic {iterator_types = ["reduction"]}
           ins(%x : tensor<10000xf32>) outs(%init : tensor<f32>) ...
    // becomes
    %rest = linalg.generic {iterator_types = ["reduction"]}
           ins(%x[9216:10000] ...) outs(%zero : tensor<f32>) ...
    %blocks = tensor.expand_shape %x[0:9216] ... into tensor<9x1024xf32>
    %partial = linalg.generic {iterator_types = ["parallel", "reduction"]}
           ins(%blocks : tensor<9x1024xf32>) outs(%slots[0:9] : tensor<9xf32>)
    // %rest into %slots[9]; then 10 -> 5 -> 3 -> 2 -> 1 partial sums:
    %level1 = linalg.generic {iterator_types = ["parallel"]}
           ins(%slots[5:10], %slots[0:5] ...) outs(... : tensor<5xf32>) ...
    ...
    %s = linalg.generic {iterator_types = []} ins(%total) outs(%init) ...
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t",
           /*default=*/"::pk::defaults::kReductionBlock",
           "Elements of the reduced loop one block reduces">,
    Option<"pairwise", "pairwise", "bool", /*default=*/"true",
           "Combine the partial results pairwise (false: by one reduction "
           "over them, which a GPU runs as one workgroup's tree)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect"];
}

def PkInlineCpuMath : Pass<"pk-inline-cpu-math", "::mlir::func::FuncOp"> {
  let summary = "Expand float32 math functions into inline polynomials";
  let description = [{
    Rewrites float32 `math.exp`, `math.log`, `math.tanh` and `math.erf` and
    float64 `math.exp` (scalar or vector) into arithmetic: Cephes' minimax
    polynomials (exp: 2^k e^r with ln 2 in two parts and 2^k applied as two
    normal powers of two, so that subnormal results round once and overflow
    gives inf, float64 with Cephes' Pade form; log: the exponent plus
    log(1 + f) for 1 + f in [sqrt(1/2), sqrt(2)), subnormal arguments
    scaled by 2^23 first; tanh: -m / (2 + m) with m = expm1(-2|x|) from
    exp's polynomial without its 1, one branch for every x, with x's sign;
    erf: -expm1(-|x| S(|x|)) with S a degree-10 minimax fit of
    -log(erfc(x)) / x, x's sign, |x| clamped at 3.92 where erf rounds to 1).
    Measured against the correctly rounded result (bench/run_accuracy.py,
    docs/accuracy.md): float32 exp and log within 1 ulp, tanh, erf and
    sigmoid (built on exp) within 2 (tanh and erf checked on every float32;
    libmvec's AVX-512 erf is 4 ulp off), float64 exp
    within 2 (libmvec's: 3); NaN, the infinities, the zeros' signs and log
    of negative numbers as libm. Loops over them vectorize at the target's
    full width with no library call (libm's per element, libmvec's at most
    8 lanes). Other float64 math keeps libm; float16 and bfloat16 math
    runs in float32 before this pass.

    On targets with 512-bit vectors (AVX-512, `vector-bits`), exp applies
    its power of two with one `llvm.intr.ldexp`, which is one instruction
    there (vscalefps) instead of seven, with the same single rounding;
    elsewhere LLVM would make it a libm call per element.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"0",
           "Bits in one vector register of the target (0: the host's)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def PkLowerLinalgToLoops : Pass<"pk-lower-linalg-to-loops",
                                "::mlir::func::FuncOp"> {
  let summary = "Lower bufferized linalg ops to loops, parallel when large";
  let description = [{
    Every linalg op on memrefs becomes a loop nest of `scf.for`. When the
    op's iteration space has at least `parallel-threshold` points and its
    outermost loop is parallel, that outermost loop becomes an
    `scf.parallel` instead (for `convert-scf-to-openmp`): small kernels stay
    serial and free of thread start-up costs, large ones use every core,
    with the inner loops left for LLVM to vectorize. Ops inside a parallel
    loop already (`scf.forall`, `scf.parallel`: tiles of rows) stay serial.
    Every loop but the innermost carries `loop_annotation` metadata that
    keeps LLVM from unrolling it (a tile's 4 rows would be 4 copies of the
    vectorized inner loop: code and compile time without speed). The
    innermost loop of an elementwise op whose length is known only at run
    time asks LLVM for two vectors a step, as LLVM takes for a static one:
    with its own choice (up to 4) rows shorter than 4 vectors would run in
    remainder loops, and with one vector a step (no vector epilogue) up to
    a vector's worth of every row would run scalar.
  }];
  let options = [
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"::pk::defaults::kParallelThreshold",
           "Iteration count from which the outermost loop runs in parallel "
           "(0: never)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkComputeInPlace : Pass<"pk-compute-in-place", "::mlir::func::FuncOp"> {
  let summary = "Elementwise updates of a ref compute into the ref itself";
  let description = [{
    A kernel that reads a ref and stores an elementwise function of it back
    (`o[...] = o[...] * a[...]`, or a call whose output is also an input)
    lowers to a generic writing a fresh tensor that
    `materialize_in_destination` copies into the ref. When the generic is
    elementwise (parallel iterators, identity maps wherever it reads the
    ref's loaded tensor, identity output map), this pass makes that loaded
    tensor the generic's init: one-shot bufferization then writes the ref
    in place, with no temporary and no copy. Any other read of the old
    contents that comes later is still seen by the bufferization analysis,
    which copies where it must.

    Likewise a tile loop (`scf.forall` or `scf.for`, from `pk-fuse-rows`:
    a softmax called as `k(x, x)`) stored into a ref whose loaded tensor it
    reads only at the tile each iteration inserts: the loop's shared output
    (or iteration argument) starts from the loaded tensor instead of an
    empty one, and those reads take the tile from it (the tiles are
    disjoint, so an iteration's tile still holds the old contents). The
    ref is then written in place instead of in a full-size temporary copied
    back. Both loops of an `scf.if` choosing between parallel and serial
    tiles (dynamic sizes) are handled. A choice stored into a ref the
    kernel never loads (pk-fuse-rows' tiles, pk-pack-matmul's products,
    nested choices too) gets one `to_tensor` of the ref's buffer as the
    start of every branch: of a tile loop, or of a destination-style op
    computing in a new tensor, possibly through a fill and elementwise
    updates of it (a product accumulating into a fill, its consumer writing
    into it), and through a `tensor.collapse_shape` (a product in its tiled
    layout: it then starts from the buffer's `tensor.expand_shape`).
    Empty-tensor elimination gives a `restrict` destination to one empty
    tensor only, and the other branches would write temporaries copied
    back.

    ```mlir
    %t = bufferization.to_tensor %o restrict writable : memref<8xf32> to tensor<8xf32>
    %0 = linalg.generic ... ins(%t, %a : ...) outs(%empty : tensor<8xf32>)
    bufferization.materialize_in_destination %0 in writable %o
    // becomes ... outs(%t : tensor<8xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def PkCopySharedInsertDestinations
    : Pass<"pk-copy-shared-insert-destinations", "::mlir::func::FuncOp"> {
  let summary = "A slice inserted into a value that is also stored, or "
                "into a read-only ref's contents, goes into a copy of it";
  let description = [{
    `r1[...] = v; r2[...] = v; r1[0] = w` stores `v` into r2 and
    `insert_slice w into v` into r1. Empty-tensor elimination then computes
    `v` straight into r1 (the end of the insert's chain), bufferization
    inserts `w` into a copy and copies it back into r1, and the store of `v`
    into r2 reads r1 after that: r2 got `w` in its first element. An insert
    whose destination is also stored to a ref (itself or through a view)
    is given an explicit copy of it
    (`bufferization.alloc_tensor copy(...)`), so that `v` is computed into
    r2 and the insert updates a private buffer: what bufferization would
    copy anyway, where the elimination cannot see through.

    `o[...] = x[...]; o[1:-1] = v` inserts `v` into the contents of `x`, a
    ref the kernel only reads (a `bufferization.to_tensor` that is not
    `writable`): bufferization copies them into a temporary, inserts `v`
    there, and copies the temporary into `o`, three passes over the array
    where one copy does. Such a destination is given an explicit copy into
    an empty tensor (`linalg.copy`), which empty-tensor elimination then
    places in `o`: `x` is copied into `o` and `v` computed into its slice.

    ```mlir
    %1 = tensor.insert_slice %w into %v[0] [1] [1]
    // becomes, when %v is also stored
    %c = bufferization.alloc_tensor() copy(%v) : tensor<3xf64>
    %1 = tensor.insert_slice %w into %c[0] [1] [1]

    %x = bufferization.to_tensor %arg0 restrict : memref<8xf32> to tensor<8xf32>
    %2 = tensor.insert_slice %w into %x[1] [6] [1]
    // becomes
    %e = tensor.empty() : tensor<8xf32>
    %c = linalg.copy ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>)
    %2 = tensor.insert_slice %w into %c[1] [6] [1]
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PkUnshareInits : Pass<"pk-unshare-inits", "::mlir::func::FuncOp"> {
  let summary = "Each destination-passing op writes into its own init";
  let description = [{
    Two reductions of one shape and dtype whose identities are equal (two
    sums, or a sum and an unsigned maximum) start from the same
    `linalg.fill` once CSE has merged their inits. Empty-tensor elimination
    then computes the fill in the destination of one of them, a ref's array,
    which the other reduction also accumulates into: its value was in that
    array when the first one's store overwrote it, and both outputs got the
    first result. Each use of a `linalg.fill` or `tensor.empty` result by
    an op other than a fill or a `tensor.dim`, after the first, gets a clone
    of it (and of the empty tensor a fill fills), so that every op writes
    into a tensor of its own, as before CSE. Every use counts, not only a
    destination-passing op's init: a product vectorized into a loop starts
    it (`scf.for` iter_args, `scf.forall` shared_outs, `extract_slice`)
    from its init and writes there in place. A slice written back where it
    was taken from (an `insert_slice` matching an `extract_slice` of the
    same tensor) continues the writer that took it. Fills of one empty
    tensor keep sharing it: a fill writes all of it, and bufferization
    reuses the buffer where the values' lives do not overlap. So do ops in
    branches of which only one runs (the variants of a dynamic product that
    `scf.if`s choose between at run time): with a clone each, all but one
    would compute outside the destination and be copied into it.

    ```mlir
    %f = linalg.fill ins(%zero : i64) outs(%e : tensor<6xi64>)
    %a = linalg.generic ... outs(%f : tensor<6xi64>)
    %b = linalg.generic ... outs(%f : tensor<6xi64>)
    // becomes
    %f2 = linalg.fill ins(%zero : i64) outs(%e2 : tensor<6xi64>)
    %b = linalg.generic ... outs(%f2 : tensor<6xi64>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PkOrderRefWrites : Pass<"pk-order-ref-writes", "::mlir::func::FuncOp"> {
  let summary = "Write each array after every read of its old contents";
  let description = [{
    A kernel's loads are values: `t = r[...]; r[...] = 7; o[...] = t` gives
    `o` the contents `r` had before the store, as NumPy does. After lowering,
    each ref that is loaded is one `bufferization.to_tensor` of the caller's
    array, and each store one `bufferization.materialize_in_destination`
    into it. One-shot bufferization sees reads and writes of tensors, but
    not that writing array `%r` changes what its `to_tensor` (and every value
    bufferized in place onto it: a view, an insert, a folded copy) reads.

    This pass moves the writes to the end of the function, ordered so that a
    write into an array comes after every write whose source may read that
    array's buffer (found through the bufferization interfaces' aliasing).
    When the writes read each other's arrays in a cycle (`a[...] = b[...];
    b[...] = a[...]`), one source is first copied into a new tensor
    (`bufferization.alloc_tensor ... copy`), which breaks the cycle.

    ```mlir
    %t = bufferization.to_tensor %r restrict writable : memref<2xf32> to tensor<2xf32>
    bufferization.materialize_in_destination %seven in writable %r
    bufferization.materialize_in_destination %t in restrict writable %o
    // becomes: the write into %o first, then the one into %r
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def PkExpandNarrowFloatConversions
    : Pass<"pk-expand-narrow-float-conversions"> {
  let summary = "Conversions to float16 and bfloat16 without runtime helpers";
  let description = [{
    LLVM lowers `fptrunc` from f64 to f16 or bf16, and from f32 to bf16 on
    CPUs without AVX-512 BF16, to calls of compiler-rt helpers
    (`__truncdfhf2`, `__truncdfbf2`, `__truncsfbf2`) that a JIT'd kernel may
    not find and libgcc may not have. This pass leaves none:

    - `arith.truncf` f64 -> f16 rounds to float32 *to odd* (truncation, with
      the last bit set when anything was lost), then to float16: exactly
      the correctly rounded result NumPy gives, since float32 carries more
      than twice float16's precision.
    - `arith.truncf` f64 -> bf16 the same way: correctly rounded, as
      ml_dtypes' bfloat16 (NumPy's reference for that type) converts
      (through float32 rounded to nearest, 2^40 + 2^32 + 1 became 2^40).
    - bf16 <-> f32 conversions become shifts and bit operations
      (upstream `populateExpandBFloat16Patterns`); bf16 -> f64 goes through
      f32 (exactly).

    Run it after `arith-emulate-unsupported-floats` has moved bf16
    arithmetic to f32: it also drops the `contract` flag that pass puts on
    its conversions, with which `extf(truncf(x))` would fold to `x` and lose
    the rounding to bf16 between two operations.

    ```mlir
    %h = arith.truncf %d : f64 to f16
    // becomes: truncf to f32, a bit fix-up, truncf f32 to f16
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def PkStoreBF16AsI16 : Pass<"pk-store-bf16-as-i16", "::mlir::ModuleOp"> {
  let summary = "bfloat16 arrays as 16-bit integers: bf16 moves bit for bit";
  let description = [{
    Vulkan's SPIR-V has no bfloat16 type, and the SPIR-V type conversion
    turned a `memref<8xbf16>` into a buffer of four floats, indexed as if
    it held eight. LLVM's x86 backend keeps bf16 values in float32
    registers and rounds a copied one back with `vcvtneps2bf16` where the
    CPU has it, which flushes subnormals to zero. This pass runs once bf16 arithmetic has moved to f32
    (`arith-emulate-unsupported-floats`) and its conversions have become bit
    operations (`pk-expand-narrow-float-conversions`): what is left of bf16
    is storage and moves (loads, stores, copies, selects, constants), which
    it retypes to i16 throughout the module, host function included (the
    arrays keep their bytes). Constants keep their bits.

    ```mlir
    %0 = memref.load %a[%i] : memref<8xbf16>
    // becomes
    %0 = memref.load %a[%i] : memref<8xi16>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PkExpandShapesAsCasts : Pass<"pk-expand-shapes-as-casts"> {
  let summary = "View expansions with several dynamic sizes in a group as casts";
  let description = [{
    A `memref.expand_shape` whose group of result dimensions holds more than
    one dynamic size (a product of rows (B * T) x K viewed as B x T x K, both
    dynamic) becomes a `memref.reinterpret_cast` of its source's buffer:
    the sizes of its output shape, and in each group the source dimension's
    stride for the last dimension and, for each one before, the next one's
    stride times its size. MLIR 22's `expand-strided-metadata` derives the
    sizes of each group from the source instead, and crashes on these
    (it cannot split one dynamic size into several); this pass runs before
    it. Other expansions are left to it.

    ```mlir
    %v = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %t, %n]
        : memref<?x?xf32> into memref<?x?x?xf32>
    // becomes
    %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %m
    %s = affine.apply affine_map<()[s0, s1] -> (s0 * s1)>()[%strides#0, %t]
    %v = memref.reinterpret_cast %base to offset: [%offset],
        sizes: [%b, %t, %n], strides: [%s, %strides#0, %strides#1]
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PkRenameKernelFunctions : Pass<"pk-rename-kernel-functions",
                                   "::mlir::ModuleOp"> {
  let summary = "Kernel functions under symbols no C library uses";
  let description = [{
    A kernel's function has the kernel's name, which may be a C library's:
    a kernel named `erf` computing a float64 erf called itself (libm's erf
    became a call to the kernel, with the wrong arguments), one named
    `malloc` or `free` called itself for its temporaries, and one named
    `omp_get_thread_num` recursed until the stack overflowed. Before the
    lowering declares library functions (the OpenMP runtime's, malloc and
    free, libm's), this pass renames each public function with a C
    interface (`llvm.emit_c_interface`) `kernel.<name>`, a symbol no C
    library can define and no LLVM intrinsic has, and records its name in
    `pk.kernel_name` for pk-name-c-interfaces-after-kernels, which names
    the C interfaces after the kernels again. Longer names go first, so
    that kernels `a` and `kernel.a` both find their new names free.

    ```mlir
    func.func @erf(%a: memref<16xf64>) attributes {llvm.emit_c_interface}
    // becomes
    func.func @kernel.erf(%a: memref<16xf64>)
        attributes {llvm.emit_c_interface, pk.kernel_name = "erf"}
    ```
  }];
}

def PkNameCInterfacesAfterKernels : Pass<"pk-name-c-interfaces-after-kernels",
                                         "::mlir::ModuleOp"> {
  let summary = "C interfaces named after their kernels again";
  let description = [{
    After the conversion to the LLVM dialect, renames the C interface of
    each function pk-rename-kernel-functions renamed after the kernel's own
    name (`pk.kernel_name`, then removed): `_mlir_ciface_kernel.erf`
    becomes `_mlir_ciface_erf`. Callers (the JIT, embedders) find a
    kernel's entry point by the kernel's name.

    ```mlir
    llvm.func @kernel.erf(...) attributes {llvm.emit_c_interface, pk.kernel_name = "erf"}
    llvm.func @_mlir_ciface_kernel.erf(%arg0: !llvm.ptr)
    // become
    llvm.func @kernel.erf(...) attributes {llvm.emit_c_interface}
    llvm.func @_mlir_ciface_erf(%arg0: !llvm.ptr)
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PkLoadBoolsAsBytes : Pass<"pk-load-bools-as-bytes", "::mlir::ModuleOp"> {
  let summary = "Booleans read as NumPy reads them: any nonzero byte is true";
  let description = [{
    A NumPy bool array holds a byte per element, and NumPy reads any
    nonzero byte as true (`np.uint8` arrays viewed as bool hold 2 or 128).
    LLVM reads an `i1` from memory as the byte's low bit (its value is
    undefined unless an `i1` store wrote it): a kernel read such an array's
    2s as false (and summed its bytes). This pass runs on the LLVM dialect
    and loads each scalar `i1` as a byte compared with zero. (Vectors of
    `i1` are bits in registers and memory alike: kernels never move them to
    or from NumPy's arrays.)

    ```mlir
    %0 = llvm.load %p : !llvm.ptr -> i1
    // becomes
    %b = llvm.load %p : !llvm.ptr -> i8
    %0 = llvm.icmp "ne" %b, %zero : i8
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PkIeeeFloatsForSpirv : Pass<"pk-ieee-floats-for-spirv",
                                "::mlir::spirv::ModuleOp"> {
  let summary = "IEEE float semantics in SPIR-V kernels, as on the CPU";
  let description = [{
    By default Vulkan leaves a float result undefined whenever an operand or
    the result is a NaN, an infinity or a signed zero, and lets drivers
    rewrite arithmetic as if it were real numbers: lavapipe returned garbage
    for `a / 0.0`, and folded `a * 0.0` and `0.0 / a` to 0 (NumPy: NaN for
    infinite or NaN `a`, -0.0 for negative `a`). This pass gives

    - every entry point the `SignedZeroInfNanPreserve` execution mode
      (SPV_KHR_float_controls, core in Vulkan 1.2) for each float width in
      `widths` (the widths the device preserves, from its float-controls
      properties);
    - every float arithmetic instruction the `NoContraction` decoration, so
      that drivers neither fold it algebraically nor fuse it into an fma
      (NumPy rounds `a * b + c` twice);
    - a division by a constant zero the multiplication by the infinity of
      the same sign, equal for every dividend (lavapipe still folded the
      division to garbage);
    - every float zero a value read from a push constant (`__pk_float_zero`,
      which the runtime sets to 0.0): Mesa's optimizer folded `x * 0.0`,
      `x + 0.0` and `x / (x < x)` (a select of 1.0 and 0.0) regardless of
      the two points above.

    ```mlir
    %0 = spirv.FMul %a, %b {no_contraction} : f32
    spirv.ExecutionMode @kernel "SignedZeroInfNanPreserve", 32
    ```
  }];
  let options = [
    ListOption<"widths", "widths", "unsigned",
               "Float bit widths whose NaNs, infinities and signed zeros are "
               "preserved (16, 32, 64)">
  ];
}

def PkCheckLoopBudget : Pass<"pk-check-loop-budget"> {
  let summary = "Reject kernels whose loops run longer than the device allows";
  let description = [{
    llvmpipe (lavapipe, Mesa's Vulkan on the CPU) ends a shader invocation
    after 65535 loop iterations in all, its guard against runaway shaders:
    the sum of 70000 ones came out 65535, silently. This pass counts the
    loop iterations one invocation of every function runs at most (a loop's
    constant trip count times one plus its body's, plus one for its exit
    test, which llvmpipe counts too; the loops of a block added, the larger
    branch of an `scf.if`; the invocation's last exit not counted) and fails
    with the count and the limit when it is larger than `max-iterations`. Splitting the loops
    does not help: the budget is shared by every loop of the invocation.
    `max-iterations=0` (the default) checks nothing.

    ```mlir
    // pk-opt --pk-check-loop-budget=max-iterations=65535
    scf.for %i = %c0 to %c70000 step %c1 { ... }
    // error: runs 70000 loop iterations in one GPU thread; this device
    // stops a thread after 65535 ... : run this kernel on the CPU backend
    ```
  }];
  let options = [
    Option<"maxIterations", "max-iterations", "int64_t", /*default=*/"0",
           "Loop iterations one invocation may run (0: no limit)">
  ];
}

def PkCopyViewsWithLinalg : Pass<"pk-copy-views-with-linalg",
                                 "::mlir::func::FuncOp"> {
  let summary = "Copies from or into memref views become linalg.copy";
  let description = [{
    Bufferizing a store to a slice (or a slice read that must be copied
    aside) gives `memref.copy` ops on subviews. Lowered as they are, copies
    of non-contiguous views call the `memrefCopy` runtime function, which a
    JIT'd kernel does not have, and a GPU runtime that copies whole buffers
    cannot perform them. As `linalg.copy` they become loop nests like every
    other computation: vectorized and parallel on the CPU, a kernel on the
    GPU. Copies between whole buffers (identity layouts) stay `memref.copy`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PkTileMatmulForGpu : Pass<"pk-tile-matmul-for-gpu",
                              "::mlir::func::FuncOp"> {
  let summary = "Matmuls as GPU kernels that stage operand tiles in shared "
                "memory";
  let description = [{
    Rewrites each bufferized contraction `C[b, m, n] = f(A[b, m, k],
    B[b, k, n], C)` with one row, column and reduction loop and at most one
    batch loop (`linalg.matmul`, `linalg.batch_matmul`, transposed operands,
    any element types and body, such as float16 products summed in float32)
    into a `gpu.launch`:

    - a workgroup computes a `tile-rows` x `tile-columns` tile of C (grid:
      column tiles on x, row tiles on y, batches on z) with `thread-rows` x
      `thread-columns` threads, each holding a strided share of the tile's
      sums in registers (thread (y, x) owns rows y + i * thread-rows and
      columns x + j * thread-columns, so stores and shared-memory reads are
      contiguous across threads);
    - per step along K, the threads copy A's `tile-rows` x depth and B's
      depth x `tile-columns` tiles into workgroup memory (memory space 3:
      SPIR-V's Workgroup storage class, NVVM's shared memory), synchronize
      (`gpu.barrier`), and each adds the products of its rows and columns,
      in order along K, to its sums, then synchronizes again. The depth is
      the most that `shared-bytes` holds, at most `tile-depth`; a last
      partial step covers the rest of K exactly (no padded products).
    - Elements outside A, B or C (tiles that do not divide M or N) are
      loaded as zero and never stored; those checks exist only where the
      tiles do not divide the shape.

    A `linalg.fill` of C with a constant just before the contraction is
    folded into it: the sums start from the constant.

    Contractions with other loops (matrix-vector products, several batch
    dimensions), dynamic or empty shapes, boolean operands or bodies that
    read the loop indices keep the generic path (one thread per element of
    C).
  }];
  let options = [
    Option<"tileRows", "tile-rows", "int64_t", /*default=*/"64",
           "Rows of C one workgroup computes">,
    Option<"tileColumns", "tile-columns", "int64_t", /*default=*/"64",
           "Columns of C one workgroup computes">,
    Option<"threadRows", "thread-rows", "int64_t", /*default=*/"8",
           "Threads per workgroup along the rows (divides tile-rows)">,
    Option<"threadColumns", "thread-columns", "int64_t", /*default=*/"16",
           "Threads per workgroup along the columns (divides tile-columns)">,
    Option<"tileDepth", "tile-depth", "int64_t", /*default=*/"16",
           "Most steps of K one staged pair of tiles covers">,
    Option<"sharedBytes", "shared-bytes", "int64_t", /*default=*/"8192",
           "Bytes of workgroup memory the staged tiles may take">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkReduceInWorkgroups : Pass<"pk-reduce-in-workgroups",
                                 "::mlir::func::FuncOp"> {
  let summary = "Reductions as GPU workgroups that combine in shared memory";
  let description = [{
    Rewrites each bufferized `linalg.generic` that reduces at least
    `min-length` elements into each element of its one output into a
    `gpu.launch` with a workgroup per output element (grid x, and y past
    65535 workgroups):

    - the workgroup's threads (`threads`, or fewer for a short reduction:
      the largest power of two that gives each at least
      `elements-per-thread` elements) stride over the reduced elements
      together, so that neighbouring threads read neighbouring elements,
      each folding its share into a partial result that starts from the
      combiner's identity;
    - the partial results meet in a tree in workgroup memory (memory space
      3), halving the active threads at each level with a `gpu.barrier`
      between levels, and thread 0 combines the total into the output
      element (which holds the reduction's initial value).

    Without it, the generic path runs a thread per output element, which
    reads its elements alone: a row reduction reads rows strided across
    threads, and a reduction to few elements (a full sum) runs on as few
    threads. Reductions whose reduced dimensions are not innermost in any
    input (a column sum), and that have at least `max-strided-outputs`
    outputs, keep that path: there a thread per output reads contiguously
    across threads.

    The reduction must be one the tree may regroup (the combiner rules of
    `pk-split-reductions`: integer add/max/min/and/or/xor, `maximumf` and
    `minimumf`, `addf` with `reassoc`), into an element type shared memory
    holds (not `i1`) with an identity (not float8), over static nonzero
    sizes, with a body that reads neither the loop indices nor values from
    outside it other than constants. Inputs may be read through any affine
    map (a reversed slice: `affine.apply` of the loop indices); the output
    through the parallel loops only.

    Example (`threads=4`): `o[i] = sum_j x[i, j]` over `memref<8x1000xf32>`
    becomes

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, ...)
               threads(%tx, %ty, %tz) in (%nx = %c4, ...) {
      %partial = scf.for %j = %tx to %c1000 step %c4 iter_args(%acc = %zero)
      // %partial into %tree[%tx] : memref<4xf32, 3>, gpu.barrier;
      // threads 0-1 add %tree[%tx + 2], gpu.barrier; thread 0 adds
      // %tree[1] and the result into %o[%bx].
    }
    ```
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"128",
           "Most threads per workgroup (a power of two; Vulkan guarantees "
           "128)">,
    Option<"minLength", "min-length", "int64_t", /*default=*/"64",
           "Fewest elements reduced into each output for a workgroup to "
           "reduce it">,
    Option<"elementsPerThread", "elements-per-thread", "int64_t",
           /*default=*/"8",
           "Fewest reduced elements per thread (short reductions get fewer "
           "threads and a shallower tree)">,
    Option<"maxStridedOutputs", "max-strided-outputs", "int64_t",
           /*default=*/"1024",
           "Outputs from which reductions over dimensions that are not "
           "innermost keep a thread per output">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkTileParallelLoopsForGpu : Pass<"pk-tile-parallel-loops-for-gpu",
                                     "::mlir::func::FuncOp"> {
  let summary = "Tile parallel loop nests into workgroups of threads";
  let description = [{
    Splits the innermost dimension of every outermost `scf.parallel` into
    workgroups of `workgroup-size` threads (fewer when the dimension is
    smaller), leaving the other dimensions one workgroup per index, and marks
    the result for `convert-parallel-loops-to-gpu`: workgroups map to block
    ids (x for the tiled dimension, then y and z), threads to thread id x.
    Loops over more than three dimensions first have their leading
    dimensions linearized into one (`scf::collapseParallelLoops`). With
    static shapes a kernel's grid is known at compile time; a dimension of
    dynamic size is tiled by `workgroup-size`, its tiles of constant bounds
    under a guard (no loop of `min(1, n - i)` iterations left in a thread),
    and its grid is computed by the host at dispatch. Grids beyond a
    device's per-dimension limit are split by the runtime.
  }];
  let options = [
    Option<"workgroupSize", "workgroup-size", "int64_t",
           /*default=*/"::pk::defaults::kWorkgroupSize",
           "Threads per workgroup">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkLinearizeDynamicBuffersForGpu
    : Pass<"pk-linearize-dynamic-buffers-for-gpu", "::mlir::func::FuncOp"> {
  let summary = "Index buffers of dynamic sizes as one-dimensional arrays";
  let description = [{
    SPIR-V indexes a buffer of dynamic sizes as a runtime array, which has no
    shape: it can only linearize indices whose strides are constants. This
    pass rewrites every `memref.load` and `memref.store` on a buffer of rank
    two or more with dynamic sizes or strides into one on its whole buffer
    collapsed to one dimension, at the linear index `offset + sum(i_k *
    stride_k)`. The strides are values of the function: a view's
    (`memref.reinterpret_cast`) operands, or the row-major strides of a
    parameter or allocation from its sizes (`memref.dim` on the host, which
    reach the kernels as arguments). Run after `fold-memref-alias-ops`, so
    that accesses go through no other views.

    Example:

    ```mlir
    %v = memref.reinterpret_cast %b to offset: [0], sizes: [%n, %m],
        strides: [%m, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1]>>
    %x = memref.load %v[%i, %j] : memref<?x?xf32, strided<[?, 1]>>
    // becomes
    %flat = memref.collapse_shape %b [[0, 1]] : memref<?x?xf32> into memref<?xf32>
    %0 = arith.muli %i, %m : index
    %1 = arith.addi %0, %j : index
    %x = memref.load %flat[%1] : memref<?xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PkSinkIndexComputationsForSpirv
    : Pass<"pk-sink-index-computations-for-spirv", "::mlir::func::FuncOp"> {
  let summary = "Sink index arithmetic into GPU launches, not buffer sizes";
  let description = [{
    Like `gpu-launch-sink-index-computations`: constants and the index
    arithmetic on them that a `gpu.launch` body uses move into the body, so
    that outlining does not make them kernel arguments. Unlike it, sizes
    read from buffers (`memref.dim`) stay on the host: a SPIR-V kernel cannot
    read a buffer's size. A dynamic size, and only that, reaches a kernel as
    an argument, which the host computes at dispatch; a kernel of static
    shapes takes only its buffers. A size read from a view
    (`memref.dim` of a `memref.reinterpret_cast`) is first replaced by the
    view's size operand, so that a size class is one argument.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def PkMergeGpuModules : Pass<"pk-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Gather the outlined GPU kernels into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes a `gpu.module` per launch. This pass moves
    every kernel into the first one and points each `gpu.launch_func` at its
    new home, so that a pk kernel compiles to one device module: one SPIR-V
    module, one PTX module, loaded once by a runtime. Kernels are named as
    identifiers (outlining derives their names from the function's, which
    may be any string, such as `<lambda>`: PTX refuses those), each
    character outside `[A-Za-z0-9_$]` replaced by `_`, and suffixed where two
    names collide.

    ```mlir
    gpu.launch_func @first::@first ...
    gpu.launch_func @second::@second ...
    gpu.module @first { gpu.func @first(...) kernel { ... } }
    gpu.module @second { gpu.func @second(...) kernel { ... } }
    // becomes
    gpu.launch_func @first::@first ...
    gpu.launch_func @first::@second ...
    gpu.module @first {
      gpu.func @first(...) kernel { ... }
      gpu.func @second(...) kernel { ... }
    }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def PkSharedAllocsAsAttributions
    : Pass<"pk-shared-allocs-as-attributions", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Shared-memory allocations of GPU kernels as attributions";
  let description = [{
    `pk-tile-matmul-for-gpu` and `pk-reduce-in-workgroups` stage data in
    workgroup-shared memory through `memref.alloc`s in memory space 3, which
    `convert-gpu-to-spirv` turns into Workgroup variables. NVVM has no such
    lowering (an alloc becomes a call to `malloc`): this pass makes each
    such allocation of static shape, wherever it is in a kernel, a workgroup
    attribution of its `gpu.func` (a `.shared` array in PTX), and erases its
    deallocations. Allocations of other memory spaces are left alone.

    ```mlir
    gpu.func @k() kernel {
      %tile = memref.alloc() : memref<64x16xf32, 3>
      ...
    // becomes
    gpu.func @k() workgroup(%tile : memref<64x16xf32, 3>) kernel {
      ...
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def PkLinearizeLargeGrids : Pass<"pk-linearize-large-grids",
                                  "::mlir::ModuleOp"> {
  let summary = "Launch grids too tall for NVIDIA GPUs along x instead";
  let description = [{
    NVIDIA GPUs take up to 2^31 - 1 blocks in x but only 65535 in y and z,
    while the GPU tiling puts a leading dimension's indices in y (an
    elementwise kernel over a (70000, 2, 3) array launches 2 x 70000
    blocks). For each launch of constant grid with more than 65535 blocks in
    y or z (and at most 2^31 - 1 in all), this pass launches the same blocks
    along x and has its kernel (launched from there only) recover its
    three-dimensional block index from the linear one: `gpu.block_id`s
    become the remainders and quotients by the old grid sizes,
    `gpu.grid_dim`s the old sizes. Dynamic grids are left to the runtime.

    ```mlir
    gpu.launch_func @m::@k blocks in (%c2, %c70000, %c1) ...
    // becomes
    gpu.launch_func @m::@k blocks in (%c140000, %c1, %c1) ...
    // and in @k: %x = remui %linear, 2; %y = divui %linear, 2 (mod 70000)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect"];
}

def PkCheckNvvmTarget : Pass<"pk-check-nvvm-target", "::mlir::ModuleOp"> {
  let summary = "Check GPU kernels against what NVIDIA GPUs allow";
  let description = [{
    Runs right after `nvvm-attach-target`, so that what LLVM's NVPTX backend
    would abort the process on, or compile into PTX that ptxas or the
    driver refuses, is a diagnostic instead:
    - each `gpu.module`'s `#nvvm.target`: an architecture LLVM knows, sm_70
      or later; a PTX version LLVM knows (`+ptx80`), at least the oldest
      the architecture allows;
    - each `gpu.launch_func` of constant sizes: blocks of at most 1024
      threads (x and y at most 1024, z at most 64), grids of at most
      2^31 - 1 blocks in x and 65535 in y and z.

    ```mlir
    gpu.module @k [#nvvm.target<chip = "sm_80", features = "+ptx60">] {...}
    // error: PTX 6.0 is older than sm_80 allows (7.0 and later)
    ```
  }];
}

def PkCheckLibdevice : Pass<"pk-check-libdevice", "::mlir::ModuleOp"> {
  let summary = "Check that CUDA's libdevice is there for the math it calls";
  let description = [{
    `convert-gpu-to-nvvm` turns math into calls to CUDA's libdevice
    (`__nv_expf`, ...), which `gpu-module-to-binary` links in from the CUDA
    toolkit, at `nvvm/libdevice/libdevice.10.bc`. Where it is missing, the
    calls would stay unresolved in the PTX (which ptxas and the driver
    refuse): this pass makes that an error at the first call, naming the
    function and where libdevice was looked for. Kernels without math need
    no toolkit.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA toolkit directory (empty: the one found from CUDA_ROOT, "
           "CUDA_HOME, CUDA_PATH or /usr/local/cuda)">
  ];
}

def PkPrepareSpirvKernels : Pass<"pk-prepare-spirv-kernels",
                                 "::mlir::ModuleOp"> {
  let summary = "Set the SPIR-V target and entry-point ABI of GPU kernels";
  let description = [{
    For the kernels that `pk-merge-gpu-modules` gathered into one
    `gpu.module` (a pk kernel becomes one SPIR-V module with one entry point
    per dispatch): sets the module's
    `spirv.target_env` (Vulkan, by `vulkan-version`) and gives each kernel a
    `spirv.entry_point_abi` with the workgroup size it was tiled for — the
    attributes `convert-gpu-to-spirv` needs. Integer overflow flags are
    dropped: they would need an extension before SPIR-V 1.4.
  }];
  let options = [
    Option<"vulkanVersion", "vulkan-version", "std::string",
           /*default=*/"::pk::defaults::kVulkanVersion",
           "Target Vulkan version (1.0 to 1.3)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::spirv::SPIRVDialect",
                           "::mlir::arith::ArithDialect"];
}

def PkFuseElementwiseTrees : Pass<"pk-fuse-elementwise-trees",
                                  "::mlir::func::FuncOp"> {
  let summary = "Fuse each tree of single-use elementwise generics at once";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` fuses one producer into its
    consumer at a time, cloning the body fused so far each time: a chain of
    n elementwise ops costs O(n^2) (a kernel of 8,000 operations compiled
    for a minute). This pass builds the same fused op in one step: from
    each consumer, it gathers the tree of producers it may absorb (generics
    whose loops are all parallel, with one result used once, reached
    through a permutation, and whose bodies read neither their output nor
    their loop indices), composes their indexing maps into the consumer's
    loops, and clones every body once. A fused body stops growing at
    `max-body-ops` operations; what it leaves (producers used twice, fills,
    reshapes) is `pk-fuse-elementwise`'s to handle.

    ```mlir
    %0 = linalg.generic {..} ins(%a, %b) outs(%e0) { arith.mulf }
    %1 = linalg.generic {..} ins(%0, %c) outs(%e1) { arith.addf }
    // becomes
    %1 = linalg.generic {..} ins(%a, %b, %c) outs(%e1) { arith.mulf; arith.addf }
    ```
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "unsigned",
           /*default=*/"::mlir::pk::kMaxFusedBodyOps",
           "The most operations a fused loop body gets">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PkFuseElementwise : Pass<"pk-fuse-elementwise"> {
  let summary = "Upstream's elementwise fusion, with a bound on a fused body";
  let description = [{
    `linalg-fuse-elementwise-ops` as upstream builds it (producer into
    consumer fusion, reshapes folded by expansion, constant folding, the
    canonicalizations of generics and reshapes, top-down), except that a
    fusion whose body would exceed `max-body-ops` operations is not made:
    LLVM's loop vectorizer takes time quadratic in a loop body's dependence
    chains, so one loop of 8,000 operations compiled for 16 s where 16
    loops of 500 compile in under 2. Named products (`linalg.matmul`,
    `linalg.batch_matmul`) keep the reshapes of their operands and results:
    folded into them, they would become generic contractions that
    pk-pack-matmul does not pack.
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "unsigned",
           /*default=*/"::mlir::pk::kMaxFusedBodyOps",
           "The most operations a fused loop body gets">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PkParallelLoopsOutermost : Pass<"pk-parallel-loops-outermost",
                                    "::mlir::func::FuncOp"> {
  let summary = "Reorder linalg loops: parallel dimensions before reductions";
  let description = [{
    A reduction over a leading axis (`a.max(axis=0)`, `a.sum(axis=-2)` of a
    rank-3 array) is a linalg.generic whose first loop reduces. Lowered as
    it is, its outer loop is a sequential `scf.for` around the parallel
    ones, which no GPU grid can run (the Vulkan runtime refused the host
    `scf.for`, and a parallel loop inside a sequential one failed to
    legalize). This pass interchanges the loops of every generic so that
    all parallel dimensions come first, in their order, then the reduced
    ones: one GPU thread per result element, looping over what it reduces.

    ```mlir
    linalg.generic {iterator_types = ["reduction", "parallel"]} ...
    // becomes
    linalg.generic {iterator_types = ["parallel", "reduction"]} ...
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PkAddUnitParallelLoop : Pass<"pk-add-unit-parallel-loop",
                                 "::mlir::func::FuncOp"> {
  let summary = "Give linalg ops without a parallel loop a unit one";
  let description = [{
    A reduction to a 0-d array (or a fill of one) has no parallel loop, so
    `convert-linalg-to-parallel-loops` leaves it as sequential loops that
    would stay on the host. This pass adds a leading parallel loop of extent
    1 (outputs are viewed through `memref.expand_shape` with a leading unit
    dimension), so that the op runs on the GPU as one thread.

    ```mlir
    linalg.generic {iterator_types = ["reduction"]} ins(%x : memref<64xf32>) outs(%s : memref<f32>)
    // becomes
    %e = memref.expand_shape %s [] output_shape [1] : memref<f32> into memref<1xf32>
    linalg.generic {iterator_types = ["parallel", "reduction"]} ins(%x : memref<64xf32>) outs(%e : memref<1xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PkExpandFloorDivForSpirv : Pass<"pk-expand-floor-div-for-spirv"> {
  let summary = "Integer floor and ceiling divisions as SPIR-V's truncating ones";
  let description = [{
    Rewrites `arith.floordivsi`, `arith.ceildivsi` and `arith.ceildivui`
    (upstream's `populateCeilFloorDivExpandOpsPatterns`) into truncating
    divisions, compares and selects, which SPIR-V has. They come from the
    index arithmetic of reshaped views folded into loads and stores (a
    long reduction's input read as blocks), lowered from affine maps.

    ```mlir
    %q = arith.floordivsi %i, %c256 : index   // becomes divsi, cmpi, select
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PkExactRemFForSpirv : Pass<"pk-exact-remf-for-spirv"> {
  let summary = "Replace arith.remf by an exact remainder on the bits";
  let description = [{
    SPIR-V's OpFRem computes `x - y * trunc(x / y)` on real devices (and on
    lavapipe), which is wrong as soon as the quotient is not exact: most
    float32 remainders of operands a few orders of magnitude apart differ
    from C's fmod, which NumPy's `%` and `//` build on. This pass rewrites
    every `arith.remf` into the exact remainder, computed like a long
    division on the operands' significands in 64-bit integers (a chunk of
    39 quotient bits per loop iteration for float32, 10 for float64):
    `(m_x * 2^(e_x - e_y)) mod m_y`, scaled back by `2^e_y`, with the sign
    of `x`. Special cases follow fmod: NaN when `y` is 0 or either operand
    is NaN or `x` is infinite, `x` when `|x| < |y|`. float16 and bfloat16
    compute in float32 (exact: the remainder is representable).

    ```mlir
    %0 = arith.remf %x, %y : f32   // becomes integer ops and an scf.for
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def PkApproximateMathForSpirv : Pass<"pk-approximate-math-for-spirv"> {
  let summary = "Accurate float32 math for SPIR-V, where GLSL's is loose or missing";
  let description = [{
    GLSL.std.450's extended instructions are only roughly specified, and
    lavapipe's are as rough as allowed (exp within 64 ulps, log within
    2^-21 absolute, sin(1e10) off by 100%). This pass rewrites the float32
    math ops inside GPU kernels so that they agree with NumPy within a few
    ulps:
    - `math.exp` and `math.log`: MLIR's polynomials with Cody-Waite
      reduction (within 4 and 2 ulps), subnormal arguments of log and
      results of exp scaled into the normal range and back;
    - `math.powf`: C's pow with every special case of C99 F.9.4.4 made
      explicit (GLSL's pow is undefined for x <= 0), the magnitude
      computed in float64 arithmetic when `float64` is set (correctly
      rounded but for near-ties), else as exp(y * log|x|);
    - `math.sin` and `math.cos`: arguments of 2 and more reduced exactly
      modulo pi/2 (Payne-Hanek, in integer arithmetic);
    - `math.tanh`: MLIR's rational approximation (tiny x stays x),
      saturating to +-1 from |x| = 9;
    - `math.erf` (GLSL has none): MLIR's polynomial, with the sign of
      the argument (erf(-0.0) is -0.0).
    GLSL has no float64 transcendental functions at all: a float64 exp,
    log, sin, cos, tanh, pow or erf is an error at the user's line, saying
    so.

    ```mlir
    %0 = math.erf %x : f32   // becomes a rational polynomial in %x
    ```
  }];
  let options = [
    Option<"float64", "float64", "bool", /*default=*/"true",
           "The device computes in float64 (Vulkan's shaderFloat64): "
           "float32 pow uses it">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // PICOKERNEL_TRANSFORMS_PASSES_TD
