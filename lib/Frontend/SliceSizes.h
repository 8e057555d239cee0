//===- SliceSizes.h - the sizes of slices of dimensions that vary -*- C++
//-*-===//
//
// A slice `x[s:-t:q]` of a dimension of n elements (its start counted from
// the start, its stop from the end) has max(0, ceil((n - s - t) / q))
// elements for every n, however Python clamps its bounds; one of a
// constant size starts at a constant index (`x[:4]`) or at n less a
// constant (`x[-3:]`) in every dimension long enough, and a reversed one
// (`x[-c::-k]`) has ceil((n - c + 1) / k) from n - c: the generalizer
// reads that from the index the tracer recorded (pk.index) and checks it
// against both traces.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_FRONTEND_SLICESIZES_H
#define PICOKERNEL_LIB_FRONTEND_SLICESIZES_H

#include "mlir/IR/Attributes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <string>
#include <tuple>

namespace pk {

/// A dynamic size: max(0, ceil((n - offset) / step)) for n the size of
/// class `cls`. An input size is (cls, 0, 1); a slice `[s:-t:q]` of a
/// dimension of size (cls, c, k) has (cls, c + (s + t) k, k q) elements.
struct SizeExpr {
  int cls = -1;
  int64_t offset = 0;
  int64_t step = 1;

  int64_t at(int64_t n) const {
    return std::max<int64_t>(0, llvm::divideCeilSigned(n - offset, step));
  }
  auto tie() const { return std::tie(cls, offset, step); }
  bool operator==(const SizeExpr &other) const { return tie() == other.tie(); }
  bool operator<(const SizeExpr &other) const { return tie() < other.tie(); }
};

/// How one dimension of a slice of a dimension that varies follows the
/// sizes: its size, first index and step, or why it stays static. A slice
/// with both bounds counted from the start (`x[:4]`, `x[2]`, `x[3::-1]`)
/// takes the same `fixedSize` elements of every dimension long enough to
/// hold them; one counted from the end (`x[-3:]`, `x[-1]`) takes
/// `fixedSize` elements from `fromEnd` before the end, an index that is
/// the size `offset`, and a reversed one (`x[::-1]`) `size` elements
/// back from there.
struct SliceDimension {
  std::optional<SizeExpr> size;
  std::optional<int64_t> fixedSize;
  std::optional<int64_t> fromEnd;
  std::optional<SizeExpr> offset;
  int64_t start = 0;
  int64_t step = 1;
  std::string keepStatic;
};

/// The slice that `index` (one dimension's entry of the recorded pk.index:
/// an integer position, or [start|unit, stop|unit, step]) takes of a
/// dimension of size `full`; failure where `index` is not one.
mlir::FailureOr<SliceDimension> planSliceDimension(mlir::Attribute index,
                                                   SizeExpr full);

/// `index` (one dimension's entry of a pk.index) in Python's syntax:
/// `2`, `1:7:3`, `::-1`.
std::string formatSliceIndex(mlir::Attribute index);

} // namespace pk

#endif // PICOKERNEL_LIB_FRONTEND_SLICESIZES_H
