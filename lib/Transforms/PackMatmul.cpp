//===- PackMatmul.cpp - register-tile panels for large matmuls ------------===//

#include "picokernel/Transforms/Passes.h"

#include "IterationCount.h"
#include "RunTimeChoice.h"
#include "Tiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKPACKMATMUL
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// The rows and columns of C one register tile holds: two vectors per row,
/// as many rows as leave registers for a row of B and a broadcast A
/// element (x86: 32 registers with AVX-512, 16 before).
std::pair<int64_t, int64_t> registerTile(Type element, int64_t vectorBits) {
  int64_t lanes =
      std::max<int64_t>(1, vectorBits / element.getIntOrFloatBitWidth());
  int64_t rows = vectorBits >= 512 ? 8 : vectorBits >= 256 ? 6 : 4;
  return {rows, 2 * lanes};
}

/// The register tiles pk-pack-matmul computes C in: `rows` x `columns`.
struct TilePlan {
  int64_t rows, columns;
};

/// The tiles of one vector per row for products of up to a vector's lanes
/// of columns (`columns`): twice a register tile's rows (as many FMAs per
/// step of K as its two vectors per row, no more registers), no padding to
/// a second vector. Where a count of rows from a register tile's divides a
/// static M, tiles of it: A is then read in place (readOncePanelsInPlace).
TilePlan vectorOfColumns(int64_t m, int64_t rows, int64_t columns) {
  if (ShapedType::isDynamic(m) || m <= 2 * rows)
    return {ShapedType::isDynamic(m) ? 2 * rows : m, columns};
  for (int64_t divisor = 2 * rows; divisor >= rows; --divisor)
    if (m % divisor == 0)
      return {divisor, columns};
  return {2 * rows, columns};
}

/// The register tiles of `op`'s product (see registerTile), if it fills
/// them well enough to pack: a whole K block, and two rows and columns.
/// A product of a few rows (a static M from 2: small batches of inference)
/// takes tiles of all M rows, which pack no padding and read B once; a
/// product of up to a vector's lanes of columns, tiles of one vector per
/// row (vectorOfColumns), of N rounded up to a power of two lanes.
/// Products of one row or column (matrix-vector products,
/// pk-vectorize-matvec's) would be padded many times over, in time and
/// memory. Dynamic sizes may fill them (see shouldPack).
std::optional<TilePlan> tileFor(linalg::LinalgOp op, int64_t vectorBits,
                                int64_t kBlock) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  auto [rows, columns] = registerTile(element, vectorBits);
  int64_t m = sizes[dims->m.front()], n = sizes[dims->n.front()],
          k = sizes[dims->k.front()];
  auto atLeast = [](int64_t size, int64_t least) {
    return ShapedType::isDynamic(size) || size >= least;
  };
  if (!atLeast(k, kBlock) || !atLeast(m, 2) || !atLeast(n, 2))
    return std::nullopt;
  if (!ShapedType::isDynamic(n) && 2 * n <= columns)
    return vectorOfColumns(m, rows, int64_t(llvm::PowerOf2Ceil(n)));
  return TilePlan{ShapedType::isDynamic(m) ? rows : std::min(m, rows), columns};
}

/// Makes the elementwise consumer of a product `result` (its only use)
/// write into the product's tensor when it reads it element for element and
/// has its type: no tensor of its own, so that both compute in one buffer.
void updateInPlace(RewriterBase &rewriter, Value result) {
  if (!result.hasOneUse())
    return;
  OpOperand &read = *result.use_begin();
  auto consumer = dyn_cast<linalg::GenericOp>(read.getOwner());
  if (!consumer || !linalg::isElementwise(consumer) ||
      consumer.getNumDpsInits() != 1 || !consumer.isDpsInput(&read))
    return;
  OpOperand &init = consumer.getDpsInitsMutable()[0];
  if (!init.get().getDefiningOp<tensor::EmptyOp>() ||
      init.get().getType() != result.getType() ||
      consumer.getMatchingIndexingMap(&read) !=
          consumer.getMatchingIndexingMap(&init))
    return;
  rewriter.modifyOpInPlace(consumer, [&] { init.set(result); });
}

/// Makes the packed contraction write C in its own layout, viewed as
/// [.., M/mb, mb, N/nb, nb] (an expand_shape, no copy), instead of a packed
/// copy of C unpacked afterwards: two passes over C fewer when the tiles
/// divide C (`tilesDivide`: they do at run time). When they do not (or may
/// not: dynamic sizes), and C starts as a fill, it writes a padded C in that
/// layout, whose slice is copied into the result (one pass fewer than the
/// unpack's transpose and copy).
void writeUnpackedResult(RewriterBase &rewriter, linalg::PackResult &packed,
                         bool tilesDivide) {
  auto generic =
      dyn_cast<linalg::GenericOp>(packed.packedLinalgOp.getOperation());
  if (!generic || generic.getNumDpsInits() != 1 || packed.unPackOps.size() != 1)
    return;
  linalg::UnPackOp unpack = packed.unPackOps.front();
  auto pack = generic.getDpsInits()[0].getDefiningOp<linalg::PackOp>();
  if (!pack || !pack->hasOneUse())
    return;
  auto type = cast<RankedTensorType>(pack.getSource().getType());
  int64_t rank = type.getRank();
  ArrayRef<int64_t> positions = pack.getInnerDimsPos();
  SmallVector<int64_t> tiles(pack.getStaticInnerTiles());
  if (!pack.getOuterDimsPerm().empty() &&
      !isIdentityPermutation(pack.getOuterDimsPerm()))
    return;
  if (positions.size() != 2 || positions[0] != rank - 2 ||
      positions[1] != rank - 1)
    return;
  auto fill = pack.getSource().getDefiningOp<linalg::FillOp>();
  bool fillsNew = fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  ArrayRef<int64_t> sizes = type.getShape();
  bool divides = tilesDivide ||
                 (type.hasStaticShape() && sizes[rank - 2] % tiles[0] == 0 &&
                  sizes[rank - 1] % tiles[1] == 0);
  if (!divides && !fillsNew)
    return;

  Location loc = generic.getLoc();
  rewriter.setInsertionPoint(generic);
  SmallVector<OpFoldResult> mixed =
      tensor::getMixedSizes(rewriter, loc, pack.getSource());
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape, padded(sizes);
  SmallVector<Value> dynamicShape;
  for (int64_t d = 0; d < rank - 2; ++d) {
    groups.push_back({int64_t(shape.size())});
    shape.push_back(sizes[d]);
    if (ShapedType::isDynamic(sizes[d]))
      dynamicShape.push_back(cast<Value>(mixed[d]));
  }
  for (int64_t i = 0; i < 2; ++i) {
    int64_t first = shape.size(), d = rank - 2 + i;
    groups.push_back({first, first + 1});
    int64_t outer = ShapedType::isDynamic(sizes[d])
                        ? ShapedType::kDynamic
                        : llvm::divideCeil(sizes[d], tiles[i]);
    if (ShapedType::isDynamic(outer))
      dynamicShape.push_back(arith::CeilDivSIOp::create(
          rewriter, loc, cast<Value>(mixed[d]),
          arith::ConstantIndexOp::create(rewriter, loc, tiles[i])));
    shape.push_back(outer);
    shape.push_back(tiles[i]);
    padded[d] = ShapedType::isDynamic(outer) ? outer : outer * tiles[i];
  }
  auto expandedType = RankedTensorType::get(shape, type.getElementType());
  // A fill of a new tensor stays one (empty-tensor elimination then finds
  // the tensor.empty); other initial values are viewed expanded.
  Value expanded;
  if (fillsNew) {
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, expandedType, dynamicShape);
    expanded = linalg::FillOp::create(rewriter, loc, fill.getInputs(), empty)
                   .getResult(0);
  } else {
    expanded = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                             pack.getSource(), groups);
  }
  // The packed C's map ends (.., m1, n1, m0, n0); the view's is
  // (.., m1, m0, n1, n0).
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  AffineMap out = maps.back();
  SmallVector<AffineExpr> results(out.getResults());
  unsigned n = results.size();
  std::swap(results[n - 3], results[n - 2]);
  maps.back() = AffineMap::get(out.getNumDims(), 0, results, out.getContext());
  auto replacement = linalg::GenericOp::create(
      rewriter, loc, TypeRange{expandedType}, generic.getDpsInputs(),
      ValueRange{expanded}, maps, generic.getIteratorTypesArray());
  replacement->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(generic.getRegion(), replacement.getRegion(),
                              replacement.getRegion().end());
  rewriter.setInsertionPoint(unpack);
  Value result = tensor::CollapseShapeOp::create(
      rewriter, unpack.getLoc(),
      RankedTensorType::get(padded, type.getElementType()),
      replacement.getResult(0), groups);
  if (divides) {
    rewriter.replaceOp(unpack, result);
    mlir::pk::storeWithoutCollapse(
        rewriter, cast<tensor::CollapseShapeOp>(result.getDefiningOp()));
    // (With static sizes pk-vectorize-packed-matmul may fuse it instead.)
    if (!type.hasStaticShape())
      updateInPlace(rewriter, result);
  } else {
    // Read as a slice by the ops that consume it (an epilogue), or else
    // copied into the unpack's destination (without its fill: the copy
    // writes every element), which bufferization then places in the
    // caller's buffer.
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        strides(rank, rewriter.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, unpack.getLoc(), type, result, offsets, mixed, strides);
    bool readByOps = llvm::all_of(unpack->getUses(), [](OpOperand &use) {
      auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
      return user && user.isDpsInput(&use);
    });
    Value into = unpack.getDest();
    if (auto intoFill = into.getDefiningOp<linalg::FillOp>())
      into = intoFill.getOutputs()[0];
    if (readByOps)
      rewriter.replaceOp(unpack, slice);
    else
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(unpack, slice, into);
  }
  rewriter.eraseOp(generic);
  rewriter.eraseOp(pack);
  packed.packedLinalgOp = cast<linalg::LinalgOp>(replacement.getOperation());
}

/// Makes `generic` read `operand` (a pack) through a view of the pack's
/// source split into its tiles; see readOncePanelsInPlace.
void readInPlace(RewriterBase &rewriter, linalg::GenericOp generic,
                 OpOperand *operand) {
  auto pack = operand->get().getDefiningOp<linalg::PackOp>();
  // (An operand the kernel computes, a cast, is made by its pack instead.)
  if (!pack || pack.getSource().getDefiningOp<linalg::LinalgOp>())
    return;
  auto type = cast<RankedTensorType>(pack.getSource().getType());
  ArrayRef<int64_t> positions = pack.getInnerDimsPos();
  SmallVector<int64_t> tiles(pack.getStaticInnerTiles());
  if (!type.hasStaticShape())
    return;
  int64_t rank = type.getRank();
  // The view: each tiled dimension as (outer, inner) dimensions.
  SmallVector<int64_t> shape, outerOf(rank), innerOf(rank);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = type.getDimSize(d), first = shape.size();
    const int64_t *tiled = llvm::find(positions, d);
    outerOf[d] = first;
    if (tiled == positions.end()) {
      groups.push_back({first});
      shape.push_back(size);
      continue;
    }
    int64_t tile = tiles[tiled - positions.begin()];
    if (ShapedType::isDynamic(tile) || size % tile != 0)
      return;
    groups.push_back({first, first + 1});
    innerOf[d] = first + 1;
    shape.append({size / tile, tile});
  }
  // The packed operand's dimensions as the view's.
  ArrayRef<int64_t> perm = pack.getOuterDimsPerm();
  AffineMap map = generic.getMatchingIndexingMap(operand);
  SmallVector<AffineExpr> results(shape.size());
  for (int64_t i = 0; i < rank; ++i)
    results[outerOf[perm.empty() ? i : perm[i]]] = map.getResult(i);
  for (auto [j, d] : llvm::enumerate(positions))
    results[innerOf[d]] = map.getResult(rank + j);
  rewriter.setInsertionPoint(generic);
  Value view = tensor::ExpandShapeOp::create(
      rewriter, pack.getLoc(),
      RankedTensorType::get(shape, type.getElementType()), pack.getSource(),
      groups);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  maps[operand->getOperandNumber()] =
      AffineMap::get(map.getNumDims(), 0, results, map.getContext());
  rewriter.modifyOpInPlace(generic, [&] {
    operand->set(view);
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  if (pack->use_empty())
    rewriter.eraseOp(pack);
}

/// Makes the packed contraction read an operand through a view of its own
/// layout, each tiled dimension split in two (an expand_shape, no copy),
/// instead of a packed copy, where each of its panels is read once: B where
/// C has one panel of rows (always where `oneRowPanel`: a dynamic M that a
/// run-time choice found small), A where C has one panel of columns.
/// Packing it would only add two passes over it. Needs static sizes that
/// the tiles divide.
void readOncePanelsInPlace(RewriterBase &rewriter, linalg::PackResult &packed,
                           bool oneRowPanel) {
  auto generic =
      dyn_cast<linalg::GenericOp>(packed.packedLinalgOp.getOperation());
  if (!generic || generic.getNumDpsInputs() != 2)
    return;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(generic);
  if (failed(dims) || dims->m.empty() || dims->n.empty())
    return;
  // The outer (panel) dimensions come first.
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (oneRowPanel || ranges[dims->m.front()] == 1)
    readInPlace(rewriter, generic, generic.getDpsInputOperand(1));
  if (ranges[dims->n.front()] == 1)
    readInPlace(rewriter, generic, generic.getDpsInputOperand(0));
}

/// Whether `op` (a matmul with dynamic sizes) fills register tiles of C
/// whose `columns` columns need at least `minColumns` of C's, and has at
/// least `minIterations` multiply-adds, computed before it.
Value shouldPack(RewriterBase &rewriter, linalg::LinalgOp op,
                 const linalg::ContractionDimensions &dims, int64_t minColumns,
                 int64_t kBlock, int64_t minIterations) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto atLeast = [&](Value size, int64_t least) {
    return mlir::pk::isAtLeast(rewriter, loc, size, least);
  };
  auto size = [&](unsigned dim) {
    return mlir::pk::loopSize(rewriter, op, dim);
  };
  Value m = size(dims.m.front()), n = size(dims.n.front()),
        k = size(dims.k.front());
  // Batches x M x N at least minIterations / K (rounded up): C fits in
  // memory, so that product does not overflow where B x M x N x K might.
  Value outputs = arith::MulIOp::create(rewriter, loc, m, n);
  for (unsigned b : dims.batch)
    outputs = arith::MulIOp::create(rewriter, loc, outputs, size(b));
  Value positiveK = arith::MaxSIOp::create(rewriter, loc, k, constant(1));
  Value needed = arith::CeilDivSIOp::create(rewriter, loc,
                                            constant(minIterations), positiveK);
  Value large = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                      outputs, needed);
  // (Fewer rows than a tile's are padded: a product of so few rows reads
  // its other operand at the speed of memory, however many rows its tiles
  // compute.)
  Value fills = atLeast(m, 2);
  fills = arith::AndIOp::create(rewriter, loc, fills, atLeast(n, minColumns));
  fills = arith::AndIOp::create(rewriter, loc, fills, atLeast(k, kBlock));
  return arith::AndIOp::create(rewriter, loc, fills, large);
}

/// Whether the register tiles divide the rows and columns of `op`'s C.
Value tilesDivide(RewriterBase &rewriter, linalg::LinalgOp op,
                  const linalg::ContractionDimensions &dims, int64_t rows,
                  int64_t columns) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto divides = [&](unsigned dim, int64_t tile) -> Value {
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value rest = arith::RemSIOp::create(
        rewriter, loc, mlir::pk::loopSize(rewriter, op, dim),
        arith::ConstantIndexOp::create(rewriter, loc, tile));
    return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, rest,
                                 zero);
  };
  return arith::AndIOp::create(rewriter, loc, divides(dims.m.front(), rows),
                               divides(dims.n.front(), columns));
}

struct PackMatmulPass
    : public mlir::pk::impl::PkPackMatmulBase<PackMatmulPass> {
  using PkPackMatmulBase::PkPackMatmulBase;

  void runOnOperation() override {
    int64_t bits =
        vectorBits > 0 ? int64_t(vectorBits) : mlir::pk::hostVectorBits();
    if (kBlock < 1) {
      getOperation().emitError("pk-pack-matmul: k-block must be positive");
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
          !op.hasPureTensorSemantics())
        return;
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      if (!element.isIntOrFloat() || element.isInteger(1))
        return;
      // (Dynamic sizes count as many: shouldPack decides at run time.)
      int64_t count = mlir::pk::iterationCount(op);
      if (count == 0 || count < minIterations || !tileFor(op, bits, kBlock))
        return;
      matmuls.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      TilePlan plan = *tileFor(op, bits, kBlock);
      if (op.hasDynamicShape()
              ? failed(packAtRunTime(rewriter, op, plan,
                                     registerTile(element, bits).first))
              : failed(
                    packInTiles(rewriter, op, plan.rows, plan.columns, false)))
        return signalPassFailure();
    }
  }

  /// Packs `op`, whose sizes are dynamic, where run-time sizes fill the
  /// tiles of `plan` (see shouldPack); the packed product writes C itself
  /// where the tiles divide it, else a padded copy. Where N is dynamic,
  /// products of fewer columns than a vector's lanes (from 2) pack in
  /// tiles of one vector per row (vectorOfColumns, from a register tile's
  /// `rows`), which sum long K in blocks as the others do.
  LogicalResult packAtRunTime(RewriterBase &rewriter, linalg::LinalgOp op,
                              const TilePlan &plan, int64_t rows) {
    linalg::ContractionDimensions dims = *linalg::inferContractionDims(op);
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    int64_t m = sizes[dims.m.front()], n = sizes[dims.n.front()],
            k = sizes[dims.k.front()];
    int64_t lanes = plan.columns / 2;
    // (`op` is gone after the first choice.)
    Location loc = op.getLoc();
    // (B computed in the kernel, a cast, is packed with it instead.)
    Value rhs = op.getDpsInputs()[1];
    bool rhsStaticInput = cast<ShapedType>(rhs.getType()).hasStaticShape() &&
                          !rhs.getDefiningOp<linalg::LinalgOp>();
    // (B's cast moves into every branch: each packing fuses it.)
    auto [packed, plain] = mlir::pk::chooseAtRunTime(
        rewriter, op,
        shouldPack(rewriter, op, dims, std::max<int64_t>(lanes, 2), kBlock,
                   minIterations),
        /*copyProducers=*/true);
    // A dynamic M of a few row panels, up to kMaxFewRowPanels and a static
    // N's count of column panels (C is then small, and padded):
    // pk-vectorize-packed-matmul runs its column panels in parallel. Of one
    // panel, B is read in place where it can be (static, divided by the
    // tiles), as it is for a static M that small.
    if (ShapedType::isDynamic(m)) {
      bool rhsInPlace =
          rhsStaticInput && k % kBlock == 0 && n % plan.columns == 0;
      int64_t fewPanels = mlir::pk::kMaxFewRowPanels;
      if (!ShapedType::isDynamic(n))
        fewPanels =
            std::min<int64_t>(fewPanels, llvm::divideCeil(n, plan.columns));
      SmallVector<int64_t> panelCounts = {fewPanels};
      if (rhsInPlace && fewPanels > 1)
        panelCounts.insert(panelCounts.begin(), 1);
      for (int64_t panels : panelCounts) {
        rewriter.setInsertionPoint(packed);
        Value within = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::sle,
            mlir::pk::loopSize(rewriter, packed, dims.m.front()),
            arith::ConstantIndexOp::create(rewriter, loc, panels * plan.rows));
        auto [fewRows, moreRows] =
            mlir::pk::chooseAtRunTime(rewriter, packed, within, true);
        if (failed(packInTiles(rewriter, fewRows, plan.rows, plan.columns,
                               false, /*fewRowPanels=*/true,
                               /*oneRowPanel=*/panels == 1)))
          return failure();
        packed = moreRows;
      }
    }
    // (A static size that the tiles do not divide never takes the branch
    // where they do, whose padded C would not have the result's type.)
    auto mayDivide = [](int64_t size, int64_t tile) {
      return ShapedType::isDynamic(size) || size % tile == 0;
    };
    if (!mayDivide(m, plan.rows) || !mayDivide(n, plan.columns)) {
      if (failed(packInTiles(rewriter, packed, plan.rows, plan.columns, false)))
        return failure();
    } else {
      auto [divided, padded] = mlir::pk::chooseAtRunTime(
          rewriter, packed,
          tilesDivide(rewriter, packed, dims, plan.rows, plan.columns), true);
      if (failed(
              packInTiles(rewriter, divided, plan.rows, plan.columns, true)) ||
          failed(packInTiles(rewriter, padded, plan.rows, plan.columns, false)))
        return failure();
    }
    if (ShapedType::isDynamic(n) && lanes > 2) {
      auto [vectors, rest] = mlir::pk::chooseAtRunTime(
          rewriter, plain,
          shouldPack(rewriter, plain, dims, 2, kBlock, minIterations), true);
      // (Fewer columns than a vector's lanes: C is padded.)
      TilePlan vectorTiles = vectorOfColumns(m, rows, lanes);
      if (failed(packInTiles(rewriter, vectors, vectorTiles.rows,
                             vectorTiles.columns, false)))
        return failure();
      plain = rest;
    }
    updateInPlace(rewriter, plain->getResult(0));
    return success();
  }

  /// Packs `op` into register tiles of `rows` x `columns` (see
  /// writeUnpackedResult for `divides`, readOncePanelsInPlace for
  /// `oneRowPanel`), tagged with kFewRowPanelsAttrName where `fewRowPanels`.
  LogicalResult packInTiles(RewriterBase &rewriter, linalg::LinalgOp op,
                            int64_t rows, int64_t columns, bool divides,
                            bool fewRowPanels = false,
                            bool oneRowPanel = false) {
    linalg::BlockPackMatmulOptions packing;
    packing.blockFactors = {rows, columns, int64_t(kBlock)};
    packing.allowPadding = true;
    packing.rhsTransposeOuterBlocks = true;
    packing.rhsTransposeInnerBlocks = false;
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::PackResult> packed = linalg::blockPackMatmul(
        rewriter, op,
        [&](linalg::LinalgOp) -> std::optional<linalg::BlockPackMatmulOptions> {
          return packing;
        });
    if (failed(packed))
      return op.emitOpError("could not be packed into register tiles");
    packed->packedLinalgOp->setAttr(mlir::pk::kPackedMatmulAttrName,
                                    rewriter.getUnitAttr());
    if (fewRowPanels)
      packed->packedLinalgOp->setAttr(mlir::pk::kFewRowPanelsAttrName,
                                      rewriter.getUnitAttr());
    writeUnpackedResult(rewriter, *packed, divides);
    readOncePanelsInPlace(rewriter, *packed, oneRowPanel);
    return success();
  }
};

} // namespace
