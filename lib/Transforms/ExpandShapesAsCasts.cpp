//===- ExpandShapesAsCasts.cpp - dynamic view expansions as casts ---------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKEXPANDSHAPESASCASTS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Whether a group of `op`'s result dimensions holds more than one dynamic
/// size: MLIR 22's expand-strided-metadata derives each group's sizes from
/// the source and crashes on those (it does not read the output shape).
bool hasDynamicGroup(memref::ExpandShapeOp op) {
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  return llvm::any_of(op.getReassociationIndices(),
                      [&](const ReassociationIndices &group) {
                        return llvm::count_if(group, [&](int64_t d) {
                                 return ShapedType::isDynamic(shape[d]);
                               }) > 1;
                      });
}

/// `op` as a reinterpret_cast of its source's buffer: the output shape's
/// sizes, and in each group, the source dimension's stride for the last
/// dimension and for each one before, the next one's stride times its
/// size.
void castInstead(RewriterBase &rewriter, memref::ExpandShapeOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto metadata =
      memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
  SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
  SmallVector<OpFoldResult> sourceStrides =
      metadata.getConstifiedMixedStrides();
  SmallVector<OpFoldResult> strides(sizes.size());
  AffineExpr s0, s1;
  bindSymbols(rewriter.getContext(), s0, s1);
  for (auto [source, group] : llvm::enumerate(op.getReassociationIndices())) {
    OpFoldResult stride = sourceStrides[source];
    for (int64_t d : llvm::reverse(group)) {
      strides[d] = stride;
      if (d != group.front())
        stride = affine::makeComposedFoldedAffineApply(rewriter, loc, s0 * s1,
                                                       {stride, sizes[d]});
    }
  }
  rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
      op, op.getResultType(), metadata.getBaseBuffer(),
      metadata.getConstifiedMixedOffset(), sizes, strides);
}

struct ExpandShapesAsCastsPass
    : public mlir::pk::impl::PkExpandShapesAsCastsBase<
          ExpandShapesAsCastsPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> expands;
    getOperation()->walk([&](memref::ExpandShapeOp op) {
      if (hasDynamicGroup(op))
        expands.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp op : expands)
      castInstead(rewriter, op);
  }
};

} // namespace
