//===- Tiling.cpp - shared steps of the matmul tiling passes --------------===//

#include "Tiling.h"

#include "picokernel/Support/VectorWidth.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::pk {

int64_t hostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return ::pk::widestVectorBits(
      [&](const char *name) { return features.lookup(name); });
}

FailureOr<scf::SCFTilingResult> tileInto(RewriterBase &rewriter, Operation *op,
                                         ArrayRef<int64_t> sizes,
                                         scf::SCFTilingOptions::LoopType type) {
  return tileInto(rewriter, op, getAsIndexOpFoldResult(op->getContext(), sizes),
                  type);
}

FailureOr<scf::SCFTilingResult> tileInto(RewriterBase &rewriter, Operation *op,
                                         ArrayRef<OpFoldResult> sizes,
                                         scf::SCFTilingOptions::LoopType type) {
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  options.setLoopType(type);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

int64_t evenChunk(int64_t range, int64_t most) {
  if (range <= most)
    return range;
  int64_t chunks = llvm::divideCeil(range, most);
  return llvm::divideCeil(range, chunks);
}

linalg::GenericOp dropUnitDimsIn(RewriterBase &rewriter, Operation *loop) {
  RewritePatternSet unitDims(loop->getContext());
  linalg::ControlDropUnitDims dropUnitDims;
  dropUnitDims.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  linalg::populateFoldUnitExtentDimsPatterns(unitDims, dropUnitDims);
  tensor::populateMergeConsecutiveInsertExtractSlicePatterns(unitDims);
  if (failed(applyPatternsGreedily(loop, std::move(unitDims))))
    return {};
  return findFirst<linalg::GenericOp>(loop);
}

LogicalResult vectorizeTileIn(RewriterBase &rewriter, Operation *loop,
                              bool reductionsFirst, int64_t dynamicSize,
                              bool assumeWhole) {
  linalg::GenericOp tile = dropUnitDimsIn(rewriter, loop);
  if (!tile)
    return failure();
  if (reductionsFirst) {
    SmallVector<unsigned> order;
    for (bool reductions : {true, false})
      for (auto [dim, type] : llvm::enumerate(tile.getIteratorTypesArray()))
        if ((type == utils::IteratorType::reduction) == reductions)
          order.push_back(dim);
    FailureOr<linalg::GenericOp> interchanged =
        linalg::interchangeGenericOp(rewriter, tile, order);
    if (failed(interchanged))
      return failure();
    tile = *interchanged;
  }
  return vectorizeOp(rewriter, tile, dynamicSize, assumeWhole);
}

LogicalResult vectorizeOp(RewriterBase &rewriter, linalg::LinalgOp op,
                          int64_t dynamicSize, bool assumeWhole) {
  SmallVector<int64_t> sizes;
  SmallVector<bool> scalable; // none, but vectorize wants one per size
  if (op.hasDynamicShape()) {
    // (A dynamic size the caller did not expect: vectors of no lanes would
    // reach LLVM, which does not take them.)
    if (dynamicSize <= 0)
      return failure();
    sizes = op.getStaticLoopRanges();
    for (int64_t &size : sizes)
      if (ShapedType::isDynamic(size))
        size = dynamicSize;
    scalable.assign(sizes.size(), false);
  }
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::VectorizationResult> vectors = linalg::vectorize(
      rewriter, op, sizes, scalable,
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/assumeWhole);
  if (failed(vectors))
    return failure();
  rewriter.replaceOp(op, vectors->replacements);
  return success();
}

void storeWithoutCollapse(RewriterBase &rewriter,
                          tensor::CollapseShapeOp collapse) {
  if (!collapse->hasOneUse())
    return;
  auto store = dyn_cast<bufferization::MaterializeInDestinationOp>(
      *collapse->getUsers().begin());
  if (!store || store.getSource() != collapse.getResult())
    return;
  auto dest = dyn_cast<TypedValue<MemRefType>>(store.getDest());
  if (!dest || !dest.getType().getLayout().isIdentity())
    return;
  rewriter.setInsertionPoint(store);
  auto expandedType = cast<RankedTensorType>(collapse.getSrc().getType());
  Value view = memref::ExpandShapeOp::create(
      rewriter, store.getLoc(),
      MemRefType::get(expandedType.getShape(), expandedType.getElementType()),
      dest, collapse.getReassociationIndices());
  rewriter.modifyOpInPlace(store, [&] {
    store.getSourceMutable().assign(collapse.getSrc());
    store.getDestMutable().assign(view);
  });
  rewriter.eraseOp(collapse);
}

void assumeWholeTiles(RewriterBase &rewriter, LoopLikeOpInterface loop) {
  std::optional<SmallVector<Value>> ivs = loop.getLoopInductionVars();
  std::optional<SmallVector<OpFoldResult>> steps = loop.getLoopSteps();
  if (!ivs || !steps)
    return;
  // (Also in loops inside: tiling a batch dimension as well puts the
  // bounds of the outer loop's tiles in the inner loop.)
  SmallVector<affine::AffineMinOp> bounds;
  for (Region *region : loop.getLoopRegions())
    region->walk([&](affine::AffineMinOp min) { bounds.push_back(min); });
  for (affine::AffineMinOp min : bounds)
    for (auto [iv, step] : llvm::zip(*ivs, *steps)) {
      std::optional<int64_t> tile = getConstantIntValue(step);
      bool boundsTile =
          tile && llvm::is_contained(min.getOperands(), iv) &&
          llvm::any_of(min.getMap().getResults(), [&](AffineExpr result) {
            auto constant = dyn_cast<AffineConstantExpr>(result);
            return constant && constant.getValue() == *tile;
          });
      if (!boundsTile)
        continue;
      rewriter.setInsertionPoint(min);
      rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(min, *tile);
      break;
    }
}

void unmaskSums(RewriterBase &rewriter, Operation *root) {
  SmallVector<vector::MaskOp> masks;
  root->walk([&](vector::MaskOp mask) {
    auto sum = dyn_cast_or_null<vector::ReductionOp>(mask.getMaskableOp());
    if (sum && sum.getKind() == vector::CombiningKind::ADD &&
        !mask.hasPassthru())
      masks.push_back(mask);
  });
  for (vector::MaskOp mask : masks) {
    auto sum = cast<vector::ReductionOp>(mask.getMaskableOp());
    rewriter.setInsertionPoint(mask);
    Location loc = sum.getLoc();
    auto type = cast<VectorType>(sum.getVector().getType());
    Type element = type.getElementType();
    TypedAttr zero = isa<FloatType>(element)
                         ? TypedAttr(rewriter.getFloatAttr(element, -0.0))
                         : TypedAttr(rewriter.getIntegerAttr(element, 0));
    Value identity = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(type, zero));
    Value lanes = arith::SelectOp::create(rewriter, loc, mask.getMask(),
                                          sum.getVector(), identity);
    Value total = vector::ReductionOp::create(rewriter, loc, sum.getKind(),
                                              lanes, sum.getAcc(),
                                              sum.getFastmathAttr().getValue());
    rewriter.replaceOp(mask, total);
  }
}

linalg::GenericOp elementwiseProducerAlone(Value value) {
  auto producer = value.getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer->hasOneUse() || !linalg::isElementwise(producer))
    return {};
  return producer;
}

void readSizesFrom(RewriterBase &rewriter, Value value, Value sameShape) {
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses()))
    if (isa<tensor::DimOp>(use.getOwner()))
      rewriter.modifyOpInPlace(use.getOwner(), [&] { use.set(sameShape); });
}

/// Erases `op` where nothing reads its results but side-effect-free ops
/// that nothing reads, with those; whether it did.
static bool eraseIfUnused(RewriterBase &rewriter, Operation *op) {
  llvm::SetVector<Operation *> users(llvm::from_range, op->getUsers());
  for (Operation *user : users)
    // (A user that an earlier one's erasure took along reads op no more.)
    if (llvm::is_contained(op->getUsers(), user) &&
        !eraseIfUnused(rewriter, user))
      return false;
  if (!isOpTriviallyDead(op))
    return false;
  rewriter.eraseOp(op);
  return true;
}

Operation *fuseProducerIntoLoops(RewriterBase &rewriter,
                                 tensor::ExtractSliceOp slice,
                                 MutableArrayRef<LoopLikeOpInterface> loops) {
  auto producer =
      slice.getSource().getDefiningOp<DestinationStyleOpInterface>();
  std::optional<scf::SCFFuseProducerOfSliceResult> fused =
      scf::tileAndFuseProducerOfSlice(rewriter, slice, loops);
  if (!producer || !fused || fused->tiledOps.size() != 1)
    return nullptr;
  readSizesFrom(rewriter, producer->getResult(0), producer.getDpsInits()[0]);
  // (The ops that tiling left behind may read it, unused.)
  eraseIfUnused(rewriter, producer);
  auto tiled = cast<DestinationStyleOpInterface>(fused->tiledOps.front());
  for (OpOperand &init : tiled.getDpsInitsMutable()) {
    auto whole = init.get().getDefiningOp<tensor::ExtractSliceOp>();
    if (!whole || !whole.getSource().getDefiningOp<tensor::EmptyOp>())
      continue;
    rewriter.setInsertionPoint(whole);
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
        whole, whole.getMixedSizes(), whole.getType().getElementType());
  }
  return tiled;
}

} // namespace mlir::pk
