//===- FuseRows.cpp - reductions and their users computed row by row ------===//
//
// softmax is max -> exp -> sum -> divide over each row. Fused elementwise
// only, each step is its own pass over the whole array and `exp`'s result
// a full-size temporary: at 8M elements that is 32 MB of extra memory
// traffic (and, fresh from the system, a page fault per 4 KiB). Tiled over
// rows with every step fused into the tile, a row's steps run while it is
// in cache and the temporaries are one tile big.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "RowFusion.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKFUSEROWS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using mlir::pk::fuseProducersInto;
using mlir::pk::isTopLevelTensorOp;
using mlir::pk::writeIntoRootTile;

namespace {

using LoopType = scf::SCFTilingOptions::LoopType;

/// Whether `op` reads the result of a reduction of the function's body,
/// directly or through other ops: the pattern of softmax, norms and
/// logsumexp (a plain reduction of elementwise work is one fused loop nest
/// already).
bool readsReduction(linalg::GenericOp op, func::FuncOp func) {
  SmallVector<Operation *> worklist{op};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!worklist.empty()) {
    Operation *consumer = worklist.pop_back_val();
    if (!seen.insert(consumer).second)
      continue;
    for (Value input : cast<linalg::LinalgOp>(consumer).getDpsInputs()) {
      Operation *producer = input.getDefiningOp();
      if (!isTopLevelTensorOp(producer, func))
        continue;
      if (cast<linalg::LinalgOp>(producer).getNumReductionLoops() > 0)
        return true;
      worklist.push_back(producer);
    }
  }
  return false;
}

/// The parallel loops of `root` that a tile may cut: those that index every
/// operand computed by another op of the function (so that each producer
/// is needed in slices, not whole). Null if the operands' maps are not
/// projected permutations.
FailureOr<llvm::SmallBitVector> getRowLoops(linalg::GenericOp root,
                                            func::FuncOp func) {
  llvm::SmallBitVector rows(root.getNumLoops());
  for (auto [index, iterator] : llvm::enumerate(root.getIteratorTypesArray()))
    rows[index] = iterator == utils::IteratorType::parallel;
  for (OpOperand &operand : root->getOpOperands()) {
    AffineMap map = root.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return failure();
    if (!isTopLevelTensorOp(operand.get().getDefiningOp(), func))
      continue;
    llvm::SmallBitVector used(root.getNumLoops());
    for (AffineExpr result : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(result))
        used.set(dim.getPosition());
    rows &= used;
  }
  return rows;
}

/// `root` and the ops of the function that compute its operands, directly
/// or not: what a tile of all of `root`'s row loops stands for.
SmallVector<linalg::LinalgOp> getRowGroup(linalg::GenericOp root,
                                          func::FuncOp func) {
  SmallVector<linalg::LinalgOp> group;
  SmallVector<Operation *> worklist{root};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!worklist.empty()) {
    auto op = cast<linalg::LinalgOp>(worklist.pop_back_val());
    if (!seen.insert(op).second)
      continue;
    group.push_back(op);
    for (Value operand : op->getOperands())
      if (isTopLevelTensorOp(operand.getDefiningOp(), func))
        worklist.push_back(operand.getDefiningOp());
  }
  return group;
}

/// The most iterations of an op of `root`'s row group: the work a tile of
/// all of its row loops stands for.
int64_t getGroupIterations(linalg::GenericOp root, func::FuncOp func) {
  int64_t most = 0;
  for (linalg::LinalgOp op : getRowGroup(root, func)) {
    // (A dynamic range counts as the most there can be.)
    int64_t iterations = 1;
    for (int64_t range : op.getStaticLoopRanges())
      iterations = ShapedType::isDynamic(range) ||
                           iterations > INT64_MAX / std::max<int64_t>(range, 1)
                       ? INT64_MAX
                       : iterations * range;
    most = std::max(most, iterations);
  }
  return most;
}

/// getGroupIterations computed when the kernel runs (for dynamic sizes),
/// built before `root`.
Value buildGroupIterations(OpBuilder &b, linalg::GenericOp root,
                           func::FuncOp func) {
  Location loc = root.getLoc();
  Value most;
  for (linalg::LinalgOp op : getRowGroup(root, func)) {
    Value iterations = arith::ConstantIndexOp::create(b, loc, 1);
    for (Range range : op.createLoopRanges(b, loc))
      iterations = arith::MulIOp::create(
          b, loc, iterations,
          getValueOrCreateConstantIndexOp(b, loc, range.size));
    most = most ? arith::MaxUIOp::create(b, loc, most, iterations).getResult()
                : iterations;
  }
  return most;
}

/// The largest divisor of `range` that is at most `most` (at least 1).
int64_t largestDivisorAtMost(int64_t range, int64_t most) {
  for (int64_t size = std::min(range, std::max<int64_t>(most, 1)); size > 1;
       --size)
    if (range % size == 0)
      return size;
  return 1;
}

/// Tile sizes for `root`'s row loops where some loops are dynamic (0
/// elsewhere): about `tileElements` iterations of `root` per tile, the last
/// tile partial. Static rows long enough for pk-split-reductions get none
/// (empty): it then has them. Rows of a dynamic length get a count of rows
/// per tile computed at run time (at least 1; pk-split-reductions blocks
/// each long row of a tile), in the innermost row loop.
SmallVector<OpFoldResult>
getDynamicTileSizes(OpBuilder &b, linalg::GenericOp root,
                    const llvm::SmallBitVector &rowLoops,
                    int64_t tileElements) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  SmallVector<OpFoldResult> sizes(ranges.size(), b.getIndexAttr(0));
  bool dynamicRowLength = llvm::any_of(llvm::enumerate(ranges), [&](auto loop) {
    return !rowLoops[loop.index()] && ShapedType::isDynamic(loop.value());
  });
  if (dynamicRowLength) {
    Location loc = root.getLoc();
    Value perRow = arith::ConstantIndexOp::create(b, loc, 1);
    for (auto [index, range] :
         llvm::enumerate(cast<linalg::LinalgOp>(root.getOperation())
                             .createLoopRanges(b, loc)))
      if (!rowLoops[index])
        perRow = arith::MulIOp::create(
            b, loc, perRow,
            getValueOrCreateConstantIndexOp(b, loc, range.size));
    // Rows of 0 elements (an AOT caller's size) count as 1.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    perRow = arith::MaxUIOp::create(b, loc, perRow, one);
    Value rows = arith::DivUIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, tileElements), perRow);
    int innermost = rowLoops.find_last();
    sizes[innermost] = arith::MaxUIOp::create(b, loc, rows, one).getResult();
    for (int index : rowLoops.set_bits())
      if (index != innermost)
        sizes[index] = b.getIndexAttr(1);
    return sizes;
  }
  int64_t perRow = 1;
  for (auto [index, range] : llvm::enumerate(ranges)) {
    if (rowLoops[index])
      continue;
    if (perRow >
        2 * ::pk::defaults::kReductionBlock / std::max<int64_t>(range, 1))
      return {};
    perRow *= range;
  }
  if (perRow >= 2 * ::pk::defaults::kReductionBlock)
    return {};
  int64_t rowsPerTile = std::max<int64_t>(tileElements / perRow, 1);
  for (int index = ranges.size() - 1; index >= 0; --index) {
    if (!rowLoops[index])
      continue;
    if (ShapedType::isDynamic(ranges[index])) {
      sizes[index] = b.getIndexAttr(rowsPerTile);
      rowsPerTile = 1;
    } else {
      int64_t size = largestDivisorAtMost(ranges[index], rowsPerTile);
      sizes[index] = b.getIndexAttr(size);
      rowsPerTile = std::max<int64_t>(rowsPerTile / size, 1);
    }
  }
  return sizes;
}

/// Tile sizes for `root`'s row loops (0 elsewhere): about `tileElements`
/// iterations of the group per tile, cut innermost row loop first, in
/// sizes that divide the loops (no partial tiles), leaving at least
/// `minTiles` tiles where there are that many rows. None (empty) for fewer
/// rows than that, each of two reduction blocks or more: pk-split-reductions
/// spreads such rows' blocks over every core instead.
SmallVector<OpFoldResult> getTileSizes(OpBuilder &b, linalg::GenericOp root,
                                       const llvm::SmallBitVector &rowLoops,
                                       int64_t groupIterations,
                                       int64_t tileElements, int64_t minTiles) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return getDynamicTileSizes(b, root, rowLoops, tileElements);
  int64_t rows = 1;
  for (int index : rowLoops.set_bits())
    rows *= ranges[index];
  int64_t perRow =
      std::max<int64_t>(groupIterations / std::max<int64_t>(rows, 1), 1);
  if (rows < minTiles && perRow >= 2 * ::pk::defaults::kReductionBlock)
    return {};
  int64_t rowsPerTile = std::max<int64_t>(tileElements / perRow, 1);
  rowsPerTile = std::min(rowsPerTile, std::max<int64_t>(rows / minTiles, 1));
  SmallVector<int64_t> sizes(ranges.size(), 0);
  for (int index = ranges.size() - 1; index >= 0; --index) {
    if (!rowLoops[index])
      continue;
    sizes[index] = largestDivisorAtMost(ranges[index], rowsPerTile);
    rowsPerTile = std::max<int64_t>(rowsPerTile / sizes[index], 1);
  }
  return getAsIndexOpFoldResult(b.getContext(), sizes);
}

struct FuseRowsPass : public mlir::pk::impl::PkFuseRowsBase<FuseRowsPass> {
  using PkFuseRowsBase::PkFuseRowsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto readsAnyReduction = [&] {
      for (Operation &op : func.getBody().getOps())
        if (auto generic = dyn_cast<linalg::GenericOp>(op))
          if (isTopLevelTensorOp(generic, func) &&
              readsReduction(generic, func))
            return true;
      return false;
    };
    if (tileElements < 1 || minTiles < 1) {
      func.emitError("pk-fuse-rows: tile-elements and min-tiles must be "
                     "positive");
      return signalPassFailure();
    }
    if (!readsAnyReduction())
      return;
    // Keepdims reductions read and write through unit dimensions
    // (reshapes fusion cannot see through): drop them first, from the
    // function's own linalg ops only (a matmul's tiles keep theirs).
    {
      SmallVector<Operation *> ops;
      for (Operation &op : func.getBody().front())
        if (isTopLevelTensorOp(&op, func) ||
            isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                tensor::EmptyOp>(op))
          ops.push_back(&op);
      RewritePatternSet patterns(&getContext());
      linalg::ControlDropUnitDims control;
      linalg::populateFoldUnitExtentDimsPatterns(patterns, control);
      tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
      tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                           &getContext());
      linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
      tensor::populateFoldTensorEmptyPatterns(patterns);
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      // A bound, should the patterns ever undo each other.
      config.setMaxNumRewrites(64 * static_cast<int64_t>(ops.size()) + 64);
      (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
    }
    IRRewriter rewriter(&getContext());
    // Consumers last to first: a root takes in the producers it reads.
    SmallVector<linalg::GenericOp> roots;
    for (Operation &op : llvm::reverse(func.getBody().front()))
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        if (isTopLevelTensorOp(generic, func))
          roots.push_back(generic);
    llvm::SmallPtrSet<Operation *, 16> fusedAway;
    for (linalg::GenericOp root : roots) {
      if (fusedAway.contains(root) || !root->getBlock())
        continue;
      if (failed(fuseIntoRows(rewriter, root, fusedAway)))
        return signalPassFailure();
    }
    // Slices of whole-size empty tensors as tile-size ones, and the
    // producers fused twice (into two consumers) computed once.
    RewritePatternSet patterns(&getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns));
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
  }

  /// Tiles `root` over its row loops with the producers it reads fused in,
  /// if a reduction is among them; leaves it alone otherwise. Where the
  /// work is known only at run time, an `scf.if` on it chooses between
  /// parallel and serial tiles (a fork costs microseconds, more than a
  /// small softmax).
  LogicalResult fuseIntoRows(RewriterBase &rewriter, linalg::GenericOp root,
                             llvm::SmallPtrSetImpl<Operation *> &fusedAway) {
    func::FuncOp func = getOperation();
    if (!readsReduction(root, func))
      return success();
    FailureOr<llvm::SmallBitVector> rowLoops = getRowLoops(root, func);
    if (failed(rowLoops) || rowLoops->none())
      return success();
    int64_t iterations = getGroupIterations(root, func);
    rewriter.setInsertionPoint(root);
    SmallVector<OpFoldResult> sizes = getTileSizes(
        rewriter, root, *rowLoops, iterations, tileElements, minTiles);
    if (sizes.empty())
      return success();
    bool dynamic =
        llvm::any_of(root.getStaticLoopRanges(), ShapedType::isDynamic);
    llvm::SetVector<Operation *> producers;
    if (!dynamic || parallelThreshold <= 0) {
      bool parallel = parallelThreshold > 0 && iterations >= parallelThreshold;
      FailureOr<SmallVector<Value>> tiles =
          tileRows(rewriter, root, sizes,
                   parallel ? LoopType::ForallOp : LoopType::ForOp, producers);
      if (failed(tiles))
        return success();
      rewriter.replaceOp(root, *tiles);
    } else {
      if (failed(tileRowsEitherWay(rewriter, root, sizes, producers)))
        return success();
    }
    fusedAway.insert(producers.begin(), producers.end());
    fusedAway.insert(root.getOperation());
    // Producers nothing else reads go now (consumers first), so that they
    // are not taken for roots.
    SmallVector<Operation *> dead = producers.takeVector();
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *&producer : dead)
        if (producer && producer->use_empty()) {
          rewriter.eraseOp(producer);
          producer = nullptr;
          erased = true;
        }
    }
    return success();
  }

  /// `root` tiled with `sizes` in loops of `type`, the producers it reads
  /// fused in (added to `producers`): the values replacing its results.
  /// Fails, leaving the IR as it was, unless a reduction is among them.
  FailureOr<SmallVector<Value>>
  tileRows(RewriterBase &rewriter, linalg::GenericOp root,
           ArrayRef<OpFoldResult> sizes, LoopType type,
           llvm::SetVector<Operation *> &producers) {
    scf::SCFTilingOptions options;
    options.setTileSizes(sizes);
    options.setLoopType(type);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(root.getOperation()), options);
    if (failed(tiled) || tiled->loops.empty())
      return failure();
    auto tiledRoot = cast<linalg::GenericOp>(tiled->tiledOps.front());
    llvm::SetVector<Operation *> fused =
        fuseProducersInto(rewriter, tiled->loops, getOperation());
    bool fusedReduction = llvm::any_of(fused, [](Operation *producer) {
      auto generic = dyn_cast<linalg::GenericOp>(producer);
      return generic && generic.getNumReductionLoops() > 0;
    });
    if (!fusedReduction) {
      rewriter.eraseOp(tiled->loops.front());
      return failure();
    }
    SmallVector<Operation *> tileOps;
    tiled->loops.back()->walk(
        [&](linalg::GenericOp op) { tileOps.push_back(op); });
    writeIntoRootTile(rewriter, tiledRoot, tileOps);
    producers.insert(fused.begin(), fused.end());
    return SmallVector<Value>(tiled->replacements);
  }

  /// Replaces `root` by an `scf.if` on its group's iteration count (a
  /// dynamic one): parallel tiles from `parallel-threshold` iterations,
  /// serial tiles below. Fails, leaving the IR as it was, where the tiles
  /// would fuse no reduction.
  LogicalResult tileRowsEitherWay(RewriterBase &rewriter,
                                  linalg::GenericOp root,
                                  ArrayRef<OpFoldResult> sizes,
                                  llvm::SetVector<Operation *> &producers) {
    Location loc = root.getLoc();
    rewriter.setInsertionPoint(root);
    Value large = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sge,
        buildGroupIterations(rewriter, root, getOperation()),
        arith::ConstantIndexOp::create(rewriter, loc, parallelThreshold));
    auto choice = scf::IfOp::create(rewriter, loc, root->getResultTypes(),
                                    large, /*withElseRegion=*/true);
    for (auto [block, type] :
         {std::pair(choice.thenBlock(), LoopType::ForallOp),
          std::pair(choice.elseBlock(), LoopType::ForOp)}) {
      rewriter.setInsertionPointToStart(block);
      auto copy = cast<linalg::GenericOp>(rewriter.clone(*root));
      // Each branch its own empty destination: empty-tensor elimination
      // puts the caller's buffer in place of the one it traces a store to,
      // at that use alone.
      for (OpOperand &init : copy.getDpsInitsMutable())
        if (auto empty = init.get().getDefiningOp<tensor::EmptyOp>()) {
          rewriter.setInsertionPoint(copy);
          init.set(rewriter.clone(*empty)->getResult(0));
        }
      rewriter.setInsertionPointAfter(copy);
      auto yield =
          scf::YieldOp::create(rewriter, loc, ValueRange(copy->getResults()));
      rewriter.setInsertionPoint(copy);
      FailureOr<SmallVector<Value>> tiles =
          tileRows(rewriter, copy, sizes, type, producers);
      if (failed(tiles)) {
        // (Both tilings fuse the same producers: only the first can fail.)
        if (type == LoopType::ForallOp) {
          rewriter.eraseOp(choice);
          return failure();
        }
        continue;
      }
      rewriter.modifyOpInPlace(yield,
                               [&] { yield->setOperands(ValueRange(*tiles)); });
      rewriter.eraseOp(copy);
    }
    SmallVector<Value> inits = root.getDpsInits();
    rewriter.replaceOp(root, choice.getResults());
    // (Before CSE could merge the branches' copies back into them.)
    for (Value init : inits)
      if (init.use_empty() && init.getDefiningOp<tensor::EmptyOp>())
        rewriter.eraseOp(init.getDefiningOp());
    return success();
  }
};

} // namespace
