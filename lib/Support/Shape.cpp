//===- Shape.cpp - array shapes and NumPy's broadcasting ------------------===//

#include "picokernel/Support/Shape.h"

#include <algorithm>

namespace pk {

std::string formatShape(std::span<const int64_t> shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += shape[i] == kDynamicSize ? "?" : std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

Shape rowMajorStrides(std::span<const int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d > 1; --d)
    strides[d - 2] = strides[d - 1] * shape[d - 1];
  return strides;
}

std::optional<Shape> broadcastShapes(std::span<const int64_t> a,
                                     std::span<const int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align trailing dimensions; a missing leading dimension acts as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = da == 1 ? db : da;
  }
  return result;
}

bool broadcastsTo(std::span<const int64_t> from, std::span<const int64_t> to) {
  std::optional<Shape> shape = broadcastShapes(from, to);
  return shape &&
         std::equal(shape->begin(), shape->end(), to.begin(), to.end());
}

} // namespace pk
