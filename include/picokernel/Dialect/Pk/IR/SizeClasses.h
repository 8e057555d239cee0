//===- SizeClasses.h - which dynamic sizes of a kernel are equal -*- C++
//-*-===//
//
// A kernel with dynamic (`?`) sizes relies on some of them being equal at
// run time: the operands of an elementwise operation, a value and the ref
// it is stored to, a broadcast's sizes and its result, a slice's size and
// the size of the dimension it slices. The size classes are those
// equalities closed over the kernel: one class per size a caller gives
// (ahead-of-time entry points take one argument per such class). Every
// other dynamic size is a slice's, computed from those (pk.slice_size);
// where a parameter's size is a slice's (`o[...] = x[1:] - x[:-1]`: o has
// one element less than x), its class is derived from the class it is
// computed from, and the caller checks it. A slice of a constant size
// (`x[:4]`, `x[2]`) of a dimension that varies needs it to have enough
// elements, and a max or min one element in each dimension it reduces
// (`x[2:].max()`: 3): a minimum of its class the caller checks.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_DIALECT_PK_IR_SIZECLASSES_H
#define PICOKERNEL_DIALECT_PK_IR_SIZECLASSES_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::pk {

/// A size computed from one a caller gives: max(0, ceil((n - offset) /
/// step)) for n the size of class `base`.
struct DerivedSize {
  int base;
  int64_t offset;
  int64_t step;

  int64_t at(int64_t n) const;
};

struct SizeClasses {
  /// Per parameter, per dimension: its class, or -1 where it is static.
  SmallVector<SmallVector<int>> ofParameter;
  /// The number of classes, numbered in order of first appearance.
  int count = 0;
  /// Per class: the least size the kernel takes (0: any; a derived
  /// class's minimum is its base's).
  SmallVector<int64_t> minimum;
  /// Per class: how its size follows from a class the caller gives, or
  /// none where the caller gives it.
  SmallVector<std::optional<DerivedSize>> derived;

  bool isGiven(int k) const { return !derived[k]; }
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
