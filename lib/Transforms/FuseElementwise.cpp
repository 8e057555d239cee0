//===- FuseElementwise.cpp - elementwise fusion with bounded bodies -------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKFUSEELEMENTWISE
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Operations in a generic's body, its terminator aside.
size_t bodyOps(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic ? generic.getBody()->getOperations().size() - 1 : 0;
}

struct FuseElementwisePass
    : public mlir::pk::impl::PkFuseElementwiseBase<FuseElementwisePass> {
  using PkFuseElementwiseBase::PkFuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Upstream's condition (a producer used once), and a body that stays
    // within the bound. Named products keep their reshapes: folded into
    // them, a reshape would make them generics, and a copy that moves a
    // batch dimension into their rows (pk-to-linalg's broadcast batches)
    // would then fuse back into a contraction that pk-pack-matmul does not
    // pack.
    unsigned limit = maxBodyOps;
    linalg::ControlFusionFn control = [limit](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      auto isProduct = [](Operation *op) {
        return isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(op);
      };
      return producer && producer->hasOneUse() && !isProduct(producer) &&
             !isProduct(fused->getOwner()) &&
             bodyOps(producer) + bodyOps(fused->getOwner()) <= limit;
    };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    // Top down, as upstream's pass: fewer revisits.
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      return signalPassFailure();
  }
};

} // namespace
