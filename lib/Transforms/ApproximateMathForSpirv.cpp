//===- ApproximateMathForSpirv.cpp - math ops GLSL lacks ------------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKAPPROXIMATEMATHFORSPIRV
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct ApproximateMathForSpirvPass
    : public mlir::pk::impl::PkApproximateMathForSpirvBase<
          ApproximateMathForSpirvPass> {
  void runOnOperation() override {
    // erf is odd, but the polynomial gives +0 for -0: take the sign from x.
    getOperation()->walk([](math::ErfOp erf) {
      OpBuilder builder(erf->getContext());
      builder.setInsertionPointAfter(erf);
      auto signed_ = math::CopySignOp::create(builder, erf.getLoc(),
                                              erf.getResult(), erf.getOperand());
      erf.getResult().replaceAllUsesExcept(signed_, signed_);
    });
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
