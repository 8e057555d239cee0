//===- KeySet.cpp - a small set of guard keys, quick to probe -------------===//

#include "KeySet.h"

#include <algorithm>
#include <cstring>

namespace pk::detail {

uint64_t KeySet::hashOf(KeyView key) {
  // Each word times its own odd constant, summed: the products do not
  // wait for each other (a chained hash waits a multiply per word), and
  // keys differing in one size differ in the sum. Then mixed, as the slot
  // is taken from the top bits.
  static constexpr uint64_t kFactors[4] = {
      0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
      0xd6e8feb86659fd93ull};
  uint64_t hash = key.size();
  for (size_t i = 0; i < key.size(); ++i)
    hash += (uint64_t(key[i]) + i) * kFactors[i % 4];
  hash ^= hash >> 31;
  hash *= 0xbf58476d1ce4e5b9ull;
  return hash ^ (hash >> 29);
}

bool KeySet::holds(const Slot &slot, KeyView key) const {
  return slot.epoch == epoch && slot.length == key.size() &&
         std::memcmp(words.data() + slot.offset, key.data(),
                     key.size() * sizeof(int64_t)) == 0;
}

size_t KeySet::slotOf(KeyView key, uint64_t hash) const {
  size_t slot = hash >> 56; // kSlots = 256
  for (;; slot = (slot + 1) % kSlots) {
    const Slot &at = slots[slot];
    if (at.epoch != epoch || (at.hash == hash && holds(at, key)))
      return slot;
  }
}

bool KeySet::contains(KeyView key) {
  if (count == 0 || key.empty())
    return false;
  if (holds(slots[last], key))
    return true;
  size_t slot = slotOf(key, hashOf(key));
  if (slots[slot].epoch != epoch)
    return false;
  last = slot;
  return true;
}

void KeySet::insert(KeyView key) {
  if (key.empty())
    return;
  if (slots.empty())
    slots.resize(kSlots);
  uint64_t hash = hashOf(key);
  size_t slot = slotOf(key, hash);
  if (slots[slot].epoch == epoch) {
    last = slot;
    return;
  }
  if (count == kMaxKeys || words.size() + key.size() > UINT32_MAX) {
    clear();
    slot = slotOf(key, hash);
  }
  slots[slot] = Slot{hash, uint32_t(words.size()), uint32_t(key.size()), epoch};
  words.insert(words.end(), key.begin(), key.end());
  ++count;
  last = slot;
}

void KeySet::clear() {
  if (count == 0)
    return;
  words.clear();
  count = 0;
  if (++epoch == 0) { // (after 2^32 clears) every slot empty again
    std::fill(slots.begin(), slots.end(), Slot());
    epoch = 1;
  }
}

} // namespace pk::detail
