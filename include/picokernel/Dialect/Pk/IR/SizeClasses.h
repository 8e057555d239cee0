//===- SizeClasses.h - which dynamic sizes of a kernel are equal -*- C++
//-*-===//
//
// A kernel with dynamic (`?`) sizes relies on some of them being equal at
// run time: the operands of an elementwise operation, a value and the ref
// it is stored to, a broadcast's sizes and its result. The size classes
// are those equalities closed over the kernel: one class per size a caller
// gives (ahead-of-time entry points take one argument per class).
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
};

/// The size classes of `kernel`'s parameters.
SizeClasses computeSizeClasses(KernelOp kernel);

} // namespace mlir::pk

#endif // PICOKERNEL_DIALECT_PK_IR_SIZECLASSES_H
