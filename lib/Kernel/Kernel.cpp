//===- Kernel.cpp - kernels compiled on first use, cached by guard --------===//

#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Compiler/CpuCompiler.h"
#include "picokernel/Compiler/Registry.h"

#include "Arguments.h"
#include "GuardCache.h"
#include "GuardKey.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>

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

  /// The CPU compile options, reusing `context`'s pass managers.
  CompileOptions withPipelines(CompileContext &context) const {
    CompileOptions compile = options.compile;
    compile.pipelines = &context.pipelines;
    return compile;
  }

  /// Traces and compiles the variant for `arrays` (whose key follows
  /// `previous`).
  std::shared_ptr<const Executable> compile(std::span<const ArrayView> arrays,
                                            llvm::ArrayRef<int> aliasOf,
                                            KeyView key, KeyView previous) {
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
                   << text
                   << "): " << explainKeyChange(previous, key, paramNames)
                   << "\n";
    }
    std::shared_ptr<CompileContext> context = CompileContexts::acquire();
    mlir::OwningOpRef<mlir::ModuleOp> module = traceFor(sig, context->context);
    double traced = std::chrono::duration<double>(Clock::now() - start).count();
    std::shared_ptr<const Executable> compiled =
        options.backend == Backend::Vulkan
            ? std::shared_ptr<const Executable>(
                  VulkanKernel::compile(*module, options.vulkan))
            : std::shared_ptr<const Executable>(
                  CompiledKernel::compile(*module, withPipelines(*context)));
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
    const Executable &compiled = variants.lookup(view, [&](KeyView previous) {
      return compile(arrays, aliasOf, view, previous);
    });
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

  std::optional<Signature> lastSignature() const {
    std::optional<Key> key = variants.lastCompiledKey();
    if (!key)
      return std::nullopt;
    return signatureOfKey(*key, paramNames);
  }

  void clear() { variants.clear(); }

  const std::string name;

private:
  Kernel::Body body;
  int arity;
  std::vector<std::string> paramNames;
  KernelOptions options;
  GuardCache variants;

  std::atomic<uint64_t> diskLoads{0};
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

CacheStats Kernel::stats() const { return cache->stats(); }
void Kernel::clearCache() const { cache->clear(); }
const std::string &Kernel::name() const { return cache->name; }

} // namespace pk
