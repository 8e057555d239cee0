//===- Kernel.cpp - kernels compiled on first use, cached by guard --------===//

#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Compiler/Registry.h"

#include "Arguments.h"
#include "GuardKey.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace pk {
namespace detail {

namespace {
/// The MLIR contexts compiles trace into. A context keeps every type and
/// attribute it ever uniqued (each new shape adds a few), so compiles move
/// to a fresh context every kCompilesPerContext; the old one goes when its
/// last compile in flight ends. Compiled kernels keep nothing of MLIR. A
/// context is handed out with every dialect the compilers need already
/// loaded: loading one while another thread uses the context is a race.
class CompileContexts {
public:
  static std::shared_ptr<mlir::MLIRContext> acquire() {
    static CompileContexts instance;
    std::lock_guard<std::mutex> lock(instance.mutex);
    if (!instance.current || instance.uses == kCompilesPerContext) {
      // No thread pool: a kernel's module is compiled in one thread anyway,
      // and a pool's threads do not survive fork(): a child compiling in
      // an inherited context waited for them forever.
      instance.current = std::make_shared<mlir::MLIRContext>(
          mlir::MLIRContext::Threading::DISABLED);
      mlir::pk::prepareContextForCompilation(*instance.current);
      instance.uses = 0;
    }
    ++instance.uses;
    return instance.current;
  }

private:
  static constexpr unsigned kCompilesPerContext = 64;
  std::mutex mutex;
  std::shared_ptr<mlir::MLIRContext> current;
  unsigned uses = 0;
};

/// Read on every miss (misses are rare), so tests and long-running
/// programs can switch logging on and off.
bool logCompiles() {
  const char *value = std::getenv("PK_LOG_COMPILES");
  return value && *value && std::string(value) != "0";
}

} // namespace

struct CacheEntry {
  std::shared_future<std::shared_ptr<const Executable>> compiled;
  std::atomic<uint64_t> lastUse{0};
};

/// Each thread remembers the last key it ran, per the last cache it used,
/// so that repeated calls with the same arrays skip the shared lock and
/// the map. A memo is valid while its cache's generation is unchanged
/// (every eviction or clear starts a new generation).
struct HitMemo {
  uint64_t cacheId = 0;
  uint64_t generation = 0;
  llvm::SmallVector<int64_t, 64> key;
  std::shared_ptr<CacheEntry> entry;
  std::shared_ptr<const Executable> compiled;
};
thread_local HitMemo hitMemo;

std::atomic<uint64_t> nextCacheId{1};

class KernelCache {
public:
  KernelCache(std::string name, Kernel::Body body, int arity,
              std::vector<std::string> paramNames, KernelOptions options)
      : name(std::move(name)), id(nextCacheId.fetch_add(1)),
        body(std::move(body)), arity(arity), paramNames(std::move(paramNames)),
        options(std::move(options)) {
    mlir::pk::prepareContextForCompilation(defaultContext());
  }

  std::string paramName(size_t index) const {
    return detail::paramName(paramNames, index);
  }

  Signature signature(std::span<const ArrayView> arrays,
                      llvm::ArrayRef<int> aliasOf) const {
    Signature signature;
    for (size_t i = 0; i < arrays.size(); ++i)
      signature.push_back(
          {paramName(i), Shape(arrays[i].shape.begin(), arrays[i].shape.end()),
           arrays[i].dtype, aliasOf[i]});
    return signature;
  }

  mlir::OwningOpRef<mlir::ModuleOp>
  traceFor(const Signature &signature,
           mlir::MLIRContext &context = defaultContext()) const {
    Tracer tracer(context, name, signature, SourceLoc{name, 0, 0});
    try {
      body(tracer.refs());
    } catch (...) {
      tracer.abandon();
      throw;
    }
    return tracer.finish();
  }

  /// The compiled kernel for `key`: from this thread's memo, the map, or a
  /// new compile (once per key, however many threads ask).
  const Executable &lookup(KeyView key, std::span<const ArrayView> arrays,
                           llvm::ArrayRef<int> aliasOf) {
    HitMemo &memo = hitMemo;
    if (memo.cacheId == id &&
        memo.generation == generation.load(std::memory_order_acquire) &&
        KeyEqual()(KeyView(memo.key.data(), memo.key.size()), key)) {
      memo.entry->lastUse.store(tick(), std::memory_order_relaxed);
      return *memo.compiled;
    }
    std::shared_ptr<CacheEntry> entry;
    uint64_t seenGeneration;
    {
      std::shared_lock<std::shared_mutex> lock(mutex);
      seenGeneration = generation.load(std::memory_order_relaxed);
      auto found = entries.find(key);
      if (found != entries.end())
        entry = found->second;
    }
    std::shared_ptr<const Executable> compiled =
        entry ? hitEntry(*entry) : nullptr;
    if (!compiled) {
      entry = nullptr; // none, or its compile failed: compile (and fail) here
      compiled = compile(key, arrays, aliasOf);
    }
    if (entry) {
      memo.cacheId = id;
      memo.generation = seenGeneration;
      memo.key.assign(key.begin(), key.end());
      memo.entry = std::move(entry);
      memo.compiled = compiled;
      return *memo.compiled;
    }
    // Freshly compiled: the caller's copy keeps it alive for this call.
    memo.cacheId = 0;
    lastCompiledKernel = compiled;
    return *lastCompiledKernel;
  }

  /// A hit: counts it and waits if another thread is still compiling it.
  /// Null if that compile failed: the caller then traces itself and gets an
  /// exception of its own (one exception object is never thrown in two
  /// threads: a Python one can be restored only once).
  std::shared_ptr<const Executable> hitEntry(CacheEntry &entry) {
    if (llvm::is_contained(compilingOnThisThread, &entry))
      throw std::runtime_error(
          "kernel '" + name +
          "' was called, for the same shapes and dtypes, while it was being "
          "traced for them: a kernel cannot run inside its own trace");
    entry.lastUse.store(tick(), std::memory_order_relaxed);
    return entry.compiled.get();
  }

  /// The entries this thread is compiling (a kernel's trace may call
  /// kernels).
  static thread_local std::vector<const CacheEntry *> compilingOnThisThread;

  /// Counts a hit; returns the LRU clock's next tick.
  uint64_t tick() {
    hits.fetch_add(1, std::memory_order_relaxed);
    return useClock.fetch_add(1, std::memory_order_relaxed);
  }

  std::shared_ptr<const Executable> compile(KeyView key,
                                            std::span<const ArrayView> arrays,
                                            llvm::ArrayRef<int> aliasOf) {
    std::promise<std::shared_ptr<const Executable>> promise;
    std::shared_ptr<CacheEntry> entry;
    std::string reason;
    {
      std::unique_lock<std::shared_mutex> lock(mutex);
      auto found = entries.find(key);
      while (found != entries.end()) {
        std::shared_ptr<CacheEntry> other = found->second;
        lock.unlock();
        // Compiled (or compiling) by another call.
        if (std::shared_ptr<const Executable> compiled = hitEntry(*other))
          return compiled;
        lock.lock(); // that compile failed and removed its entry
        found = entries.find(key);
      }
      misses.fetch_add(1, std::memory_order_relaxed);
      entry = std::make_shared<CacheEntry>();
      entry->compiled = promise.get_future().share();
      entry->lastUse = useClock.fetch_add(1, std::memory_order_relaxed);
      if (logCompiles())
        reason = explainKeyChange(lastCompiled, key, paramNames);
      lastCompiled.assign(key.begin(), key.end());
      entries.emplace(Key(key.begin(), key.end()), entry);
      evictLeastRecentlyUsed(entry.get());
    }

    compilingOnThisThread.push_back(entry.get());
    llvm::scope_exit done([&] { compilingOnThisThread.pop_back(); });
    try {
      using Clock = std::chrono::steady_clock;
      auto start = Clock::now();
      Signature sig = signature(arrays, aliasOf);
      if (logCompiles()) {
        std::string text;
        for (const ArgSpec &arg : sig)
          text += (text.empty() ? "" : ", ") + arg.name + ": " +
                  formatShape(arg.shape) + " " +
                  std::string(dtypeName(arg.dtype));
        llvm::errs() << "picokernel: compiling kernel '" << name << "' for ("
                     << text << "): " << reason << "\n";
      }
      std::shared_ptr<mlir::MLIRContext> context = CompileContexts::acquire();
      mlir::OwningOpRef<mlir::ModuleOp> module = traceFor(sig, *context);
      double traced =
          std::chrono::duration<double>(Clock::now() - start).count();
      std::shared_ptr<const Executable> compiled =
          options.backend == Backend::Vulkan
              ? std::shared_ptr<const Executable>(
                    VulkanKernel::compile(*module, options.vulkan))
              : std::shared_ptr<const Executable>(
                    CompiledKernel::compile(*module, options.compile));
      if (compiled->loadedFromDiskCache())
        diskLoads.fetch_add(1, std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(statsMutex);
        traceSeconds += traced;
        pipelineSeconds += compiled->times().pipelineSeconds;
        codegenSeconds += compiled->times().codegenSeconds;
      }
      promise.set_value(compiled);
      if (compiled->deviceBytes()) {
        // Its buffers count now: older variants may have to go.
        std::unique_lock<std::shared_mutex> lock(mutex);
        evictLeastRecentlyUsed(entry.get());
      }
      return compiled;
    } catch (...) {
      {
        std::unique_lock<std::shared_mutex> lock(mutex);
        auto found = entries.find(key);
        if (found != entries.end() && found->second == entry) {
          entries.erase(found);
          generation.fetch_add(1, std::memory_order_release);
        }
      }
      promise.set_value(nullptr); // waiters compile, and fail, themselves
      throw;
    }
  }

  /// Keeps at most maxCacheEntries entries, holding at most maxDeviceBytes
  /// of device buffers: drops the least recently used finished ones (never
  /// `keep`, never one still compiling).
  void evictLeastRecentlyUsed(const CacheEntry *keep) {
    auto finished = [](const CacheEntry &entry) {
      return entry.compiled.wait_for(std::chrono::seconds(0)) ==
             std::future_status::ready;
    };
    auto deviceBytes = [&] {
      uint64_t total = 0;
      for (const auto &[key, entry] : entries)
        if (finished(*entry))
          if (std::shared_ptr<const Executable> compiled =
                  entry->compiled.get())
            total += compiled->deviceBytes();
      return total;
    };
    while (entries.size() > std::max<size_t>(options.maxCacheEntries, 1) ||
           deviceBytes() > options.maxDeviceBytes) {
      auto victim = entries.end();
      for (auto it = entries.begin(); it != entries.end(); ++it) {
        if (it->second.get() == keep || !finished(*it->second))
          continue;
        if (victim == entries.end() ||
            it->second->lastUse < victim->second->lastUse)
          victim = it;
      }
      if (victim == entries.end())
        return;
      entries.erase(victim);
      generation.fetch_add(1, std::memory_order_release);
      evictions.fetch_add(1, std::memory_order_relaxed);
    }
  }

  /// The compiled kernel for `arrays`, and each array's parameter index.
  const Executable &
  prepare(std::span<const ArrayView> arrays, llvm::SmallVectorImpl<int> &param,
          llvm::SmallVectorImpl<std::pair<int, int>> &partialOverlaps) {
    llvm::SmallVector<int64_t, 64> key;
    llvm::SmallVector<int, 16> aliasOf;
    checkArguments(arrays, arity, name, paramNames, aliasOf, partialOverlaps);
    encodeKey(arrays, aliasOf, key);
    const Executable &compiled =
        lookup(KeyView(key.data(), key.size()), arrays, aliasOf);
    param.resize(arrays.size());
    int next = 0;
    for (size_t i = 0; i < arrays.size(); ++i)
      param[i] = aliasOf[i] >= 0 ? param[aliasOf[i]] : next++;
    return compiled;
  }

  void call(std::span<const ArrayView> arrays) {
    llvm::SmallVector<int, 16> param;
    llvm::SmallVector<std::pair<int, int>, 4> partialOverlaps;
    const Executable &compiled = prepare(arrays, param, partialOverlaps);
    const auto &params = compiled.params();
    llvm::SmallVector<void *, 16> data(params.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      data[param[i]] = arrays[i].data;
      if (arrays[i].readOnly && params[param[i]].written)
        throw ArgumentError("argument '" + paramName(i) +
                            "' is read-only, but kernel '" + name +
                            "' writes to it");
    }
    for (auto [a, b] : partialOverlaps)
      if (params[param[a]].written || params[param[b]].written)
        throw OverlapError(
            "arguments '" + paramName(a) + "' and '" + paramName(b) +
            "' overlap in memory without being the same array, and kernel '" +
            name +
            "' writes to one of them; pass disjoint arrays or the same "
            "array twice");
    compiled.run(data.data());
  }

  std::vector<bool> written(std::span<const ArrayView> arrays) {
    llvm::SmallVector<int, 16> param;
    llvm::SmallVector<std::pair<int, int>, 4> partialOverlaps;
    const Executable &compiled = prepare(arrays, param, partialOverlaps);
    std::vector<bool> result;
    for (int index : param)
      result.push_back(compiled.params()[index].written);
    return result;
  }

  CacheStats stats() const {
    CacheStats result;
    result.hits = hits.load();
    result.misses = misses.load();
    result.evictions = evictions.load();
    result.diskLoads = diskLoads.load();
    {
      std::shared_lock<std::shared_mutex> lock(mutex);
      result.entries = entries.size();
    }
    std::lock_guard<std::mutex> lock(statsMutex);
    result.traceSeconds = traceSeconds;
    result.pipelineSeconds = pipelineSeconds;
    result.codegenSeconds = codegenSeconds;
    return result;
  }

  std::optional<Signature> lastSignature() const {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (lastCompiled.empty())
      return std::nullopt;
    return signatureOfKey(lastCompiled, paramNames);
  }

  void clear() {
    std::unique_lock<std::shared_mutex> lock(mutex);
    entries.clear();
    generation.fetch_add(1, std::memory_order_release);
  }

  const std::string name;
  /// Tells this cache's thread memos from another's (addresses are reused).
  const uint64_t id;

private:
  Kernel::Body body;
  int arity;
  std::vector<std::string> paramNames;
  KernelOptions options;

  mutable std::shared_mutex mutex;
  std::unordered_map<Key, std::shared_ptr<CacheEntry>, KeyHash, KeyEqual>
      entries;
  Key lastCompiled;
  /// The LRU clock: every hit and every new entry advances it.
  std::atomic<uint64_t> useClock{0};
  std::atomic<uint64_t> hits{0}, misses{0}, evictions{0}, diskLoads{0},
      generation{0};
  /// Keeps a kernel compiled by this thread alive while it runs (it may be
  /// evicted by others meanwhile).
  static thread_local std::shared_ptr<const Executable> lastCompiledKernel;
  mutable std::mutex statsMutex;
  double traceSeconds = 0, pipelineSeconds = 0, codegenSeconds = 0;

  friend class pk::Kernel;
};

thread_local std::shared_ptr<const Executable> KernelCache::lastCompiledKernel;
thread_local std::vector<const CacheEntry *> KernelCache::compilingOnThisThread;

} // namespace detail

Kernel::Kernel(std::string name, Body body, int arity,
               std::vector<std::string> paramNames, KernelOptions options)
    : cache(std::make_unique<detail::KernelCache>(
          std::move(name), std::move(body), arity, std::move(paramNames),
          std::move(options))) {}

Kernel::~Kernel() = default;
Kernel::Kernel(Kernel &&) noexcept = default;
Kernel &Kernel::operator=(Kernel &&) noexcept = default;

void Kernel::operator()(std::span<const ArrayView> arrays) const {
  cache->call(arrays);
}

mlir::OwningOpRef<mlir::ModuleOp>
Kernel::trace(std::span<const ArrayView> arrays) const {
  return cache->traceFor(signatureOf(arrays));
}

Signature Kernel::signatureOf(std::span<const ArrayView> arrays) const {
  llvm::SmallVector<int, 16> aliasOf;
  llvm::SmallVector<std::pair<int, int>, 4> partialOverlaps;
  detail::checkArguments(arrays, cache->arity, cache->name, cache->paramNames,
                         aliasOf, partialOverlaps);
  return cache->signature(arrays, aliasOf);
}

mlir::OwningOpRef<mlir::ModuleOp>
Kernel::trace(const Signature &signature, mlir::MLIRContext &context) const {
  return cache->traceFor(signature, context);
}

std::vector<bool>
Kernel::writtenArguments(std::span<const ArrayView> arrays) const {
  return cache->written(arrays);
}

mlir::OwningOpRef<mlir::ModuleOp>
Kernel::trace(const Signature &signature) const {
  return cache->traceFor(signature);
}

std::optional<Signature> Kernel::lastCompiledSignature() const {
  return cache->lastSignature();
}

CacheStats Kernel::stats() const { return cache->stats(); }
void Kernel::clearCache() const { cache->clear(); }
const std::string &Kernel::name() const { return cache->name; }

} // namespace pk
