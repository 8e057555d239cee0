//===- SplitReductions.cpp - long reductions as blocks, then a combine ----===//
//
// A reduction over N elements accumulated in one chain runs on one core and
// loses accuracy linearly in N. Split into blocks of `block-size` elements
// (upstream linalg::splitReduction), the blocks are a parallel loop whose
// partial results a second step combines: float sums pairwise, like NumPy's
// sum, so that rounding errors grow with log N.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSPLITREDUCTIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// The one op of `op`'s body that combines the accumulator with a new value
/// (null if there is not exactly one).
Operation *getCombiner(linalg::GenericOp op) {
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return nullptr;
  return combiners.front();
}

/// Whether the single combiner of `op`'s accumulator may be regrouped: exact
/// for integers and NaN-propagating max/min, for float sums only when the
/// add allows reassociation (as picokernel's sums do).
bool hasRegroupableCombiner(linalg::GenericOp op) {
  Operation *combiner = getCombiner(op);
  if (!combiner)
    return false;
  if (auto add = dyn_cast<arith::AddFOp>(combiner))
    return arith::bitEnumContainsAll(add.getFastmath(),
                                     arith::FastMathFlags::reassoc);
  return isa<arith::MaximumFOp, arith::MinimumFOp, arith::AddIOp,
             arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
             arith::OrIOp, arith::AndIOp, arith::XOrIOp>(combiner);
}

/// A generic this pass may split: on tensors, static sizes, one result,
/// operands reached through projected permutations, and a combiner that can
/// be regrouped.
bool isSplittable(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
         op->getNumResults() == 1 &&
         llvm::all_of(
             op.getIndexingMapsArray(),
             [](AffineMap map) { return map.isProjectedPermutation(); }) &&
         !op.hasDynamicShape() && op.getNumReductionLoops() >= 1 &&
         hasRegroupableCombiner(op);
}

/// Folds several reduction loops into one where they are adjacent and every
/// operand keeps them in order (a full reduction of a 2-D array); the op
/// itself when there is one; failure otherwise.
FailureOr<linalg::GenericOp> withOneReductionLoop(RewriterBase &rewriter,
                                                  linalg::GenericOp op) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  if (dims.size() == 1)
    return op;
  ReassociationIndices group(dims.begin(), dims.end());
  for (auto [index, dim] : llvm::enumerate(dims))
    if (dim != dims.front() + index)
      return failure();
  if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {group}))
    return failure();
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, {group}, rewriter);
  if (failed(collapsed))
    return failure();
  rewriter.replaceOp(op, collapsed->results);
  return cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
}

/// `op` restricted to iterations [offset, offset + size) of loop `dim`.
FailureOr<linalg::GenericOp> restrictLoop(RewriterBase &rewriter,
                                          linalg::GenericOp op, unsigned dim,
                                          int64_t offset, int64_t size) {
  SmallVector<OpFoldResult> offsets(op.getNumLoops(), rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes;
  for (int64_t extent : op.getStaticLoopRanges())
    sizes.push_back(rewriter.getIndexAttr(extent));
  offsets[dim] = rewriter.getIndexAttr(offset);
  sizes[dim] = rewriter.getIndexAttr(size);
  FailureOr<TilingResult> tiled =
      cast<TilingInterface>(op.getOperation())
          .getTiledImplementation(rewriter, offsets, sizes);
  if (failed(tiled) || tiled->tiledOps.size() != 1 ||
      tiled->tiledValues.front().getType() != op->getResult(0).getType())
    return failure();
  auto restricted = dyn_cast<linalg::GenericOp>(tiled->tiledOps.front());
  if (!restricted)
    return failure();
  return restricted;
}

/// `combiner` applied element by element to `lhs` and `rhs` (a value and an
/// accumulator of the same shape) into `dest`, which is read only when it
/// is `rhs`.
Value combineElementwise(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value dest, Operation *combiner) {
  auto type = cast<RankedTensorType>(dest.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> inputs = {lhs};
  if (rhs != dest)
    inputs.push_back(rhs);
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, inputs, dest, maps, iterators,
             [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
               Operation *clone = nested.clone(*combiner);
               clone->setOperands({args[1], args[0]});
               linalg::YieldOp::create(nested, bodyLoc, clone->getResult(0));
             })
      .getResult(0);
}

/// init = combiner(init, value), element by element.
Value combineInto(OpBuilder &b, Location loc, Value value, Value init,
                  Operation *combiner) {
  return combineElementwise(b, loc, value, init, init, combiner);
}

/// The partial results along `dim` of `partials` summed pairwise, as NumPy
/// sums: while n > 1, the next level's p'[i] = p[i] + p[n - h + i] for
/// i < h = n/2 (contiguous, so it vectorizes), and p'[h] = p[h] when n is
/// odd; each partial goes through log2(n) additions. Every level is a new
/// tensor: summed in place, bufferization would copy the halves it cannot
/// tell apart. Returns `partials` without `dim`.
Value sumPairwise(OpBuilder &b, Location loc, Value partials, unsigned dim,
                  Operation *combiner) {
  auto type = cast<RankedTensorType>(partials.getType());
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  // The shape of `type` with `size` elements along `dim`, and the offsets
  // and sizes of the slice [offset, offset + size) along it.
  auto shapeWith = [&](int64_t size) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size;
    return shape;
  };
  auto range = [&](int64_t offset, int64_t size) {
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes;
    for (int64_t extent : shapeWith(size))
      sizes.push_back(b.getIndexAttr(extent));
    offsets[dim] = b.getIndexAttr(offset);
    return std::make_pair(offsets, sizes);
  };
  Value p = partials;
  for (int64_t n = type.getDimSize(dim); n > 1; n -= n / 2) {
    int64_t half = n / 2;
    auto [lowOffsets, halfSizes] = range(0, half);
    auto [highOffsets, unused] = range(n - half, half);
    Value low = tensor::ExtractSliceOp::create(b, loc, p, lowOffsets, halfSizes,
                                               strides);
    Value high = tensor::ExtractSliceOp::create(b, loc, p, highOffsets,
                                                halfSizes, strides);
    Value next = tensor::EmptyOp::create(b, loc, shapeWith(n - half),
                                         type.getElementType());
    Value sums = tensor::ExtractSliceOp::create(b, loc, next, lowOffsets,
                                                halfSizes, strides);
    sums = combineElementwise(b, loc, high, low, sums, combiner);
    next = tensor::InsertSliceOp::create(b, loc, sums, next, lowOffsets,
                                         halfSizes, strides);
    if (n % 2 != 0) {
      auto [middleOffsets, oneSizes] = range(half, 1);
      Value middle = tensor::ExtractSliceOp::create(b, loc, p, middleOffsets,
                                                    oneSizes, strides);
      next = tensor::InsertSliceOp::create(b, loc, middle, next, middleOffsets,
                                           oneSizes, strides);
    }
    p = next;
  }
  auto [firstOffsets, oneSizes] = range(0, 1);
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + dim);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, resultType, p, firstOffsets,
                                        oneSizes, strides);
}

/// Splits the reduction of `op` (one reduction loop, splittable) into blocks
/// of `block` iterations: the whole blocks become a parallel loop of partial
/// results, which one loop combines (exact combiners) or a pairwise tree
/// sums (float sums). Iterations past the last whole block are reduced on
/// their own, from the identity, and combined with the blocks' result once:
/// added one by one to the large total, they would each be rounded to its
/// precision (1e8 ones would not sum to 1e8 in float32). Failure leaves
/// valid IR: the ops not split yet reduce serially.
LogicalResult splitIntoBlocks(RewriterBase &rewriter, linalg::GenericOp op,
                              int64_t block) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  unsigned dim = dims.front();
  int64_t extent = op.getStaticLoopRanges()[dim];
  int64_t blocks = extent / block, rest = extent - blocks * block;
  if (blocks < 2)
    return success();
  Operation *combiner = getCombiner(op);
  std::optional<TypedAttr> identity =
      combiner ? arith::getNeutralElement(combiner) : std::nullopt;
  if (!identity)
    return failure();

  // Float sums tree their partials; exact combiners (integers, max, min)
  // reduce them in one loop.
  bool pairwise = isa<arith::AddFOp>(combiner);
  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  auto fillIdentity = [&](ArrayRef<int64_t> shape) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                          resultType.getElementType());
    Value start = arith::ConstantOp::create(rewriter, loc, *identity);
    return linalg::FillOp::create(rewriter, loc, start, empty).getResult(0);
  };
  linalg::GenericOp whole = op;
  Value tailValue;
  if (rest != 0) {
    rewriter.setInsertionPoint(op);
    Value fromIdentity = fillIdentity(resultType.getShape());
    // The remainder first: the blocks' combine replaces the head in place,
    // and the pairwise sum there reads the remainder's result.
    FailureOr<linalg::GenericOp> tail =
        restrictLoop(rewriter, op, dim, blocks * block, rest);
    if (failed(tail))
      return failure();
    FailureOr<linalg::GenericOp> head =
        restrictLoop(rewriter, op, dim, 0, blocks * block);
    if (failed(head))
      return failure();
    tail->getDpsInitsMutable()[0].set(fromIdentity);
    tailValue = tail->getResult(0);
    rewriter.replaceOp(op, pairwise
                               ? head->getResult(0)
                               : combineInto(rewriter, loc, tailValue,
                                             head->getResult(0), combiner));
    whole = *head;
    // It was in `op`'s body, now erased.
    combiner = nullptr;
  }

  rewriter.setInsertionPoint(whole);
  FailureOr<linalg::SplitReductionResult> split =
      linalg::splitReduction(rewriter, whole, [&](linalg::LinalgOp) {
        // The blocks' loop right before the reduced one: outermost for a
        // full reduction, inside the kept loops otherwise.
        return linalg::SplitReductionOptions{blocks, dim,
                                             /*innerParallel=*/false};
      });
  if (failed(split) || !pairwise)
    return success(succeeded(split));
  auto blocked =
      dyn_cast<linalg::GenericOp>(split->splitLinalgOp.getOperation());
  auto combine = dyn_cast<linalg::GenericOp>(
      split->resultCombiningLinalgOp.getOperation());
  if (!blocked || !combine)
    return failure();
  // The original body (and its combiner) moved into the blocks' op.
  combiner = getCombiner(blocked);
  if (!combiner)
    return failure();

  // The remainder's sum joins the blocks' partial sums as one more, so that
  // it too is added pairwise: the blocks write into the first `blocks`
  // slots of a tensor with one slot more.
  Value partials = blocked->getResult(0);
  if (tailValue) {
    auto partialType = cast<RankedTensorType>(partials.getType());
    SmallVector<int64_t> shape(partialType.getShape());
    shape[dim] = blocks + 1;
    rewriter.setInsertionPoint(blocked);
    Value all = fillIdentity(shape);
    SmallVector<OpFoldResult> offsets(shape.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(rewriter.getContext(), partialType.getShape());
    SmallVector<OpFoldResult> strides(shape.size(), rewriter.getIndexAttr(1));
    Value blockSlots = tensor::ExtractSliceOp::create(rewriter, loc, all,
                                                      offsets, sizes, strides);
    rewriter.modifyOpInPlace(
        blocked, [&] { blocked.getDpsInitsMutable()[0].set(blockSlots); });
    rewriter.setInsertionPoint(combine);
    partials = tensor::InsertSliceOp::create(rewriter, loc, partials, all,
                                             offsets, sizes, strides);
    offsets[dim] = rewriter.getIndexAttr(blocks);
    sizes[dim] = rewriter.getIndexAttr(1);
    partials = tensor::InsertSliceOp::create(rewriter, loc, tailValue, partials,
                                             offsets, sizes, strides);
  }
  rewriter.setInsertionPoint(combine);
  Value total = sumPairwise(rewriter, loc, partials, dim, combiner);
  rewriter.replaceOp(combine,
                     combineInto(rewriter, loc, total,
                                 combine.getDpsInits().front(), combiner));
  return success();
}

struct SplitReductionsPass
    : public mlir::pk::impl::PkSplitReductionsBase<SplitReductionsPass> {
  using PkSplitReductionsBase::PkSplitReductionsBase;

  void runOnOperation() override {
    if (blockSize < 1) {
      getOperation().emitError("pk-split-reductions: block-size must be "
                               "positive, got ")
          << blockSize;
      return signalPassFailure();
    }
    // Only the function's own ops: reductions inside loops (a matmul's
    // tiles) are already scheduled.
    SmallVector<linalg::GenericOp> candidates;
    for (Operation &op : getOperation().getBody().getOps())
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        if (isSplittable(generic))
          candidates.push_back(generic);
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      // Reduced elements per result, saturating.
      int64_t extent = 1;
      for (auto [size, iterator] :
           llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
        if (iterator == utils::IteratorType::reduction)
          extent = size != 0 && extent > INT64_MAX / size ? INT64_MAX
                                                          : extent * size;
      if (extent / 2 < blockSize)
        continue;
      FailureOr<linalg::GenericOp> single = withOneReductionLoop(rewriter, op);
      if (succeeded(single))
        (void)splitIntoBlocks(rewriter, *single, blockSize);
    }
  }
};

} // namespace
