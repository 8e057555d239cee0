//===- GuardKey.h - the key compiled variants are cached by -----*- C++ -*-===//
//
// Private to the kernel layer. A call's guard key is what a compiled
// variant depends on, as int64 words: [count, then per array: dtype, rank,
// dims..., aliasOf]. It is encoded on every call, hashed and compared as a
// span, and read back to say why a kernel was compiled again. The key of a
// variant for dynamic sizes is the same with the count as -1 - count and
// each dynamic size (one the variant's mask marks, of at least 2) as
// -2 - k, k numbering the distinct such sizes in order: sizes 0 and 1
// (broadcasting), the static sizes and equalities stay in the key. A size
// the variant computes from a dynamic one (o's in o[...] = x[1:] - x[:-1])
// is a marker of that size's k and the difference, where it holds. Where
// the variant needs a size to be at least some minimum (it slices x[:4]),
// a size below it stays in the key, and the minimum of each dynamic size
// follows the arrays.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_KERNEL_GUARDKEY_H
#define PICOKERNEL_LIB_KERNEL_GUARDKEY_H

#include "picokernel/Kernel/Kernel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pk::detail {

using Key = std::vector<int64_t>;
using KeyView = std::span<const int64_t>;

struct KeyHash {
  using is_transparent = void;
  size_t operator()(KeyView key) const;
  size_t operator()(const Key &key) const { return (*this)(KeyView(key)); }
};

struct KeyEqual {
  using is_transparent = void;
  bool operator()(KeyView a, KeyView b) const;
};

/// Appends the key of `arrays` (checked; `aliasOf` from checkArguments).
void encodeKey(std::span<const ArrayView> arrays, llvm::ArrayRef<int> aliasOf,
               llvm::SmallVectorImpl<int64_t> &key);

/// Which sizes of a key may be dynamic: per dimension, in key order, 0
/// where it stays static, else the least size that is dynamic there (2:
/// any, as sizes 0 and 1 always stay); empty: all from 2.
using SizeMask = std::vector<int64_t>;

/// Whether a size `size` at dimension `position` of a key is dynamic.
inline bool isDynamicSize(const SizeMask &mask, size_t position, int64_t size) {
  return size >= 2 &&
         (mask.empty() || (mask[position] > 0 && size >= mask[position]));
}

/// A size that is the dynamic size at position `base` of a key plus
/// `difference` (o[...] = x[1:] - x[:-1]: o's is x's less 1). A mask marks
/// it with a negative entry (maskOfRelation); it is not dynamic itself.
struct SizeRelation {
  size_t base;
  int64_t difference;
};
/// The largest difference a relation takes (either way).
inline constexpr int64_t kMaxSizeDifference = (int64_t(1) << 31) - 1;
int64_t maskOfRelation(SizeRelation relation);
/// The relation `mask` marks at `position` of a key of sizes `sizes`,
/// where it holds (its base dynamic, the difference right, and the size
/// not 0 or 1); none elsewhere.
std::optional<SizeRelation> heldRelation(const SizeMask &mask,
                                         llvm::ArrayRef<int64_t> sizes,
                                         size_t position);

/// `mask` with each dynamic size of `key` in a class of `sizes` (as
/// encodeDynamicKey numbers them) that `derivedFrom` derives from another
/// class (-1: none) related to that class's first dynamic size; differences
/// past kMaxSizeDifference stay dynamic.
SizeMask withRelations(KeyView key, const SizeMask &mask,
                       llvm::ArrayRef<int64_t> sizes,
                       llvm::ArrayRef<int> derivedFrom);

/// The dynamic-sizes key of the exact key `key` (from encodeKey) for the
/// sizes `mask` marks, and the distinct dynamic sizes in the order
/// numbered; false (nothing written) if there are none.
bool encodeDynamicKey(KeyView key, const SizeMask &mask,
                      llvm::SmallVectorImpl<int64_t> &dynamicKey,
                      llvm::SmallVectorImpl<int64_t> &sizes);

/// Whether encodeDynamicKey(key, mask) would write `dynamicKey`: the
/// variant of that key serves `key` (without writing a key).
bool servesDynamicKey(KeyView key, const SizeMask &mask, KeyView dynamicKey);

/// The key without sizes: what calls that differ only in sizes share.
Key patternOf(KeyView key);

/// Whether exact key `key` has `pattern` (from patternOf).
bool hasPattern(KeyView key, KeyView pattern);

/// The sizes (both at least 2) in which two exact keys of one pattern
/// differ.
SizeMask differingSizes(KeyView a, KeyView b);

/// `mask` without the sizes of `key` whose value is one of `sizes`.
/// (`differingSizes` and `withoutSizes` mark the sizes left as 2.)
SizeMask withoutSizes(KeyView key, const SizeMask &mask,
                      llvm::ArrayRef<int64_t> sizes);

/// `mask` with each dynamic size of `key` in a class of `sizes` (as
/// encodeDynamicKey numbers them) at least that class's `minimum` (0: any).
SizeMask withMinimums(KeyView key, const SizeMask &mask,
                      llvm::ArrayRef<int64_t> sizes,
                      llvm::ArrayRef<int64_t> minimum);

/// One array of a key read back (a dynamic size as kDynamicSize).
struct KeyEntry {
  DType dtype;
  Shape shape;
  int64_t aliasOf;
};
std::vector<KeyEntry> decodeKey(KeyView key);

/// Why `key` was compiled when `before` was the last key compiled (empty:
/// none): "first compile", or which shapes, dtypes and aliases changed.
std::string explainKeyChange(KeyView before, KeyView key,
                             const std::vector<std::string> &paramNames);

/// The arrays of a key as the compile log shows them (`x: (n0, 4)
/// float32, o: (n0, 4) float32; n0 >= 4`): each dynamic size named by its
/// class (`n` when it is the only one), then a variant's minimums.
std::string describeKey(KeyView key,
                        const std::vector<std::string> &paramNames);

/// The signature a key was traced for.
Signature signatureOfKey(KeyView key,
                         const std::vector<std::string> &paramNames);

} // namespace pk::detail

#endif // PICOKERNEL_LIB_KERNEL_GUARDKEY_H
