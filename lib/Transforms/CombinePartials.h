//===- CombinePartials.h - merging a split reduction's partials -*- C++ -*-===//
//
// Private to the transforms: how pk-split-reductions combines the partial
// results of its blocks (pairwise, as NumPy sums, or by one reduction op
// that a GPU runs as a workgroup's tree).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_COMBINEPARTIALS_H
#define PICOKERNEL_LIB_TRANSFORMS_COMBINEPARTIALS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::pk {

/// init = combiner(init, value), element by element (one shape).
Value combineInto(OpBuilder &b, Location loc, Value value, Value init,
                  Operation *combiner);

/// The first `count` rows (along dimension 0) of `partials` combined
/// pairwise, as NumPy sums: while n > 1, the next level's
/// p'[i] = p[i] + p[n - h + i] for i < h = n/2 (contiguous, so it
/// vectorizes), and p'[h] = p[h] when n is odd; each partial goes through
/// log2(n) combines. A static count unrolls the levels; a dynamic one loops
/// over them (scf.while). Returns the total, `partials` without dimension 0.
Value combinePairwise(OpBuilder &b, Location loc, Value partials,
                      OpFoldResult count, Operation *combiner);

/// init = combiner(init, partials[0], partials[1], ...): the partial results
/// along dimension 0 reduced by one op (which a GPU pipeline runs as a
/// workgroup's tree, pk-reduce-in-workgroups).
Value reduceInto(OpBuilder &b, Location loc, Value partials, Value init,
                 Operation *combiner);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_COMBINEPARTIALS_H
