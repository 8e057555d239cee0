//===- Tiling.h - shared steps of the matmul tiling passes ------*- C++ -*-===//
//
// Private to the transforms: the host's vector width, tiling one op into
// loops, chunk sizes and packs as tile loops, as pk-pack-matmul,
// pk-vectorize-packed-matmul and pk-vectorize-matvec use them.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_TILING_H
#define PICOKERNEL_LIB_TRANSFORMS_TILING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <cstdint>

namespace mlir::pk {

/// The widest vector registers of the host, in bits.
int64_t hostVectorBits();

/// Tiles `op` by `sizes` (0: untiled) into loops of `type`, replacing it;
/// the tiled op and the loops (outermost first).
FailureOr<scf::SCFTilingResult> tileInto(RewriterBase &rewriter, Operation *op,
                                         ArrayRef<int64_t> sizes,
                                         scf::SCFTilingOptions::LoopType type);
/// The same with sizes known at run time (a dynamic size must not be 0).
FailureOr<scf::SCFTilingResult> tileInto(RewriterBase &rewriter, Operation *op,
                                         ArrayRef<OpFoldResult> sizes,
                                         scf::SCFTilingOptions::LoopType type);

/// Makes every tile of `loop` (from tileInto, counting from 0) whole: the
/// bound of each tile's size by what is left of the loop's range (an
/// affine.min of the loop's step and the rest) becomes the step itself.
/// Right only where the caller knows that the step divides the range (a
/// part split off at a multiple of it), which dynamic sizes hide; the
/// tiles then get static shapes, which vectorize.
void assumeWholeTiles(RewriterBase &rewriter, LoopLikeOpInterface loop);

/// Replaces each masked sum of a vector in `root` by the sum of the vector
/// with its masked-off lanes made -0.0 (0 for integers), which adds
/// nothing to any sum: a select and a plain reduction, where LLVM expands
/// a masked one into adds in order.
void unmaskSums(RewriterBase &rewriter, Operation *root);

/// The size of the fewest equal chunks of `range` at most `most` long (the
/// last may be shorter).
int64_t evenChunk(int64_t range, int64_t most);

/// The first linalg.generic in `loop`'s body (a tile) with its unit
/// dimensions dropped (its operands rank-reduced slices); null if none.
linalg::GenericOp dropUnitDimsIn(RewriterBase &rewriter, Operation *loop);

/// Drops the unit dimensions of the first linalg.generic in `loop`'s body
/// (a tile) and vectorizes it, with its reductions outermost when
/// `reductionsFirst` (so that a sum over rows adds whole vectors). Its
/// dynamic sizes are known to be `dynamicSize` (tiles of blocks that the
/// tiles divide; 0: it has none, else it fails), or at most that where not
/// `assumeWhole` (masked).
LogicalResult vectorizeTileIn(RewriterBase &rewriter, Operation *loop,
                              bool reductionsFirst = false,
                              int64_t dynamicSize = 0, bool assumeWhole = true);

/// Vectorizes `op`, replacing it: its dynamic sizes as vectors of
/// `dynamicSize`, which they are (`assumeWhole`) or which masks cut to
/// them.
LogicalResult vectorizeOp(RewriterBase &rewriter, linalg::LinalgOp op,
                          int64_t dynamicSize, bool assumeWhole);

/// A product stored whole into a contiguous caller buffer through a
/// collapse of its tiled layout is stored through the buffer's expanded
/// view instead, so that bufferization computes it in the buffer
/// (empty-tensor elimination does not see through reshapes).
void storeWithoutCollapse(RewriterBase &rewriter,
                          tensor::CollapseShapeOp collapse);

/// `pack` (static tiles, of the trailing dimensions of its source) as
/// loops over its destination's outer dimensions, the outermost an
/// scf.forall when the destination has at least `parallelThreshold`
/// elements (0: never; for dynamic sizes an scf.if chooses at run time
/// between both forms), each step moving one tile as a vector: read
/// from the source (past its end, the padding value), transposed to the
/// tile's order, written whole. One pass over the source where a lowered
/// pack with padding takes three (fill, copy, transpose). Replaces `pack`
/// and returns its value; fails, changing nothing, for other packs.
FailureOr<Value> packWithVectors(RewriterBase &rewriter, linalg::PackOp pack,
                                 int64_t parallelThreshold);

/// The packs as loops moving a tile per step (packWithVectors), or as
/// upstream's reshapes and transposes where an elementwise producer fuses
/// into them; the unpacks as slices. All of them bufferize. Runs in
/// parallel from `parallelThreshold` elements, as packWithVectors.
LogicalResult lowerPacks(RewriterBase &rewriter, Operation *root,
                         int64_t parallelThreshold);

/// The elementwise linalg.generic that computes `value`, read by one op
/// (a cast, a scale a pack can fuse); null otherwise.
linalg::GenericOp elementwiseProducerAlone(Value value);

/// Makes the tensor.dim ops that read `value`'s sizes read `sameShape`'s
/// (a destination of the op that computes it), so that they do not keep
/// that op, or hold it where it cannot move.
void readSizesFrom(RewriterBase &rewriter, Value value, Value sameShape);

/// Computes the producer of `slice` (an op of the tensor it slices)
/// inside `loops` on the slice alone, into a new tensor of the slice's
/// size rather than a slice of one of the whole size; the producer's op
/// there (null where it could not), and the original erased where
/// nothing else reads it. Loop bounds that read the original's sizes
/// read its destination's (the same).
Operation *fuseProducerIntoLoops(RewriterBase &rewriter,
                                 tensor::ExtractSliceOp slice,
                                 MutableArrayRef<LoopLikeOpInterface> loops);

/// The first op of type `OpTy` nested in `root`.
template <typename OpTy> OpTy findFirst(Operation *root) {
  OpTy found;
  root->walk([&](OpTy op) {
    found = op;
    return WalkResult::interrupt();
  });
  return found;
}

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_TILING_H
