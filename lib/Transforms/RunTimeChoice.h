//===- RunTimeChoice.h - two copies of an op, one chosen at run time -*- C++
//-*-===//
//
// Private to the transforms: where dynamic sizes leave a decision to run
// time (pack a matmul or not, run a product's tiles in parallel or not),
// the op is copied into both branches of an scf.if and each copy is
// transformed its own way.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_RUNTIMECHOICE_H
#define PICOKERNEL_LIB_TRANSFORMS_RUNTIMECHOICE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <utility>

namespace mlir::pk {

/// The size of `op`'s loop dimension `dim`, read from its first operand
/// that has it (an input: its init may be copied, see chooseAtRunTime).
Value loopSize(OpBuilder &builder, linalg::LinalgOp op, unsigned dim);

/// Whether `size` is at least `least`: an i1 computed at the builder's
/// insertion point.
Value isAtLeast(OpBuilder &builder, Location loc, Value size, int64_t least);

/// Replaces `op` and its single elementwise consumer, where that can move
/// up to `op`, by a choice made at run time (`condition`) between two
/// copies of them, whose products are returned (then, else). New tensors
/// and fills of them that the copies start from are copied too, so that
/// each branch computes in a tensor of its own (which pk-compute-in-place
/// then places in the caller's buffer). Where `copyProducers`, the
/// single-use elementwise producers of `op`'s inputs (a cast of B) are
/// copied into both as well, so that each branch's packs can fuse them
/// instead of reading a full-size result made before the choice.
std::pair<linalg::LinalgOp, linalg::LinalgOp>
chooseAtRunTime(RewriterBase &rewriter, linalg::LinalgOp op, Value condition,
                bool copyProducers = false);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_RUNTIMECHOICE_H
