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

/// Whether `op`'s product fills its register tiles well enough to pack:
/// rows for a whole tile, half a tile's columns, a whole K block. Thinner
/// products (dot products, batches of 1 x 1 products) would be padded many
/// times over, in time and memory. Dynamic sizes may (see shouldPack).
bool fillsTiles(linalg::LinalgOp op, int64_t vectorBits, int64_t kBlock) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  auto [rows, columns] = registerTile(element, vectorBits);
  auto atLeast = [&](unsigned dim, int64_t least, int64_t times = 1) {
    return ShapedType::isDynamic(sizes[dim]) || times * sizes[dim] >= least;
  };
  return atLeast(dims->m.front(), rows) &&
         atLeast(dims->n.front(), columns, 2) &&
         atLeast(dims->k.front(), kBlock);
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

/// Whether `op` (a matmul with dynamic sizes) fillsTiles and has at least
/// `minIterations` multiply-adds, computed before it.
Value shouldPack(RewriterBase &rewriter, linalg::LinalgOp op,
                 const linalg::ContractionDimensions &dims, int64_t rows,
                 int64_t columns, int64_t kBlock, int64_t minIterations) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto atLeast = [&](Value size, int64_t least) {
    return mlir::pk::isAtLeast(rewriter, loc, size, least);
  };
  Value m = mlir::pk::loopSize(rewriter, op, dims.m.front());
  Value n = mlir::pk::loopSize(rewriter, op, dims.n.front());
  Value k = mlir::pk::loopSize(rewriter, op, dims.k.front());
  Value twiceN = arith::MulIOp::create(rewriter, loc, n, constant(2));
  // Batches x M x N at least minIterations / K (rounded up): C fits in
  // memory, so that product does not overflow where B x M x N x K might.
  Value outputs = arith::MulIOp::create(rewriter, loc, m, n);
  for (unsigned b : dims.batch)
    outputs = arith::MulIOp::create(rewriter, loc, outputs,
                                    mlir::pk::loopSize(rewriter, op, b));
  Value positiveK = arith::MaxSIOp::create(rewriter, loc, k, constant(1));
  Value needed = arith::CeilDivSIOp::create(rewriter, loc,
                                            constant(minIterations), positiveK);
  Value large = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                                      outputs, needed);
  Value fills = atLeast(m, rows);
  fills = arith::AndIOp::create(rewriter, loc, fills, atLeast(twiceN, columns));
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
      if (count == 0 || count < minIterations || !fillsTiles(op, bits, kBlock))
        return;
      matmuls.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      auto [rows, columns] = registerTile(element, bits);
      if (!op.hasDynamicShape()) {
        if (failed(packInTiles(rewriter, op, rows, columns, false)))
          return signalPassFailure();
        continue;
      }
      // For dynamic sizes, whether to pack is decided at run time; the
      // packed product writes C itself where the tiles divide it, else a
      // padded copy.
      linalg::ContractionDimensions dims = *linalg::inferContractionDims(op);
      auto [packed, plain] = mlir::pk::chooseAtRunTime(
          rewriter, op,
          shouldPack(rewriter, op, dims, rows, columns, kBlock, minIterations));
      updateInPlace(rewriter, plain->getResult(0));
      auto [divided, padded] = mlir::pk::chooseAtRunTime(
          rewriter, packed, tilesDivide(rewriter, packed, dims, rows, columns));
      if (failed(packInTiles(rewriter, divided, rows, columns, true)) ||
          failed(packInTiles(rewriter, padded, rows, columns, false)))
        return signalPassFailure();
    }
  }

  /// Packs `op` into register tiles of `rows` x `columns` (see
  /// writeUnpackedResult for `divides`).
  LogicalResult packInTiles(RewriterBase &rewriter, linalg::LinalgOp op,
                            int64_t rows, int64_t columns, bool divides) {
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
    writeUnpackedResult(rewriter, *packed, divides);
    return success();
  }
};

} // namespace
