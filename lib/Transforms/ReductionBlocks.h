//===- ReductionBlocks.h - long reductions cut into blocks ------*- C++ -*-===//
//
// Private to the transforms: a reduction's longest loop cut into blocks
// whose partial results are combined pairwise (as NumPy sums), which
// pk-split-reductions does to long reductions and pk-vectorize-matvec to
// products with a vector over a long K.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_REDUCTIONBLOCKS_H
#define PICOKERNEL_LIB_TRANSFORMS_REDUCTIONBLOCKS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::pk {

/// Splits the reduction of `op` (on tensors, one result, a regroupable
/// combiner with an identity, no loop indices, projected-permutation maps)
/// into blocks of about `block` elements per result: loop `dim` in blocks
/// of `block` divided by what the other (static) reduction loops reduce,
/// run as a parallel loop writing one partial result per block.
/// Iterations of that loop past the last whole block are reduced on their
/// own, from the identity, as one more partial. The partials are then
/// combined pairwise, as NumPy sums (`pairwise`; else by one reduction op):
/// added one by one to the large total, they would each be rounded to its
/// precision (1e8 ones would not sum to 1e8 in float32). A static loop of
/// fewer than two blocks is left alone; a dynamic one is split for
/// whatever length comes (the caller guards short ones).
LogicalResult splitIntoBlocks(RewriterBase &rewriter, linalg::GenericOp op,
                              unsigned dim, int64_t block, bool pairwise);

/// Reduced elements per result of `op`, saturating; nullopt when dynamic.
std::optional<int64_t> reducedExtent(linalg::GenericOp op);

/// `op` (with one dynamic reduction loop) as an scf.if on its reduced
/// extent: at least `least` elements take the clone returned, which the
/// caller splits; shorter ones run `op` whole.
linalg::GenericOp guardShortReductions(RewriterBase &rewriter,
                                       linalg::GenericOp op, int64_t least);

/// The float sum `op` computes over its loop `dim` (a named op generalized
/// first) in blocks of `block` (splitIntoBlocks, combined pairwise), its
/// combiner marked `reassoc`; a dynamic length is split where it comes at
/// least two blocks long (guardShortReductions). Nothing where `op` does
/// not sum with one float addition; failure where the split fails.
LogicalResult splitLongSum(RewriterBase &rewriter, linalg::LinalgOp op,
                           unsigned dim, int64_t block);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_REDUCTIONBLOCKS_H
