//===- CopySharedInsertDestinations.cpp - inserts into private copies -----===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKCOPYSHAREDINSERTDESTINATIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Whether a use of `value` other than `insert` is a write of it (or of a
/// view of it) into a ref: bufferization reads that only when it writes.
bool alsoWrittenToARef(Value value, Operation *insert) {
  SmallVector<Value> views = {value};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (user == insert)
        continue;
      if (isa<bufferization::MaterializeInDestinationOp>(user))
        return true;
      if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
              tensor::CollapseShapeOp, tensor::CastOp>(user))
        views.push_back(user->getResult(0));
    }
  }
  return false;
}

/// Whether `value` is the contents of a ref the kernel only reads.
bool readOnlyContents(Value value) {
  auto load = value.getDefiningOp<bufferization::ToTensorOp>();
  return load && !load.getWritable();
}

struct CopySharedInsertDestinationsPass
    : public mlir::pk::impl::PkCopySharedInsertDestinationsBase<
          CopySharedInsertDestinationsPass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> shared, readOnly;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      if (alsoWrittenToARef(op.getDest(), op))
        shared.push_back(op);
      else if (readOnlyContents(op.getDest()))
        readOnly.push_back(op);
    });
    OpBuilder builder(&getContext());
    for (tensor::InsertSliceOp op : shared) {
      builder.setInsertionPoint(op);
      Value dest = op.getDest();
      auto copy = bufferization::AllocTensorOp::create(
          builder, op.getLoc(), cast<RankedTensorType>(dest.getType()),
          /*dynamicSizes=*/ValueRange(), /*copy=*/dest);
      op.getDestMutable().assign(copy);
    }
    for (tensor::InsertSliceOp op : readOnly) {
      builder.setInsertionPoint(op);
      Value dest = op.getDest();
      Value empty = tensor::EmptyOp::create(
          builder, op.getLoc(),
          tensor::getMixedSizes(builder, op.getLoc(), dest),
          cast<RankedTensorType>(dest.getType()).getElementType());
      auto copy = linalg::CopyOp::create(builder, op.getLoc(), dest, empty);
      op.getDestMutable().assign(copy.getResult(0));
    }
  }
};

} // namespace
