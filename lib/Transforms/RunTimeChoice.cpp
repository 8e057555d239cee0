//===- RunTimeChoice.cpp - two copies of an op, one chosen at run time ----===//

#include "RunTimeChoice.h"
#include "Tiling.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

using namespace mlir;

Value mlir::pk::loopSize(OpBuilder &builder, linalg::LinalgOp op,
                         unsigned dim) {
  Value operand;
  unsigned operandDim = 0;
  if (failed(op.mapIterationSpaceDimToOperandDim(dim, operand, operandDim)))
    llvm_unreachable("a contraction's loop dimension indexes an operand");
  Location loc = op.getLoc();
  return getValueOrCreateConstantIndexOp(
      builder, loc, tensor::getMixedSize(builder, loc, operand, operandDim));
}

Value mlir::pk::isAtLeast(OpBuilder &builder, Location loc, Value size,
                          int64_t least) {
  return arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::sge, size,
      arith::ConstantIndexOp::create(builder, loc, least));
}

namespace {

/// The single elementwise consumer of `op`'s result whose other operands
/// are all defined before `op` (so that both can move to where `op` is);
/// null if there is none.
linalg::GenericOp movableConsumer(linalg::LinalgOp op) {
  Value result = op->getResult(0);
  if (!result.hasOneUse())
    return {};
  auto consumer = dyn_cast<linalg::GenericOp>(*result.user_begin());
  if (!consumer || !linalg::isElementwise(consumer) ||
      !consumer.hasPureTensorSemantics() ||
      consumer->getBlock() != op->getBlock())
    return {};
  // (A new tensor is copied where it is used, see chooseAtRunTime: its
  // sizes must be defined before.)
  std::function<bool(Value)> isBefore = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op))
      return true;
    return isa<tensor::EmptyOp>(def) &&
           llvm::all_of(def->getOperands(), isBefore);
  };
  for (Value operand : consumer->getOperands())
    if (operand != result && !isBefore(operand))
      return {};
  return consumer;
}

} // namespace

std::pair<linalg::LinalgOp, linalg::LinalgOp>
mlir::pk::chooseAtRunTime(RewriterBase &rewriter, linalg::LinalgOp op,
                          Value condition, bool copyProducers) {
  Location loc = op.getLoc();
  SmallVector<Operation *> moved;
  if (copyProducers)
    for (Value input : op.getDpsInputs()) {
      auto producer = input.getDefiningOp<linalg::GenericOp>();
      if (!producer || !linalg::isElementwise(producer) ||
          !producer.hasPureTensorSemantics() ||
          producer->getNumResults() != 1 ||
          producer->getBlock() != op->getBlock() ||
          llvm::is_contained(moved, producer.getOperation()))
        continue;
      // Read by `op` alone, and by sizes (the condition's), which its new
      // tensor has too.
      if (llvm::any_of(input.getUsers(), [&](Operation *user) {
            return user != op && !isa<tensor::DimOp>(user);
          }))
        continue;
      readSizesFrom(rewriter, input, producer.getDpsInits()[0]);
      moved.push_back(producer);
    }
  moved.push_back(op);
  if (linalg::GenericOp consumer = movableConsumer(op))
    moved.push_back(consumer);
  Operation *last = moved.back();
  rewriter.setInsertionPoint(op);
  auto choice = scf::IfOp::create(rewriter, loc, last->getResultTypes(),
                                  condition, /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
  SmallVector<Operation *> starts;
  auto copyInto = [&](Block *block) {
    rewriter.setInsertionPointToStart(block);
    IRMapping mapping;
    // Copies a new tensor, or a fill of one, that `value` is.
    auto copyStart = [&](Value value) {
      Operation *def = value.getDefiningOp();
      auto fill = dyn_cast_or_null<linalg::FillOp>(def);
      if (fill && !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        return;
      if (!fill && !isa_and_nonnull<tensor::EmptyOp>(def))
        return;
      for (Operation *start :
           {fill ? fill.getOutputs()[0].getDefiningOp() : nullptr, def}) {
        if (!start || mapping.contains(start->getResult(0)))
          continue;
        rewriter.clone(*start, mapping);
        if (!llvm::is_contained(starts, start))
          starts.push_back(start);
      }
    };
    for (Operation *original : moved) {
      for (Value init :
           cast<DestinationStyleOpInterface>(original).getDpsInits())
        copyStart(init);
      rewriter.clone(*original, mapping);
    }
    scf::YieldOp::create(rewriter, loc, mapping.lookup(last->getResult(0)));
    return cast<linalg::LinalgOp>(mapping.lookup(op.getOperation()));
  };
  linalg::LinalgOp first = copyInto(choice.thenBlock());
  linalg::LinalgOp second = copyInto(choice.elseBlock());
  rewriter.replaceOp(last, choice.getResults());
  for (Operation *original : llvm::reverse(moved))
    if (original != last)
      rewriter.eraseOp(original);
  // The originals of the copied starts, fills before their tensors.
  for (Operation *start : llvm::reverse(starts))
    if (start->use_empty())
      rewriter.eraseOp(start);
  return {first, second};
}
