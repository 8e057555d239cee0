//===- Counts.cpp - numbers that count the elements of dynamic sizes ------===//

#include "Counts.h"

#include <cmath>

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
  auto consider = [&](llvm::SmallVector<SizeExpr, 2> sizes, int64_t x,
                      int64_t y) {
    std::optional<int64_t> factor = wholeFactor(first, second, x, y);
    if (!factor)
      return;
    CountPlan plan{std::move(sizes), *factor};
    if (found && (found->sizes != plan.sizes || found->factor != *factor))
      ambiguous = true;
    found = std::move(plan);
  };
  for (size_t i = 0; i < seen.size(); ++i) {
    consider({seen[i].size}, seen[i].first, seen[i].second);
    for (size_t j = i; j < seen.size(); ++j) {
      std::optional<int64_t> x = product(seen[i].first, seen[j].first);
      std::optional<int64_t> y = product(seen[i].second, seen[j].second);
      if (x && y)
        consider({seen[i].size, seen[j].size}, *x, *y);
    }
  }
  if (ambiguous)
    return std::nullopt;
  return found;
}

} // namespace pk
