//===- ExpandFloorDivForSpirv.cpp - floor/ceil divisions SPIR-V has -------===//
//
// SPIR-V has truncating integer division only. Index arithmetic of views
// folded into loads (a reshaped buffer read as blocks) lowers to
// arith.floordivsi and friends, which its conversion cannot legalize.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKEXPANDFLOORDIVFORSPIRV
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct ExpandFloorDivForSpirvPass
    : public mlir::pk::impl::PkExpandFloorDivForSpirvBase<
          ExpandFloorDivForSpirvPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
