//===- ApproximateMathForSpirv.cpp - math ops GLSL lacks ------------------===//

#include "picokernel/Transforms/Passes.h"

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
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
