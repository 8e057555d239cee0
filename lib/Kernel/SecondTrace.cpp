//===- SecondTrace.cpp - the sizes a dynamic compile traces again ---------===//

#include "SecondTrace.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <set>

namespace pk::detail {

namespace {
/// The first prime at least `n` (n >= 2).
int64_t primeAtLeast(int64_t n) {
  auto isPrime = [](int64_t p) {
    for (int64_t d = 2; d * d <= p; ++d)
      if (p % d == 0)
        return false;
    return true;
  };
  while (!isPrime(n))
    ++n;
  return n;
}

} // namespace

SizeRoles rolesOf(const Signature &real, const SizeMask &mask,
                  llvm::ArrayRef<int64_t> sizes) {
  SizeRoles roles;
  std::vector<int64_t> all;
  for (const ArgSpec &arg : real)
    all.insert(all.end(), arg.shape.begin(), arg.shape.end());
  for (auto [position, size] : llvm::enumerate(all)) {
    bool dynamic = isDynamicSize(mask, position, size);
    roles.classOf.push_back(
        dynamic ? int(llvm::find(sizes, size) - sizes.begin()) : -1);
    roles.related.emplace_back();
    std::optional<SizeRelation> relation = heldRelation(mask, all, position);
    if (!relation)
      continue;
    size_t k = llvm::find(sizes, all[relation->base]) - sizes.begin();
    roles.related.back() = std::pair{k, relation->difference};
  }
  return roles;
}

Signature withClassSizes(const Signature &real, const SizeRoles &roles,
                         llvm::ArrayRef<int64_t> classSizes) {
  Signature other = real;
  size_t position = 0;
  for (ArgSpec &arg : other)
    for (int64_t &size : arg.shape) {
      if (int k = roles.classOf[position]; k >= 0)
        size = classSizes[k];
      else if (auto related = roles.related[position])
        size = classSizes[related->first] + related->second;
      ++position;
    }
  return other;
}

bool takesClassSizes(const Signature &real, const SizeRoles &roles,
                     llvm::ArrayRef<int64_t> classSizes) {
  std::vector<int64_t> seen;
  for (const ArgSpec &arg : real)
    seen.insert(seen.end(), arg.shape.begin(), arg.shape.end());
  Signature other = withClassSizes(real, roles, classSizes);
  // Each size that moves: to a size of no array, the same for every
  // dimension of that size, and unlike the others'.
  std::map<int64_t, int64_t> movedOf;
  for (auto [arg, before] : llvm::zip(other, real)) {
    int64_t bytes = int64_t(itemSize(arg.dtype));
    for (auto [size, old] : llvm::zip(arg.shape, before.shape)) {
      if (size < 0 || llvm::MulOverflow(bytes, size, bytes))
        return false;
      if (size == old)
        continue;
      auto [it, inserted] = movedOf.try_emplace(old, size);
      if ((!inserted && it->second != size) || llvm::is_contained(seen, size))
        return false;
    }
  }
  std::set<int64_t> distinct;
  for (auto [old, size] : movedOf)
    if (!distinct.insert(size).second)
      return false;
  return true;
}

std::vector<int64_t> secondSizes(const Signature &real, const SizeRoles &roles,
                                 llvm::ArrayRef<int64_t> sizes) {
  for (int64_t step : {1009, 101, 11, 3}) {
    std::vector<int64_t> moved;
    for (auto [k, size] : llvm::enumerate(sizes))
      moved.push_back(size + primeAtLeast(step * int64_t(k + 1)));
    if (takesClassSizes(real, roles, moved))
      return moved;
  }
  return {};
}

/// Pairs of a few classes only: each try traces the kernel.
constexpr size_t kMaxPairedClasses = 8;

std::vector<int>
relateSizes(const Signature &real, const SizeRoles &roles,
            llvm::ArrayRef<int64_t> sizes, llvm::ArrayRef<int64_t> moved,
            llvm::ArrayRef<size_t> failing,
            llvm::function_ref<bool(const Signature &)> traces) {
  if (failing.size() < 2 ||
      llvm::any_of(roles.related, [](auto related) { return bool(related); }))
    return {};
  // The sizes with each group moved by its largest class's amount.
  auto withGroups = [&](llvm::ArrayRef<int64_t> start,
                        llvm::ArrayRef<std::vector<size_t>> groups) {
    std::vector<int64_t> classSizes(start.begin(), start.end());
    for (const std::vector<size_t> &group : groups) {
      size_t largest = *llvm::max_element(
          group, [&](size_t a, size_t b) { return sizes[a] < sizes[b]; });
      for (size_t k : group)
        classSizes[k] = sizes[k] + (moved[largest] - sizes[largest]);
    }
    return classSizes;
  };
  auto tracesWith = [&](llvm::ArrayRef<int64_t> classSizes) {
    return takesClassSizes(real, roles, classSizes) &&
           traces(withClassSizes(real, roles, classSizes));
  };
  std::vector<std::vector<size_t>> groups;
  std::vector<size_t> rest;
  std::vector<bool> grouped(sizes.size(), false);
  bool pairs = failing.size() <= kMaxPairedClasses;
  for (auto [i, a] : llvm::enumerate(failing))
    for (size_t b : llvm::drop_begin(failing, i + 1))
      if (pairs && !grouped[a] && !grouped[b] &&
          tracesWith(withGroups(sizes, {{a, b}}))) {
        groups.push_back({a, b});
        grouped[a] = grouped[b] = true;
      }
  for (size_t k : failing)
    if (!grouped[k])
      rest.push_back(k);
  // The rest one more group; else (a size a fixed slice such as x[:4]
  // takes, which fails moved at all) unmoved, for the next round to keep
  // static.
  auto fits = [&](llvm::ArrayRef<std::vector<size_t>> tried) {
    for (const std::vector<size_t> &group : tried)
      for (size_t k : group)
        for (size_t other : group)
          if (sizes[other] - sizes[k] > kMaxSizeDifference)
            return false;
    return true;
  };
  std::vector<int64_t> start(moved.begin(), moved.end());
  bool traced = false;
  if (rest.size() > 1) {
    groups.push_back(rest);
    traced = fits(groups) && tracesWith(withGroups(start, groups));
    if (!traced)
      groups.pop_back();
  }
  if (!traced) {
    for (size_t k : rest)
      start[k] = sizes[k];
    traced = !groups.empty() && fits(groups) &&
             tracesWith(withGroups(start, groups));
  }
  if (!traced)
    return {};
  std::vector<int> derivedFrom(sizes.size(), -1);
  for (const std::vector<size_t> &group : groups) {
    size_t largest = *llvm::max_element(
        group, [&](size_t a, size_t b) { return sizes[a] < sizes[b]; });
    for (size_t k : group)
      if (k != largest)
        derivedFrom[k] = int(largest);
  }
  return derivedFrom;
}

bool derivesAsKeyed(const mlir::pk::SizeClasses &classes, const Signature &real,
                    const SizeRoles &roles) {
  // A size of the key as (its class, a difference from that class's).
  auto keyed =
      [&](size_t position) -> std::optional<std::pair<size_t, int64_t>> {
    if (int k = roles.classOf[position]; k >= 0)
      return std::pair{size_t(k), int64_t(0)};
    return roles.related[position];
  };
  // Per class of the kernel: a position of the key that has it.
  std::vector<size_t> positionOf(classes.count, SIZE_MAX);
  std::vector<std::pair<size_t, int>> positions;
  size_t parameter = 0, position = 0;
  for (const ArgSpec &arg : real) {
    for (size_t d = 0; d < arg.shape.size(); ++d, ++position)
      if (arg.aliasOf < 0 && parameter < classes.ofParameter.size())
        if (int cls = classes.ofParameter[parameter][d]; cls >= 0) {
          if (positionOf[cls] == SIZE_MAX)
            positionOf[cls] = position;
          positions.push_back({position, cls});
        }
    parameter += arg.aliasOf < 0;
  }
  for (auto [position, cls] : positions) {
    std::optional<mlir::pk::DerivedSize> derived = classes.derived[cls];
    if (!derived)
      continue;
    auto size = keyed(position);
    auto base = positionOf[derived->base] == SIZE_MAX
                    ? std::nullopt
                    : keyed(positionOf[derived->base]);
    if (derived->step != 1 || !size || !base || size->first != base->first ||
        size->second != base->second - derived->offset)
      return false;
  }
  return true;
}

} // namespace pk::detail
