//===- ComputeInPlace.cpp - elementwise updates of a ref in place ---------===//

#include "picokernel/Support/Bufferization.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKCOMPUTEINPLACE
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Whether `value` is `contents` or a view of it (a slice or a reshape).
bool isViewOf(Value value, Value contents) {
  while (value != contents) {
    Operation *op = value.getDefiningOp();
    if (!isa_and_nonnull<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                         tensor::CollapseShapeOp>(op))
      return false;
    value = op->getOperand(0);
  }
  return true;
}

/// Whether `generic` computes element i of its one result from element i of
/// `contents` at most (so it may overwrite `contents` as it goes).
bool isElementwiseUpdateOf(linalg::GenericOp generic, Value contents) {
  if (generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  OpOperand &init = generic.getDpsInitsMutable()[0];
  // The body must not read the init (an empty tensor has no contents).
  if (!init.get().getDefiningOp<tensor::EmptyOp>() ||
      !generic.getMatchingBlockArgument(&init).use_empty() ||
      init.get().getType() != contents.getType() ||
      !generic.getMatchingIndexingMap(&init).isIdentity())
    return false;
  for (OpOperand *input : generic.getDpsInputOperands())
    if (isViewOf(input->get(), contents) &&
        (input->get() != contents ||
         !generic.getMatchingIndexingMap(input).isIdentity()))
      return false;
  return true;
}

struct ComputeInPlacePass
    : public mlir::pk::impl::PkComputeInPlaceBase<ComputeInPlacePass> {
  void runOnOperation() override {
    getOperation().walk([](bufferization::MaterializeInDestinationOp store) {
      auto generic = store.getSource().getDefiningOp<linalg::GenericOp>();
      bufferization::ToTensorOp contents =
          mlir::pk::loadedContents(store.getDest());
      if (!generic || !contents || !contents.getWritable() ||
          !isElementwiseUpdateOf(generic, contents.getResult()))
        return;
      generic.getDpsInitsMutable()[0].assign(contents.getResult());
    });
  }
};

} // namespace
