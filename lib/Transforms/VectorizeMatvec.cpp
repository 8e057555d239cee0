//===- VectorizeMatvec.cpp - matrix-vector products as vector code --------===//

#include "picokernel/Transforms/Passes.h"

#include "IterationCount.h"
#include "Matvec.h"
#include "ReductionBlocks.h"
#include "Reductions.h"
#include "RunTimeChoice.h"
#include "Tiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKVECTORIZEMATVEC
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using mlir::pk::matchMatvec;
using mlir::pk::Matvec;

namespace {

using LoopType = scf::SCFTilingOptions::LoopType;

struct VectorizeMatvecPass
    : public mlir::pk::impl::PkVectorizeMatvecBase<VectorizeMatvecPass> {
  using PkVectorizeMatvecBase::PkVectorizeMatvecBase;

  /// Canonicalization, which makes the slices of tiles of a dynamic
  /// product static (their sizes are constants after assumeWholeTiles).
  FrozenRewritePatternSet canonicalization;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet patterns(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(patterns, context);
    canonicalization = FrozenRewritePatternSet(std::move(patterns));
    return success();
  }

  /// The products to vectorize (those with at least minIterations
  /// multiply-adds).
  SmallVector<std::pair<linalg::LinalgOp, Matvec>> findMatvecs() {
    SmallVector<std::pair<linalg::LinalgOp, Matvec>> matvecs;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (mlir::pk::iterationCount(op) < minIterations)
        return;
      if (std::optional<Matvec> matvec = matchMatvec(op))
        matvecs.push_back({op, *matvec});
    });
    return matvecs;
  }

  /// Float products that sum at least two blocks of K (blockOf) sum it in
  /// blocks combined pairwise (splitLongSum): rounding errors grow with the
  /// block and log K, not K; the blocks, a batch dimension, run in parallel.
  LogicalResult splitLongSums(RewriterBase &rewriter) {
    if (sumBlock <= 0)
      return success();
    for (auto [op, matvec] : findMatvecs()) {
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      int64_t length = op.getStaticLoopRanges()[matvec.dims.k.front()];
      int64_t block = blockOf(matvec);
      if (!isa<FloatType>(element) || !mlir::pk::hasPlainIdentity(element) ||
          (!ShapedType::isDynamic(length) && length / 2 < block))
        continue;
      if (failed(mlir::pk::splitLongSum(rewriter, op, matvec.dims.k.front(),
                                        block)))
        return failure();
    }
    return success();
  }

  /// The elements of K a block of `matvec` sums: x @ A adds each row of A
  /// to one running sum per column; A @ x and dot products sum in 4 vectors
  /// of lanes, whose errors grow 4 * lanes times slower, and end each tile
  /// in sums across lanes: blocks 8 times longer.
  int64_t blockOf(const Matvec &matvec) const {
    return (matvec.matrixLeft ? 8 : 1) * int64_t(sumBlock);
  }

  void runOnOperation() override {
    int64_t bits =
        vectorBits > 0 ? int64_t(vectorBits) : mlir::pk::hostVectorBits();
    IRRewriter rewriter(&getContext());
    if (failed(splitLongSums(rewriter)))
      return signalPassFailure();
    SmallVector<std::pair<linalg::LinalgOp, Matvec>> matvecs = findMatvecs();
    for (auto [named, matvec] : matvecs) {
      Type element = getElementTypeOrSelf(named.getDpsInputs()[0].getType());
      int64_t lanes =
          std::max<int64_t>(1, bits / element.getIntOrFloatBitWidth());
      // Rows (of A @ x) or columns (of x @ A) too short to fill part of a
      // vector keep their loop nest.
      SmallVector<int64_t> ranges = named.getStaticLoopRanges();
      if (!ShapedType::isDynamic(ranges[matvec.column()]) &&
          ranges[matvec.column()] < kMinVectorColumns)
        continue;
      // Generic, so that the tiles' unit dimensions fold away.
      linalg::LinalgOp op = named;
      if (!isa<linalg::GenericOp>(named)) {
        rewriter.setInsertionPoint(named);
        FailureOr<linalg::GenericOp> generic =
            linalg::generalizeNamedOp(rewriter, named);
        if (failed(generic)) {
          named.emitOpError("could not be generalized");
          return signalPassFailure();
        }
        op = *generic;
      }
      auto vectorize = [&](linalg::LinalgOp product, bool parallel) {
        return matvec.matrixLeft ? vectorizeRowDots(rewriter, product, matvec,
                                                    lanes, parallel)
                                 : vectorizeRowSums(rewriter, product, matvec,
                                                    lanes, parallel);
      };
      // Dynamic rows of A @ x shorter than one vector keep the loop nest
      // (masked vectors would mostly compute padding), decided at run
      // time. (Static ones take vectors of their length from
      // kMinVectorColumns on.)
      if (matvec.matrixLeft && ShapedType::isDynamic(ranges[matvec.column()]))
        op = mlir::pk::chooseAtRunTime(
                 rewriter, op, isAtLeast(rewriter, op, matvec.column(), lanes))
                 .first;
      if (!op.hasDynamicShape() || parallelThreshold <= 0) {
        bool parallel = parallelThreshold > 0 &&
                        mlir::pk::iterationCount(op) >= parallelThreshold;
        if (failed(vectorize(op, parallel)))
          return signalPassFailure();
        continue;
      }
      // For dynamic sizes, whether the tiles run in parallel is decided
      // at run time, between two copies.
      auto [parallel, serial] =
          mlir::pk::chooseAtRunTime(rewriter, op, isLarge(rewriter, op));
      if (failed(vectorize(parallel, true)) || failed(vectorize(serial, false)))
        return signalPassFailure();
    }
  }

  /// Whether `op`'s loop dimension `dim` has at least `least` points,
  /// computed before it.
  Value isAtLeast(RewriterBase &rewriter, linalg::LinalgOp op, unsigned dim,
                  int64_t least) {
    rewriter.setInsertionPoint(op);
    return mlir::pk::isAtLeast(rewriter, op.getLoc(),
                               mlir::pk::loopSize(rewriter, op, dim), least);
  }

  /// Whether `op` has at least parallelThreshold multiply-adds, computed
  /// before it. (Their count fits: it is the matrix's.)
  Value isLarge(RewriterBase &rewriter, linalg::LinalgOp op) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (unsigned dim = 0; dim < op.getNumLoops(); ++dim)
      count = arith::MulIOp::create(rewriter, loc, count,
                                    mlir::pk::loopSize(rewriter, op, dim));
    return mlir::pk::isAtLeast(rewriter, loc, count, parallelThreshold);
  }

  /// The columns of a tile along a dimension of `size`: 4 vectors, or a
  /// static size below that whole (a vector of its length, which LLVM
  /// splits into whole and partial registers).
  static int64_t tileOf(int64_t size, int64_t lanes) {
    if (ShapedType::isDynamic(size) || size >= 4 * lanes)
      return 4 * lanes;
    return size;
  }

  /// Splits `op` along `dim` at the largest multiple of `multiple` not
  /// above its size (known at run time for a dynamic size): the first part
  /// (all of `op` when the multiple divides it) and the rest (null then).
  FailureOr<std::pair<Operation *, Operation *>>
  splitAtMultiple(RewriterBase &rewriter, Operation *op, unsigned dim,
                  int64_t multiple) {
    auto product = cast<linalg::LinalgOp>(op);
    int64_t size = product.getStaticLoopRanges()[dim];
    rewriter.setInsertionPoint(op);
    OpFoldResult main;
    if (ShapedType::isDynamic(size)) {
      if (multiple == 1)
        return std::make_pair(op, static_cast<Operation *>(nullptr));
      AffineExpr n = rewriter.getAffineDimExpr(0);
      main = affine::makeComposedFoldedAffineApply(
          rewriter, op->getLoc(), n.floorDiv(multiple) * multiple,
          {OpFoldResult(mlir::pk::loopSize(rewriter, product, dim))});
    } else {
      if (size % multiple == 0)
        return std::make_pair(op, static_cast<Operation *>(nullptr));
      main = rewriter.getIndexAttr(size - size % multiple);
    }
    auto [first, second] =
        linalg::splitOp(rewriter, cast<TilingInterface>(op), dim, main);
    if (!first || !second)
      return failure();
    return std::make_pair(first.getOperation(), second.getOperation());
  }

  /// o[r] = sum_k A[r, k] x[k]: tiles of `kRows` rows (or all of fewer)
  /// times `4 lanes` of K, their row sums accumulated in registers across
  /// K; the rows the tiles do not divide as one thinner tile (for a
  /// dynamic number of rows, at most one tile of half as many rows, then
  /// of half that, down to one row: a tile of one row sums its chunks in
  /// one chain of additions, several rows side by side). A dot product (no
  /// rows) is one row.
  LogicalResult vectorizeRowDots(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const Matvec &matvec, int64_t lanes,
                                 bool parallel,
                                 int64_t dynamicRowTile = kRows) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t kTile = tileOf(ranges[matvec.column()], lanes);
    Location loc = op.getLoc();
    // (Read before splitting: the split replaces `op`.)
    bool dynamic = op.hasDynamicShape();
    int64_t rowTile = 0;
    if (matvec.hasRows()) {
      int64_t rows = ranges[matvec.row()];
      rowTile =
          !ShapedType::isDynamic(rows) ? std::min(kRows, rows) : dynamicRowTile;
    }
    FailureOr<std::pair<Operation *, Operation *>> byRows =
        std::make_pair(op.getOperation(), static_cast<Operation *>(nullptr));
    if (matvec.hasRows())
      byRows = splitAtMultiple(rewriter, op, matvec.row(), rowTile);
    if (failed(byRows))
      return emitError(loc, "matrix-vector product could not be split");
    unsigned numLoops = ranges.size();
    SmallVector<int64_t> rows(numLoops, 0);
    if (matvec.hasRows())
      rows[matvec.row()] = rowTile;
    for (unsigned b : matvec.dims.batch)
      rows[b] = 1;
    Operation *tile = byRows->first;
    Operation *root = nullptr;
    if (llvm::any_of(rows, [](int64_t size) { return size != 0; })) {
      FailureOr<scf::SCFTilingResult> outer =
          mlir::pk::tileInto(rewriter, tile, rows,
                             parallel ? LoopType::ForallOp : LoopType::ForOp);
      if (failed(outer) || outer->loops.empty())
        return emitError(loc, "matrix-vector product could not be tiled");
      tile = outer->tiledOps.front();
      root = outer->loops.front();
      for (LoopLikeOpInterface loop : outer->loops)
        mlir::pk::assumeWholeTiles(rewriter, loop);
    }
    // The columns in whole tiles, then (within each row tile, while its
    // rows are in cache) the rest.
    FailureOr<std::pair<Operation *, Operation *>> byColumns =
        splitAtMultiple(rewriter, tile, matvec.column(), kTile);
    if (failed(byColumns))
      return emitError(loc, "matrix-vector product could not be split");
    SmallVector<int64_t> columns(numLoops, 0);
    columns[matvec.column()] = kTile;
    FailureOr<scf::SCFTilingResult> inner = mlir::pk::tileInto(
        rewriter, byColumns->first, columns, LoopType::ForOp);
    if (failed(inner) || inner->loops.size() != 1)
      return emitError(loc, "matrix-vector product could not be tiled");
    auto kLoop = cast<LoopLikeOpInterface>(inner->loops.front());
    mlir::pk::assumeWholeTiles(rewriter, kLoop);
    if (!root)
      root = kLoop;
    // Dynamic sizes: whole tiles become static (which may replace the K
    // loop and the rest). (Static ones are, and keep their loops even of one
    // step.)
    if (dynamic && failed(applyPatternsGreedily(root, canonicalization)))
      return emitError(loc, "matrix-vector product's tiles did not settle");
    // The K loop (gone where canonicalization found one step) with the
    // tile, then the rest of the row tile's columns.
    bool rowsTiled = root != kLoop.getOperation();
    if (rowsTiled) {
      Operation *parent =
          mlir::pk::findFirst<linalg::GenericOp>(root)->getParentOp();
      kLoop = parent != root ? dyn_cast<LoopLikeOpInterface>(parent)
                             : LoopLikeOpInterface();
    }
    if (failed(mlir::pk::vectorizeTileIn(rewriter,
                                         kLoop ? kLoop.getOperation() : root,
                                         /*reductionsFirst=*/false)))
      return emitError(loc, "matrix-vector product could not be vectorized");
    if (auto restColumns = rowsTiled
                               ? mlir::pk::findFirst<linalg::GenericOp>(root)
                               : linalg::GenericOp()) {
      if (failed(vectorizeRestColumns(rewriter, restColumns, matvec.column(),
                                      kTile)))
        return emitError(loc, "matrix-vector product could not be vectorized");
    }
    // The tile's sums stay in registers across K.
    if (kLoop) {
      moveLoopInvariantCode(kLoop);
      kLoop = hoistLoopInvariantSubsets(rewriter, kLoop);
      if (!rowsTiled)
        root = kLoop;
    }
    // Each row's chunk of products summed as a tree, then added in order.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return emitError(loc,
                       "matrix-vector product's sums could not be lowered");
    mlir::pk::unmaskSums(rewriter, root);
    root->walk([&](vector::ReductionOp reduction) {
      auto flags = reduction.getFastmathAttr();
      rewriter.modifyOpInPlace(reduction, [&] {
        reduction.setFastmathAttr(arith::FastMathFlagsAttr::get(
            &getContext(), flags.getValue() | arith::FastMathFlags::reassoc));
      });
    });
    // The rows the tiles do not divide: one thinner tile, or for a dynamic
    // number, serial tiles of half the rows (fewer than a tile's rows: a
    // parallel region would cost more than it saves, even where there are
    // none).
    if (Operation *rest = byRows->second)
      return vectorizeRowDots(rewriter, cast<linalg::LinalgOp>(rest), matvec,
                              lanes, parallel && !dynamic,
                              std::max<int64_t>(1, rowTile / 2));
    return success();
  }

  /// The columns a row tile of A @ x leaves over (fewer than a tile):
  /// vectors of their static number, or for a dynamic number a loop of at
  /// most one masked step of a whole tile (`tile` lanes: one sum across
  /// lanes per row, where steps of one vector would take one each; none
  /// where there are no columns left, without a branch, which would make
  /// bufferization copy the row tile's sums).
  LogicalResult vectorizeRestColumns(RewriterBase &rewriter,
                                     linalg::GenericOp rest, unsigned column,
                                     int64_t tile) {
    Operation *loop = rest->getParentOp();
    if (rest.hasDynamicShape()) {
      SmallVector<int64_t> steps(rest.getNumLoops(), 0);
      steps[column] = tile;
      FailureOr<scf::SCFTilingResult> tiled =
          mlir::pk::tileInto(rewriter, rest, steps, LoopType::ForOp);
      if (failed(tiled) || tiled->loops.size() != 1)
        return failure();
      rest = cast<linalg::GenericOp>(tiled->tiledOps.front());
      loop = tiled->loops.front();
    }
    if (failed(mlir::pk::vectorizeOp(rewriter, rest, tile,
                                     /*assumeWhole=*/false)))
      return failure();
    // Masked reads of tensors become transfer_reads with a mask, which
    // bufferize (a vector.mask region would not).
    RewritePatternSet patterns(rewriter.getContext());
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    return applyPatternsGreedily(loop, std::move(patterns));
  }

  /// o[n] = sum_k x[k] A[k, n]: blocks of columns (in parallel), each a
  /// loop over the rows of A adding `kRowStep` rows times their x[k] to the
  /// block of o, `4 lanes` columns at a time (A streamed row by row).
  LogicalResult vectorizeRowSums(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const Matvec &matvec, int64_t lanes,
                                 bool parallel) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t nTile = tileOf(ranges[matvec.column()], lanes);
    Location loc = op.getLoc();
    // (Read before splitting: the split replaces `op`.)
    Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    bool dynamic = op.hasDynamicShape();
    int64_t rowCount = ranges[matvec.row()];
    int64_t rowStep =
        ShapedType::isDynamic(rowCount) || rowCount >= kRowStep ? kRowStep : 1;
    FailureOr<std::pair<Operation *, Operation *>> split =
        splitAtMultiple(rewriter, op, matvec.column(), nTile);
    Operation *restColumns = succeeded(split) ? split->second : nullptr;
    if (succeeded(split))
      split = splitAtMultiple(rewriter, split->first, matvec.row(), rowStep);
    if (failed(split))
      return emitError(loc, "vector-matrix product could not be split");
    // The columns and rows the tiles leave over stay loop nests, A's rows
    // outer to its columns: one pass along A's rows, the columns
    // contiguous (LLVM vectorizes them), where the product's order would
    // walk down A's columns.
    for (Operation *rest : {restColumns, split->second}) {
      if (!rest)
        continue;
      // (A single row of A is a loop nest's one step.)
      auto part = cast<linalg::LinalgOp>(rest);
      SmallVector<int64_t> sizes = part.getStaticLoopRanges();
      bool masked = rest == restColumns &&
                    ShapedType::isDynamic(sizes[matvec.column()]) &&
                    sizes[matvec.row()] != 1;
      if (failed(masked ? vectorizeNarrowColumns(rewriter, part, matvec, lanes,
                                                 parallel)
                        : rowsOuter(rewriter, rest, matvec)))
        return emitError(loc, "vector-matrix product could not be reordered");
    }
    Operation *main = split->first;
    unsigned numLoops = ranges.size();
    SmallVector<OpFoldResult> blocks(numLoops, rewriter.getIndexAttr(0));
    blocks[matvec.column()] =
        columnBlock(rewriter, cast<linalg::LinalgOp>(main), matvec.column(),
                    nTile, element, parallel);
    for (unsigned b : matvec.dims.batch)
      blocks[b] = rewriter.getIndexAttr(1);
    SmallVector<int64_t> rows(numLoops, 0);
    rows[matvec.row()] = rowStep;
    SmallVector<int64_t> tiles(numLoops, 0);
    tiles[matvec.column()] = nTile;
    FailureOr<scf::SCFTilingResult> outer =
        mlir::pk::tileInto(rewriter, main, blocks,
                           parallel ? LoopType::ForallOp : LoopType::ForOp);
    FailureOr<scf::SCFTilingResult> byRow, inner;
    if (succeeded(outer))
      byRow = mlir::pk::tileInto(rewriter, outer->tiledOps.front(), rows,
                                 LoopType::ForOp);
    if (succeeded(byRow))
      inner = mlir::pk::tileInto(rewriter, byRow->tiledOps.front(), tiles,
                                 LoopType::ForOp);
    if (failed(inner) || inner->loops.size() != 1)
      return emitError(loc, "vector-matrix product could not be tiled");
    // The row steps divide the rows, the column tiles every block.
    for (LoopLikeOpInterface loop : byRow->loops)
      mlir::pk::assumeWholeTiles(rewriter, loop);
    mlir::pk::assumeWholeTiles(rewriter, inner->loops.front());
    Operation *root = outer->loops.front();
    // (As for A @ x.)
    if (dynamic && failed(applyPatternsGreedily(root, canonicalization)))
      return emitError(loc, "vector-matrix product's tiles did not settle");
    auto innerLoop = mlir::pk::findFirst<linalg::GenericOp>(root)
                         ->getParentOfType<LoopLikeOpInterface>();
    if (failed(mlir::pk::vectorizeTileIn(rewriter, innerLoop,
                                         /*reductionsFirst=*/true, nTile)))
      return emitError(loc, "vector-matrix product could not be vectorized");
    RewritePatternSet patterns(&getContext());
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return emitError(loc,
                       "vector-matrix product's sums could not be lowered");
    return success();
  }

  /// The columns a dynamic x @ A leaves over (fewer than a tile, a
  /// dynamic number): masked steps of two vectors (`lanes` each: fewer
  /// passes over A's rows than one, fewer lanes masked off than four),
  /// each a loop over A's rows adding x[k] times the row's columns to the
  /// step's columns of the result, which stay in registers across the rows.
  LogicalResult vectorizeNarrowColumns(RewriterBase &rewriter,
                                       linalg::LinalgOp rest,
                                       const Matvec &matvec, int64_t lanes,
                                       bool parallel) {
    SmallVector<int64_t> steps(rest.getNumLoops(), 0);
    steps[matvec.column()] = 2 * lanes;
    for (unsigned b : matvec.dims.batch)
      steps[b] = 1;
    FailureOr<scf::SCFTilingResult> byColumns = mlir::pk::tileInto(
        rewriter, rest, steps, parallel ? LoopType::ForallOp : LoopType::ForOp);
    if (failed(byColumns) || byColumns->loops.empty())
      return failure();
    // (Without the batches' unit dimensions, the step's columns of the
    // result are one slice of the row loop's.)
    linalg::GenericOp step =
        mlir::pk::dropUnitDimsIn(rewriter, byColumns->loops.front());
    if (!step || step.getNumReductionLoops() != 1)
      return failure();
    SmallVector<unsigned> reduced;
    step.getReductionDims(reduced);
    steps.assign(step.getNumLoops(), 0);
    steps[reduced.front()] = 1;
    FailureOr<scf::SCFTilingResult> byRows =
        mlir::pk::tileInto(rewriter, step, steps, LoopType::ForOp);
    if (failed(byRows) || byRows->loops.size() != 1)
      return failure();
    auto rowLoop = cast<LoopLikeOpInterface>(byRows->loops.front());
    if (failed(mlir::pk::vectorizeTileIn(rewriter, rowLoop,
                                         /*reductionsFirst=*/false, 2 * lanes,
                                         /*assumeWhole=*/false)))
      return failure();
    // (As for A @ x's rest; the mask from the row's slice seen as the
    // step's, and the result's step read and written straight through its
    // slices, so that it is one loop-invariant subset.)
    RewritePatternSet patterns(rewriter.getContext());
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    if (failed(applyPatternsGreedily(rowLoop, std::move(patterns))))
      return failure();
    // The step's columns of the result in a register across the rows.
    moveLoopInvariantCode(rowLoop);
    hoistLoopInvariantSubsets(rewriter, rowLoop);
    return success();
  }

  /// Reorders the loops of `op` (a part of x @ A) as batches, then A's
  /// rows, then its columns.
  LogicalResult rowsOuter(RewriterBase &rewriter, Operation *op,
                          const Matvec &matvec) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      return failure();
    SmallVector<unsigned> order(matvec.dims.batch.begin(),
                                matvec.dims.batch.end());
    order.push_back(matvec.row());
    order.push_back(matvec.column());
    rewriter.setInsertionPoint(generic);
    return linalg::interchangeGenericOp(rewriter, generic, order);
  }

  /// The columns of each block of a vector-matrix product `main` (whose
  /// columns `nTile` divides): as wide as 16 KiB of the result (fewer,
  /// longer streams of A's rows), at least two when they run in parallel,
  /// a multiple of `nTile`. Computed before `main` for dynamic sizes.
  OpFoldResult columnBlock(RewriterBase &rewriter, linalg::LinalgOp main,
                           unsigned dim, int64_t nTile, Type element,
                           bool parallel) {
    int64_t widest = llvm::alignTo(
        std::max<int64_t>(
            nTile,
            kColumnBlockBytes /
                std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8)),
        nTile);
    int64_t columns = main.getStaticLoopRanges()[dim];
    if (!ShapedType::isDynamic(columns)) {
      int64_t block = widest;
      if (parallel)
        block = std::min<int64_t>(block, llvm::divideCeil(columns, 2));
      return rewriter.getIndexAttr(
          llvm::alignTo(mlir::pk::evenChunk(columns, block), nTile));
    }
    if (!parallel)
      return rewriter.getIndexAttr(widest);
    // Half the columns rounded up to tiles, at least one tile, at most the
    // widest block.
    rewriter.setInsertionPoint(main);
    MLIRContext *context = rewriter.getContext();
    AffineExpr n = getAffineDimExpr(0, context);
    AffineMap half =
        AffineMap::get(1, 0,
                       {getAffineConstantExpr(widest, context),
                        (n + 2 * nTile - 1).floorDiv(2 * nTile) * nTile},
                       context);
    OpFoldResult size = OpFoldResult(mlir::pk::loopSize(rewriter, main, dim));
    OpFoldResult atMost = affine::makeComposedFoldedAffineMin(
        rewriter, main.getLoc(), half, {size});
    return affine::makeComposedFoldedAffineMax(
        rewriter, main.getLoc(),
        AffineMap::get(1, 0, {n, getAffineConstantExpr(nTile, context)},
                       context),
        {atMost});
  }

  /// Rows of A each dot-product tile takes.
  static constexpr int64_t kRows = 8;
  /// Rows of A each step of a vector-matrix block adds at once (fewer
  /// loads and stores of the result per element of A).
  static constexpr int64_t kRowStep = 8;
  /// Bytes of the result each vector-matrix block takes (kept in L1 while
  /// A's rows stream past): 4096 float32 columns, whose 16 KiB rows of A
  /// stream further than the prefetchers' 4 KiB pages.
  static constexpr int64_t kColumnBlockBytes = int64_t(16) << 10;
  /// Static rows (A @ x) or columns (x @ A) shorter than this keep the
  /// loop nest.
  static constexpr int64_t kMinVectorColumns = 4;
};

} // namespace
