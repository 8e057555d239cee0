//===- KeySet.h - a small set of guard keys, quick to probe -----*- C++ -*-===//
//
// Private to the kernel layer. The keys a thread's memo of one kernel's
// variant served lately: a call cycling over sizes that a dynamic-sizes
// variant serves finds its key here (a hash and a compare) instead of
// working out again that the variant serves it.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_KERNEL_KEYSET_H
#define PICOKERNEL_LIB_KERNEL_KEYSET_H

#include "GuardKey.h"

#include <cstdint>
#include <vector>

namespace pk::detail {

/// An open-addressed set of keys (linear probing), cleared whole when it
/// fills: it holds the last few hundred keys inserted, not every one. The
/// key found or inserted last is compared first, without hashing: calls
/// with one shape after calls cycling over several find it so.
class KeySet {
public:
  bool contains(KeyView key);
  void insert(KeyView key);
  void clear();

private:
  static constexpr size_t kSlots = 256;
  /// Inserting past this many keys clears the set first.
  static constexpr size_t kMaxKeys = kSlots * 3 / 4;

  struct Slot {
    uint64_t hash = 0;
    /// Where the key's words are in `words`, and how many.
    uint32_t offset = 0, length = 0;
    /// The set's epoch when the key was inserted; empty in any other (a
    /// clear starts a new epoch instead of emptying every slot).
    uint32_t epoch = 0;
  };

  static uint64_t hashOf(KeyView key);
  /// The slot that holds `key` (of hash `hash`), or the empty one where
  /// it would go.
  size_t slotOf(KeyView key, uint64_t hash) const;
  bool holds(const Slot &slot, KeyView key) const;

  std::vector<Slot> slots; // allocated by the first insert
  std::vector<int64_t> words;
  size_t count = 0;
  /// The slot found or filled last (meaningful while count > 0).
  size_t last = 0;
  uint32_t epoch = 1;
};

} // namespace pk::detail

#endif // PICOKERNEL_LIB_KERNEL_KEYSET_H
