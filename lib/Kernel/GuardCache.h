//===- GuardCache.h - compiled variants by guard key, LRU -------*- C++ -*-===//
//
// Private to the kernel layer. A kernel's compiled variants, keyed by guard
// key: each key is compiled once however many threads ask at once (the
// others wait for it), a thread that repeats its last key skips the lock
// and the map, and the least recently used finished variants are dropped
// past a count and a total of device buffer bytes.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_KERNEL_GUARDCACHE_H
#define PICOKERNEL_LIB_KERNEL_GUARDCACHE_H

#include "GuardKey.h"

#include "picokernel/Runtime/Executable.h"
#include "picokernel/Support/Fork.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace pk::detail {

struct CacheEntry;

class GuardCache {
public:
  /// Compiles the variant for a key, given the key compiled before it
  /// (empty: none).
  using Compile =
      llvm::function_ref<std::shared_ptr<const Executable>(KeyView previous)>;

  GuardCache(std::string kernelName, size_t maxEntries,
             uint64_t maxDeviceBytes);

  /// The variant for `key`: from this thread's memo, the map, or `compile`
  /// (called once per key, however many threads ask; its exception, if
  /// any, propagates, and threads waiting for it compile themselves).
  /// The reference is valid until this thread's next lookup.
  const Executable &lookup(KeyView key, Compile compile);
  /// The variant for `key` if there is one (waiting for a compile in
  /// flight, unless `wait` is false: then that is none), else null; valid
  /// like lookup's. `alias`: the call's own key where `key` is another (a
  /// dynamic-sizes variant's), which this thread's findInMemo then knows
  /// (with the last few hundred such keys of the same variant).
  const Executable *find(KeyView key, KeyView alias = {}, bool wait = true);
  /// The variant this thread found last, if its key is `key` or it served
  /// `key` lately (see find), or if `serves` says its (dynamic-sizes) key
  /// serves `key` (no lock, no map); else null.
  const Executable *
  findInMemo(KeyView key,
             llvm::function_ref<bool(KeyView variantKey)> serves = {});

  uint64_t hits() const { return hitCount.load(); }
  uint64_t misses() const { return missCount.load(); }
  uint64_t evictions() const { return evictionCount.load(); }
  size_t size() const;
  /// The key compiled last, if any.
  std::optional<Key> lastCompiledKey() const;
  void clear();

private:
  std::shared_ptr<const Executable> hit(CacheEntry &entry, bool wait = true);
  std::shared_ptr<const Executable> miss(KeyView key, Compile compile);
  /// Removes the entry for `key` if it is `entry`.
  bool erase(KeyView key, const CacheEntry *entry);
  /// Drops least recently used finished entries (never `keep`) until the
  /// limits hold. Called with the lock held exclusively; returns the log
  /// records to send once it is released (a lock holder never waits for
  /// another lock: a fork waits for every cache's).
  std::vector<std::string> evictLeastRecentlyUsed(const CacheEntry *keep);
  static void log(const std::vector<std::string> &records);

  const std::string kernelName;
  const size_t maxEntries;
  const uint64_t maxDeviceBytes;
  /// Tells this cache's thread memos from another's (addresses are reused).
  const uint64_t id;

  // A fork takes it: a child must not inherit a cache locked by a thread
  // it does not have, or a map half changed.
  mutable ForkSafeSharedMutex mutex;
  std::unordered_map<Key, std::shared_ptr<CacheEntry>, KeyHash, KeyEqual>
      entries;
  Key lastCompiled;
  /// The device buffer bytes of the finished entries in the map.
  uint64_t deviceBytesHeld = 0;
  /// The LRU clock: every hit and every new entry advances it.
  std::atomic<uint64_t> useClock{0};
  /// Every removal starts a new generation, which invalidates thread memos.
  std::atomic<uint64_t> generation{0};
  std::atomic<uint64_t> hitCount{0}, missCount{0}, evictionCount{0};
};

} // namespace pk::detail

#endif // PICOKERNEL_LIB_KERNEL_GUARDCACHE_H
