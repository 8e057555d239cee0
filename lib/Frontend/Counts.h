//===- Counts.h - numbers that count the elements of dynamic sizes -*- C++
//-*-===//
//
// A mean divides by its count, which the tracer records as a constant: the
// product of the reduced sizes. The generalizer recognizes such a constant
// by its values in the two traces and computes it from the sizes instead
// (pk.count).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_FRONTEND_COUNTS_H
#define PICOKERNEL_LIB_FRONTEND_COUNTS_H

#include "SliceSizes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace pk {

/// A dynamic size and its values in the first and the second trace.
struct SeenSize {
  SizeExpr size;
  int64_t first = 0;
  int64_t second = 0;
};

/// A count of elements: `factor` times the product of `sizes`.
struct CountPlan {
  llvm::SmallVector<SizeExpr, 2> sizes;
  int64_t factor = 1;
};

/// The most sizes a count multiplies (a mean over as many dimensions).
inline constexpr size_t kMaxCountFactors = 4;

/// The count that is exactly `first` in the first trace and `second` in the
/// second: a whole factor times the product of up to kMaxCountFactors of
/// `seen` (repeats allowed). None where no such count fits, or several
/// different ones do (they may differ for other sizes).
std::optional<CountPlan> matchCount(double first, double second,
                                    llvm::ArrayRef<SeenSize> seen);

} // namespace pk

#endif // PICOKERNEL_LIB_FRONTEND_COUNTS_H
