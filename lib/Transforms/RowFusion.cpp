//===- RowFusion.cpp - the fusion steps of pk-fuse-rows -------------------===//
//
// Which ops pk-fuse-rows takes, fusing producers into a tile nest one slice
// at a time, and writing fused ops into the root's tile.
//
//===----------------------------------------------------------------------===//

#include "RowFusion.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;
using mlir::pk::isTopLevelTensorOp;

namespace mlir::pk {

/// A generic or fill of the function's own body (not inside a loop) on
/// tensors with nonzero sizes (static ones, or dynamic ones tiled with a
/// partial last tile), reading and writing through projected permutations:
/// what this pass tiles and fuses (upstream's tiling slices reversed views
/// wrongly).
bool isTopLevelTensorOp(Operation *op, func::FuncOp func) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && isa<linalg::GenericOp, linalg::FillOp>(op) &&
         op->getBlock() == &func.getBody().front() &&
         linalgOp.hasPureTensorSemantics() &&
         !llvm::is_contained(linalgOp.getStaticLoopRanges(), 0) &&
         llvm::all_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
           return map.isProjectedPermutation(/*allowZeroInResults=*/true);
         });
}

} // namespace mlir::pk

namespace {

/// Fusion stops at producers needed whole (tiling them gains nothing),
/// at ops in loops and at anything but generics and fills.
bool shouldFuse(tensor::ExtractSliceOp slice, func::FuncOp func) {
  auto producer = dyn_cast<OpResult>(slice.getSource());
  if (!producer || !isTopLevelTensorOp(producer.getOwner(), func))
    return false;
  // (Dynamic sizes compare as values: `tensor.dim`s, or the sizes they
  // were computed from.)
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  bool whole = llvm::all_of(llvm::enumerate(sizes), [&](auto indexed) {
    FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual(
        indexed.value(), {slice.getSource(), int64_t(indexed.index())});
    return succeeded(equal) && *equal;
  });
  return !whole;
}

/// Whether two slices take the same part of the same value.
bool isSameSlice(tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
  auto same = [](ArrayRef<OpFoldResult> x, ArrayRef<OpFoldResult> y) {
    return x.size() == y.size() && llvm::all_of(llvm::zip(x, y), [](auto pair) {
             return isEqualConstantIntOrValue(std::get<0>(pair),
                                              std::get<1>(pair));
           });
  };
  return a.getSource() == b.getSource() && a.getType() == b.getType() &&
         same(a.getMixedOffsets(), b.getMixedOffsets()) &&
         same(a.getMixedSizes(), b.getMixedSizes()) &&
         same(a.getMixedStrides(), b.getMixedStrides());
}

/// An empty tensor or a slice of one (as fusion leaves a producer's).
bool isEmptyTile(Value value) {
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>())
    value = slice.getSource();
  return value.getDefiningOp<tensor::EmptyOp>() != nullptr;
}

/// Whether `a` and `b` have the same sizes. With dynamic sizes the types
/// say nothing: a whole row fused into a tile of columns has the tile's
/// type, not its sizes.
bool haveSameSizes(Value a, Value b) {
  auto type = cast<RankedTensorType>(a.getType());
  if (type.hasStaticShape())
    return a.getType() == b.getType();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual({a, d}, {b, d});
    if (failed(equal) || !*equal)
      return false;
  }
  return true;
}

} // namespace

namespace mlir::pk {

/// Fuses into `loops` (a tile nest) the producers of the slices it takes,
/// and of theirs, one slice at a time; a slice the same as one fused before
/// reads that tile (upstream's driver fuses a producer once per read,
/// which doubles with every level of a chain of norms). Returns the
/// producers fused.
llvm::SetVector<Operation *>
fuseProducersInto(RewriterBase &rewriter,
                  MutableArrayRef<LoopLikeOpInterface> loops,
                  func::FuncOp func) {
  llvm::SetVector<Operation *> fused;
  // Each fused slice (kept, though dead, as the key) and its tile.
  SmallVector<std::pair<tensor::ExtractSliceOp, Value>> tiles;
  llvm::SmallPtrSet<Operation *, 16> done;
  Operation *outer = loops.front();
  while (true) {
    tensor::ExtractSliceOp candidate;
    outer->walk([&](tensor::ExtractSliceOp slice) {
      if (done.contains(slice))
        return WalkResult::advance();
      done.insert(slice);
      if (!shouldFuse(slice, func))
        return WalkResult::advance();
      candidate = slice;
      return WalkResult::interrupt();
    });
    if (!candidate)
      break;
    auto earlier = llvm::find_if(tiles, [&](auto &entry) {
      Operation *tile = entry.second.getDefiningOp();
      return isSameSlice(entry.first, candidate) && tile &&
             tile->getBlock() == candidate->getBlock() &&
             tile->isBeforeInBlock(candidate);
    });
    if (earlier != tiles.end()) {
      rewriter.replaceAllUsesWith(candidate.getResult(), earlier->second);
      continue;
    }
    Operation *producer = cast<OpResult>(candidate.getSource()).getOwner();
    std::optional<scf::SCFFuseProducerOfSliceResult> result =
        scf::tileAndFuseProducerOfSlice(rewriter, candidate, loops);
    if (!result)
      continue;
    fused.insert(producer);
    tiles.push_back({candidate, result->tiledAndFusedProducer});
  }
  for (auto &entry : tiles)
    if (entry.first->use_empty())
      rewriter.eraseOp(entry.first);
  return fused;
}

/// An all-parallel fused op writing a fresh tile of the root's result
/// shape writes it into the root's destination tile instead, where the
/// root (elementwise on it) overwrites it: softmax's `exp` lands in the
/// output, and the division rescales it in place. Bufferization copies
/// where that would clobber a value still to be read.
void writeIntoRootTile(RewriterBase &rewriter, linalg::GenericOp root,
                       ArrayRef<Operation *> fused) {
  if (root.getNumDpsInits() != 1 || root.getNumReductionLoops() != 0 ||
      !root.getIndexingMapsArray().back().isIdentity())
    return;
  Value destination = root.getDpsInitOperand(0)->get();
  for (Operation *op : fused) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || generic == root || generic.getNumDpsInits() != 1 ||
        generic.getNumReductionLoops() != 0 ||
        generic->getResult(0).getType() != destination.getType() ||
        !haveSameSizes(generic->getResult(0), destination) ||
        !isEmptyTile(generic.getDpsInitOperand(0)->get()) ||
        !generic.getIndexingMapsArray().back().isIdentity())
      continue;
    bool readAsWritten =
        llvm::all_of(generic->getResult(0).getUses(), [&](OpOperand &use) {
          return use.getOwner() != root ||
                 root.getMatchingIndexingMap(&use).isIdentity();
        });
    if (!readAsWritten)
      continue;
    // The destination's slice is taken right before the root: take it
    // before this op (its operands are the loops' values).
    Operation *slice = destination.getDefiningOp();
    if (slice && slice->getBlock() == generic->getBlock() &&
        generic->isBeforeInBlock(slice)) {
      bool movable = llvm::all_of(slice->getOperands(), [&](Value operand) {
        Operation *def = operand.getDefiningOp();
        return !def || def->getBlock() != slice->getBlock() ||
               def->isBeforeInBlock(generic);
      });
      if (!movable)
        continue;
      rewriter.moveOpBefore(slice, generic);
    }
    rewriter.modifyOpInPlace(
        generic, [&] { generic.getDpsInitOperand(0)->set(destination); });
  }
}

} // namespace mlir::pk
