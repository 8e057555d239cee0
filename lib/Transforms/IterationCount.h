//===- IterationCount.h - the size of a linalg op's loop nest ---*- C++ -*-===//
//
// Private to the transforms: how many points a linalg op's iteration space
// has, which decides what runs in parallel and what gets packed.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_ITERATIONCOUNT_H
#define PICOKERNEL_LIB_TRANSFORMS_ITERATIONCOUNT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cstdint>

namespace mlir::pk {

/// The number of points in `op`'s iteration space, saturating at INT64_MAX
/// (also for dynamic sizes); 0 when a static size is 0, whatever the
/// others.
inline int64_t iterationCount(linalg::LinalgOp op) {
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::is_contained(sizes, 0))
    return 0;
  int64_t count = 1;
  for (int64_t size : sizes) {
    if (ShapedType::isDynamic(size) || count > INT64_MAX / size)
      return INT64_MAX;
    count *= size;
  }
  return count;
}

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_ITERATIONCOUNT_H
