//===- PackMatmul.cpp - register-tile panels for large matmuls ------------===//

#include "picokernel/Transforms/Passes.h"

#include "IterationCount.h"
#include "Tiling.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
/// times over, in time and memory.
bool fillsTiles(linalg::LinalgOp op, int64_t vectorBits, int64_t kBlock) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  auto [rows, columns] = registerTile(element, vectorBits);
  return sizes[dims->m.front()] >= rows &&
         2 * sizes[dims->n.front()] >= columns &&
         sizes[dims->k.front()] >= kBlock;
}

/// Makes the packed contraction write C in its own layout, viewed as
/// [.., M/mb, mb, N/nb, nb] (an expand_shape, no copy), instead of a packed
/// copy of C unpacked afterwards: two passes over C fewer when the tiles
/// divide C. When they do not, and C starts as a fill, it writes a padded
/// C in that layout, whose slice is the result (one pass fewer).
void writeUnpackedResult(RewriterBase &rewriter, linalg::PackResult &packed) {
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
      positions[1] != rank - 1 || !type.hasStaticShape())
    return;
  auto fill = pack.getSource().getDefiningOp<linalg::FillOp>();
  bool fillsNew = fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  bool divides = type.getShape()[rank - 2] % tiles[0] == 0 &&
                 type.getShape()[rank - 1] % tiles[1] == 0;
  if (!divides && !fillsNew)
    return;

  Location loc = generic.getLoc();
  rewriter.setInsertionPoint(generic);
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank - 2; ++d) {
    groups.push_back({int64_t(shape.size())});
    shape.push_back(type.getShape()[d]);
  }
  SmallVector<int64_t> padded(type.getShape());
  for (int64_t i = 0; i < 2; ++i) {
    int64_t first = shape.size();
    groups.push_back({first, first + 1});
    int64_t outer = llvm::divideCeil(type.getShape()[rank - 2 + i], tiles[i]);
    shape.push_back(outer);
    shape.push_back(tiles[i]);
    padded[rank - 2 + i] = outer * tiles[i];
  }
  auto expandedType = RankedTensorType::get(shape, type.getElementType());
  // A fill of a new tensor stays one (empty-tensor elimination then finds
  // the tensor.empty); other initial values are viewed expanded.
  Value expanded;
  if (fillsNew) {
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
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
  } else {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        strides(rank, rewriter.getIndexAttr(1)), sizes;
    for (int64_t size : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        unpack, cast<RankedTensorType>(unpack.getDest().getType()), result,
        offsets, sizes, strides);
  }
  rewriter.eraseOp(generic);
  rewriter.eraseOp(pack);
  packed.packedLinalgOp = cast<linalg::LinalgOp>(replacement.getOperation());
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
      int64_t count = mlir::pk::iterationCount(op);
      if (op.hasDynamicShape() || count == 0 || count < minIterations ||
          !fillsTiles(op, bits, kBlock))
        return;
      matmuls.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      auto [rows, columns] = registerTile(element, bits);
      auto options = [&, rows = rows, columns = columns](linalg::LinalgOp)
          -> std::optional<linalg::BlockPackMatmulOptions> {
        linalg::BlockPackMatmulOptions packing;
        packing.blockFactors = {rows, columns, int64_t(kBlock)};
        packing.allowPadding = true;
        packing.rhsTransposeOuterBlocks = true;
        packing.rhsTransposeInnerBlocks = false;
        return packing;
      };
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::PackResult> packed =
          linalg::blockPackMatmul(rewriter, op, options);
      if (failed(packed)) {
        op.emitOpError("could not be packed into register tiles");
        return signalPassFailure();
      }
      packed->packedLinalgOp->setAttr(mlir::pk::kPackedMatmulAttrName,
                                      rewriter.getUnitAttr());
      writeUnpackedResult(rewriter, *packed);
    }
  }
};

} // namespace
