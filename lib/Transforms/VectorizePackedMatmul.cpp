//===- VectorizePackedMatmul.cpp - register tiles of vector FMAs ----------===//

#include "picokernel/Transforms/Passes.h"

#include "IterationCount.h"
#include "Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
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
/// from zero, see startFromZero).
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
/// before it) from zero in the first chunk of K (`kChunks`' first
/// iteration; every iteration without chunks) instead of reading C.
LogicalResult startFromZero(RewriterBase &rewriter, scf::ForOp kLoop,
                            scf::ForOp kChunks) {
  bool found = false;
  for (OpOperand &init : kLoop.getInitArgsMutable()) {
    auto read = init.get().getDefiningOp<vector::TransferReadOp>();
    if (!read || !read->hasOneUse())
      continue;
    found = true;
    Location loc = read.getLoc();
    auto type = cast<VectorType>(read.getType());
    rewriter.setInsertionPoint(read);
    Value zeros =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(type));
    if (!kChunks) {
      rewriter.modifyOpInPlace(kLoop, [&] { init.assign(zeros); });
      rewriter.eraseOp(read);
      continue;
    }
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        kChunks.getInductionVar(),
                                        kChunks.getLowerBound());
    auto choice = scf::IfOp::create(rewriter, loc, TypeRange{type}, first,
                                    /*addThenBlock=*/true,
                                    /*addElseBlock=*/true);
    rewriter.moveOpBefore(zeros.getDefiningOp(), choice.thenBlock(),
                          choice.thenBlock()->end());
    rewriter.setInsertionPointToEnd(choice.thenBlock());
    scf::YieldOp::create(rewriter, loc, zeros);
    rewriter.moveOpBefore(read, choice.elseBlock(), choice.elseBlock()->end());
    rewriter.setInsertionPointToEnd(choice.elseBlock());
    scf::YieldOp::create(rewriter, loc, read.getResult());
    rewriter.modifyOpInPlace(kLoop, [&] { init.assign(choice.getResult(0)); });
  }
  return success(found);
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
    SmallVector<Operation *> rowPanels;
    getOperation().walk([&](Operation *op) {
      if (op->removeAttr(kRowPanelsAttrName))
        rowPanels.push_back(op);
    });
    for (Operation *rows : rowPanels)
      fuseEpilogue(rewriter, rows);
  }

  /// Marks the row-panel loop of a matmul whose tiles are final there (K in
  /// one chunk), where its elementwise consumer may fuse.
  static constexpr StringLiteral kRowPanelsAttrName = "pk.row_panels";

  /// Fuses the elementwise consumer of a packed matmul's result (bias,
  /// activation, cast) into its row panels, so that it runs on each panel
  /// of C while the panel is in L1 rather than as a pass over all of C.
  void fuseEpilogue(RewriterBase &rewriter, Operation *rows) {
    SmallVector<LoopLikeOpInterface> nest;
    for (Operation *loop = rows; loop; loop = loop->getParentOp()) {
      if (auto like = dyn_cast<LoopLikeOpInterface>(loop))
        nest.insert(nest.begin(), like);
      if (isa<FunctionOpInterface>(loop->getParentOp()))
        break;
    }
    // Upstream's consumer fusion handles one loop (of either kind); it
    // fails or crashes (MLIR 22) on nests such as batches around row panels.
    if (nest.size() != 1)
      return;
    Operation *outermost = nest.front();
    if (outermost->getNumResults() != 1 || !outermost->getResult(0).hasOneUse())
      return;
    auto collapse =
        dyn_cast<tensor::CollapseShapeOp>(*outermost->getUsers().begin());
    if (!collapse || !collapse->hasOneUse())
      return;
    auto consumer = dyn_cast<linalg::GenericOp>(*collapse->getUsers().begin());
    if (!consumer || !linalg::isElementwise(consumer) ||
        consumer.getNumDpsInits() != 1)
      return;
    // The consumer over the packed layout of C, then fused.
    linalg::ControlFusionFn intoConsumer = [&](OpOperand *operand) {
      return operand->getOwner() == consumer.getOperation() &&
             operand->get() == collapse.getResult();
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, intoConsumer);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily({consumer.getOperation()},
                                       std::move(patterns), config)))
      return;
    // The old reshape, dead now (found again: the driver may have erased
    // it).
    for (Operation *user : llvm::make_early_inc_range(outermost->getUsers()))
      if (isa<tensor::CollapseShapeOp>(user) && user->use_empty())
        rewriter.eraseOp(user);
    if (!outermost->getResult(0).hasOneUse())
      return;
    auto expanded = dyn_cast<linalg::GenericOp>(*outermost->getUsers().begin());
    if (!expanded)
      return;
    // A reshaped empty output is an empty tensor of the packed shape, which
    // bufferization then places in the caller's buffer.
    for (OpOperand &init : expanded.getDpsInitsMutable()) {
      auto reshape = init.get().getDefiningOp<tensor::ExpandShapeOp>();
      auto type = cast<RankedTensorType>(init.get().getType());
      if (!reshape || !reshape.getSrc().getDefiningOp<tensor::EmptyOp>() ||
          !type.hasStaticShape())
        continue;
      rewriter.setInsertionPoint(outermost);
      Value empty = tensor::EmptyOp::create(
          rewriter, reshape.getLoc(), type.getShape(), type.getElementType());
      rewriter.modifyOpInPlace(expanded, [&] { init.set(empty); });
    }
    // The consumer's other operands (the reshapes the expansion made) must
    // be available inside the loops.
    DominanceInfo dominance(getOperation());
    for (Value operand : expanded->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def == outermost ||
          dominance.properlyDominates(def, outermost))
        continue;
      if (def->getBlock() != outermost->getBlock() ||
          !llvm::all_of(def->getOperands(), [&](Value value) {
            return dominance.properlyDominates(value, outermost);
          }))
        return;
      def->moveBefore(outermost);
    }
    // The result (of the fused loop, or else of the expanded consumer), in
    // the caller's buffer.
    Operation *result = expanded;
    FailureOr<scf::SCFFuseConsumerOfSliceResult> fused =
        scf::tileAndFuseConsumer(rewriter, expanded, nest);
    if (succeeded(fused) && !fused->tiledOps.empty()) {
      result = fused->tiledOps.front();
      while (!isa<FunctionOpInterface>(result->getParentOp()))
        result = result->getParentOp();
    }
    for (Operation *user : llvm::make_early_inc_range(result->getUsers()))
      if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(user))
        mlir::pk::storeWithoutCollapse(rewriter, reshape);
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

    // A zero-filled C is not filled: the first chunk of K starts its tiles
    // from zero instead of reading them (one pass over C fewer).
    bool zeroInit = dropZeroFill(rewriter, op);

    // Batches in parallel, or else row panels (below).
    bool parallel = parallelThreshold > 0 &&
                    mlir::pk::iterationCount(op) >= parallelThreshold;
    bool parallelBatches = false;
    for (unsigned b : dims->batch)
      parallelBatches |= parallel && ranges[b] > 1;
    Operation *outermost = nullptr;
    Operation *current = op;
    auto tileBy = [&](ArrayRef<std::pair<unsigned, int64_t>> sizes,
                      bool forall) -> FailureOr<scf::SCFTilingResult> {
      SmallVector<int64_t> all(numLoops, 0);
      for (auto [dim, size] : sizes)
        all[dim] = size;
      FailureOr<scf::SCFTilingResult> tiled =
          mlir::pk::tileInto(rewriter, current, all,
                             forall ? scf::SCFTilingOptions::LoopType::ForallOp
                                    : scf::SCFTilingOptions::LoopType::ForOp);
      if (succeeded(tiled)) {
        current = tiled->tiledOps.front();
        if (!outermost && !tiled->loops.empty())
          outermost = tiled->loops.front();
      }
      return tiled;
    };
    if (!dims->batch.empty()) {
      SmallVector<std::pair<unsigned, int64_t>> batches;
      for (unsigned b : dims->batch)
        batches.push_back({b, 1});
      if (failed(tileBy(batches, parallelBatches)))
        return fail("could not be tiled into batches");
    }

    // K in chunks whose row panel of A (mb x chunk) stays in L1 while it
    // passes every column panel of B; N in blocks whose chunk of B
    // (chunk x nc) stays in L2 while every row panel passes it.
    int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    int64_t mb = ranges[dims->m.back()], nb = ranges[dims->n.back()],
            kb = ranges[dims->k.back()];
    int64_t kChunk = mlir::pk::evenChunk(
        ranges[k], std::max<int64_t>(1, kPanelBytes / (mb * kb * bytes)));
    scf::ForOp kChunks;
    if (kChunk < ranges[k]) {
      FailureOr<scf::SCFTilingResult> tiled = tileBy({{k, kChunk}}, false);
      if (failed(tiled) || tiled->loops.size() != 1)
        return fail("could not be tiled into chunks of K");
      kChunks = cast<scf::ForOp>(tiled->loops.front());
    }
    int64_t nBlock = mlir::pk::evenChunk(
        ranges[n],
        std::max<int64_t>(
            1, bBlockBytes / (std::min(kChunk, ranges[k]) * kb * nb * bytes)));
    if (nBlock < ranges[n] && failed(tileBy({{n, nBlock}}, false)))
      return fail("could not be tiled into blocks of N");

    // Row panels (in parallel), then column panels and K: one register
    // tile per iteration, C's rows written in order.
    FailureOr<scf::SCFTilingResult> rows =
        tileBy({{m, 1}}, parallel && !parallelBatches);
    if (failed(rows))
      return fail("could not be tiled into row panels");
    if (!kChunks && rows->loops.size() == 1)
      rows->loops.front()->setAttr(kRowPanelsAttrName, rewriter.getUnitAttr());
    FailureOr<scf::SCFTilingResult> inner = tileBy({{n, 1}, {k, 1}}, false);
    if (failed(inner) || inner->loops.size() != 2)
      return fail("could not be tiled into register tiles");
    Operation *kLoop = inner->loops.back();

    // The tile's contraction without its unit dimensions, vectorized.
    if (failed(mlir::pk::vectorizeTileIn(rewriter, kLoop)))
      return fail("could not be vectorized");

    // The C tile read before the K loop and written after it.
    auto loop = cast<LoopLikeOpInterface>(kLoop);
    moveLoopInvariantCode(loop);
    loop = hoistLoopInvariantSubsets(rewriter, loop);
    if (zeroInit &&
        failed(startFromZero(rewriter, cast<scf::ForOp>(*loop), kChunks)))
      return fail("could not start its tiles from zero");

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

  /// Fuses the single-use elementwise producers of the packs' reshapes and
  /// transposes (`packing`) into them.
  LogicalResult
  fuseProducersIntoPacking(llvm::SmallPtrSetImpl<Operation *> &packing) {
    auto producedAlone = [](OpOperand *operand) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      return producer && producer->hasOneUse() &&
             linalg::isElementwise(producer);
    };
    linalg::ControlFusionFn intoPacking = [&](OpOperand *operand) {
      return packing.contains(operand->getOwner()) && producedAlone(operand);
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, intoPacking);
    linalg::populateElementwiseOpsFusionPatterns(patterns, intoPacking);
    // Fused ops replace the packing ops: they are packing ops too.
    GreedyRewriteConfig config;
    struct Listener : public RewriterBase::Listener {
      llvm::SmallPtrSetImpl<Operation *> &packing;
      explicit Listener(llvm::SmallPtrSetImpl<Operation *> &packing)
          : packing(packing) {}
      void notifyOperationReplaced(Operation *op,
                                   ValueRange replacement) override {
        if (packing.erase(op))
          for (Value value : replacement)
            if (Operation *def = value.getDefiningOp())
              packing.insert(def);
      }
      void notifyOperationErased(Operation *op) override { packing.erase(op); }
    } listener(packing);
    config.setListener(&listener);
    return applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }

  /// The packs as loops moving a tile per step (packWithVectors), or as
  /// upstream's reshapes and transposes where an elementwise producer fuses
  /// into them; the unpacks as slices. All of them bufferize.
  LogicalResult lowerPacks(RewriterBase &rewriter) {
    SmallVector<linalg::PackOp> packs;
    SmallVector<linalg::UnPackOp> unpacks;
    getOperation().walk([&](Operation *op) {
      if (auto pack = dyn_cast<linalg::PackOp>(op))
        packs.push_back(pack);
      else if (auto unpack = dyn_cast<linalg::UnPackOp>(op))
        unpacks.push_back(unpack);
    });
    // Each pack's transpose, as a generic that the pack's elementwise
    // producer (a cast, a scale) fuses into: no full-size temporary.
    llvm::SmallPtrSet<Operation *, 4> packing;
    for (linalg::PackOp pack : packs) {
      rewriter.setInsertionPoint(pack);
      auto producer = pack.getSource().getDefiningOp<linalg::GenericOp>();
      bool fusible = producer && producer->hasOneUse() &&
                     linalg::isElementwise(producer) && !pack.getPaddingValue();
      // Tile by tile, in one pass (in parallel when large), unless an
      // elementwise producer fuses into the lowered pack's transpose.
      bool parallel = parallelThreshold > 0 &&
                      pack.getDestType().getNumElements() >= parallelThreshold;
      if (!fusible &&
          succeeded(mlir::pk::packWithVectors(rewriter, pack, parallel)))
        continue;
      FailureOr<linalg::LowerPackResult> lowered =
          linalg::lowerPack(rewriter, pack);
      if (failed(lowered))
        return pack.emitOpError("could not be lowered");
      if (!fusible)
        continue;
      if (lowered->expandShapeOp)
        packing.insert(lowered->expandShapeOp);
      rewriter.setInsertionPoint(lowered->transposeOp);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, lowered->transposeOp);
      if (succeeded(generic))
        packing.insert(*generic);
    }
    if (!packing.empty() && failed(fuseProducersIntoPacking(packing)))
      return failure();
    for (linalg::UnPackOp unpack : unpacks) {
      rewriter.setInsertionPoint(unpack);
      if (failed(linalg::lowerUnPack(rewriter, unpack)))
        return unpack.emitOpError("could not be lowered");
    }
    return success();
  }
};

} // namespace
