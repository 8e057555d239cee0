//===- MatmulEpilogue.h - a packed product's elementwise consumer *- C++
//-*-===//
//
// Private to the transforms: pk-vectorize-packed-matmul runs the
// elementwise consumer of a packed product's C (bias, activation,
// residual, cast) on each register tile while the tile is in registers.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_MATMULEPILOGUE_H
#define PICOKERNEL_LIB_TRANSFORMS_MATMULEPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::pk {

/// The elementwise consumer of `op`'s C (bias, activation, residual, cast),
/// rewritten over C's tiled layout [.., M/mb, mb, N/nb, nb] so that the
/// loops of the register tiles can tile it, with the product fused into
/// them; null when C has no such consumer or its body has no vector form
/// (C's uses are then unchanged).
linalg::GenericOp expandEpilogue(RewriterBase &rewriter, linalg::GenericOp op);

/// Tiles `epilogue` into loops of `type` by `sizes` of the product's loop
/// dimensions (C's dimensions: the epilogue's are C's), fusing the product
/// (`product`) into them; both then name the tiled ops. The loops,
/// outermost first.
FailureOr<SmallVector<LoopLikeOpInterface>>
tileWithEpilogue(RewriterBase &rewriter, linalg::GenericOp &epilogue,
                 Operation *&product,
                 ArrayRef<std::pair<unsigned, OpFoldResult>> sizes,
                 scf::SCFTilingOptions::LoopType type);

/// The elementwise vector ops in `root` one row (the innermost dimension)
/// at a time: LLVM's lowering of some (math.absi) takes only 1-D vectors.
LogicalResult unrollToRows(Operation *root);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_MATMULEPILOGUE_H
