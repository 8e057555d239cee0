//===- InlineCpuMath.cpp - math functions as inline polynomials -----------===//

#include "picokernel/Transforms/Passes.h"

#include "InlineMathPatterns.h"
#include "Tiling.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKINLINECPUMATH
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct InlineCpuMathPass
    : public mlir::pk::impl::PkInlineCpuMathBase<InlineCpuMathPass> {
  using PkInlineCpuMathBase::PkInlineCpuMathBase;

  void runOnOperation() override {
    int64_t bits = vectorBits > 0 ? vectorBits : mlir::pk::hostVectorBits();
    // float32 exp, log, tanh and erf and float64 exp as polynomials:
    // arithmetic that loops vectorize at full width instead of a libm call
    // per element or libmvec's (8 lanes, float64 exp 3 ulp off).
    RewritePatternSet patterns(&getContext());
    bool scaleWithLdexp = bits >= 512;
    mlir::pk::populateInlineMathPatterns(patterns, scaleWithLdexp);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
