//===- AddUnitParallelLoop.cpp - a parallel loop for every linalg op ------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKADDUNITPARALLELLOOP
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct AddUnitParallelLoopPass
    : public mlir::pk::impl::PkAddUnitParallelLoopBase<
          AddUnitParallelLoopPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> serial;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumParallelLoops() == 0 && op.hasPureBufferSemantics())
        serial.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : serial) {
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized)) {
          op.emitError("cannot run on the GPU: the op has no parallel loop "
                       "and cannot be written as a linalg.generic");
          return signalPassFailure();
        }
        generic = *generalized;
      }
      addUnitLoop(rewriter, generic);
    }
  }

  void addUnitLoop(IRRewriter &rewriter, linalg::GenericOp generic) {
    MLIRContext *context = &getContext();
    Location loc = generic.getLoc();
    SmallVector<AffineMap> maps;
    for (OpOperand *input : generic.getDpsInputOperands())
      maps.push_back(generic.getMatchingIndexingMap(input).shiftDims(1));
    SmallVector<Value> outputs;
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      AffineMap map = generic.getMatchingIndexingMap(&init).shiftDims(1);
      SmallVector<AffineExpr> results = {getAffineDimExpr(0, context)};
      llvm::append_range(results, map.getResults());
      maps.push_back(AffineMap::get(map.getNumDims(), 0, results, context));

      auto type = cast<MemRefType>(init.get().getType());
      SmallVector<ReassociationIndices> reassociation;
      if (type.getRank() > 0) {
        reassociation.push_back({0, 1});
        for (int64_t dim = 1; dim < type.getRank(); ++dim)
          reassociation.push_back({dim + 1});
      }
      SmallVector<int64_t> shape = {1};
      llvm::append_range(shape, type.getShape());
      outputs.push_back(memref::ExpandShapeOp::create(
          rewriter, loc, shape, init.get(), reassociation));
    }
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::parallel};
    llvm::append_range(iterators, generic.getIteratorTypesArray());

    auto widened = linalg::GenericOp::create(rewriter, loc, TypeRange(),
                                             generic.getDpsInputs(), outputs,
                                             maps, iterators);
    rewriter.inlineRegionBefore(generic.getRegion(), widened.getRegion(),
                                widened.getRegion().begin());
    // linalg.index counts loops: the old ones moved up by one.
    widened.walk(
        [&](linalg::IndexOp index) { index.setDim(index.getDim() + 1); });
    rewriter.eraseOp(generic);
  }
};

} // namespace
