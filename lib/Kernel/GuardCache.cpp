//===- GuardCache.cpp - compiled variants by guard key, LRU ---------------===//

#include "GuardCache.h"
#include "KeySet.h"

#include "picokernel/Support/Fork.h"
#include "picokernel/Support/Log.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <chrono>
#include <future>
#include <mutex>
#include <new>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace pk::detail {

struct CacheEntry {
  std::shared_future<std::shared_ptr<const Executable>> compiled;
  std::atomic<uint64_t> lastUse{0};
  /// Counted in deviceBytesHeld (set under the cache's lock once finished).
  uint64_t deviceBytes = 0;

  /// The process whose thread compiles it: a forked child inherits the
  /// entries its parent's threads were compiling, without those threads.
  pid_t compilingProcess = getpid();

  bool finished() const {
    return compiled.wait_for(std::chrono::seconds(0)) ==
           std::future_status::ready;
  }

  /// Compiling in another process (this one's parent): never finishes here.
  bool orphaned() const { return !finished() && compilingProcess != getpid(); }
};

namespace {
std::atomic<uint64_t> nextCacheId{1};

/// Each thread remembers the last key it ran per cache, for the last few
/// caches it used, so that repeated calls with the same arrays skip the
/// shared lock and the map, also where calls take turns between kernels.
/// A memo is valid while its cache's generation is unchanged.
struct HitMemo {
  uint64_t cacheId = 0;
  uint64_t generation = 0;
  llvm::SmallVector<int64_t, 64> key;
  /// Calls' own keys that it served under another (a dynamic-sizes
  /// variant's) lately.
  KeySet served;
  std::shared_ptr<CacheEntry> entry;
  std::shared_ptr<const Executable> compiled;
};

/// A generation no cache reaches: the memo is invalid.
constexpr uint64_t kNoGeneration = UINT64_MAX;

class HitMemos {
public:
  /// The memo of cache `cacheId`, if this thread has one.
  HitMemo *find(uint64_t cacheId) {
    for (HitMemo &memo : memos)
      if (memo.cacheId == cacheId)
        return &memo;
    return nullptr;
  }
  /// The memo of cache `cacheId`: its own, or the one claimed longest ago
  /// (in turn, not by last use).
  HitMemo &claim(uint64_t cacheId) {
    if (HitMemo *memo = find(cacheId))
      return *memo;
    HitMemo &memo = memos[next];
    next = (next + 1) % memos.size();
    memo.cacheId = cacheId;
    return memo;
  }

private:
  // (Kernels called in turn in a loop: a few. Each memo keeps its variant
  // alive until it is claimed again.)
  std::array<HitMemo, 8> memos;
  size_t next = 0;
};
thread_local HitMemos hitMemos;

/// The entries this thread is compiling (a kernel's trace may call
/// kernels).
thread_local std::vector<const CacheEntry *> compilingOnThisThread;

/// Keeps a variant compiled by this thread alive while it runs (it may be
/// evicted by others meanwhile).
thread_local std::shared_ptr<const Executable> lastCompiledHere;
} // namespace

GuardCache::GuardCache(std::string kernelName, size_t maxEntries,
                       uint64_t maxDeviceBytes)
    : kernelName(std::move(kernelName)),
      maxEntries(std::max<size_t>(maxEntries, 1)),
      maxDeviceBytes(maxDeviceBytes), id(nextCacheId.fetch_add(1)) {}

const Executable &GuardCache::lookup(KeyView key, Compile compile) {
  if (const Executable *found = find(key))
    return *found;
  std::shared_ptr<const Executable> compiled = miss(key, compile);
  if (HitMemo *memo = hitMemos.find(id))
    memo->generation = kNoGeneration;
  lastCompiledHere = std::move(compiled);
  return *lastCompiledHere;
}

const Executable *
GuardCache::findInMemo(KeyView key,
                       llvm::function_ref<bool(KeyView variantKey)> serves) {
  HitMemo *found = hitMemos.find(id);
  if (!found || found->generation != generation.load(std::memory_order_acquire))
    return nullptr;
  HitMemo &memo = *found;
  KeyView memoKey(memo.key.data(), memo.key.size());
  if (!KeyEqual()(memoKey, key) && !memo.served.contains(key)) {
    // (Calls cycling over sizes that one variant serves stay here.)
    if (!serves || !serves(memoKey))
      return nullptr;
    memo.served.insert(key);
  }
  hitCount.fetch_add(1, std::memory_order_relaxed);
  memo.entry->lastUse.store(useClock.fetch_add(1, std::memory_order_relaxed),
                            std::memory_order_relaxed);
  return memo.compiled.get();
}

const Executable *GuardCache::find(KeyView key, KeyView alias, bool wait) {
  if (HitMemo *memo = hitMemos.find(id);
      memo && memo->generation == generation.load(std::memory_order_acquire) &&
      KeyEqual()(KeyView(memo->key.data(), memo->key.size()), key)) {
    hitCount.fetch_add(1, std::memory_order_relaxed);
    memo->entry->lastUse.store(useClock.fetch_add(1, std::memory_order_relaxed),
                               std::memory_order_relaxed);
    memo->served.insert(alias);
    return memo->compiled.get();
  }
  std::shared_ptr<CacheEntry> entry;
  uint64_t seenGeneration;
  {
    std::shared_lock<ForkSafeSharedMutex> lock(mutex);
    seenGeneration = generation.load(std::memory_order_relaxed);
    auto found = entries.find(key);
    if (found != entries.end())
      entry = found->second;
  }
  std::shared_ptr<const Executable> compiled =
      entry ? hit(*entry, wait) : nullptr;
  if (!compiled) // none, or its compile failed: the caller compiles
    return nullptr;
  HitMemo &memo = hitMemos.claim(id);
  memo.generation = seenGeneration;
  memo.key.assign(key.begin(), key.end());
  memo.served.clear();
  memo.served.insert(alias);
  memo.entry = std::move(entry);
  memo.compiled = std::move(compiled);
  return memo.compiled.get();
}

/// A hit waits if another thread is still compiling the entry (unless
/// `wait` is false: then it is null); it is null if that compile failed
/// or is orphaned (its thread was in the parent of this forked process):
/// the caller then compiles itself and gets an exception of its own (one
/// exception object is never thrown in two threads: a Python one can be
/// restored only once).
std::shared_ptr<const Executable> GuardCache::hit(CacheEntry &entry,
                                                  bool wait) {
  if (!entry.finished() && (!wait || entry.orphaned()))
    return nullptr;
  if (llvm::is_contained(compilingOnThisThread, &entry))
    throw std::runtime_error(
        "kernel '" + kernelName +
        "' was called, for the same shapes and dtypes, while it was being "
        "traced for them: a kernel cannot run inside its own trace");
  std::shared_ptr<const Executable> compiled;
  {
    // (The compile waited for may wait for a fork this thread would hold.)
    CompileGate::Outside waiting;
    compiled = entry.compiled.get();
  }
  if (compiled) {
    hitCount.fetch_add(1, std::memory_order_relaxed);
    entry.lastUse.store(useClock.fetch_add(1, std::memory_order_relaxed),
                        std::memory_order_relaxed);
  }
  return compiled;
}

std::shared_ptr<const Executable> GuardCache::miss(KeyView key,
                                                   Compile compile) {
  std::promise<std::shared_ptr<const Executable>> promise;
  std::shared_ptr<CacheEntry> entry;
  Key previous;
  std::vector<std::string> evicted;
  {
    std::unique_lock<ForkSafeSharedMutex> lock(mutex);
    auto found = entries.find(key);
    while (found != entries.end()) {
      std::shared_ptr<CacheEntry> other = found->second;
      if (other->orphaned()) { // this process compiles it again
        erase(key, other.get());
        break;
      }
      lock.unlock();
      // Compiled (or compiling) by another call.
      if (std::shared_ptr<const Executable> compiled = hit(*other))
        return compiled;
      lock.lock(); // that compile failed and removed its entry
      found = entries.find(key);
    }
    missCount.fetch_add(1, std::memory_order_relaxed);
    entry = std::make_shared<CacheEntry>();
    entry->compiled = promise.get_future().share();
    entry->lastUse = useClock.fetch_add(1, std::memory_order_relaxed);
    previous = std::move(lastCompiled);
    lastCompiled.assign(key.begin(), key.end());
    entries.emplace(Key(key.begin(), key.end()), entry);
    evicted = evictLeastRecentlyUsed(entry.get());
  }
  log(evicted);

  compilingOnThisThread.push_back(entry.get());
  llvm::scope_exit done([&] { compilingOnThisThread.pop_back(); });
  std::shared_ptr<const Executable> compiled;
  try {
    compiled = compile(previous);
  } catch (...) {
    {
      std::unique_lock<ForkSafeSharedMutex> lock(mutex);
      erase(key, entry.get());
      // The last compile is still the last that succeeded (a kernel's IR
      // is that one's, not the failed trace's).
      if (KeyEqual()(lastCompiled, key))
        lastCompiled = std::move(previous);
    }
    promise.set_value(nullptr); // waiters compile, and fail, themselves
    throw;
  }
  promise.set_value(compiled);
  if (uint64_t bytes = compiled->deviceBytes()) {
    // Its buffers count now: older variants may have to go.
    std::unique_lock<ForkSafeSharedMutex> lock(mutex);
    auto found = entries.find(key);
    if (found != entries.end() && found->second == entry) {
      entry->deviceBytes = bytes;
      deviceBytesHeld += bytes;
      evicted = evictLeastRecentlyUsed(entry.get());
    }
    lock.unlock();
    log(evicted);
  }
  return compiled;
}

bool GuardCache::erase(KeyView key, const CacheEntry *entry) {
  auto found = entries.find(key);
  if (found == entries.end() || found->second.get() != entry)
    return false;
  deviceBytesHeld -= entry->deviceBytes;
  entries.erase(found);
  generation.fetch_add(1, std::memory_order_release);
  return true;
}

std::vector<std::string>
GuardCache::evictLeastRecentlyUsed(const CacheEntry *keep) {
  std::vector<std::string> records;
  while (entries.size() > maxEntries || deviceBytesHeld > maxDeviceBytes) {
    auto victim = entries.end();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if (it->second.get() == keep || !it->second->finished())
        continue;
      if (victim == entries.end() ||
          it->second->lastUse < victim->second->lastUse)
        victim = it;
    }
    if (victim == entries.end())
      break;
    uint64_t deviceBytes = victim->second->deviceBytes;
    deviceBytesHeld -= deviceBytes;
    entries.erase(victim);
    generation.fetch_add(1, std::memory_order_release);
    evictionCount.fetch_add(1, std::memory_order_relaxed);
    records.push_back("evicted the least recently used variant of kernel '" +
                      kernelName + "'" +
                      (deviceBytes ? " (" + std::to_string(deviceBytes) +
                                         " bytes of device buffers)"
                                   : std::string()) +
                      ": " + std::to_string(entries.size()) +
                      " variants kept, at most " + std::to_string(maxEntries));
  }
  return records;
}

void GuardCache::log(const std::vector<std::string> &records) {
  for (const std::string &record : records)
    logRecord(LogLevel::Info, record);
}

size_t GuardCache::size() const {
  std::shared_lock<ForkSafeSharedMutex> lock(mutex);
  return entries.size();
}

std::optional<Key> GuardCache::lastCompiledKey() const {
  std::shared_lock<ForkSafeSharedMutex> lock(mutex);
  if (lastCompiled.empty())
    return std::nullopt;
  return lastCompiled;
}

void GuardCache::clear() {
  std::unique_lock<ForkSafeSharedMutex> lock(mutex);
  entries.clear();
  // Forgotten too: a dynamic variant's module cannot be traced again once
  // the kernel cache has forgotten which sizes it took as dynamic.
  lastCompiled.clear();
  deviceBytesHeld = 0;
  generation.fetch_add(1, std::memory_order_release);
}

} // namespace pk::detail
