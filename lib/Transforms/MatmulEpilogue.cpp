//===- MatmulEpilogue.cpp - a packed product's elementwise consumer -------===//

#include "MatmulEpilogue.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {

linalg::GenericOp expandEpilogue(RewriterBase &rewriter, linalg::GenericOp op) {
  Value product = op->getResult(0);
  if (!product.hasOneUse())
    return {};
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(*product.user_begin());
  if (!collapse || !collapse->hasOneUse())
    return {};
  auto consumer = dyn_cast<linalg::GenericOp>(*collapse->user_begin());
  // Vectors of i1 would move to and from memory as bits, not NumPy's bytes.
  auto isBool = [](Type type) {
    return getElementTypeOrSelf(type).isInteger(1);
  };
  if (!consumer || !linalg::isElementwise(consumer) ||
      consumer.getNumDpsInits() != 1 || !consumer.hasPureTensorSemantics() ||
      llvm::any_of(consumer->getOperandTypes(), isBool) ||
      failed(linalg::vectorizeOpPrecondition(consumer)))
    return {};
  linalg::ControlFusionFn intoConsumer = [&](OpOperand *operand) {
    return operand->getOwner() == consumer.getOperation() &&
           operand->get() == collapse.getResult();
  };
  RewritePatternSet patterns(op.getContext());
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, intoConsumer);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  if (failed(applyOpPatternsGreedily({consumer.getOperation()},
                                     std::move(patterns), config)))
    return {};
  // The old reshape, dead now (found again: the driver may have erased it).
  for (Operation *user : llvm::make_early_inc_range(product.getUsers()))
    if (isa<tensor::CollapseShapeOp>(user) && user->use_empty())
      rewriter.eraseOp(user);
  if (!product.hasOneUse())
    return {};
  auto expanded = dyn_cast<linalg::GenericOp>(*product.user_begin());
  if (!expanded)
    return {};
  // A reshaped empty output is an empty tensor of the tiled layout, which
  // bufferization then places in the caller's buffer.
  for (OpOperand &init : expanded.getDpsInitsMutable()) {
    auto reshape = init.get().getDefiningOp<tensor::ExpandShapeOp>();
    auto type = cast<RankedTensorType>(init.get().getType());
    if (!reshape || !reshape.getSrc().getDefiningOp<tensor::EmptyOp>() ||
        !type.hasStaticShape())
      continue;
    rewriter.setInsertionPoint(expanded);
    Value empty = tensor::EmptyOp::create(
        rewriter, reshape.getLoc(), type.getShape(), type.getElementType());
    rewriter.modifyOpInPlace(expanded, [&] { init.set(empty); });
  }
  return expanded;
}

FailureOr<SmallVector<LoopLikeOpInterface>>
tileWithEpilogue(RewriterBase &rewriter, linalg::GenericOp &epilogue,
                 Operation *&product,
                 ArrayRef<std::pair<unsigned, OpFoldResult>> sizes,
                 scf::SCFTilingOptions::LoopType type) {
  MLIRContext *context = epilogue.getContext();
  AffineMap result =
      cast<linalg::LinalgOp>(product).getIndexingMapsArray().back();
  SmallVector<OpFoldResult> all(epilogue.getNumLoops(),
                                OpBuilder(context).getIndexAttr(0));
  for (auto [dim, size] : sizes) {
    std::optional<unsigned> position =
        result.getResultPosition(getAffineDimExpr(dim, context));
    if (!position)
      return failure();
    all[*position] = size;
  }
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(all);
  options.tilingOptions.setLoopType(type);
  options.setFusionControlFn(
      [product](tensor::ExtractSliceOp, OpResult producer, bool)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (producer.getOwner() == product)
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(epilogue);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(epilogue.getOperation()), options);
  if (failed(fused) || fused->tiledAndFusedOps.size() != 2)
    return failure();
  for (OpResult value : epilogue->getResults()) {
    Value replacement = fused->replacements.lookup(value);
    if (!replacement)
      return failure();
    rewriter.replaceAllUsesWith(value, replacement);
  }
  rewriter.eraseOp(epilogue);
  if (product->use_empty())
    rewriter.eraseOp(product);
  epilogue = cast<linalg::GenericOp>(fused->tiledAndFusedOps[0]);
  product = fused->tiledAndFusedOps[1];
  return fused->loops;
}

LogicalResult unrollToRows(Operation *root) {
  vector::UnrollVectorOptions options;
  options.setFilterConstraint([](Operation *op) {
    return success(op->hasTrait<OpTrait::Elementwise>());
  });
  options.setNativeShapeFn(
      [](Operation *op) -> std::optional<SmallVector<int64_t>> {
        if (op->getNumResults() != 1)
          return std::nullopt;
        auto type = dyn_cast<VectorType>(op->getResult(0).getType());
        if (!type || type.getRank() < 2)
          return std::nullopt;
        SmallVector<int64_t> row(type.getRank(), 1);
        row.back() = type.getShape().back();
        return row;
      });
  RewritePatternSet patterns(root->getContext());
  vector::populateVectorUnrollPatterns(patterns, options);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  return applyPatternsGreedily(root, std::move(patterns));
}

} // namespace mlir::pk
