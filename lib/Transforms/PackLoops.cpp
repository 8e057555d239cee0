//===- PackLoops.cpp - packs as loops that move one tile per step ---------===//

#include "Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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
  auto nest = [&](OpBuilder &builder, Location loc, ValueRange bounds,
                  Value dest, ValueRange before, bool relative) -> Value {
    SmallVector<Value> lbs(bounds.size(), zero), steps(bounds.size(), one);
    scf::LoopNest loops = scf::buildLoopNest(
        builder, loc, lbs, bounds, steps, ValueRange{dest},
        [&](OpBuilder &builder, Location loc, ValueRange ivs,
            ValueRange args) -> scf::ValueVector {
          SmallVector<Value> outer(before.begin(), before.end());
          outer.append(ivs.begin(), ivs.end());
          SmallVector<Value> destOuter(outer);
          if (relative)
            std::fill_n(destOuter.begin(), before.size(), zero);
          return {moveTile(builder, loc, outer, destOuter, args.front())};
        });
    return loops.results.front();
  };

  // The outermost dimension's slices in parallel.
  auto inParallel = [&](OpBuilder &builder, Location loc) -> Value {
    auto forall = scf::ForallOp::create(builder, loc,
                                        ArrayRef<OpFoldResult>{destSizes[0]},
                                        ValueRange{empty}, std::nullopt);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(forall.getBody());
    Value index = forall.getInductionVars().front();
    SmallVector<OpFoldResult> offsets(destType.getRank(),
                                      builder.getIndexAttr(0));
    offsets[0] = index;
    SmallVector<OpFoldResult> sizes(destSizes),
        strides(destType.getRank(), builder.getIndexAttr(1));
    sizes[0] = builder.getIndexAttr(1);
    Value slice = tensor::ExtractSliceOp::create(
        builder, loc, forall.getRegionIterArgs().front(), offsets, sizes,
        strides);
    Value moved = nest(builder, loc, ValueRange(bounds).drop_front(), slice,
                       ValueRange{index}, true);
    builder.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(builder, loc, moved,
                                          forall.getRegionIterArgs().front(),
                                          offsets, sizes, strides);
    return forall.getResult(0);
  };
  auto serially = [&](OpBuilder &builder, Location loc) -> Value {
    return nest(builder, loc, bounds, empty, {}, false);
  };

  Value result;
  int64_t firstExtent = destType.getShape()[0];
  if (parallelThreshold <= 0 ||
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

} // namespace mlir::pk
