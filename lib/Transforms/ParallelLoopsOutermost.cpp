//===- ParallelLoopsOutermost.cpp - parallel loops before reductions ------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKPARALLELLOOPSOUTERMOST
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct ParallelLoopsOutermostPass
    : public mlir::pk::impl::PkParallelLoopsOutermostBase<
          ParallelLoopsOutermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp generic : generics) {
      // The old loop index of each new loop: parallel ones first.
      SmallVector<unsigned> order;
      for (auto [index, iterator] :
           llvm::enumerate(generic.getIteratorTypesArray()))
        if (iterator == utils::IteratorType::parallel)
          order.push_back(index);
      for (auto [index, iterator] :
           llvm::enumerate(generic.getIteratorTypesArray()))
        if (iterator != utils::IteratorType::parallel)
          order.push_back(index);
      if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
        continue;
      rewriter.setInsertionPoint(generic);
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitOpError("could not move its parallel loops outermost");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
