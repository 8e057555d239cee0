//===- Reductions.h - what a reduction's body combines ----------*- C++ -*-===//
//
// Private to the transforms: the combiner of a reduction's accumulator and
// whether the reduction may be regrouped, as pk-split-reductions (blocks
// then a pairwise combine) and pk-reduce-in-workgroups (a shared-memory
// tree) regroup it.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_REDUCTIONS_H
#define PICOKERNEL_LIB_TRANSFORMS_REDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pk {

/// The one op of `op`'s body that combines its (single) accumulator with a
/// new value; null if there is not exactly one.
Operation *getCombiner(linalg::GenericOp op);

/// Whether the single combiner of `op`'s accumulator may be regrouped: exact
/// for integers and NaN-propagating max/min, for float sums only when the
/// add allows reassociation (as picokernel's sums do).
bool hasRegroupableCombiner(linalg::GenericOp op);

/// Whether the identity of a reduction into `type` is an ordinary value:
/// scalar integers (not index) and floats with infinities (max's identity
/// is -inf; float8 types would get a NaN).
bool hasPlainIdentity(Type type);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_REDUCTIONS_H
