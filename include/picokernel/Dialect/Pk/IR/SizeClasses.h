//===- SizeClasses.h - which dynamic sizes of a kernel are equal -*- C++
//-*-===//
//
// A kernel with dynamic (`?`) sizes relies on some of them being equal at
// run time: the operands of an elementwise operation, a value and the ref
// it is stored to, a broadcast's sizes and its result, a slice's size and
// the size of the dimension it slices. The size classes are those
// equalities closed over the kernel: one class per size a caller gives
// (ahead-of-time entry points take one argument per class). Every other
// dynamic size is a slice's, computed from those (pk.slice_size). A slice
// of a constant size (`x[:4]`, `x[2]`) of a dimension that varies needs it
// to have enough elements: a minimum of its class the caller checks.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_DIALECT_PK_IR_SIZECLASSES_H
#define PICOKERNEL_DIALECT_PK_IR_SIZECLASSES_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::pk {

struct SizeClasses {
  /// Per parameter, per dimension: its class, or -1 where it is static.
  SmallVector<SmallVector<int>> ofParameter;
  /// The number of classes, numbered in order of first appearance.
  int count = 0;
  /// Per class: the least size the kernel takes (0: any).
  SmallVector<int64_t> minimum;
};

/// Checks that `kernel`'s sizes are consistent for every size its callers
/// give: each slice of a dimension that varies stays inside it, and no
/// computed size must equal a given one (or one computed differently),
/// which no caller could be checked for.
LogicalResult verifySizeClasses(KernelOp kernel);

/// The size classes of `kernel`'s parameters (a verified kernel).
SizeClasses computeSizeClasses(KernelOp kernel);

} // namespace mlir::pk

#endif // PICOKERNEL_DIALECT_PK_IR_SIZECLASSES_H
