//===- GuardKey.h - the key compiled variants are cached by -----*- C++ -*-===//
//
// Private to the kernel layer. A call's guard key is what a compiled
// variant depends on, as int64 words: [count, then per array: dtype, rank,
// dims..., aliasOf]. It is encoded on every call, hashed and compared as a
// span, and read back to say why a kernel was compiled again. The key of a
// variant for dynamic sizes is the same with the count as -1 - count and
// each dynamic size (one the variant's mask marks, of at least 2) as
// -2 - k, k numbering the distinct such sizes in order: sizes 0 and 1
// (broadcasting), the static sizes and equalities stay in the key.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_KERNEL_GUARDKEY_H
#define PICOKERNEL_LIB_KERNEL_GUARDKEY_H

#include "picokernel/Kernel/Kernel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
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

/// Which sizes of a key may be dynamic: one flag per dimension, in key
/// order; empty: all.
using SizeMask = std::vector<char>;

/// The dynamic-sizes key of the exact key `key` (from encodeKey) for the
/// sizes `mask` marks, and the distinct dynamic sizes in the order
/// numbered; false (nothing written) if there are none.
bool encodeDynamicKey(KeyView key, const SizeMask &mask,
                      llvm::SmallVectorImpl<int64_t> &dynamicKey,
                      llvm::SmallVectorImpl<int64_t> &sizes);

/// The key without sizes: what calls that differ only in sizes share.
Key patternOf(KeyView key);

/// Whether exact key `key` has `pattern` (from patternOf).
bool hasPattern(KeyView key, KeyView pattern);

/// The sizes (both at least 2) in which two exact keys of one pattern
/// differ.
SizeMask differingSizes(KeyView a, KeyView b);

/// `mask` without the sizes of `key` whose value is one of `sizes`.
SizeMask withoutSizes(KeyView key, const SizeMask &mask,
                      llvm::ArrayRef<int64_t> sizes);

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

/// The signature a key was traced for.
Signature signatureOfKey(KeyView key,
                         const std::vector<std::string> &paramNames);

} // namespace pk::detail

#endif // PICOKERNEL_LIB_KERNEL_GUARDKEY_H
