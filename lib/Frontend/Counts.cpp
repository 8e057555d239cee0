//===- Counts.cpp - numbers that count the elements of dynamic sizes ------===//

#include "Counts.h"

#include <cmath>
#include <functional>

namespace pk {
namespace {

/// The whole factor that makes `product` (first trace) and `productB`
/// (second) into `first` and `second` exactly, if there is one.
std::optional<int64_t> wholeFactor(double first, double second, int64_t product,
                                   int64_t productB) {
  // Sizes of 0 or 1 are never dynamic; a product that overflows or a
  // count past 2^53 (not exact in a double) is never matched.
  if (product < 2 || productB < 2 || second < 1 || second > 0x1p53 ||
      std::floor(second) != second)
    return std::nullopt;
  auto whole = static_cast<int64_t>(second);
  if (whole % productB != 0)
    return std::nullopt;
  int64_t factor = whole / productB;
  if (factor > (int64_t(1) << 53) / product ||
      double(factor * product) != first)
    return std::nullopt;
  return factor;
}

/// x * y, or nothing where it overflows 2^53.
std::optional<int64_t> product(int64_t x, int64_t y) {
  if (y != 0 && x > (int64_t(1) << 53) / y)
    return std::nullopt;
  return x * y;
}

} // namespace

std::optional<CountPlan> matchCount(double first, double second,
                                    llvm::ArrayRef<SeenSize> seen) {
  std::optional<CountPlan> found;
  bool ambiguous = false;
  // Every product of up to kMaxCountFactors seen sizes (indices in
  // ascending order, repeats allowed: a square's n x n), with its values
  // in both traces.
  llvm::SmallVector<SizeExpr, 2> sizes;
  std::function<void(size_t, int64_t, int64_t)> extend = [&](size_t from,
                                                             int64_t x,
                                                             int64_t y) {
    if (!sizes.empty()) {
      if (std::optional<int64_t> factor = wholeFactor(first, second, x, y)) {
        CountPlan plan{sizes, *factor};
        if (found &&
            (found->sizes != plan.sizes || found->factor != plan.factor))
          ambiguous = true;
        found = std::move(plan);
      }
    }
    if (sizes.size() == kMaxCountFactors)
      return;
    for (size_t i = from; i < seen.size(); ++i) {
      std::optional<int64_t> nextX = product(x, seen[i].first);
      std::optional<int64_t> nextY = product(y, seen[i].second);
      if (!nextX || !nextY)
        continue;
      sizes.push_back(seen[i].size);
      extend(i, *nextX, *nextY);
      sizes.pop_back();
    }
  };
  extend(0, 1, 1);
  if (ambiguous)
    return std::nullopt;
  return found;
}

} // namespace pk
