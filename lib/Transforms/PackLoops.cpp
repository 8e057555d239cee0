//===- PackLoops.cpp - packs as loops that move one tile per step ---------===//

#include "Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// The pack's tiles when it has static shapes and tiles the trailing
/// dimensions of its source, each once.
FailureOr<PackTiles> tilesOf(linalg::PackOp pack) {
  RankedTensorType source = pack.getSourceType();
  RankedTensorType dest = pack.getDestType();
  Type element = source.getElementType();
  if (!source.hasStaticShape() || !dest.hasStaticShape() ||
      !VectorType::isValidElementType(element) || element.isInteger(1))
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
  for (int64_t i = 0; i < count; ++i)
    inBounds.push_back(
        sourceType.getShape()[tiles.firstTiled + i] % tiles.tiles[i] == 0);
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
                                 bool parallel) {
  FailureOr<PackTiles> tiles = tilesOf(pack);
  if (failed(tiles))
    return failure();
  Location loc = pack.getLoc();
  RankedTensorType destType = pack.getDestType();
  int64_t rank = pack.getSourceType().getRank();
  rewriter.setInsertionPoint(pack);
  TileMove moveTile = tileMove(rewriter, pack, *tiles);
  Value empty = tensor::EmptyOp::create(rewriter, loc, destType.getShape(),
                                        destType.getElementType());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> bounds;
  for (int64_t i = 0; i < rank; ++i)
    bounds.push_back(
        arith::ConstantIndexOp::create(rewriter, loc, destType.getShape()[i]));
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

  Value result;
  int64_t firstExtent = destType.getShape()[0];
  if (!parallel || firstExtent < 2) {
    result = nest(rewriter, loc, bounds, empty, {}, false);
  } else {
    // The outermost dimension's slices in parallel.
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(firstExtent)},
        ValueRange{empty}, std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value index = forall.getInductionVars().front();
    SmallVector<OpFoldResult> offsets(destType.getRank(),
                                      rewriter.getIndexAttr(0));
    offsets[0] = index;
    SmallVector<OpFoldResult> sizes,
        strides(destType.getRank(), rewriter.getIndexAttr(1));
    for (int64_t size : destType.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    sizes[0] = rewriter.getIndexAttr(1);
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, forall.getRegionIterArgs().front(), offsets, sizes,
        strides);
    Value moved = nest(rewriter, loc, ValueRange(bounds).drop_front(), slice,
                       ValueRange{index}, true);
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, moved,
                                          forall.getRegionIterArgs().front(),
                                          offsets, sizes, strides);
    result = forall.getResult(0);
  }
  rewriter.replaceOp(pack, result);
  return result;
}

} // namespace mlir::pk
