//===- SplitReductions.cpp - long reductions as blocks, then a combine ----===//
//
// A reduction over N elements accumulated in one chain runs on one core and
// loses accuracy linearly in N. Split into blocks of `block-size` elements,
// the blocks are a parallel loop whose partial results are then combined
// pairwise, as NumPy sums, so that rounding errors grow with log N.
// (Upstream linalg::splitReduction takes one reduction loop only and
// combines the partials serially.)
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSPLITREDUCTIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using mlir::pk::getCombiner;
using mlir::pk::hasPlainIdentity;
using mlir::pk::hasRegroupableCombiner;

namespace {

/// A generic this pass may split: on tensors, nonzero static sizes, one
/// result of an element type with a plain identity, no loop indices in the
/// body (the split would renumber them), operands reached through projected
/// permutations (and constant 0s: broadcast unit dims), and a combiner
/// that can be regrouped.
bool isSplittable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.hasDynamicShape() ||
      op.hasIndexSemantics() || op.getNumReductionLoops() == 0 ||
      llvm::is_contained(op.getStaticLoopRanges(), 0) ||
      !hasPlainIdentity(getElementTypeOrSelf(op->getResult(0).getType())))
    return false;
  return llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) {
                        return map.isProjectedPermutation(
                            /*allowZeroInResults=*/true);
                      }) &&
         hasRegroupableCombiner(op);
}

/// `op` with the broadcast unit dims of its inputs (constant 0s in their
/// maps, from keepdims results such as a row's max) collapsed away: the
/// split and the folding of reduction loops take only dims in the maps. The
/// op itself when it has none; failure where the output has some, or where
/// a constant indexes a dimension longer than 1 (a slice, not a broadcast).
FailureOr<linalg::GenericOp> withoutBroadcastUnitDims(RewriterBase &rewriter,
                                                      linalg::GenericOp op) {
  auto isConstant = [](AffineExpr expr) {
    return isa<AffineConstantExpr>(expr);
  };
  if (llvm::none_of(op.getIndexingMapsArray(), [&](AffineMap map) {
        return llvm::any_of(map.getResults(), isConstant);
      }))
    return op;
  if (llvm::any_of(
          op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults(),
          isConstant))
    return failure();
  for (OpOperand *input : op.getDpsInputOperands())
    for (auto [index, expr] :
         llvm::enumerate(op.getMatchingIndexingMap(input).getResults()))
      if (isConstant(expr) && op.getShape(input)[index] != 1)
        return failure();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto type = cast<RankedTensorType>(input->get().getType());
    // Each dropped unit dim joins the group of the next kept one (trailing
    // ones the last group).
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (auto [index, expr] : llvm::enumerate(map.getResults())) {
      pending.push_back(index);
      if (isConstant(expr))
        continue;
      kept.push_back(expr);
      shape.push_back(type.getDimSize(index));
      groups.push_back(pending);
      pending.clear();
    }
    if (!groups.empty())
      groups.back().append(pending.begin(), pending.end());
    Value value = input->get();
    if (kept.size() != map.getNumResults())
      value = tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get(shape, type.getElementType()), value, groups);
    inputs.push_back(value);
    maps.push_back(
        AffineMap::get(map.getNumDims(), 0, kept, rewriter.getContext()));
  }
  maps.push_back(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  auto rewritten = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
      maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), rewritten.getRegion(),
                              rewritten.getRegion().begin());
  rewriter.replaceOp(op, rewritten->getResults());
  return rewritten;
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

/// A generic's body that yields `combiner` of its (value, accumulator)
/// arguments.
auto combinerBody(Operation *combiner) {
  return [combiner](OpBuilder &nested, Location loc, ValueRange args) {
    Operation *clone = nested.clone(*combiner);
    clone->setOperands({args[1], args[0]});
    linalg::YieldOp::create(nested, loc, clone->getResult(0));
  };
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
  return linalg::GenericOp::create(b, loc, type, inputs, dest, maps, iterators,
                                   combinerBody(combiner))
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

/// init = combiner(init, partials[0], partials[1], ...): the partial results
/// along dimension 0 reduced by one op (which a GPU pipeline runs as a
/// workgroup's tree, pk-reduce-in-workgroups).
Value reduceInto(OpBuilder &b, Location loc, Value partials, Value init,
                 Operation *combiner) {
  int64_t rank = cast<RankedTensorType>(partials.getType()).getRank();
  SmallVector<AffineExpr> outputExprs;
  for (int64_t dim = 1; dim < rank; ++dim)
    outputExprs.push_back(b.getAffineDimExpr(dim));
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outputExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[0] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(b, loc, init.getType(), partials, init, maps,
                                   iterators, combinerBody(combiner))
      .getResult(0);
}

/// `op` with its loop `dim` cut into `blocks` blocks of `size` iterations:
/// a new parallel loop over the blocks right before it, and the blocks'
/// partial results along dimension 0 of a tensor `init` (identity-filled,
/// [blocks, ...the result's shape]). Inputs reading `dim` read it expanded
/// to [blocks, size]; the body is unchanged (it reads no loop indices).
Value partialResults(RewriterBase &rewriter, linalg::GenericOp op, unsigned dim,
                     int64_t blocks, int64_t size, Value init) {
  MLIRContext *context = rewriter.getContext();
  unsigned loops = op.getNumLoops() + 1;
  auto shifted = [&](AffineExpr expr) {
    unsigned position = cast<AffineDimExpr>(expr).getPosition();
    return getAffineDimExpr(position < dim ? position : position + 1, context);
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto type = cast<RankedTensorType>(input->get().getType());
    SmallVector<AffineExpr> exprs;
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    for (auto [index, expr] : llvm::enumerate(map.getResults())) {
      groups.push_back({int64_t(shape.size())});
      if (cast<AffineDimExpr>(expr).getPosition() == dim) {
        exprs.push_back(getAffineDimExpr(dim, context));
        shape.push_back(blocks);
        groups.back().push_back(shape.size());
        shape.push_back(size);
        exprs.push_back(getAffineDimExpr(dim + 1, context));
        continue;
      }
      exprs.push_back(shifted(expr));
      shape.push_back(type.getDimSize(index));
    }
    Value value = input->get();
    if (shape.size() != size_t(type.getRank()))
      value = tensor::ExpandShapeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get(shape, type.getElementType()), value, groups);
    inputs.push_back(value);
    maps.push_back(AffineMap::get(loops, 0, exprs, context));
  }
  SmallVector<AffineExpr> outputExprs = {getAffineDimExpr(dim, context)};
  for (AffineExpr expr :
       op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults())
    outputExprs.push_back(shifted(expr));
  maps.push_back(AffineMap::get(loops, 0, outputExprs, context));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.insert(iterators.begin() + dim, utils::IteratorType::parallel);
  auto blocked = linalg::GenericOp::create(
      rewriter, op.getLoc(), init.getType(), inputs, init, maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), blocked.getRegion(),
                             blocked.getRegion().begin());
  return blocked->getResult(0);
}

/// Splits the reduction of `op` (splittable, no broadcast unit dims) into
/// blocks of about `block` elements per result: its longest reduction loop
/// in blocks of `block` divided by what the other reduction loops reduce,
/// run as a parallel loop writing one partial result per block. Iterations
/// of that loop past the last whole block are reduced on their own, from
/// the identity, as one more partial. The partials are then combined
/// pairwise, as NumPy sums: added one by one to the large total, they
/// would each be rounded to its precision (1e8 ones would not sum to 1e8 in
/// float32).
LogicalResult splitIntoBlocks(RewriterBase &rewriter, linalg::GenericOp op,
                              int64_t block, bool pairwise) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned dim = *llvm::max_element(
      dims, [&](unsigned a, unsigned b) { return ranges[a] < ranges[b]; });
  int64_t others = 1;
  for (unsigned other : dims)
    if (other != dim)
      others *= ranges[other];
  int64_t size = std::max<int64_t>(1, block / others);
  int64_t blocks = ranges[dim] / size, rest = ranges[dim] - blocks * size;
  if (blocks < 2)
    return success();
  Operation *combiner = getCombiner(op);
  std::optional<TypedAttr> identity =
      combiner ? arith::getNeutralElement(combiner) : std::nullopt;
  if (!identity)
    return failure();

  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  rewriter.setInsertionPoint(op);
  auto filled = [&](ArrayRef<int64_t> shape) -> Value {
    Value start = arith::ConstantOp::create(rewriter, loc, *identity);
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                          resultType.getElementType());
    return linalg::FillOp::create(rewriter, loc, start, empty).getResult(0);
  };
  // The whole blocks' iterations, and the rest reduced from the identity.
  linalg::GenericOp whole = op;
  Value restValue;
  if (rest != 0) {
    Value fromIdentity = filled(resultType.getShape());
    FailureOr<linalg::GenericOp> tail =
        restrictLoop(rewriter, op, dim, blocks * size, rest);
    FailureOr<linalg::GenericOp> head =
        succeeded(tail) ? restrictLoop(rewriter, op, dim, 0, blocks * size)
                        : FailureOr<linalg::GenericOp>(failure());
    if (failed(head))
      return failure();
    rewriter.modifyOpInPlace(
        *tail, [&] { tail->getDpsInitsMutable()[0].set(fromIdentity); });
    restValue = tail->getResult(0);
    whole = *head;
  }

  // One slot per block (and one for the rest) along dimension 0.
  SmallVector<int64_t> shape = {blocks + (rest != 0)};
  llvm::append_range(shape, resultType.getShape());
  Value slots = filled(shape);
  SmallVector<OpFoldResult> strides(shape.size(), rewriter.getIndexAttr(1));
  auto along0 = [&](int64_t offset, int64_t count) {
    SmallVector<OpFoldResult> offsets(shape.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(rewriter.getContext(), shape);
    offsets[0] = rewriter.getIndexAttr(offset);
    sizes[0] = rewriter.getIndexAttr(count);
    return std::make_pair(offsets, sizes);
  };
  auto [blockOffsets, blockSizes] = along0(0, blocks);
  Value blockSlots = tensor::ExtractSliceOp::create(
      rewriter, loc, slots, blockOffsets, blockSizes, strides);
  Value partials = tensor::InsertSliceOp::create(
      rewriter, loc,
      partialResults(rewriter, whole, dim, blocks, size, blockSlots), slots,
      blockOffsets, blockSizes, strides);
  if (restValue) {
    auto [restOffsets, restSizes] = along0(blocks, 1);
    partials = tensor::InsertSliceOp::create(rewriter, loc, restValue, partials,
                                             restOffsets, restSizes, strides);
  }
  Value init = op.getDpsInits().front();
  if (pairwise) {
    Value total = sumPairwise(rewriter, loc, partials, 0, combiner);
    rewriter.replaceOp(op, combineInto(rewriter, loc, total, init, combiner));
  } else {
    rewriter.replaceOp(op, reduceInto(rewriter, loc, partials, init, combiner));
  }
  // The head was the blocks' template only.
  if (whole != op)
    rewriter.eraseOp(whole);
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
    // The function's own ops and those of its tile loops (rows of a
    // softmax, from pk-fuse-rows; there the blocks run serially, for the
    // accuracy). Reductions deeper down are already scheduled.
    SmallVector<linalg::GenericOp> candidates;
    auto collect = [&](Block &block) {
      for (Operation &op : block)
        if (auto generic = dyn_cast<linalg::GenericOp>(op))
          if (isSplittable(generic))
            candidates.push_back(generic);
    };
    collect(getOperation().getBody().front());
    for (Operation &op : getOperation().getBody().getOps())
      if (isa<scf::ForallOp, scf::ForOp>(op))
        collect(op.getRegion(0).front());
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      // Reduced elements per result, saturating.
      int64_t extent = 1;
      for (auto [size, iterator] :
           llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
        if (iterator == utils::IteratorType::reduction)
          extent = size != 0 && extent > INT64_MAX / size ? INT64_MAX
                                                          : extent * size;
      if (extent / 2 < blockSize || extent == INT64_MAX)
        continue;
      FailureOr<linalg::GenericOp> plain =
          withoutBroadcastUnitDims(rewriter, op);
      if (failed(plain))
        continue;
      // Adjacent reduction loops folded into one where the operands allow;
      // the others stay inside each block.
      FailureOr<linalg::GenericOp> single =
          withOneReductionLoop(rewriter, *plain);
      (void)splitIntoBlocks(rewriter, succeeded(single) ? *single : *plain,
                            blockSize, pairwise);
    }
  }
};

} // namespace
