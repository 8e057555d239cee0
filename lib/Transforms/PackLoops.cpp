//===- PackLoops.cpp - packs as loops that move one tile per step ---------===//

#include "Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

namespace mlir::pk {

namespace {

/// What packWithVectors needs of a pack, in source-dimension terms.
struct PackTiles {
  /// The first tiled source dimension: those before it are not tiled.
  int64_t firstTiled;
  /// Each tiled source dimension's tile, in source order.
  SmallVector<int64_t> tiles;
  /// The source dimension each destination outer dimension steps through.
  SmallVector<int64_t> outerSource;
};

/// The pack's tiles when they are static and tile the trailing dimensions
/// of its source, each once.
FailureOr<PackTiles> tilesOf(linalg::PackOp pack) {
  RankedTensorType source = pack.getSourceType();
  Type element = source.getElementType();
  if (!VectorType::isValidElementType(element) || element.isInteger(1))
    return failure();
  int64_t rank = source.getRank();
  ArrayRef<int64_t> positions = pack.getInnerDimsPos();
  ArrayRef<int64_t> innerTiles = pack.getStaticInnerTiles();
  if (positions.empty())
    return failure();
  PackTiles tiles;
  tiles.firstTiled = rank - int64_t(positions.size());
  tiles.tiles.assign(positions.size(), 0);
  for (auto [position, tile] : llvm::zip_equal(positions, innerTiles)) {
    if (position < tiles.firstTiled || ShapedType::isDynamic(tile) ||
        tile < 1 || tiles.tiles[position - tiles.firstTiled] != 0)
      return failure();
    tiles.tiles[position - tiles.firstTiled] = tile;
  }
  ArrayRef<int64_t> perm = pack.getOuterDimsPerm();
  for (int64_t i = 0; i < rank; ++i)
    tiles.outerSource.push_back(perm.empty() ? i : perm[i]);
  return tiles;
}

/// Moves one tile of `pack`: reads it at the source offsets of the
/// destination's outer indices `outer` and writes it at `destOuter` of
/// `dest` (a tensor of the destination's rank); the written tensor.
using TileMove = std::function<Value(OpBuilder &, Location, ValueRange outer,
                                     ValueRange destOuter, Value dest)>;

TileMove tileMove(RewriterBase &rewriter, linalg::PackOp pack,
                  PackTiles tiles) {
  Location loc = pack.getLoc();
  RankedTensorType sourceType = pack.getSourceType();
  Type element = sourceType.getElementType();
  int64_t rank = sourceType.getRank();
  int64_t count = tiles.tiles.size();
  MLIRContext *context = rewriter.getContext();

  // Read in source order, with the elements past the source's end read as
  // the padding value; then in the order of the destination's tile.
  auto readType = VectorType::get(tiles.tiles, element);
  SmallVector<bool> inBounds;
  for (int64_t i = 0; i < count; ++i) {
    int64_t size = sourceType.getShape()[tiles.firstTiled + i];
    inBounds.push_back(!ShapedType::isDynamic(size) &&
                       size % tiles.tiles[i] == 0);
  }
  SmallVector<int64_t> order;
  for (int64_t position : pack.getInnerDimsPos())
    order.push_back(position - tiles.firstTiled);
  bool transposed = !llvm::is_sorted(order);
  Value padding = pack.getPaddingValue();
  if (!padding)
    padding = arith::ConstantOp::create(
        rewriter, loc, element, cast<TypedAttr>(rewriter.getZeroAttr(element)));

  Value source = pack.getSource();
  return [=](OpBuilder &builder, Location loc, ValueRange outer,
             ValueRange destOuter, Value dest) -> Value {
    SmallVector<Value> sourceIndices(rank);
    for (int64_t i = 0; i < rank; ++i) {
      int64_t dim = tiles.outerSource[i];
      Value index = outer[i];
      if (dim >= tiles.firstTiled) {
        Value tile = arith::ConstantIndexOp::create(
            builder, loc, tiles.tiles[dim - tiles.firstTiled]);
        index = arith::MulIOp::create(builder, loc, index, tile);
      }
      sourceIndices[dim] = index;
    }
    Value vector = vector::TransferReadOp::create(
        builder, loc, readType, source, sourceIndices,
        AffineMapAttr::get(
            AffineMap::getMinorIdentityMap(rank, count, context)),
        padding, /*mask=*/Value(), builder.getBoolArrayAttr(inBounds));
    if (transposed)
      vector = vector::TransposeOp::create(builder, loc, vector, order);
    int64_t destRank = rank + count;
    SmallVector<Value> destIndices(destOuter.begin(), destOuter.end());
    destIndices.append(count, arith::ConstantIndexOp::create(builder, loc, 0));
    return vector::TransferWriteOp::create(
               builder, loc, vector, dest, destIndices,
               AffineMapAttr::get(
                   AffineMap::getMinorIdentityMap(destRank, count, context)),
               /*mask=*/Value(),
               builder.getBoolArrayAttr(SmallVector<bool>(count, true)))
        .getResult();
  };
}

/// Fuses the single-use elementwise producers of the packs' reshapes and
/// transposes (`packing`) into them.
LogicalResult
fuseProducersIntoPacking(Operation *root,
                         llvm::SmallPtrSetImpl<Operation *> &packing) {
  linalg::ControlFusionFn intoPacking = [&](OpOperand *operand) {
    return packing.contains(operand->getOwner()) &&
           elementwiseProducerAlone(operand->get());
  };
  RewritePatternSet patterns(root->getContext());
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
  return applyPatternsGreedily(root, std::move(patterns), config);
}

} // namespace

FailureOr<Value> packWithVectors(RewriterBase &rewriter, linalg::PackOp pack,
                                 int64_t parallelThreshold) {
  FailureOr<PackTiles> tiles = tilesOf(pack);
  if (failed(tiles))
    return failure();
  Location loc = pack.getLoc();
  RankedTensorType destType = pack.getDestType();
  int64_t rank = pack.getSourceType().getRank();
  rewriter.setInsertionPoint(pack);
  TileMove moveTile = tileMove(rewriter, pack, *tiles);
  // Every element of the destination is written (the padding included).
  Value empty = pack.getDest();
  SmallVector<OpFoldResult> destSizes =
      tensor::getMixedSizes(rewriter, loc, empty);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> bounds;
  for (int64_t i = 0; i < rank; ++i)
    bounds.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, destSizes[i]));
  // The destination's outer dimensions in the source's order, so that the
  // innermost loop steps along the source's rows: read contiguously, rows
  // of B (a transposed pack of its column panels) pass once through the
  // prefetchers instead of a page per step down a panel.
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    return tiles->outerSource[a] < tiles->outerSource[b];
  });
  // Loops over the destination's outer dimensions `dims` (a suffix of
  // `order`), the others at `fixed` (the index of order's first where
  // it is not in `dims`), writing `dest`: at offset 0 in that dimension
  // where `relative` (a slice of the destination).
  auto nest = [&](OpBuilder &builder, Location loc, ArrayRef<int64_t> dims,
                  Value dest, Value fixed, bool relative) -> Value {
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d : dims) {
      lbs.push_back(zero);
      ubs.push_back(bounds[d]);
      steps.push_back(one);
    }
    scf::LoopNest loops = scf::buildLoopNest(
        builder, loc, lbs, ubs, steps, ValueRange{dest},
        [&](OpBuilder &builder, Location loc, ValueRange ivs,
            ValueRange args) -> scf::ValueVector {
          SmallVector<Value> outer(rank), destOuter(rank);
          for (auto [d, iv] : llvm::zip_equal(dims, ivs))
            outer[d] = destOuter[d] = iv;
          if (fixed) {
            outer[order.front()] = fixed;
            destOuter[order.front()] = relative ? zero : fixed;
          }
          return {moveTile(builder, loc, outer, destOuter, args.front())};
        });
    return loops.results.front();
  };

  // The slices of the source's outermost dimension in parallel.
  int64_t parallelDim = order.front();
  auto inParallel = [&](OpBuilder &builder, Location loc) -> Value {
    auto forall = scf::ForallOp::create(
        builder, loc, ArrayRef<OpFoldResult>{destSizes[parallelDim]},
        ValueRange{empty}, std::nullopt);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(forall.getBody());
    Value index = forall.getInductionVars().front();
    SmallVector<OpFoldResult> offsets(destType.getRank(),
                                      builder.getIndexAttr(0));
    offsets[parallelDim] = index;
    SmallVector<OpFoldResult> sizes(destSizes),
        strides(destType.getRank(), builder.getIndexAttr(1));
    sizes[parallelDim] = builder.getIndexAttr(1);
    Value slice = tensor::ExtractSliceOp::create(
        builder, loc, forall.getRegionIterArgs().front(), offsets, sizes,
        strides);
    Value moved =
        nest(builder, loc, ArrayRef(order).drop_front(), slice, index, true);
    builder.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(builder, loc, moved,
                                          forall.getRegionIterArgs().front(),
                                          offsets, sizes, strides);
    return forall.getResult(0);
  };
  auto serially = [&](OpBuilder &builder, Location loc) -> Value {
    return nest(builder, loc, order, empty, Value(), false);
  };

  Value result;
  int64_t firstExtent = destType.getShape()[parallelDim];
  // (A pack inside a parallel loop, one task's panel, runs serially.)
  if (parallelThreshold <= 0 || pack->getParentOfType<scf::ForallOp>() ||
      (!ShapedType::isDynamic(firstExtent) && firstExtent < 2) ||
      (destType.hasStaticShape() &&
       destType.getNumElements() < parallelThreshold)) {
    result = serially(rewriter, loc);
  } else if (destType.hasStaticShape()) {
    result = inParallel(rewriter, loc);
  } else {
    // Dynamic sizes: in parallel from the threshold on, decided at run time
    // (a fork costs microseconds).
    Value count = one;
    for (Value bound : bounds)
      count = arith::MulIOp::create(rewriter, loc, count, bound);
    for (int64_t tile : tiles->tiles)
      count = arith::MulIOp::create(
          rewriter, loc, count,
          arith::ConstantIndexOp::create(rewriter, loc, tile));
    Value large = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sge, count,
        arith::ConstantIndexOp::create(rewriter, loc, parallelThreshold));
    auto yield = [](auto build) {
      return [build](OpBuilder &builder, Location loc) {
        scf::YieldOp::create(builder, loc, build(builder, loc));
      };
    };
    result = scf::IfOp::create(rewriter, loc, large, yield(inParallel),
                               yield(serially))
                 .getResult(0);
  }
  rewriter.replaceOp(pack, result);
  return result;
}

LogicalResult lowerPacks(RewriterBase &rewriter, Operation *root,
                         int64_t parallelThreshold) {
  SmallVector<linalg::PackOp> packs;
  SmallVector<linalg::UnPackOp> unpacks;
  root->walk([&](Operation *op) {
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
    bool fusible =
        elementwiseProducerAlone(pack.getSource()) && !pack.getPaddingValue();
    // Tile by tile, in one pass (in parallel when large), unless an
    // elementwise producer fuses into the lowered pack's transpose.
    if (!fusible &&
        succeeded(mlir::pk::packWithVectors(rewriter, pack, parallelThreshold)))
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
  if (!packing.empty() && failed(fuseProducersIntoPacking(root, packing)))
    return failure();
  for (linalg::UnPackOp unpack : unpacks) {
    rewriter.setInsertionPoint(unpack);
    if (failed(linalg::lowerUnPack(rewriter, unpack)))
      return unpack.emitOpError("could not be lowered");
  }
  return success();
}

} // namespace mlir::pk
