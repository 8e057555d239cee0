//===- ComputeInPlace.cpp - elementwise updates of a ref in place ---------===//

#include "picokernel/Support/Bufferization.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

/// For a tile loop whose result `result` is stored into the ref loaded as
/// `contents` (pk-fuse-rows' rows of a softmax computed in place): when each
/// iteration reads `contents` only at the tile it inserts, its shared
/// output starting empty, the loop starts from `contents` instead and reads
/// those tiles from its shared output. The reads come before the tile's
/// insert, so they see the old contents, and bufferization writes the ref
/// in place (it used to compute the whole result in a temporary, then copy
/// it).
void computeTilesInPlace(OpResult result, Value contents) {
  auto loop = dyn_cast<scf::ForallOp>(result.getOwner());
  if (!loop)
    return;
  OpOperand &init = loop.getOutputsMutable()[result.getResultNumber()];
  BlockArgument shared = loop.getRegionIterArgs()[result.getResultNumber()];
  if (!init.get().getDefiningOp<tensor::EmptyOp>() ||
      init.get().getType() != contents.getType())
    return;
  SmallVector<tensor::ParallelInsertSliceOp> inserts;
  for (Operation *user : shared.getUsers())
    if (auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user))
      inserts.push_back(insert);
  if (inserts.size() != 1)
    return;
  auto sameTile = [&](tensor::ExtractSliceOp slice) {
    return slice->getParentOp() == loop.getOperation() &&
           cast<OffsetSizeAndStrideOpInterface>(slice.getOperation())
               .isSameAs(cast<OffsetSizeAndStrideOpInterface>(
                             inserts.front().getOperation()),
                         isEqualConstantIntOrValue);
  };
  SmallVector<tensor::ExtractSliceOp> reads;
  for (OpOperand &use : contents.getUses()) {
    if (!loop->isProperAncestor(use.getOwner()))
      continue;
    auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
    if (!slice || !sameTile(slice))
      return;
    reads.push_back(slice);
  }
  if (reads.empty())
    return;
  init.assign(contents);
  for (tensor::ExtractSliceOp slice : reads)
    slice.getSourceMutable().assign(shared);
}

struct ComputeInPlacePass
    : public mlir::pk::impl::PkComputeInPlaceBase<ComputeInPlacePass> {
  void runOnOperation() override {
    getOperation().walk([](bufferization::MaterializeInDestinationOp store) {
      bufferization::ToTensorOp contents =
          mlir::pk::loadedContents(store.getDest());
      if (!contents || !contents.getWritable())
        return;
      if (auto tiles = dyn_cast<OpResult>(store.getSource()))
        computeTilesInPlace(tiles, contents.getResult());
      auto generic = store.getSource().getDefiningOp<linalg::GenericOp>();
      if (!generic || !isElementwiseUpdateOf(generic, contents.getResult()))
        return;
      generic.getDpsInitsMutable()[0].assign(contents.getResult());
    });
  }
};

} // namespace
