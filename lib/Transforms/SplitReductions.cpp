//===- SplitReductions.cpp - long reductions as blocks, then a combine ----===//
//
// A reduction over N elements accumulated in one chain runs on one core and
// loses accuracy linearly in N. Split into blocks of `block-size` elements,
// the blocks are a parallel loop whose partial results are then combined
// pairwise, as NumPy sums, so that rounding errors grow with log N.
// (Upstream linalg::splitReduction takes one reduction loop only and
// combines the partials serially.)
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "ReductionBlocks.h"
#include "Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSPLITREDUCTIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using mlir::pk::guardShortReductions;
using mlir::pk::hasPlainIdentity;
using mlir::pk::hasRegroupableCombiner;
using mlir::pk::reducedExtent;
using mlir::pk::splitIntoBlocks;

namespace {

/// A generic this pass may split: on tensors, no static size 0, one
/// result of an element type with a plain identity, no loop indices in the
/// body (the split would renumber them), operands reached through projected
/// permutations (and constant 0s: broadcast unit dims), and a combiner
/// that can be regrouped.
bool isSplittable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || op.hasIndexSemantics() ||
      op.getNumReductionLoops() == 0 ||
      llvm::is_contained(op.getStaticLoopRanges(), 0) ||
      !hasPlainIdentity(getElementTypeOrSelf(op->getResult(0).getType())))
    return false;
  return llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) {
                        return map.isProjectedPermutation(
                            /*allowZeroInResults=*/true);
                      }) &&
         hasRegroupableCombiner(op);
}

/// `op` with the broadcast unit dims of its inputs (constant 0s in their
/// maps, from keepdims results such as a row's max) collapsed away: the
/// split and the folding of reduction loops take only dims in the maps. The
/// op itself when it has none; failure where the output has some, or where
/// a constant indexes a dimension longer than 1 (a slice, not a broadcast).
FailureOr<linalg::GenericOp> withoutBroadcastUnitDims(RewriterBase &rewriter,
                                                      linalg::GenericOp op) {
  auto isConstant = [](AffineExpr expr) {
    return isa<AffineConstantExpr>(expr);
  };
  if (llvm::none_of(op.getIndexingMapsArray(), [&](AffineMap map) {
        return llvm::any_of(map.getResults(), isConstant);
      }))
    return op;
  if (llvm::any_of(
          op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults(),
          isConstant))
    return failure();
  for (OpOperand *input : op.getDpsInputOperands())
    for (auto [index, expr] :
         llvm::enumerate(op.getMatchingIndexingMap(input).getResults()))
      if (isConstant(expr) && op.getShape(input)[index] != 1)
        return failure();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto type = cast<RankedTensorType>(input->get().getType());
    // Each dropped unit dim joins the group of the next kept one (trailing
    // ones the last group).
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (auto [index, expr] : llvm::enumerate(map.getResults())) {
      pending.push_back(index);
      if (isConstant(expr))
        continue;
      kept.push_back(expr);
      shape.push_back(type.getDimSize(index));
      groups.push_back(pending);
      pending.clear();
    }
    if (!groups.empty())
      groups.back().append(pending.begin(), pending.end());
    Value value = input->get();
    if (kept.size() != map.getNumResults())
      value = tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get(shape, type.getElementType()), value, groups);
    inputs.push_back(value);
    maps.push_back(
        AffineMap::get(map.getNumDims(), 0, kept, rewriter.getContext()));
  }
  maps.push_back(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  auto rewritten = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
      maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), rewritten.getRegion(),
                              rewritten.getRegion().begin());
  rewriter.replaceOp(op, rewritten->getResults());
  return rewritten;
}

/// Folds several reduction loops into one where they are adjacent and every
/// operand keeps them in order (a full reduction of a 2-D array); the op
/// itself when there is one; failure otherwise.
FailureOr<linalg::GenericOp> withOneReductionLoop(RewriterBase &rewriter,
                                                  linalg::GenericOp op) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  if (dims.size() == 1)
    return op;
  ReassociationIndices group(dims.begin(), dims.end());
  for (auto [index, dim] : llvm::enumerate(dims))
    if (dim != dims.front() + index)
      return failure();
  if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {group}))
    return failure();
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, {group}, rewriter);
  if (failed(collapsed))
    return failure();
  rewriter.replaceOp(op, collapsed->results);
  return cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
}

/// The reduction loop of `op` to cut into blocks: its one dynamic reduction
/// loop, else its longest; none where several are dynamic.
std::optional<unsigned> loopToSplit(linalg::GenericOp op) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto dynamic = llvm::make_filter_range(
      dims, [&](unsigned dim) { return ShapedType::isDynamic(ranges[dim]); });
  if (!dynamic.empty())
    return llvm::hasSingleElement(dynamic) ? std::optional(*dynamic.begin())
                                           : std::nullopt;
  return *llvm::max_element(
      dims, [&](unsigned a, unsigned b) { return ranges[a] < ranges[b]; });
}

struct SplitReductionsPass
    : public mlir::pk::impl::PkSplitReductionsBase<SplitReductionsPass> {
  using PkSplitReductionsBase::PkSplitReductionsBase;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > INT64_MAX / 2) {
      getOperation().emitError("pk-split-reductions: block-size must be "
                               "positive and below 2^62, got ")
          << int64_t(blockSize);
      return signalPassFailure();
    }
    if (getOperation().isDeclaration())
      return;
    // The function's own ops and those of its tile loops (rows of a
    // softmax, from pk-fuse-rows; there the blocks run serially, for the
    // accuracy). Reductions deeper down are already scheduled.
    SmallVector<linalg::GenericOp> candidates;
    auto collect = [&](Block &block) {
      for (Operation &op : block)
        if (auto generic = dyn_cast<linalg::GenericOp>(op))
          if (isSplittable(generic))
            candidates.push_back(generic);
    };
    collect(getOperation().getBody().front());
    for (Operation &op : getOperation().getBody().getOps())
      if (isa<scf::ForallOp, scf::ForOp>(op))
        collect(op.getRegion(0).front());
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      std::optional<int64_t> extent = reducedExtent(op);
      if (extent && (*extent / 2 < blockSize || *extent == INT64_MAX))
        continue;
      FailureOr<linalg::GenericOp> plain =
          withoutBroadcastUnitDims(rewriter, op);
      if (failed(plain))
        continue;
      // Adjacent reduction loops folded into one where the operands allow;
      // the others stay inside each block.
      FailureOr<linalg::GenericOp> single =
          withOneReductionLoop(rewriter, *plain);
      linalg::GenericOp target = succeeded(single) ? *single : *plain;
      std::optional<unsigned> dim = loopToSplit(target);
      if (!dim)
        continue;
      // A dynamic length is split when it comes long enough, for the CPU;
      // GPU kernels take blocks whatever the length (a host branch that
      // chose between two buffers would leave the kernels after it not
      // knowing which they read).
      if (!extent && pairwise)
        target = guardShortReductions(rewriter, target, 2 * blockSize);
      (void)splitIntoBlocks(rewriter, target, *dim, blockSize, pairwise);
    }
  }
};

} // namespace
