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

#include "CombinePartials.h"
#include "Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSPLITREDUCTIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using mlir::pk::combineInto;
using mlir::pk::combinePairwise;
using mlir::pk::getCombiner;
using mlir::pk::hasPlainIdentity;
using mlir::pk::hasRegroupableCombiner;
using mlir::pk::reduceInto;

namespace {

/// A generic this pass may split: on tensors, no static size 0, one
/// result of an element type with a plain identity, no loop indices in the
/// body (the split would renumber them), operands reached through projected
/// permutations (and constant 0s: broadcast unit dims), and a combiner
/// that can be regrouped.
bool isSplittable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.hasIndexSemantics() ||
      op.getNumReductionLoops() == 0 ||
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

/// The sizes of `op`'s loops (tensor.dim ops for the dynamic ones).
SmallVector<Range> loopRanges(OpBuilder &b, linalg::GenericOp op) {
  return cast<linalg::LinalgOp>(op.getOperation())
      .createLoopRanges(b, op.getLoc());
}

/// `op` restricted to iterations [offset, offset + size) of loop `dim`.
FailureOr<linalg::GenericOp> restrictLoop(RewriterBase &rewriter,
                                          linalg::GenericOp op, unsigned dim,
                                          OpFoldResult offset,
                                          OpFoldResult size) {
  SmallVector<OpFoldResult> offsets(op.getNumLoops(), rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes;
  for (Range range : loopRanges(rewriter, op))
    sizes.push_back(range.size);
  offsets[dim] = offset;
  sizes[dim] = size;
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

/// `op` with its loop `dim` cut into `blocks` blocks of `size` iterations:
/// a new parallel loop over the blocks right before it, and the blocks'
/// partial results along dimension 0 of a tensor `init` (identity-filled,
/// [blocks, ...the result's shape]). Inputs reading `dim` read it expanded
/// to [blocks, size]; the body is unchanged (it reads no loop indices).
Value partialResults(RewriterBase &rewriter, linalg::GenericOp op, unsigned dim,
                     OpFoldResult blocks, int64_t size, Value init) {
  MLIRContext *context = rewriter.getContext();
  Location loc = op.getLoc();
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
    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, input->get());
    SmallVector<AffineExpr> exprs;
    SmallVector<OpFoldResult> sizes;
    SmallVector<ReassociationIndices> groups;
    for (auto [index, expr] : llvm::enumerate(map.getResults())) {
      groups.push_back({int64_t(sizes.size())});
      if (cast<AffineDimExpr>(expr).getPosition() == dim) {
        exprs.push_back(getAffineDimExpr(dim, context));
        sizes.push_back(blocks);
        groups.back().push_back(sizes.size());
        sizes.push_back(rewriter.getIndexAttr(size));
        exprs.push_back(getAffineDimExpr(dim + 1, context));
        continue;
      }
      exprs.push_back(shifted(expr));
      sizes.push_back(inputSizes[index]);
    }
    Value value = input->get();
    if (sizes.size() != size_t(type.getRank())) {
      SmallVector<int64_t> shape;
      for (OpFoldResult extent : sizes)
        shape.push_back(
            getConstantIntValue(extent).value_or(ShapedType::kDynamic));
      value = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
          value, groups, sizes);
    }
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
  auto blocked = linalg::GenericOp::create(rewriter, loc, init.getType(),
                                           inputs, init, maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), blocked.getRegion(),
                             blocked.getRegion().begin());
  return blocked->getResult(0);
}

/// The reduction loop of `op` to cut into blocks: its one dynamic reduction
/// loop, else its longest; none where several are dynamic.
std::optional<unsigned> loopToSplit(linalg::GenericOp op) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto dynamic = llvm::make_filter_range(
      dims, [&](unsigned dim) { return ShapedType::isDynamic(ranges[dim]); });
  if (!dynamic.empty())
    return llvm::hasSingleElement(dynamic) ? std::optional(*dynamic.begin())
                                           : std::nullopt;
  return *llvm::max_element(
      dims, [&](unsigned a, unsigned b) { return ranges[a] < ranges[b]; });
}

/// Splits the reduction of `op` (splittable, no broadcast unit dims) into
/// blocks of about `block` elements per result: loop `dim` in blocks of
/// `block` divided by what the other (static) reduction loops reduce, run
/// as a parallel loop writing one partial result per block. Iterations of
/// that loop past the last whole block are reduced on their own, from the
/// identity, as one more partial. The partials are then combined pairwise,
/// as NumPy sums: added one by one to the large total, they would each be
/// rounded to its precision (1e8 ones would not sum to 1e8 in float32).
/// A static loop of fewer than two blocks is left alone; a dynamic one is
/// split for whatever length comes (the caller guards short ones).
LogicalResult splitIntoBlocks(RewriterBase &rewriter, linalg::GenericOp op,
                              unsigned dim, int64_t block, bool pairwise) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t others = 1;
  for (unsigned other : dims)
    if (other != dim)
      others *= ranges[other];
  int64_t size = std::max<int64_t>(1, block / others);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  OpFoldResult length = loopRanges(rewriter, op)[dim].size;
  AffineExpr n = rewriter.getAffineDimExpr(0);
  auto apply = [&](AffineExpr expr) {
    return affine::makeComposedFoldedAffineApply(rewriter, loc, expr, {length});
  };
  OpFoldResult blocks = apply(n.floorDiv(size));
  OpFoldResult whole = apply(n.floorDiv(size) * size);
  OpFoldResult rest = apply(n - n.floorDiv(size) * size);
  std::optional<int64_t> staticBlocks = getConstantIntValue(blocks);
  if (staticBlocks && *staticBlocks < 2)
    return success();
  Operation *combiner = getCombiner(op);
  std::optional<TypedAttr> identity =
      combiner ? arith::getNeutralElement(combiner) : std::nullopt;
  if (!identity)
    return failure();

  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<OpFoldResult> resultSizes =
      tensor::getMixedSizes(rewriter, loc, op.getDpsInits().front());
  auto filled = [&](ArrayRef<OpFoldResult> sizes) -> Value {
    Value start = arith::ConstantOp::create(rewriter, loc, *identity);
    Value empty = tensor::EmptyOp::create(rewriter, loc, sizes,
                                          resultType.getElementType());
    return linalg::FillOp::create(rewriter, loc, start, empty).getResult(0);
  };
  // The whole blocks' iterations, and the rest reduced from the identity.
  linalg::GenericOp head = op;
  Value restValue;
  bool hasRest = !isConstantIntValue(rest, 0);
  if (hasRest) {
    Value fromIdentity = filled(resultSizes);
    FailureOr<linalg::GenericOp> tail =
        restrictLoop(rewriter, op, dim, whole, rest);
    FailureOr<linalg::GenericOp> restricted =
        succeeded(tail)
            ? restrictLoop(rewriter, op, dim, rewriter.getIndexAttr(0), whole)
            : FailureOr<linalg::GenericOp>(failure());
    if (failed(restricted))
      return failure();
    rewriter.modifyOpInPlace(
        *tail, [&] { tail->getDpsInitsMutable()[0].set(fromIdentity); });
    restValue = tail->getResult(0);
    head = *restricted;
  }

  // One slot per block (and one for the rest) along dimension 0.
  SmallVector<OpFoldResult> slotSizes = {hasRest ? apply(n.floorDiv(size) + 1)
                                                 : blocks};
  llvm::append_range(slotSizes, resultSizes);
  Value slots = filled(slotSizes);
  SmallVector<OpFoldResult> strides(slotSizes.size(), rewriter.getIndexAttr(1));
  auto along0 = [&](OpFoldResult offset, OpFoldResult count) {
    SmallVector<OpFoldResult> offsets(slotSizes.size(),
                                      rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = slotSizes;
    offsets[0] = offset;
    sizes[0] = count;
    return std::make_pair(offsets, sizes);
  };
  auto [blockOffsets, blockSizes] = along0(rewriter.getIndexAttr(0), blocks);
  Value blockSlots = tensor::ExtractSliceOp::create(
      rewriter, loc, slots, blockOffsets, blockSizes, strides);
  Value partials = tensor::InsertSliceOp::create(
      rewriter, loc,
      partialResults(rewriter, head, dim, blocks, size, blockSlots), slots,
      blockOffsets, blockSizes, strides);
  if (restValue) {
    auto [restOffsets, restSizes] = along0(blocks, rewriter.getIndexAttr(1));
    partials = tensor::InsertSliceOp::create(rewriter, loc, restValue, partials,
                                             restOffsets, restSizes, strides);
  }
  Value init = op.getDpsInits().front();
  if (pairwise) {
    // A dynamic length keeps a slot for the rest, empty or not: the combine
    // takes the slots that hold partials.
    Value total = combinePairwise(rewriter, loc, partials,
                                  apply(n.ceilDiv(size)), combiner);
    rewriter.replaceOp(op, combineInto(rewriter, loc, total, init, combiner));
  } else {
    rewriter.replaceOp(op, reduceInto(rewriter, loc, partials, init, combiner));
  }
  // The head was the blocks' template only.
  if (head != op)
    rewriter.eraseOp(head);
  return success();
}

/// Reduced elements per result of `op`, saturating; nullopt when dynamic.
std::optional<int64_t> reducedExtent(linalg::GenericOp op) {
  int64_t extent = 1;
  for (auto [size, iterator] :
       llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
    if (iterator != utils::IteratorType::reduction)
      continue;
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    extent = size != 0 && extent > INT64_MAX / size ? INT64_MAX : extent * size;
  }
  return extent;
}

/// `op` (with one dynamic reduction loop) as an scf.if on its reduced
/// extent: at least twice `block` elements take the clone returned, which
/// the caller splits; shorter ones run `op` whole.
linalg::GenericOp guardShortReductions(RewriterBase &rewriter,
                                       linalg::GenericOp op, int64_t block) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value extent;
  for (auto [range, iterator] :
       llvm::zip(loopRanges(rewriter, op), op.getIteratorTypesArray())) {
    if (iterator != utils::IteratorType::reduction)
      continue;
    Value size = getValueOrCreateConstantIndexOp(rewriter, loc, range.size);
    extent = extent ? arith::MulIOp::create(rewriter, loc, extent, size) : size;
  }
  Value threshold = arith::ConstantIndexOp::create(rewriter, loc, 2 * block);
  Value isLong = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                       extent, threshold);
  auto branch = scf::IfOp::create(rewriter, loc, op->getResultTypes(), isLong,
                                  /*addThenBlock=*/true, /*addElseBlock=*/true);
  rewriter.setInsertionPointToStart(branch.thenBlock());
  Operation *split = rewriter.clone(*op);
  scf::YieldOp::create(rewriter, loc, split->getResults());
  rewriter.setInsertionPointToStart(branch.elseBlock());
  Operation *whole = rewriter.clone(*op);
  scf::YieldOp::create(rewriter, loc, whole->getResults());
  rewriter.replaceOp(op, branch.getResults());
  return cast<linalg::GenericOp>(split);
}

struct SplitReductionsPass
    : public mlir::pk::impl::PkSplitReductionsBase<SplitReductionsPass> {
  using PkSplitReductionsBase::PkSplitReductionsBase;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > INT64_MAX / 2) {
      getOperation().emitError("pk-split-reductions: block-size must be "
                               "positive and below 2^62, got ")
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
      std::optional<int64_t> extent = reducedExtent(op);
      if (extent && (*extent / 2 < blockSize || *extent == INT64_MAX))
        continue;
      FailureOr<linalg::GenericOp> plain =
          withoutBroadcastUnitDims(rewriter, op);
      if (failed(plain))
        continue;
      // Adjacent reduction loops folded into one where the operands allow;
      // the others stay inside each block.
      FailureOr<linalg::GenericOp> single =
          withOneReductionLoop(rewriter, *plain);
      linalg::GenericOp target = succeeded(single) ? *single : *plain;
      std::optional<unsigned> dim = loopToSplit(target);
      if (!dim)
        continue;
      // A dynamic length is split when it comes long enough, for the CPU;
      // GPU kernels take blocks whatever the length (a host branch that
      // chose between two buffers would leave the kernels after it not
      // knowing which they read).
      if (!extent && pairwise)
        target = guardShortReductions(rewriter, target, blockSize);
      (void)splitIntoBlocks(rewriter, target, *dim, blockSize, pairwise);
    }
  }
};

} // namespace
