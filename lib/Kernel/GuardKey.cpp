//===- GuardKey.cpp - the key compiled variants are cached by -------------===//

#include "GuardKey.h"
#include "Arguments.h"

#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace pk::detail {

size_t KeyHash::operator()(KeyView key) const {
  return llvm::hash_combine_range(key.begin(), key.end());
}

bool KeyEqual::operator()(KeyView a, KeyView b) const {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

void encodeKey(std::span<const ArrayView> arrays, llvm::ArrayRef<int> aliasOf,
               llvm::SmallVectorImpl<int64_t> &key) {
  // (Sized once, then written: this runs on every call.)
  size_t words = 1;
  for (const ArrayView &array : arrays)
    words += 3 + array.shape.size();
  size_t start = key.size();
  key.resize_for_overwrite(start + words);
  int64_t *next = key.data() + start;
  *next++ = int64_t(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    *next++ = int64_t(arrays[i].dtype);
    *next++ = int64_t(arrays[i].shape.size());
    next = std::copy(arrays[i].shape.begin(), arrays[i].shape.end(), next);
    *next++ = aliasOf[i];
  }
}

/// Calls `fn(word index)` for each size word of an exact key, in order.
template <typename Fn> static void forEachSize(KeyView key, Fn fn) {
  size_t at = 1;
  for (int64_t i = 0; i < key[0]; ++i) {
    int64_t rank = key[at + 1];
    for (int64_t d = 0; d < rank; ++d)
      fn(at + 2 + d);
    at += 3 + rank;
  }
}

Key patternOf(KeyView key) {
  Key pattern(key.begin(), key.end());
  forEachSize(key, [&](size_t word) { pattern[word] = -1; });
  return pattern;
}

bool hasPattern(KeyView key, KeyView pattern) {
  if (key.size() != pattern.size() || key[0] != pattern[0])
    return false;
  size_t at = 1;
  for (int64_t i = 0; i < key[0]; ++i) {
    int64_t rank = key[at + 1];
    // dtype and rank, then (past the sizes) the alias.
    if (key[at] != pattern[at] || rank != pattern[at + 1] ||
        key[at + 2 + rank] != pattern[at + 2 + rank])
      return false;
    at += 3 + rank;
  }
  return true;
}

SizeMask differingSizes(KeyView a, KeyView b) {
  SizeMask mask;
  forEachSize(a, [&](size_t word) {
    mask.push_back(a[word] >= 2 && b[word] >= 2 && a[word] != b[word] ? 2 : 0);
  });
  return mask;
}

SizeMask withoutSizes(KeyView key, const SizeMask &mask,
                      llvm::ArrayRef<int64_t> sizes) {
  SizeMask result;
  forEachSize(key, [&](size_t word) {
    int64_t least = mask.empty() ? 2 : mask[result.size()];
    result.push_back(llvm::is_contained(sizes, key[word]) ? 0 : least);
  });
  return result;
}

SizeMask withMinimums(KeyView key, const SizeMask &mask,
                      llvm::ArrayRef<int64_t> sizes,
                      llvm::ArrayRef<int64_t> minimum) {
  SizeMask result;
  forEachSize(key, [&](size_t word) {
    size_t position = result.size();
    int64_t least = mask.empty() ? 2 : mask[position];
    if (isDynamicSize(mask, position, key[word])) {
      size_t k = llvm::find(sizes, key[word]) - sizes.begin();
      if (k < minimum.size())
        least = std::max(least, minimum[k]);
    }
    result.push_back(least);
  });
  return result;
}

namespace {
/// An index (below 2^32) and a difference (at most kMaxSizeDifference
/// either way) in one word, and back: relations in masks and keys.
uint64_t packRelation(size_t index, int64_t difference) {
  return (uint64_t(index) << 32) | uint64_t(difference + kMaxSizeDifference);
}
std::pair<size_t, int64_t> unpackRelation(uint64_t bits) {
  return {size_t(bits >> 32), int64_t(bits & 0xffffffffu) - kMaxSizeDifference};
}

/// A key's word for a size that is class k's plus `difference`: below
/// every class's (-2 - k) and distinct for each pair.
constexpr int64_t kRelatedWords = std::numeric_limits<int64_t>::min() / 2;
int64_t relatedWord(size_t k, int64_t difference) {
  return kRelatedWords - int64_t(packRelation(k, difference));
}
std::optional<std::pair<size_t, int64_t>> relatedOfWord(int64_t word) {
  if (word >= kRelatedWords)
    return std::nullopt;
  return unpackRelation(uint64_t(kRelatedWords - word));
}
} // namespace

int64_t maskOfRelation(SizeRelation relation) {
  return -1 - int64_t(packRelation(relation.base, relation.difference));
}

std::optional<SizeRelation> heldRelation(const SizeMask &mask,
                                         llvm::ArrayRef<int64_t> sizes,
                                         size_t position) {
  if (mask.empty() || mask[position] >= 0 || sizes[position] < 2)
    return std::nullopt;
  auto [base, difference] = unpackRelation(uint64_t(-1 - mask[position]));
  if (!isDynamicSize(mask, base, sizes[base]) ||
      sizes[position] != sizes[base] + difference)
    return std::nullopt;
  return SizeRelation{base, difference};
}

SizeMask withRelations(KeyView key, const SizeMask &mask,
                       llvm::ArrayRef<int64_t> sizes,
                       llvm::ArrayRef<int> derivedFrom) {
  SizeMask result;
  std::vector<int64_t> keySizes;
  forEachSize(key, [&](size_t word) {
    result.push_back(mask.empty() ? 2 : mask[result.size()]);
    keySizes.push_back(key[word]);
  });
  for (size_t position = 0; position < keySizes.size(); ++position) {
    int64_t size = keySizes[position];
    if (!isDynamicSize(mask, position, size))
      continue;
    size_t k = llvm::find(sizes, size) - sizes.begin();
    if (k >= derivedFrom.size() || derivedFrom[k] < 0)
      continue;
    int64_t baseSize = sizes[derivedFrom[k]];
    int64_t difference = size - baseSize;
    if (std::abs(difference) > kMaxSizeDifference)
      continue;
    for (size_t base = 0; base < keySizes.size(); ++base)
      if (keySizes[base] == baseSize && isDynamicSize(mask, base, baseSize)) {
        result[position] = maskOfRelation({base, difference});
        break;
      }
  }
  return result;
}

namespace {
/// Writes the dynamic-sizes key of exact key `key` for `mask` word by word
/// to `put` (which returns false to stop: then so does this), and the
/// distinct dynamic sizes to `sizes` from `first` on. One writer for
/// encodeDynamicKey and servesDynamicKey, so that they cannot disagree.
template <typename Put>
bool writeDynamicKey(KeyView key, const SizeMask &mask,
                     llvm::SmallVectorImpl<int64_t> &sizes, size_t first,
                     Put put) {
  // Per dynamic size (`sizes` from `first` on): the least at its
  // dimensions.
  llvm::SmallVector<int64_t, 8> least;
  llvm::SmallVector<int64_t, 16> keySizes;
  forEachSize(key, [&](size_t word) { keySizes.push_back(key[word]); });
  auto classOf = [&](int64_t size) {
    return size_t(std::find(sizes.begin() + first, sizes.end(), size) -
                  sizes.begin()) -
           first;
  };
  for (auto [position, size] : llvm::enumerate(keySizes)) {
    if (!isDynamicSize(mask, position, size))
      continue;
    size_t k = classOf(size);
    if (first + k == sizes.size()) {
      sizes.push_back(size);
      least.push_back(2);
    }
    if (!mask.empty())
      least[k] = std::max(least[k], mask[position]);
  }
  if (!put(-1 - key[0]))
    return false;
  size_t at = 1, position = 0;
  for (int64_t i = 0; i < key[0]; ++i) {
    int64_t rank = key[at + 1];
    if (!put(key[at]) || !put(rank))
      return false;
    for (int64_t d = 0; d < rank; ++d, ++position) {
      int64_t size = keySizes[position];
      int64_t word = size;
      if (isDynamicSize(mask, position, size))
        word = -2 - int64_t(classOf(size));
      // A size computed from a dynamic one, where it is.
      else if (std::optional<SizeRelation> relation =
                   heldRelation(mask, keySizes, position))
        word = relatedWord(classOf(keySizes[relation->base]),
                           relation->difference);
      if (!put(word))
        return false;
    }
    if (!put(key[at + 2 + rank]))
      return false;
    at += 3 + rank;
  }
  // (Kept out of the keys of variants that take every size.)
  if (llvm::any_of(least, [](int64_t size) { return size > 2; }))
    for (int64_t size : least)
      if (!put(size))
        return false;
  return true;
}
} // namespace

bool encodeDynamicKey(KeyView key, const SizeMask &mask,
                      llvm::SmallVectorImpl<int64_t> &dynamicKey,
                      llvm::SmallVectorImpl<int64_t> &sizes) {
  size_t start = dynamicKey.size(), first = sizes.size();
  writeDynamicKey(key, mask, sizes, first, [&](int64_t word) {
    dynamicKey.push_back(word);
    return true;
  });
  if (sizes.size() > first)
    return true;
  dynamicKey.resize(start);
  return false;
}

bool servesDynamicKey(KeyView key, const SizeMask &mask, KeyView dynamicKey) {
  llvm::SmallVector<int64_t, 8> sizes;
  size_t next = 0;
  bool same = writeDynamicKey(key, mask, sizes, 0, [&](int64_t word) {
    return next < dynamicKey.size() && dynamicKey[next++] == word;
  });
  return same && next == dynamicKey.size() && !sizes.empty();
}

std::vector<KeyEntry> decodeKey(KeyView key) {
  std::vector<KeyEntry> entries;
  size_t at = 1;
  int64_t count = key[0] < 0 ? -1 - key[0] : key[0];
  for (int64_t i = 0; i < count; ++i) {
    KeyEntry entry{DType(key[at]), {}, 0};
    int64_t rank = key[at + 1];
    entry.shape.assign(key.begin() + at + 2, key.begin() + at + 2 + rank);
    for (int64_t &size : entry.shape)
      if (size < 0)
        size = kDynamicSize;
    entry.aliasOf = key[at + 2 + rank];
    at += 3 + rank;
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::string explainKeyChange(KeyView before, KeyView key,
                             const std::vector<std::string> &paramNames) {
  if (before.empty())
    return "first compile";
  std::vector<KeyEntry> now = decodeKey(key), earlier = decodeKey(before);
  if (now.size() != earlier.size())
    return std::to_string(now.size()) + " arrays instead of " +
           std::to_string(earlier.size());
  std::string reasons;
  auto add = [&](const std::string &reason) {
    reasons += (reasons.empty() ? "" : "; ") + reason;
  };
  for (size_t i = 0; i < now.size(); ++i) {
    if (now[i].shape != earlier[i].shape)
      add("shape of '" + paramName(paramNames, i) + "' " +
          formatShape(earlier[i].shape) + " -> " + formatShape(now[i].shape));
    if (now[i].dtype != earlier[i].dtype)
      add("dtype of '" + paramName(paramNames, i) + "' " +
          std::string(dtypeName(earlier[i].dtype)) + " -> " +
          std::string(dtypeName(now[i].dtype)));
    if (now[i].aliasOf != earlier[i].aliasOf)
      add(now[i].aliasOf >= 0
              ? "'" + paramName(paramNames, i) +
                    "' is now the same array as '" +
                    paramName(paramNames, now[i].aliasOf) + "'"
              : "'" + paramName(paramNames, i) +
                    "' is no longer the same array as '" +
                    paramName(paramNames, earlier[i].aliasOf) + "'");
  }
  return reasons.empty() ? "evicted earlier" : reasons;
}

std::string describeKey(KeyView key,
                        const std::vector<std::string> &paramNames) {
  int64_t count = key[0] < 0 ? -1 - key[0] : key[0];
  // Dynamic sizes are -2 - k for class k; computed ones relatedWord's.
  int64_t classes = 0;
  size_t at = 1;
  for (int64_t i = 0; i < count; ++i) {
    int64_t rank = key[at + 1];
    for (int64_t d = 0; d < rank; ++d)
      if (!relatedOfWord(key[at + 2 + d]))
        classes = std::max(classes, -1 - key[at + 2 + d]);
    at += 3 + rank;
  }
  auto sizeName = [&](int64_t k) {
    return classes == 1 ? std::string("n") : "n" + std::to_string(k);
  };
  auto sizeText = [&](int64_t size) {
    if (size >= 0)
      return std::to_string(size);
    if (std::optional<std::pair<size_t, int64_t>> related =
            relatedOfWord(size)) {
      auto [k, difference] = *related;
      return sizeName(int64_t(k)) + (difference < 0 ? " - " : " + ") +
             std::to_string(std::abs(difference));
    }
    return sizeName(-2 - size);
  };
  std::string text;
  at = 1;
  for (int64_t i = 0; i < count; ++i) {
    int64_t rank = key[at + 1];
    text += (i ? ", " : "") + paramName(paramNames, size_t(i)) + ": (";
    for (int64_t d = 0; d < rank; ++d)
      text += (d ? ", " : "") + sizeText(key[at + 2 + d]);
    text += std::string(rank == 1 ? ",) " : ") ") +
            std::string(dtypeName(DType(key[at])));
    at += 3 + rank;
  }
  // A variant's minimums follow its arrays, one per class.
  for (int64_t k = 0; at + size_t(k) < key.size(); ++k)
    if (key[at + k] > 2)
      text += "; " + sizeName(k) + " >= " + std::to_string(key[at + k]);
  return text;
}

Signature signatureOfKey(KeyView key,
                         const std::vector<std::string> &paramNames) {
  Signature signature;
  std::vector<KeyEntry> entries = decodeKey(key);
  for (size_t i = 0; i < entries.size(); ++i)
    signature.push_back({paramName(paramNames, i), entries[i].shape,
                         entries[i].dtype, int(entries[i].aliasOf)});
  return signature;
}

} // namespace pk::detail
