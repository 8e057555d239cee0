//===- VectorizePackedMatmul.cpp - register tiles of vector FMAs ----------===//

#include "picokernel/Transforms/Passes.h"

#include "IterationCount.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKVECTORIZEPACKEDMATMUL
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Tiles `op` by `sizes` into loops of `type`, replacing it; the tiled op
/// and the loops (outermost first).
FailureOr<scf::SCFTilingResult> tile(RewriterBase &rewriter, Operation *op,
                                     ArrayRef<int64_t> sizes,
                                     scf::SCFTilingOptions::LoopType type) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), sizes));
  options.setLoopType(type);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

/// The first linalg.generic in `loop`'s body.
linalg::GenericOp findGeneric(Operation *loop) {
  linalg::GenericOp found;
  loop->walk([&](linalg::GenericOp op) {
    found = op;
    return WalkResult::interrupt();
  });
  return found;
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
    if (failed(lowerPacks(rewriter)))
      return signalPassFailure();
  }

  /// Loops over the outer (panel) dimensions around one register tile,
  /// whose contraction becomes FMAs on a C tile kept in registers.
  LogicalResult vectorize(RewriterBase &rewriter, linalg::GenericOp op) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.size() != 2 || dims->n.size() != 2 ||
        dims->k.size() != 2)
      return op.emitOpError("is not a packed matmul");
    // What is needed of `op` after tiling replaces it.
    unsigned numLoops = op.getNumLoops();
    Location loc = op.getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
    auto fail = [&](const Twine &what) {
      return emitError(loc, "packed matmul ") << what;
    };
    // blockPackMatmul orders each pair outer dimension first.
    unsigned m = dims->m.front(), n = dims->n.front(), k = dims->k.front();

    // Column panels (and batches) in parallel: each thread streams the
    // packed A past its own panel of B.
    bool parallel = parallelThreshold > 0 &&
                    mlir::pk::iterationCount(op) >= parallelThreshold;
    SmallVector<int64_t> panels(numLoops, 0);
    panels[n] = 1;
    for (unsigned b : dims->batch)
      panels[b] = 1;
    FailureOr<scf::SCFTilingResult> outer =
        tile(rewriter, op, panels,
             parallel ? scf::SCFTilingOptions::LoopType::ForallOp
                      : scf::SCFTilingOptions::LoopType::ForOp);
    if (failed(outer) || outer->loops.empty())
      return fail("could not be tiled into column panels");
    Operation *outermost = outer->loops.front();

    // K in chunks whose part of the B panel stays in L1 while every row
    // panel of A passes it.
    Operation *panel = outer->tiledOps.front();
    int64_t chunkBytes =
        ranges[dims->n.back()] * ranges[dims->k.back()] *
        std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    int64_t chunk = std::max<int64_t>(1, kPanelBytes / chunkBytes);
    if (chunk < ranges[k]) {
      SmallVector<int64_t> chunks(numLoops, 0);
      chunks[k] = chunk;
      FailureOr<scf::SCFTilingResult> inChunks =
          tile(rewriter, panel, chunks, scf::SCFTilingOptions::LoopType::ForOp);
      if (failed(inChunks))
        return fail("could not be tiled into chunks of K");
      panel = inChunks->tiledOps.front();
    }

    // Row panels, then K: one register tile per iteration.
    SmallVector<int64_t> steps(numLoops, 0);
    steps[m] = 1;
    steps[k] = 1;
    FailureOr<scf::SCFTilingResult> inner =
        tile(rewriter, panel, steps, scf::SCFTilingOptions::LoopType::ForOp);
    if (failed(inner) || inner->loops.size() != 2)
      return fail("could not be tiled into register tiles");
    Operation *kLoop = inner->loops.back();

    // The tile's contraction without its unit dimensions, vectorized.
    RewritePatternSet unitDims(&getContext());
    linalg::ControlDropUnitDims dropUnitDims;
    dropUnitDims.rankReductionStrategy =
        linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
    linalg::populateFoldUnitExtentDimsPatterns(unitDims, dropUnitDims);
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(unitDims);
    if (failed(applyPatternsGreedily(kLoop, std::move(unitDims))))
      return fail("could not drop the register tile's unit dims");
    linalg::GenericOp tileOp = findGeneric(kLoop);
    if (!tileOp)
      return fail("lost its register tile");
    rewriter.setInsertionPoint(tileOp);
    FailureOr<linalg::VectorizationResult> vectors =
        linalg::vectorize(rewriter, tileOp);
    if (failed(vectors))
      return fail("could not be vectorized");
    rewriter.replaceOp(tileOp, vectors->replacements);

    // The C tile read before the K loop and written after it.
    auto loop = cast<LoopLikeOpInterface>(kLoop);
    moveLoopInvariantCode(loop);
    hoistLoopInvariantSubsets(rewriter, loop);

    // Broadcasts of A's elements times rows of B, accumulated.
    RewritePatternSet contracts(&getContext());
    vector::populateVectorReductionToContractPatterns(contracts);
    vector::populateVectorTransferPermutationMapLoweringPatterns(contracts);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(contracts);
    vector::populateCastAwayVectorLeadingOneDimPatterns(contracts);
    if (failed(applyPatternsGreedily(outermost, std::move(contracts))))
      return fail("could not form the register tile's contraction");
    RewritePatternSet products(&getContext());
    vector::populateVectorContractLoweringPatterns(
        products, vector::VectorContractLowering::OuterProduct);
    if (failed(applyPatternsGreedily(outermost, std::move(products))))
      return fail("could not lower the contraction to FMAs");
    return success();
  }

  /// The packs and unpacks as pads, transposes and slices (which
  /// bufferize).
  LogicalResult lowerPacks(RewriterBase &rewriter) {
    SmallVector<linalg::PackOp> packs;
    SmallVector<linalg::UnPackOp> unpacks;
    getOperation().walk([&](Operation *op) {
      if (auto pack = dyn_cast<linalg::PackOp>(op))
        packs.push_back(pack);
      else if (auto unpack = dyn_cast<linalg::UnPackOp>(op))
        unpacks.push_back(unpack);
    });
    for (linalg::PackOp pack : packs) {
      rewriter.setInsertionPoint(pack);
      if (failed(linalg::lowerPack(rewriter, pack)))
        return pack.emitOpError("could not be lowered");
    }
    for (linalg::UnPackOp unpack : unpacks) {
      rewriter.setInsertionPoint(unpack);
      if (failed(linalg::lowerUnPack(rewriter, unpack)))
        return unpack.emitOpError("could not be lowered");
    }
    return success();
  }
};

} // namespace
