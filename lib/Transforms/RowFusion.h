//===- RowFusion.h - the fusion steps of pk-fuse-rows -----------*- C++ -*-===//
//
// Private to the transforms: which ops pk-fuse-rows tiles and fuses, and
// its two fusion steps.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_ROWFUSION_H
#define PICOKERNEL_LIB_TRANSFORMS_ROWFUSION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pk {

/// A generic or fill of the function's own body (not inside a loop) on
/// tensors with nonzero sizes (static ones, or dynamic ones tiled with a
/// partial last tile), reading and writing through projected permutations:
/// what pk-fuse-rows tiles and fuses (upstream's tiling slices reversed
/// views wrongly).
bool isTopLevelTensorOp(Operation *op, func::FuncOp func);

/// Fuses into `loops` (a tile nest) the producers of the slices it takes,
/// and of theirs, one slice at a time; a slice the same as one fused before
/// reads that tile. Returns the producers fused.
llvm::SetVector<Operation *>
fuseProducersInto(RewriterBase &rewriter,
                  MutableArrayRef<LoopLikeOpInterface> loops,
                  func::FuncOp func);

/// Makes all-parallel fused ops that write a fresh tile of the root's
/// result (softmax's `exp`) write the root's destination tile instead.
void writeIntoRootTile(RewriterBase &rewriter, linalg::GenericOp root,
                       ArrayRef<Operation *> fused);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_ROWFUSION_H
