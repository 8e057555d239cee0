//===- ReductionBlocks.cpp - long reductions cut into blocks --------------===//

#include "ReductionBlocks.h"

#include "CombinePartials.h"
#include "Reductions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::pk {

namespace {
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

} // namespace

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

linalg::GenericOp guardShortReductions(RewriterBase &rewriter,
                                       linalg::GenericOp op, int64_t least) {
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
  Value threshold = arith::ConstantIndexOp::create(rewriter, loc, least);
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

LogicalResult splitLongSum(RewriterBase &rewriter, linalg::LinalgOp op,
                           unsigned dim, int64_t block) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op.emitOpError("could not be generalized");
    generic = *generalized;
  }
  auto add = dyn_cast_or_null<arith::AddFOp>(getCombiner(generic));
  if (!add || generic.hasIndexSemantics())
    return success();
  rewriter.modifyOpInPlace(add, [&] {
    add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
  });
  if (ShapedType::isDynamic(generic.getStaticLoopRanges()[dim]))
    generic = guardShortReductions(rewriter, generic, 2 * block);
  if (failed(splitIntoBlocks(rewriter, generic, dim, block,
                             /*pairwise=*/true)))
    return generic.emitOpError("could not be split into blocks");
  return success();
}

} // namespace mlir::pk
