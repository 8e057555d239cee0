//===- UnshareInits.cpp - a fresh init for each destination-passing op ----===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKUNSHAREINITS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Whether `value` is a tensor that a fill or an empty tensor makes: a
/// value with no contents of its own, which a copy of its maker can give.
bool isMadeFresh(Value value) {
  return isa_and_nonnull<tensor::EmptyOp, linalg::FillOp>(
      value.getDefiningOp());
}

/// A clone of the fills and empty tensors that make `value`, before `user`.
Value cloneMaker(OpBuilder &builder, Value value, Operation *user) {
  Operation *maker = value.getDefiningOp();
  builder.setInsertionPoint(user);
  Operation *clone = builder.clone(*maker);
  if (auto fill = dyn_cast<linalg::FillOp>(clone)) {
    Value init = fill.getDpsInits()[0];
    if (isMadeFresh(init))
      fill.getDpsInitsMutable()[0].set(cloneMaker(builder, init, clone));
  }
  return clone->getResult(cast<OpResult>(value).getResultNumber());
}

/// The `extract_slice` of `value` that `insert` writes back (the same
/// offsets, sizes and strides), if any: the two are one writer, a slice
/// computed in place.
tensor::ExtractSliceOp matchingExtract(tensor::InsertSliceOp insert,
                                       Value value) {
  for (Operation *user : value.getUsers()) {
    auto extract = dyn_cast<tensor::ExtractSliceOp>(user);
    if (extract && extract.getSource() == value &&
        extract->getBlock() == insert->getBlock() &&
        extract->isBeforeInBlock(insert) &&
        isEqualConstantIntOrValueArray(extract.getMixedOffsets(),
                                       insert.getMixedOffsets()) &&
        isEqualConstantIntOrValueArray(extract.getMixedSizes(),
                                       insert.getMixedSizes()) &&
        isEqualConstantIntOrValueArray(extract.getMixedStrides(),
                                       insert.getMixedStrides()))
      return extract;
  }
  return {};
}

struct UnshareInitsPass
    : public mlir::pk::impl::PkUnshareInitsBase<UnshareInitsPass> {
  void runOnOperation() override {
    // The uses after the first of a freshly made tensor, in order. Every
    // use counts, not only destination-passing ops' inits: a product
    // vectorized by an earlier pass starts its loop (`scf.for` iter_args,
    // `scf.forall` shared_outs, an `extract_slice` of the tensor) from it
    // and writes there in place.
    SmallVector<OpOperand *> sharing;
    llvm::DenseMap<Value, SmallVector<Operation *, 2>> users;
    SmallVector<std::pair<OpOperand *, tensor::ExtractSliceOp>> writtenBack;
    getOperation().walk([&](Operation *op) {
      // Fills of one empty tensor are left sharing it: each fill writes the
      // whole of it, and bufferization reuses one buffer for values whose
      // lives do not overlap (a row's max, then its sum). A size read from
      // a tensor reads none of its contents.
      if (isa<linalg::FillOp, tensor::DimOp>(op))
        return;
      for (OpOperand &use : op->getOpOperands()) {
        if (!isMadeFresh(use.get()) || use.get().hasOneUse())
          continue;
        // Users in branches of which one runs (a product's variants,
        // chosen at run time) share the tensor: only one of them writes
        // it, and each branch's copy would leave the destination's.
        SmallVector<Operation *, 2> &earlier = users[use.get()];
        // A slice written back where it was taken from continues the
        // writer that took it (and writes into whatever tensor that one
        // gets).
        if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
          if (&use == &insert.getDestMutable())
            if (auto extract = matchingExtract(insert, use.get())) {
              writtenBack.push_back({&use, extract});
              continue;
            }
        if (llvm::any_of(earlier,
                         [&](Operation *user) {
                           return user != op &&
                                  !insideMutuallyExclusiveRegions(user, op);
                         }) ||
            llvm::is_contained(earlier, op))
          sharing.push_back(&use);
        else
          earlier.push_back(op);
      }
    });
    OpBuilder builder(&getContext());
    for (OpOperand *init : sharing)
      init->set(cloneMaker(builder, init->get(), init->getOwner()));
    for (auto [dest, extract] : writtenBack)
      dest->set(extract.getSource());
  }
};

} // namespace
