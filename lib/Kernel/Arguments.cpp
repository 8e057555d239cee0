//===- Arguments.cpp - checking the arrays a kernel is called with --------===//

#include "Arguments.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

namespace pk::detail {

std::string paramName(const std::vector<std::string> &paramNames,
                      size_t index) {
  if (index < paramNames.size() && !paramNames[index].empty())
    return paramNames[index];
  return "arg" + std::to_string(index);
}

void checkArguments(
    std::span<const ArrayView> arrays, int arity, const std::string &name,
    const std::vector<std::string> &paramNames,
    llvm::SmallVectorImpl<int> &aliasOf,
    llvm::SmallVectorImpl<std::pair<int, int>> &partialOverlaps) {
  size_t count = arrays.size();
  if (arity >= 0 && count != size_t(arity))
    throw ArgumentError("kernel '" + name + "' takes " + std::to_string(arity) +
                        " arrays, got " + std::to_string(count));
  if (count == 0)
    throw ArgumentError("kernel '" + name +
                        "' needs at least one array (the output)");
  llvm::SmallVector<std::pair<uintptr_t, uintptr_t>, 16> ranges;
  for (size_t i = 0; i < count; ++i) {
    const ArrayView &array = arrays[i];
    if (size_t(array.dtype) >= kNumDTypes)
      throw ArgumentError("argument '" + paramName(paramNames, i) +
                          "' has an unknown dtype");
    if (array.shape.size() > kMaxRank)
      throw ArgumentError("argument '" + paramName(paramNames, i) + "' has " +
                          std::to_string(array.shape.size()) +
                          " dimensions; at most " + std::to_string(kMaxRank) +
                          " are supported");
    int64_t elements = 1;
    bool overflows = false, empty = false;
    for (int64_t dim : array.shape) {
      if (dim < 0)
        throw ArgumentError("argument '" + paramName(paramNames, i) +
                            "' has shape " + formatShape(array.shape) +
                            " with a negative dimension");
      overflows |= llvm::MulOverflow(elements, dim, elements);
      empty |= dim == 0;
    }
    // Bytes must fit in a pointer difference, as for any C array (a
    // zero dimension empties the array whatever the others are).
    if (empty)
      elements = 0;
    int64_t item = int64_t(itemSize(array.dtype)), bytes = 0;
    if (!empty && (overflows || llvm::MulOverflow(elements, item, bytes)))
      throw ArgumentError("argument '" + paramName(paramNames, i) +
                          "' has shape " + formatShape(array.shape) +
                          ", whose size in bytes does not fit in 64 bits");
    if (!array.strides.empty()) {
      if (array.strides.size() != array.shape.size())
        throw ArgumentError("argument '" + paramName(paramNames, i) + "' has " +
                            std::to_string(array.strides.size()) +
                            " strides for " +
                            std::to_string(array.shape.size()) + " dimensions");
      // An empty array is contiguous whatever its strides (NumPy gives
      // (0, 0) for a (2, 0) array, DLPack producers other values).
      int64_t expected = 1;
      for (size_t d = array.shape.size(); !empty && d-- > 0;) {
        if (array.shape[d] != 1 && array.strides[d] != expected)
          throw ArgumentError("argument '" + paramName(paramNames, i) +
                              "' is not C-contiguous (strides " +
                              formatShape(array.strides) + " for shape " +
                              formatShape(array.shape) +
                              "); the CPU backend runs on contiguous arrays");
        expected *= array.shape[d];
      }
    }
    if (!array.data && elements != 0)
      throw ArgumentError("argument '" + paramName(paramNames, i) +
                          "' has no data (null pointer)");
    auto begin = reinterpret_cast<uintptr_t>(array.data);
    ranges.push_back({begin, begin + uintptr_t(bytes)});
  }

  aliasOf.assign(count, -1);
  for (size_t i = 0; i < count; ++i) {
    if (ranges[i].first == ranges[i].second)
      continue; // an empty array overlaps nothing
    for (size_t j = 0; j < i; ++j) {
      if (ranges[j].first == ranges[j].second ||
          ranges[i].first >= ranges[j].second ||
          ranges[j].first >= ranges[i].second)
        continue;
      bool same = arrays[i].data == arrays[j].data &&
                  arrays[i].dtype == arrays[j].dtype &&
                  std::equal(arrays[i].shape.begin(), arrays[i].shape.end(),
                             arrays[j].shape.begin(), arrays[j].shape.end());
      if (same && aliasOf[i] < 0)
        aliasOf[i] = aliasOf[j] >= 0 ? aliasOf[j] : int(j);
      else if (!same)
        partialOverlaps.push_back({int(j), int(i)});
    }
  }
}

} // namespace pk::detail
