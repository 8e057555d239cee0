//===- TileParallelLoopsForGpu.cpp - workgroups of threads ----------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKTILEPARALLELLOOPSFORGPU
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct TileParallelLoopsForGpuPass
    : public mlir::pk::impl::PkTileParallelLoopsForGpuBase<
          TileParallelLoopsForGpuPass> {
  using PkTileParallelLoopsForGpuBase::PkTileParallelLoopsForGpuBase;

  void runOnOperation() override {
    if (workgroupSize < 1) {
      getOperation().emitError("workgroup-size must be positive");
      return signalPassFailure();
    }
    // A loop of one iteration (pk-add-unit-parallel-loop's, around a
    // reduction to a 0-d array) runs as a single thread: it is neither tiled
    // nor folded away below, or its body would fall back to the host.
    // Marked by an attribute: the canonicalizations below may erase and
    // create ops, so pointers to them would not stay valid.
    constexpr llvm::StringLiteral kSingleThread = "pk.single_thread";
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context), loopPatterns(context);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      if (op.getTypeID() != TypeID::get<scf::ParallelOp>())
        op.getCanonicalizationPatterns(patterns, context);
    scf::ParallelOp::getCanonicalizationPatterns(loopPatterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Collapsed loops compute their bounds: fold them to constants.
    if (collapseToThreeDimensions() &&
        failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    for (scf::ParallelOp loop : outermostLoops()) {
      std::optional<SmallVector<int64_t>> extents = staticExtents(loop);
      if (extents && llvm::all_of(*extents, [](int64_t e) { return e == 1; }))
        loop->setAttr(kSingleThread, UnitAttr::get(context));
      else if (failed(tile(loop)))
        return signalPassFailure();
    }
    // Fold the tiles' constant steps and unit dimensions before mapping, so
    // that the GPU conversion sees constant workgroup sizes. The parallel
    // loops' own canonicalizations (merging tiles, dropping unit dimensions)
    // apply to the tiled loops only, collected once the first folding has
    // run (it may erase some of them).
    if (failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    SmallVector<Operation *> tiled;
    for (scf::ParallelOp loop : outermostLoops())
      if (!loop->hasAttr(kSingleThread))
        loop->walk([&](scf::ParallelOp nested) { tiled.push_back(nested); });
    if (failed(applyOpPatternsGreedily(tiled, std::move(loopPatterns))) ||
        failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    getOperation().walk(
        [&](scf::ParallelOp loop) { loop->removeAttr(kSingleThread); });
    for (scf::ParallelOp loop : outermostLoops())
      if (failed(map(loop)))
        return signalPassFailure();
  }

  SmallVector<scf::ParallelOp> outermostLoops() {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    return loops;
  }

  /// A grid has three dimensions: a loop over more has its leading ones
  /// linearized into one (arrays of rank 4 and up).
  bool collapseToThreeDimensions() {
    IRRewriter rewriter(&getContext());
    bool collapsed = false;
    for (scf::ParallelOp loop : outermostLoops()) {
      unsigned rank = loop.getNumLoops();
      if (rank <= 3)
        continue;
      collapsed = true;
      std::vector<unsigned> leading;
      for (unsigned d = 0; d + 2 < rank; ++d)
        leading.push_back(d);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {leading, {rank - 2}, {rank - 1}});
    }
    return collapsed;
  }

  LogicalResult tile(scf::ParallelOp loop) {
    std::optional<SmallVector<int64_t>> extents = staticExtents(loop);
    // The threads of a workgroup run along the innermost dimension with
    // more than one index: unit dimensions are folded away below, and the
    // dimension left innermost must be the tiled one (a (65536, 1) array
    // became one workgroup of 65536 threads).
    SmallVector<int64_t> tiles(loop.getNumLoops(), 1);
    size_t threads = tiles.size() - 1;
    while (threads > 0 && (*extents)[threads] == 1)
      --threads;
    int64_t extent = (*extents)[threads];
    tiles[threads] =
        ShapedType::isDynamic(extent)
            ? int64_t(workgroupSize)
            : std::max<int64_t>(1, std::min<int64_t>(workgroupSize, extent));
    // With a dynamic extent, the tiles of one index would keep a loop of
    // min(1, n - i) iterations: tiles of constant bounds under a guard
    // instead.
    bool dynamic = llvm::any_of(*extents, ShapedType::isDynamic);
    scf::tileParallelLoop(loop, tiles, /*noMinMaxBounds=*/dynamic);
    return success();
  }

  /// Workgroups are the outer loop (its innermost dimension on x, the
  /// others on y and z); threads the nested loop's innermost dimension.
  LogicalResult map(scf::ParallelOp workgroups) {
    MLIRContext *context = &getContext();
    auto dim = [&](gpu::Processor processor) {
      AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
      return gpu::ParallelLoopDimMappingAttr::get(context, processor, identity,
                                                  identity);
    };
    scf::ParallelOp threads;
    for (Operation &op : workgroups.getBody()->getOperations())
      if (auto nested = dyn_cast<scf::ParallelOp>(op))
        threads = nested;
    unsigned rank = workgroups.getNumLoops();
    auto block = [&](unsigned axis) {
      return dim(
          gpu::Processor(static_cast<unsigned>(gpu::Processor::BlockX) + axis));
    };
    SmallVector<gpu::ParallelLoopDimMappingAttr> outer, inner;
    if (!threads) {
      // One workgroup per index of the leading dimensions; the innermost
      // dimension (no larger than a workgroup) is the threads.
      for (unsigned i = 0; i + 1 < rank; ++i)
        outer.push_back(block(rank - 2 - i));
      outer.push_back(dim(gpu::Processor::ThreadX));
      return gpu::setMappingAttr(workgroups, outer);
    }
    for (unsigned i = 0; i < rank; ++i)
      outer.push_back(block(rank - 1 - i));
    for (unsigned i = 0; i < threads.getNumLoops(); ++i)
      inner.push_back(dim(i + 1 == threads.getNumLoops()
                              ? gpu::Processor::ThreadX
                              : gpu::Processor::Sequential));
    if (failed(gpu::setMappingAttr(workgroups, outer)) ||
        failed(gpu::setMappingAttr(threads, inner)))
      return workgroups.emitOpError("could not be mapped to the GPU grid");
    return success();
  }

  static std::optional<SmallVector<int64_t>>
  staticExtents(scf::ParallelOp loop) {
    SmallVector<int64_t> extents;
    for (auto [lower, upper, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> lo = getConstantIntValue(lower),
                             hi = getConstantIntValue(upper),
                             st = getConstantIntValue(step);
      if (!lo || !hi || !st || *st <= 0)
        extents.push_back(ShapedType::kDynamic);
      else
        extents.push_back((*hi - *lo + *st - 1) / *st);
    }
    return extents;
  }
};

} // namespace
