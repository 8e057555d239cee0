//===- ComputeInPlace.cpp - elementwise updates of a ref in place ---------===//

#include "picokernel/Support/Bufferization.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// The shared output (or iteration argument) of tile loop `loop` that
/// holds its result `result`, and the one insert of a tile into it; null
/// for other ops, or several inserts.
std::pair<BlockArgument, Operation *> getTileInsert(OpResult result) {
  unsigned number = result.getResultNumber();
  BlockArgument shared;
  if (auto forall = dyn_cast<scf::ForallOp>(result.getOwner()))
    shared = forall.getRegionIterArgs()[number];
  else if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
    shared = loop.getRegionIterArgs()[number];
  else
    return {};
  SmallVector<Operation *> inserts;
  for (OpOperand &use : shared.getUses())
    if (isa<tensor::ParallelInsertSliceOp, tensor::InsertSliceOp>(
            use.getOwner()) &&
        use.getOperandNumber() == 1)
      inserts.push_back(use.getOwner());
  if (inserts.size() != 1)
    return {};
  // A serial loop's insert must be what it yields.
  if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
    if (loop.getYieldedValues()[number] != inserts.front()->getResult(0))
      return {};
  return {shared, inserts.front()};
}

/// Where a value is computed: the operand that holds the empty tensor it
/// starts from, and the collapse it is read through, if any.
struct EmptyInit {
  OpOperand *init = nullptr;
  tensor::CollapseShapeOp collapse;
};

/// The empty tensor `value` is computed in: the init of a tile loop (see
/// getTileInsert), or of a destination-style op, itself possibly computed
/// in place (a matmul accumulating into a fill, an elementwise update of
/// it), or the collapse of such a value (a product in its tiled layout);
/// no init for anything else.
EmptyInit getEmptyInit(Value value) {
  if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>()) {
    if (!collapse.getSrc().hasOneUse())
      return {};
    EmptyInit inner = getEmptyInit(collapse.getSrc());
    if (inner.collapse)
      return {};
    inner.collapse = collapse;
    return inner;
  }
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return {};
  OpOperand *init = nullptr;
  if (BlockArgument shared = getTileInsert(result).first)
    init = cast<LoopLikeOpInterface>(result.getOwner()).getTiedLoopInit(shared);
  else if (auto op = dyn_cast<DestinationStyleOpInterface>(result.getOwner()))
    init = op.getTiedOpOperand(result);
  if (!init || init->get().getType() != value.getType())
    return {};
  if (init->get().getDefiningOp<tensor::EmptyOp>())
    return {init, {}};
  // A producer whose result only this op reads (as it writes it: an
  // elementwise update).
  Operation *producer = init->get().getDefiningOp();
  if (!isa_and_nonnull<DestinationStyleOpInterface, tensor::CollapseShapeOp>(
          producer) ||
      llvm::any_of(init->get().getUsers(),
                   [&](Operation *user) { return user != init->getOwner(); }))
    return {};
  return getEmptyInit(init->get());
}

/// For a tile loop (`scf.forall` or `scf.for`) whose result `result` is
/// stored into the ref loaded as `contents` (pk-fuse-rows' rows of a
/// softmax computed in place): when each iteration reads `contents` only
/// at the tile it inserts, its shared output starting empty, the loop
/// starts from `contents` instead and reads those tiles from its shared
/// output. An iteration's reads see the old contents (the tiles are
/// disjoint), and bufferization writes the ref in place (it used to compute
/// the whole result in a temporary, then copy it).
void computeTilesInPlace(OpResult result, Value contents) {
  auto [shared, insert] = getTileInsert(result);
  if (!shared)
    return;
  Operation *loop = result.getOwner();
  EmptyInit empty = getEmptyInit(result);
  if (!empty.init || empty.collapse || empty.init->getOwner() != loop ||
      empty.init->get().getType() != contents.getType())
    return;
  OpOperand &init = *empty.init;
  auto sameTile = [&](tensor::ExtractSliceOp slice) {
    return slice->getParentOp() == loop &&
           cast<OffsetSizeAndStrideOpInterface>(slice.getOperation())
               .isSameAs(cast<OffsetSizeAndStrideOpInterface>(insert),
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

/// The values an `scf.if` result `result` takes in its branches.
SmallVector<Value> getBranchValues(OpResult result) {
  auto choice = cast<scf::IfOp>(result.getOwner());
  SmallVector<Value> values;
  for (Region *region : {&choice.getThenRegion(), &choice.getElseRegion()})
    if (!region->empty())
      values.push_back(region->front().getTerminator()->getOperand(
          result.getResultNumber()));
  return values;
}

/// The empty inits of every value an `scf.if` result `result` takes, through
/// nested choices; whether each has one.
bool collectBranchInits(OpResult result, SmallVectorImpl<EmptyInit> &inits) {
  for (Value value : getBranchValues(result)) {
    auto nested = dyn_cast<OpResult>(value);
    if (nested && isa<scf::IfOp>(nested.getOwner())) {
      if (!nested.hasOneUse() || !collectBranchInits(nested, inits))
        return false;
      continue;
    }
    EmptyInit init = getEmptyInit(value);
    if (!init.init)
      return false;
    inits.push_back(init);
  }
  return getBranchValues(result).size() == 2;
}

/// A store of an `scf.if` choosing between computations (pk-fuse-rows'
/// parallel or serial rows, pk-pack-matmul's packed or plain products)
/// into a ref the kernel never loads: each starts from the ref's buffer
/// instead of an empty tensor. Empty-tensor elimination would do this for
/// one branch only (it gives a `restrict` destination one tensor).
void writeBranchesIntoDestination(
    bufferization::MaterializeInDestinationOp store, OpResult result) {
  Value dest = store.getDest();
  if (!store.getRestrict() || !store.getWritable() ||
      !isa<BaseMemRefType>(dest.getType()))
    return;
  // (Its sizes may be read.)
  for (Operation *user : dest.getUsers())
    if (user != store && !isa<memref::DimOp>(user))
      return;
  SmallVector<EmptyInit> inits;
  if (!collectBranchInits(result, inits))
    return;
  OpBuilder builder(result.getOwner());
  Value buffer = bufferization::ToTensorOp::create(
      builder, store.getLoc(), result.getType(), dest, /*restrict=*/true,
      /*writable=*/true);
  for (EmptyInit &init : inits) {
    Value into = buffer;
    // Viewed in the layout the value is computed in (the tiles divide it).
    if (init.collapse) {
      builder.setInsertionPoint(init.init->getOwner());
      into = tensor::ExpandShapeOp::create(
          builder, init.collapse.getLoc(), init.init->get().getType(), buffer,
          init.collapse.getReassociationIndices(),
          tensor::getMixedSizes(builder, init.collapse.getLoc(),
                                init.init->get()));
    }
    init.init->assign(into);
  }
  store.setRestrict(false);
}

struct ComputeInPlacePass
    : public mlir::pk::impl::PkComputeInPlaceBase<ComputeInPlacePass> {
  void runOnOperation() override {
    getOperation().walk([](bufferization::MaterializeInDestinationOp store) {
      auto source = dyn_cast<OpResult>(store.getSource());
      bool chosen = source && isa<scf::IfOp>(source.getOwner());
      bufferization::ToTensorOp contents =
          mlir::pk::loadedContents(store.getDest());
      if (!contents && chosen)
        return writeBranchesIntoDestination(store, source);
      if (!contents || !contents.getWritable())
        return;
      if (chosen)
        for (Value value : getBranchValues(source))
          if (auto tiles = dyn_cast<OpResult>(value))
            computeTilesInPlace(tiles, contents.getResult());
      if (source)
        computeTilesInPlace(source, contents.getResult());
      auto generic = store.getSource().getDefiningOp<linalg::GenericOp>();
      if (!generic || !isElementwiseUpdateOf(generic, contents.getResult()))
        return;
      generic.getDpsInitsMutable()[0].assign(contents.getResult());
    });
  }
};

} // namespace
