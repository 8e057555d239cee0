//===- VectorizePackedMatmul.cpp - register tiles of vector FMAs ----------===//

#include "picokernel/Transforms/Passes.h"

#include "IterationCount.h"
#include "MatmulEpilogue.h"
#include "Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKVECTORIZEPACKEDMATMUL
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Makes `op` accumulate into its init's destination when the init is a
/// fill with +0 used only here; whether it did (the tiles must then start
/// from zero, see sumChunksFromZero).
bool dropZeroFill(RewriterBase &rewriter, linalg::GenericOp op) {
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !fill->hasOneUse())
    return false;
  Value value = fill.getInputs()[0];
  if (!matchPattern(value, m_PosZeroFloat()) && !matchPattern(value, m_Zero()))
    return false;
  rewriter.modifyOpInPlace(
      op, [&] { op.getDpsInitsMutable()[0].assign(fill.getOutputs()[0]); });
  rewriter.eraseOp(fill);
  return true;
}

/// Starts the register tiles of `kLoop` (the C tiles it carries, read
/// before it) from zero, and adds what C held to the loop's sums after it,
/// except where C holds nothing yet: in the first chunk of K (`kChunks`'
/// first iteration; every iteration without chunks) of a C that is zero
/// (`cIsZero`, its fill dropped). Each chunk's products then sum on their
/// own before they meet C's running total, as BLAS sums, so that rounding
/// errors grow with the chunk's length and the count of chunks, not with K.
/// Fails where the tiles are not read before the loop and C is zero.
LogicalResult sumChunksFromZero(RewriterBase &rewriter, scf::ForOp kLoop,
                                scf::ForOp kChunks, bool cIsZero) {
  bool found = false;
  for (auto [index, init] : llvm::enumerate(kLoop.getInitArgsMutable())) {
    auto read = init.get().getDefiningOp<vector::TransferReadOp>();
    if (!read || !read->hasOneUse())
      continue;
    found = true;
    Location loc = read.getLoc();
    auto type = cast<VectorType>(read.getType());
    rewriter.setInsertionPoint(kLoop);
    Value zeros =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(type));
    rewriter.modifyOpInPlace(kLoop, [&] { init.assign(zeros); });
    Value sums = kLoop.getResult(index);
    if (cIsZero && !kChunks) {
      rewriter.eraseOp(read);
      continue;
    }
    // C's tile plus the sums, after the loop.
    auto addTo = [&](OpBuilder &b) -> Value {
      rewriter.moveOpBefore(read, b.getInsertionBlock(), b.getInsertionPoint());
      if (isa<FloatType>(type.getElementType()))
        return arith::AddFOp::create(b, loc, read.getResult(), sums);
      return arith::AddIOp::create(b, loc, read.getResult(), sums);
    };
    rewriter.setInsertionPointAfter(kLoop);
    Operation *totalOp;
    if (!cIsZero) {
      totalOp = addTo(rewriter).getDefiningOp();
    } else {
      Value first = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, kChunks.getInductionVar(),
          kChunks.getLowerBound());
      auto choice = scf::IfOp::create(rewriter, loc, TypeRange{type}, first,
                                      /*addThenBlock=*/true,
                                      /*addElseBlock=*/true);
      rewriter.setInsertionPointToEnd(choice.thenBlock());
      scf::YieldOp::create(rewriter, loc, sums);
      rewriter.setInsertionPointToEnd(choice.elseBlock());
      scf::YieldOp::create(rewriter, loc, addTo(rewriter));
      totalOp = choice;
    }
    rewriter.replaceUsesWithIf(
        sums, totalOp->getResult(0),
        [&](OpOperand &use) { return !totalOp->isAncestor(use.getOwner()); });
  }
  return success(found || !cIsZero);
}

/// Sums `kLoop`'s tiles (its vectors of floats) in runs of `run`
/// iterations, each from zero, every run's sums then added to running
/// totals (which wait in L1 while the next run accumulates in registers):
/// rounding errors grow with the run's length and the count of runs, as in
/// BLAS's blocked sums, not with the chunk of K that the caches choose.
/// Costs one add per tile vector per run. Other values the loop carries
/// pass through the runs.
void sumInRuns(RewriterBase &rewriter, scf::ForOp kLoop, int64_t run) {
  auto isTile = [](Type type) {
    auto vector = dyn_cast<VectorType>(type);
    return vector && isa<FloatType>(vector.getElementType());
  };
  std::optional<APInt> count = kLoop.getStaticTripCount();
  if (run < 1 || !llvm::any_of(kLoop.getResultTypes(), isTile) ||
      (count && count->getSExtValue() <= run))
    return;
  // Runs of equal length where the count is known.
  if (count)
    run = mlir::pk::evenChunk(count->getSExtValue(), run);
  Location loc = kLoop.getLoc();
  rewriter.setInsertionPoint(kLoop);
  Value upper = kLoop.getUpperBound();
  Value runStep =
      arith::MulIOp::create(rewriter, loc, kLoop.getStep(),
                            arith::ConstantIndexOp::create(rewriter, loc, run));
  auto runs = scf::ForOp::create(rewriter, loc, kLoop.getLowerBound(), upper,
                                 runStep, kLoop.getInitArgs());
  rewriter.replaceAllUsesWith(kLoop.getResults(), runs.getResults());
  Block *body = runs.getBody();
  if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
    rewriter.eraseOp(&body->back());
  rewriter.moveOpBefore(kLoop, body, body->end());
  rewriter.setInsertionPoint(kLoop);
  Value start = runs.getInductionVar();
  Value end = arith::MinSIOp::create(
      rewriter, loc, arith::AddIOp::create(rewriter, loc, start, runStep),
      upper);
  SmallVector<Value> inits;
  for (Value carried : runs.getRegionIterArgs())
    inits.push_back(
        isTile(carried.getType())
            ? arith::ConstantOp::create(rewriter, loc,
                                        rewriter.getZeroAttr(carried.getType()))
                  .getResult()
            : carried);
  rewriter.modifyOpInPlace(kLoop, [&] {
    kLoop.setLowerBound(start);
    kLoop.setUpperBound(end);
    kLoop.getInitArgsMutable().assign(inits);
  });
  rewriter.setInsertionPointToEnd(body);
  SmallVector<Value> totals;
  for (auto [total, sums] :
       llvm::zip_equal(runs.getRegionIterArgs(), kLoop.getResults()))
    totals.push_back(
        isTile(sums.getType())
            ? arith::AddFOp::create(rewriter, loc, total, sums).getResult()
            : sums);
  scf::YieldOp::create(rewriter, loc, totals);
}

/// How many of B's column panels fill a block of `budget` panel-steps of
/// K for the chunk of K (dimension `k`) that `product` takes first, at
/// least one: computed before `product`.
Value panelsForChunkOfK(RewriterBase &rewriter, Operation *product, unsigned k,
                        int64_t budget) {
  Location loc = product->getLoc();
  rewriter.setInsertionPoint(product);
  OpFoldResult chunk =
      cast<TilingInterface>(product).getIterationDomain(rewriter)[k].size;
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value steps = arith::MaxSIOp::create(
      rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, chunk),
      one);
  Value panels =
      arith::DivUIOp::create(rewriter, loc,
                             arith::ConstantIndexOp::create(
                                 rewriter, loc, std::max<int64_t>(1, budget)),
                             steps);
  return arith::MaxSIOp::create(rewriter, loc, panels, one);
}

struct VectorizePackedMatmulPass
    : public mlir::pk::impl::PkVectorizePackedMatmulBase<
          VectorizePackedMatmulPass> {
  using PkVectorizePackedMatmulBase::PkVectorizePackedMatmulBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> packed;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(mlir::pk::kPackedMatmulAttrName))
        packed.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : packed)
      if (failed(vectorize(rewriter, op)))
        return signalPassFailure();
    if (failed(
            mlir::pk::lowerPacks(rewriter, getOperation(), parallelThreshold)))
      return signalPassFailure();
  }

  /// The loops around a packed matmul's register tiles (outermost first),
  /// and the tile of its fused epilogue.
  struct TileLoops {
    Operation *outermost = nullptr;
    scf::ForOp kChunks; // null when K is one chunk
    Operation *columns = nullptr;
    Operation *kSteps = nullptr;
    linalg::GenericOp epilogue; // null when there is none
  };

  /// Whether the packed product `op` (of loop ranges `ranges`, whose row
  /// and column panels are loops `m` and `n`) has few row panels: one (a
  /// few rows of A, or of B^T for a few columns), or up to kMaxFewRowPanels
  /// and at least as many static column panels (kFewRowPanelsAttrName
  /// where M is dynamic: pk-pack-matmul then counts them). It then runs its
  /// column panels in parallel, each across all of K and every row panel,
  /// packing its panel of B first (fuseRhsPacking): each panel of B passes once
  /// from memory, and A's panels stay in cache.
  static bool hasFewRowPanels(linalg::GenericOp op, ArrayRef<int64_t> ranges,
                              unsigned m, unsigned n) {
    int64_t rows = ranges[m], columns = ranges[n];
    if (rows == 1 || op->hasAttr(mlir::pk::kFewRowPanelsAttrName))
      return true;
    return !ShapedType::isDynamic(rows) && rows <= mlir::pk::kMaxFewRowPanels &&
           !ShapedType::isDynamic(columns) && columns >= rows;
  }

  /// Packs the panel of B that `product` (tiled by `loops`, over B's column
  /// panels) reads inside the loops, where B is a pack: the panel is then
  /// in cache when the product reads it. B's elementwise producers (a
  /// cast) move in with it, computed on the panel alone.
  static LogicalResult
  fuseRhsPacking(RewriterBase &rewriter, Operation *product,
                 MutableArrayRef<LoopLikeOpInterface> loops) {
    auto slice = cast<linalg::LinalgOp>(product)
                     .getDpsInputs()[1]
                     .getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !slice.getSource().getDefiningOp<linalg::PackOp>())
      return success();
    Operation *fused = mlir::pk::fuseProducerIntoLoops(rewriter, slice, loops);
    if (!fused)
      return product->emitOpError("could not pack B's panels in its loop");
    for (;;) {
      auto source =
          fused->getOperand(0).getDefiningOp<tensor::ExtractSliceOp>();
      if (!source || !mlir::pk::elementwiseProducerAlone(source.getSource()) ||
          !(fused = mlir::pk::fuseProducerIntoLoops(rewriter, source, loops)))
        return success();
    }
  }

  /// Tiles `product` (and loops.epilogue, fusing the product into it,
  /// where there is one) by `sizes` of its loop dimensions into loops,
  /// parallel ones if `forall`; `product` (and the epilogue) then name the
  /// tiled ops. The first loops made are loops.outermost.
  static FailureOr<SmallVector<LoopLikeOpInterface>>
  tileProduct(RewriterBase &rewriter, TileLoops &loops, Operation *&product,
              ArrayRef<std::pair<unsigned, OpFoldResult>> sizes, bool forall) {
    auto type = forall ? scf::SCFTilingOptions::LoopType::ForallOp
                       : scf::SCFTilingOptions::LoopType::ForOp;
    FailureOr<SmallVector<LoopLikeOpInterface>> tiled;
    if (loops.epilogue) {
      tiled = mlir::pk::tileWithEpilogue(rewriter, loops.epilogue, product,
                                         sizes, type);
    } else {
      SmallVector<OpFoldResult> all(
          cast<linalg::LinalgOp>(product).getNumLoops(),
          rewriter.getIndexAttr(0));
      for (auto [dim, size] : sizes)
        all[dim] = size;
      FailureOr<scf::SCFTilingResult> result =
          mlir::pk::tileInto(rewriter, product, all, type);
      if (failed(result))
        return failure();
      product = result->tiledOps.front();
      tiled = result->loops;
    }
    if (succeeded(tiled) && !tiled->empty() && !loops.outermost)
      loops.outermost = tiled->front();
    return tiled;
  }

  /// Tiles `op` (and the elementwise consumer of its C, when K is one
  /// chunk) into the loops of TileLoops, down to one register tile.
  FailureOr<TileLoops> tile(RewriterBase &rewriter, linalg::GenericOp op,
                            const linalg::ContractionDimensions &dims) {
    unsigned numLoops = op.getNumLoops();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    // blockPackMatmul orders each pair outer dimension first.
    unsigned m = dims.m.front(), n = dims.n.front(), k = dims.k.front();
    // K in chunks whose row panel of A (mb x chunk) stays in L1 while it
    // passes every column panel of B; N in blocks whose chunk of B
    // (chunk x nc) stays in L2 while every row panel passes it.
    int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    int64_t mb = ranges[dims.m.back()], nb = ranges[dims.n.back()],
            kb = ranges[dims.k.back()];
    // Dynamic sizes take the longest chunks (the last one shorter). A
    // dynamic size is never 1 (that is static), nor smaller than a chunk in
    // the loop nest's result: `isLonger`.
    auto isLonger = [&](unsigned dim, int64_t chunk) {
      return ShapedType::isDynamic(ranges[dim]) || chunk < ranges[dim];
    };
    auto chunkOf = [&](unsigned dim, int64_t most) {
      most = std::max<int64_t>(1, most);
      return ShapedType::isDynamic(ranges[dim])
                 ? most
                 : mlir::pk::evenChunk(ranges[dim], most);
    };
    int64_t kChunk = chunkOf(k, kPanelBytes / (mb * kb * bytes));
    int64_t nBlock = chunkOf(n, bBlockBytes / (kChunk * kb * nb * bytes));
    // Batches in parallel, or else row panels (below). A packed product of
    // dynamic sizes has at least pk-pack-matmul's minimum of multiply-adds
    // (checked at run time), which is the parallel threshold's default.
    bool parallel = parallelThreshold > 0 &&
                    mlir::pk::iterationCount(op) >= parallelThreshold;
    bool parallelBatches = false;
    for (unsigned b : dims.batch)
      parallelBatches |= parallel && isLonger(b, 1);
    // A product of few row panels runs its column panels in parallel
    // instead (see hasFewRowPanels).
    bool parallelColumns = parallel && !parallelBatches &&
                           hasFewRowPanels(op, ranges, m, n) && isLonger(n, 1);

    // With C final after the register tile's K loop, an elementwise consumer
    // of C is tiled by the loops below instead, and the product fuses into
    // them: it then runs on each tile while the tile is in registers.
    TileLoops loops;
    if (kChunk == ranges[k])
      loops.epilogue = mlir::pk::expandEpilogue(rewriter, op);
    Operation *product = op;
    auto tileByFolds = [&](ArrayRef<std::pair<unsigned, OpFoldResult>> sizes,
                           bool forall) {
      return tileProduct(rewriter, loops, product, sizes, forall);
    };
    auto tileBy = [&](ArrayRef<std::pair<unsigned, int64_t>> sizes,
                      bool forall) {
      SmallVector<std::pair<unsigned, OpFoldResult>> folds;
      for (auto [dim, size] : sizes)
        folds.push_back({dim, rewriter.getIndexAttr(size)});
      return tileByFolds(folds, forall);
    };
    SmallVector<std::pair<unsigned, int64_t>> batches;
    for (unsigned b : dims.batch)
      batches.push_back({b, 1});
    if (!batches.empty() && failed(tileBy(batches, parallelBatches)))
      return failure();
    if (parallelColumns) {
      auto columnLoops = tileBy({{n, 1}}, true);
      if (failed(columnLoops) ||
          failed(fuseRhsPacking(rewriter, product, *columnLoops)))
        return failure();
    }
    if (isLonger(k, kChunk)) {
      FailureOr<SmallVector<LoopLikeOpInterface>> chunks =
          tileBy({{k, kChunk}}, false);
      if (failed(chunks) || chunks->size() != 1)
        return failure();
      loops.kChunks = cast<scf::ForOp>(chunks->front().getOperation());
    }
    // With K dynamic, the block holds as many panels as K's chunk (the
    // first, at run time) leaves room for: a short K, one block of all.
    if (!parallelColumns && ShapedType::isDynamic(ranges[k]) &&
        isLonger(n, 1)) {
      OpFoldResult block = panelsForChunkOfK(rewriter, product, k,
                                             bBlockBytes / (kb * nb * bytes));
      if (failed(tileByFolds({{n, block}}, false)))
        return failure();
    } else if (!parallelColumns && isLonger(n, nBlock) &&
               failed(tileBy({{n, nBlock}}, false))) {
      return failure();
    }
    // Row panels (in parallel), then column panels and K: one register
    // tile per iteration, C's rows written in order.
    if (failed(
            tileBy({{m, 1}}, parallel && !parallelBatches && !parallelColumns)))
      return failure();
    // K's steps tile the product alone (the epilogue has no K).
    if (!loops.epilogue) {
      FailureOr<SmallVector<LoopLikeOpInterface>> inner =
          tileBy({{n, 1}, {k, 1}}, false);
      if (failed(inner) || inner->size() != 2)
        return failure();
      loops.columns = inner->front();
      loops.kSteps = inner->back();
      return loops;
    }
    FailureOr<SmallVector<LoopLikeOpInterface>> columns =
        tileBy({{n, 1}}, false);
    if (failed(columns) || columns->size() != 1)
      return failure();
    loops.columns = columns->front();
    SmallVector<int64_t> steps(numLoops, 0);
    steps[k] = 1;
    FailureOr<scf::SCFTilingResult> kSteps = mlir::pk::tileInto(
        rewriter, product, steps, scf::SCFTilingOptions::LoopType::ForOp);
    if (failed(kSteps) || kSteps->loops.size() != 1)
      return failure();
    loops.kSteps = kSteps->loops.front();
    return loops;
  }

  /// Loops over the outer (panel) dimensions around one register tile,
  /// whose contraction becomes FMAs on a C tile kept in registers.
  LogicalResult vectorize(RewriterBase &rewriter, linalg::GenericOp op) {
    Location loc = op.getLoc();
    auto fail = [&](const Twine &what) {
      return emitError(loc, "packed matmul ") << what;
    };
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.size() != 2 || dims->n.size() != 2 ||
        dims->k.size() != 2)
      return op.emitOpError("is not a packed matmul");
    // A zero-filled C is not filled: the first chunk of K does not read
    // it (one pass over C fewer); see sumChunksFromZero.
    bool zeroInit = dropZeroFill(rewriter, op);
    // The steps of K that one iteration of the register tile's loop takes.
    int64_t kBlock = op.getStaticLoopRanges()[dims->k.back()];
    FailureOr<TileLoops> loops = tile(rewriter, op, *dims);
    if (failed(loops))
      return fail("could not be tiled into register tiles");

    // The tile's contraction without its unit dimensions, vectorized.
    if (failed(mlir::pk::vectorizeTileIn(rewriter, loops->kSteps)))
      return fail("could not be vectorized");
    // The C tile read before the K loop and written after it.
    auto kSteps = cast<LoopLikeOpInterface>(loops->kSteps);
    moveLoopInvariantCode(kSteps);
    kSteps = hoistLoopInvariantSubsets(rewriter, kSteps);
    if (failed(sumChunksFromZero(rewriter, cast<scf::ForOp>(*kSteps),
                                 loops->kChunks, zeroInit)))
      return fail("could not start its tiles from zero");
    if (sumRun > 0)
      sumInRuns(rewriter, cast<scf::ForOp>(*kSteps),
                std::max<int64_t>(1, sumRun / kBlock));
    // The epilogue on the C tile, as vector arithmetic.
    if (loops->epilogue &&
        failed(mlir::pk::vectorizeTileIn(rewriter, loops->columns)))
      return fail("could not vectorize its epilogue");

    // Broadcasts of A's elements times rows of B, accumulated; the
    // epilogue reads the tile the contraction wrote (in registers).
    MLIRContext *context = &getContext();
    RewritePatternSet contracts(context);
    vector::populateVectorReductionToContractPatterns(contracts);
    vector::populateVectorTransferPermutationMapLoweringPatterns(contracts);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(contracts);
    vector::populateCastAwayVectorLeadingOneDimPatterns(contracts);
    vector::TransferReadOp::getCanonicalizationPatterns(contracts, context);
    vector::TransferWriteOp::getCanonicalizationPatterns(contracts, context);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(contracts, context);
    Operation *outermost = loops->outermost;
    if (failed(applyPatternsGreedily(outermost, std::move(contracts))))
      return fail("could not form the register tile's contraction");
    RewritePatternSet products(context);
    vector::populateVectorContractLoweringPatterns(
        products, vector::VectorContractLowering::OuterProduct);
    if (failed(applyPatternsGreedily(outermost, std::move(products))))
      return fail("could not lower the contraction to FMAs");
    if (loops->epilogue && failed(mlir::pk::unrollToRows(outermost)))
      return fail("could not unroll its epilogue");
    // C, or the epilogue's result, in the caller's buffer.
    for (Operation *user : llvm::make_early_inc_range(outermost->getUsers()))
      if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(user))
        mlir::pk::storeWithoutCollapse(rewriter, reshape);
    return success();
  }
};

} // namespace
