//===- Kernel.cpp - kernels compiled on first use, cached by guard --------===//

#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Compiler/CpuCompiler.h"
#include "picokernel/Compiler/Registry.h"
#include "picokernel/Frontend/Generalize.h"

#include "Arguments.h"
#include "GuardCache.h"
#include "GuardKey.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
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
/// A context with the CPU pipeline's pass managers kept for its compiles
/// (destroyed before the context).
struct CompileContext {
  // No thread pool: a kernel's module is compiled in one thread anyway, and
  // a pool's threads do not survive fork(): a child compiling in an
  // inherited context waited for them forever.
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::pk::CpuPipelineCache pipelines{context};
};

class CompileContexts {
public:
  static std::shared_ptr<CompileContext> acquire() {
    static CompileContexts instance;
    std::lock_guard<std::mutex> lock(instance.mutex);
    if (!instance.current || instance.uses == kCompilesPerContext) {
      instance.current = std::make_shared<CompileContext>();
      mlir::pk::prepareContextForCompilation(instance.current->context);
      instance.uses = 0;
    }
    ++instance.uses;
    return instance.current;
  }

private:
  static constexpr unsigned kCompilesPerContext = 64;
  std::mutex mutex;
  std::shared_ptr<CompileContext> current;
  unsigned uses = 0;
};

/// Read on every miss (misses are rare), so tests and long-running
/// programs can switch logging on and off.
bool logCompiles() {
  const char *value = std::getenv("PK_LOG_COMPILES");
  return value && *value && std::string(value) != "0";
}

/// The size class k of a dynamic compile takes in its second trace: far
/// from every size of the first (distinct classes stay distinct), odd.
int64_t perturbedSize(int64_t size, size_t k) {
  return size + 1009 * int64_t(k + 1);
}

/// A dynamic-sizes module for a call, or why the kernel stays static.
struct DynamicTrace {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string whyStatic;
  /// Where only these sizes keep the kernel static (sums run over them).
  llvm::SmallVector<int64_t, 4> keepStatic;
  double seconds = 0;
};

} // namespace

class KernelCache {
public:
  KernelCache(std::string name, Kernel::Body body, int arity,
              std::vector<std::string> paramNames, KernelOptions options)
      : name(std::move(name)), body(std::move(body)), arity(arity),
        paramNames(std::move(paramNames)), options(std::move(options)),
        variants(this->name, this->options.maxCacheEntries,
                 this->options.maxDeviceBytes) {
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
           mlir::MLIRContext &context = defaultContext(),
           bool *readSizes = nullptr) const {
    Tracer tracer(context, name, signature, SourceLoc{name, 0, 0});
    try {
      body(tracer.refs());
    } catch (...) {
      tracer.abandon();
      throw;
    }
    if (readSizes)
      *readSizes = tracer.readSizes();
    return tracer.finish();
  }

  /// Traces the kernel for `arrays` and again with the sizes `mask` marks
  /// changed (`sizes`: the distinct ones, one class each) and generalizes
  /// the first trace to dynamic sizes. An error of the first trace is the
  /// user's and propagates.
  DynamicTrace traceDynamic(const Signature &real, const SizeMask &mask,
                            llvm::ArrayRef<int64_t> sizes,
                            mlir::MLIRContext &context) const {
    auto start = std::chrono::steady_clock::now();
    DynamicTrace result;
    std::vector<SizeSymbol> symbols;
    for (auto [k, size] : llvm::enumerate(sizes))
      symbols.push_back({size, perturbedSize(size, k)});
    // `real` with the classes `moved` (all: empty) moved.
    auto perturbed = [&](llvm::ArrayRef<size_t> moved) {
      Signature other = real;
      size_t position = 0;
      for (ArgSpec &arg : other)
        for (int64_t &size : arg.shape) {
          bool dynamic = size >= 2 && (mask.empty() || mask[position]);
          ++position;
          size_t k = llvm::find(sizes, size) - sizes.begin();
          if (dynamic && (moved.empty() || llvm::is_contained(moved, k)))
            size = perturbedSize(size, k);
        }
      return other;
    };
    bool readSizes = false;
    result.module = traceFor(real, context, &readSizes);
    mlir::OwningOpRef<mlir::ModuleOp> otherModule;
    if (readSizes) {
      result.whyStatic = "its code reads the sizes (.shape or len())";
    } else {
      try {
        otherModule = traceFor(perturbed({}), context);
      } catch (const std::exception &error) {
        // The error's last line (a Python error's what() starts with the
        // traceback).
        llvm::StringRef what = llvm::StringRef(error.what()).rtrim();
        result.whyStatic = "it fails for other sizes: " +
                           what.substr(what.rfind('\n') + 1).str();
        // The classes that fail when moved alone stay static: the others
        // may still be dynamic (a batch, next to a size a constant array
        // of the kernel's fixes).
        for (size_t k = 0; k < sizes.size() && sizes.size() > 1; ++k) {
          try {
            traceFor(perturbed({k}), context);
          } catch (const std::exception &) {
            result.keepStatic.push_back(sizes[k]);
          }
        }
        if (result.keepStatic.size() == sizes.size())
          result.keepStatic.clear();
      }
    }
    if (otherModule &&
        (mlir::failed(generalizeSizes(*result.module, *otherModule, symbols,
                                      result.whyStatic, result.keepStatic)) ||
         mlir::failed(mlir::verify(*result.module))) &&
        result.whyStatic.empty())
      result.whyStatic = "its generalized IR does not verify";
    if (!result.whyStatic.empty())
      result.module = nullptr;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return result;
  }

  /// The CPU compile options, reusing `context`'s pass managers.
  CompileOptions withPipelines(CompileContext &context) const {
    CompileOptions compile = options.compile;
    compile.pipelines = &context.pipelines;
    return compile;
  }

  void logCompile(const Signature &sig, const std::string &why) const {
    std::string text;
    for (const ArgSpec &arg : sig)
      text += (text.empty() ? "" : ", ") + arg.name + ": " +
              formatShape(arg.shape) + " " + std::string(dtypeName(arg.dtype));
    llvm::errs() << "picokernel: compiling kernel '" << name << "' for ("
                 << text << "): " << why << "\n";
  }

  /// Traces and compiles the variant for `arrays` (whose key follows
  /// `previous`).
  std::shared_ptr<const Executable> compile(std::span<const ArrayView> arrays,
                                            llvm::ArrayRef<int> aliasOf,
                                            KeyView key, KeyView previous,
                                            const std::string &whyStatic) {
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    Signature sig = signature(arrays, aliasOf);
    if (logCompiles())
      logCompile(sig,
                 explainKeyChange(previous, key, paramNames) +
                     (whyStatic.empty() ? "" : "; static sizes: " + whyStatic));
    std::shared_ptr<CompileContext> context = CompileContexts::acquire();
    mlir::OwningOpRef<mlir::ModuleOp> module = traceFor(sig, context->context);
    double traced = std::chrono::duration<double>(Clock::now() - start).count();
    return finishCompile(*context, *module, traced);
  }

  /// Compiles a traced module (`traced`: the seconds its tracing took).
  std::shared_ptr<const Executable>
  finishCompile(CompileContext &context, mlir::ModuleOp module, double traced) {
    std::shared_ptr<const Executable> compiled =
        options.backend == Backend::Vulkan
            ? std::shared_ptr<const Executable>(
                  VulkanKernel::compile(module, options.vulkan))
            : std::shared_ptr<const Executable>(
                  CompiledKernel::compile(module, withPipelines(context)));
    if (compiled->loadedFromDiskCache())
      diskLoads.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(statsMutex);
    traceSeconds += traced;
    pipelineSeconds += compiled->times().pipelineSeconds;
    codegenSeconds += compiled->times().codegenSeconds;
    return compiled;
  }

  /// The compiled kernel for `arrays`, and each array's parameter index.
  const Executable &
  prepare(std::span<const ArrayView> arrays, llvm::SmallVectorImpl<int> &param,
          llvm::SmallVectorImpl<std::pair<int, int>> &partialOverlaps) {
    llvm::SmallVector<int64_t, 64> key;
    llvm::SmallVector<int, 16> aliasOf;
    checkArguments(arrays, arity, name, paramNames, aliasOf, partialOverlaps);
    encodeKey(arrays, aliasOf, key);
    KeyView view(key.data(), key.size());
    bool dynamicAllowed = options.dynamic != DynamicSizes::Never &&
                          options.backend == Backend::CPU;
    const Executable *found = variants.findInMemo(view);
    if (!found && dynamicAllowed) {
      // The dynamic-sizes variants first: one serves every size.
      llvm::SmallVector<int64_t, 64> dynamicKey;
      llvm::SmallVector<int64_t, 8> sizes;
      size_t count = maskCount.load(std::memory_order_acquire);
      for (size_t i = 0; i < count && !found; ++i) {
        dynamicKey.clear();
        sizes.clear();
        if (encodeDynamicKey(view, masks[i], dynamicKey, sizes))
          found = variants.find(KeyView(dynamicKey.data(), dynamicKey.size()),
                                view);
      }
    }
    if (!found)
      found = variants.find(view);
    if (!found)
      found = &compileOnMiss(arrays, aliasOf, view, dynamicAllowed);
    const Executable &compiled = *found;
    param.resize(arrays.size());
    int next = 0;
    for (size_t i = 0; i < arrays.size(); ++i)
      param[i] = aliasOf[i] >= 0 ? param[aliasOf[i]] : next++;
    return compiled;
  }

  /// On a miss: the dynamic-sizes variant where the policy asks for one and
  /// the kernel allows it, else the static one.
  const Executable &compileOnMiss(std::span<const ArrayView> arrays,
                                  llvm::ArrayRef<int> aliasOf, KeyView view,
                                  bool dynamicAllowed) {
    std::string whyStatic, why;
    SizeMask mask;
    if (dynamicAllowed)
      why = wantDynamic(view, mask);
    if (!why.empty())
      if (const Executable *compiled = compileDynamic(
              arrays, aliasOf, view, std::move(mask), why, whyStatic))
        return *compiled;
    return variants.lookup(view, [&](KeyView previous) {
      return compile(arrays, aliasOf, view, previous, whyStatic);
    });
  }

  /// The variant for the sizes `mask` marks dynamic, where the kernel takes
  /// them; sizes a sum runs over become static and it tries again. Null,
  /// with `whyStatic`, where the kernel cannot take any.
  const Executable *compileDynamic(std::span<const ArrayView> arrays,
                                   llvm::ArrayRef<int> aliasOf, KeyView view,
                                   SizeMask mask, const std::string &why,
                                   std::string &whyStatic) {
    while (true) {
      llvm::SmallVector<int64_t, 64> dynamicKey;
      llvm::SmallVector<int64_t, 8> sizes;
      if (!encodeDynamicKey(view, mask, dynamicKey, sizes))
        return nullptr;
      Key dynamic(dynamicKey.begin(), dynamicKey.end());
      {
        std::lock_guard<std::mutex> lock(patternsMutex);
        auto refused = staticOnly.find(dynamic);
        if (refused != staticOnly.end()) {
          whyStatic = refused->second;
          return nullptr;
        }
      }
      std::shared_ptr<CompileContext> context = CompileContexts::acquire();
      DynamicTrace traced = traceDynamic(signature(arrays, aliasOf), mask,
                                         sizes, context->context);
      whyStatic = traced.whyStatic;
      if (traced.module) {
        try {
          const Executable &compiled = variants.lookup(dynamic, [&](KeyView) {
            if (logCompiles())
              logCompile(signatureOfKey(dynamic, paramNames),
                         "dynamic sizes: " + why);
            {
              std::lock_guard<std::mutex> lock(patternsMutex);
              dynamicSources[dynamic] = {Key(view.begin(), view.end()), mask};
            }
            return finishCompile(*context, *traced.module, traced.seconds);
          });
          addMask(mask);
          return &compiled;
        } catch (const CompileError &error) {
          // A compiler limit on dynamic sizes: static sizes still work.
          whyStatic = std::string("compiling for dynamic sizes failed: ") +
                      error.what();
        }
      }
      if (traced.keepStatic.empty()) {
        std::lock_guard<std::mutex> lock(patternsMutex);
        staticOnly[dynamic] = whyStatic;
        return nullptr;
      }
      // (Each round makes at least one more size static: it ends.)
      mask = withoutSizes(view, mask, traced.keepStatic);
    }
  }

  /// Why the call with exact key `key` gets a dynamic-sizes variant, and
  /// which of its sizes are dynamic (`mask`); empty if it does not.
  /// Automatic: the sizes that differ from the first call's of the pattern.
  std::string wantDynamic(KeyView key, SizeMask &mask) {
    if (options.dynamic == DynamicSizes::Always)
      return "asked for (dynamic=True)";
    std::lock_guard<std::mutex> lock(patternsMutex);
    auto [first, inserted] =
        firstSizes.try_emplace(patternOf(key), Key(key.begin(), key.end()));
    if (inserted)
      return "";
    mask = differingSizes(first->second, key);
    if (!llvm::is_contained(mask, 1))
      return "";
    return explainKeyChange(first->second, key, paramNames);
  }

  /// Makes later calls look for variants with `mask`'s dynamic sizes.
  void addMask(const SizeMask &mask) {
    std::lock_guard<std::mutex> lock(patternsMutex);
    size_t count = maskCount.load(std::memory_order_relaxed);
    if (count == kMaxMasks ||
        llvm::is_contained(llvm::ArrayRef(masks.data(), count), mask))
      return;
    masks[count] = mask;
    maskCount.store(count + 1, std::memory_order_release);
  }

  void call(std::span<const ArrayView> arrays) {
    llvm::SmallVector<int, 16> param;
    llvm::SmallVector<std::pair<int, int>, 4> partialOverlaps;
    const Executable &compiled = prepare(arrays, param, partialOverlaps);
    const auto &params = compiled.params();
    llvm::SmallVector<void *, 16> data(params.size());
    llvm::SmallVector<const int64_t *, 16> shapes(params.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      data[param[i]] = arrays[i].data;
      shapes[param[i]] = arrays[i].shape.data();
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
    compiled.run(data.data(), shapes.data());
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
    result.hits = variants.hits();
    result.misses = variants.misses();
    result.evictions = variants.evictions();
    result.diskLoads = diskLoads.load();
    result.entries = variants.size();
    std::lock_guard<std::mutex> lock(statsMutex);
    result.traceSeconds = traceSeconds;
    result.pipelineSeconds = pipelineSeconds;
    result.codegenSeconds = codegenSeconds;
    return result;
  }

  /// The module of the most recent compile (traced again), if any.
  mlir::OwningOpRef<mlir::ModuleOp>
  lastModule(mlir::MLIRContext &context) const {
    std::optional<Key> key = variants.lastCompiledKey();
    if (!key)
      return nullptr;
    if ((*key)[0] >= 0)
      return traceFor(signatureOfKey(*key, paramNames), context);
    std::pair<Key, SizeMask> source;
    {
      std::lock_guard<std::mutex> lock(patternsMutex);
      auto found = dynamicSources.find(*key);
      if (found == dynamicSources.end())
        return nullptr;
      source = found->second;
    }
    llvm::SmallVector<int64_t, 64> dynamicKey;
    llvm::SmallVector<int64_t, 8> sizes;
    encodeDynamicKey(source.first, source.second, dynamicKey, sizes);
    return traceDynamic(signatureOfKey(source.first, paramNames), source.second,
                        sizes, context)
        .module;
  }

  std::optional<Signature> lastSignature() const {
    std::optional<Key> key = variants.lastCompiledKey();
    if (!key)
      return std::nullopt;
    return signatureOfKey(*key, paramNames);
  }

  void clear() {
    variants.clear();
    // (The masks stay: calls may be reading them.)
    std::lock_guard<std::mutex> lock(patternsMutex);
    firstSizes.clear();
    staticOnly.clear();
    dynamicSources.clear();
  }

  const std::string name;

private:
  Kernel::Body body;
  int arity;
  std::vector<std::string> paramNames;
  KernelOptions options;
  GuardCache variants;

  std::atomic<uint64_t> diskLoads{0};
  /// The dynamic sizes of the dynamic-sizes variants compiled (usually
  /// one mask): calls look for a variant with each. Append-only, written
  /// under patternsMutex, published by maskCount.
  static constexpr size_t kMaxMasks = 8;
  std::array<SizeMask, kMaxMasks> masks;
  std::atomic<size_t> maskCount{0};
  mutable std::mutex patternsMutex;
  /// The call each dynamic variant was traced for, and its mask.
  std::unordered_map<Key, std::pair<Key, SizeMask>, KeyHash, KeyEqual>
      dynamicSources;
  /// Per pattern (the key without sizes): the first exact key compiled
  /// (Automatic); the dynamic keys whose kernel cannot take dynamic sizes,
  /// with the reason.
  std::unordered_map<Key, Key, KeyHash, KeyEqual> firstSizes;
  std::unordered_map<Key, std::string, KeyHash, KeyEqual> staticOnly;
  mutable std::mutex statsMutex;
  double traceSeconds = 0, pipelineSeconds = 0, codegenSeconds = 0;

  friend class pk::Kernel;
};

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

mlir::OwningOpRef<mlir::ModuleOp>
Kernel::lastCompiledModule(mlir::MLIRContext &context) const {
  return cache->lastModule(context);
}

CacheStats Kernel::stats() const { return cache->stats(); }
void Kernel::clearCache() const { cache->clear(); }
const std::string &Kernel::name() const { return cache->name; }

} // namespace pk
