//===- CopySharedInsertDestinations.cpp - inserts into private copies -----===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
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

struct CopySharedInsertDestinationsPass
    : public mlir::pk::impl::PkCopySharedInsertDestinationsBase<
          CopySharedInsertDestinationsPass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      if (alsoWrittenToARef(op.getDest(), op))
        inserts.push_back(op);
    });
    OpBuilder builder(&getContext());
    for (tensor::InsertSliceOp op : inserts) {
      builder.setInsertionPoint(op);
      Value dest = op.getDest();
      auto copy = bufferization::AllocTensorOp::create(
          builder, op.getLoc(), cast<RankedTensorType>(dest.getType()),
          /*dynamicSizes=*/ValueRange(), /*copy=*/dest);
      op.getDestMutable().assign(copy);
    }
  }
};

} // namespace
