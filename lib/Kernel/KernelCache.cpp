//===- KernelCache.cpp - a kernel's variants, found or compiled -----------===//

#include "KernelCache.h"

#include "picokernel/Runtime/CompiledKernel.h"
#include "picokernel/Runtime/VulkanKernel.h"
#include "picokernel/Support/Fork.h"
#include "picokernel/Support/Log.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <new>

namespace pk::detail {

CompileContexts::CompileContexts() {
  registerForkHandler(ForkStage::TakeLocks,
                      {nullptr, nullptr, forgetAfterFork});
}

CompileContexts &CompileContexts::instance() {
  // Never destroyed: a child forked during static destruction may use it.
  static auto *contexts = new CompileContexts;
  return *contexts;
}

/// Made while the library loads (see Support/Fork.h).
const bool CompileContexts::madeAtLoad = (instance(), true);

void CompileContexts::forgetAfterFork() {
  CompileContexts &contexts = instance();
  // No compile was running at the fork (the compile gate), but the old
  // contexts' uniquers may still be locked by a thread of the parent
  // waiting at the gate: a new one is made, the old ones leaked.
  new (&contexts.mutex) std::mutex;
  new (&contexts.current) std::shared_ptr<CompileContext>;
  contexts.uses = 0;
}

std::shared_ptr<CompileContext> CompileContexts::acquire() {
  CompileContexts &contexts = instance();
  std::lock_guard<std::mutex> lock(contexts.mutex);
  if (!contexts.current || contexts.uses == kCompilesPerContext) {
    contexts.current = std::make_shared<CompileContext>();
    mlir::pk::prepareContextForCompilation(contexts.current->context);
    contexts.uses = 0;
  }
  ++contexts.uses;
  return contexts.current;
}

mlir::OwningOpRef<mlir::ModuleOp>
KernelCache::traceFor(const Signature &signature, mlir::MLIRContext &context,
                      bool *readSizes, bool forGeneralizing) const {
  SourceLoc definedAt = options.definedAt.file.empty() ? SourceLoc{name, 0, 0}
                                                       : options.definedAt;
  Tracer tracer(startTrace(context, name, signature, definedAt), definedAt);
  try {
    body(tracer.refs());
  } catch (...) {
    tracer.abandon();
    throw;
  }
  if (readSizes)
    *readSizes = tracer.readSizes();
  return takeIR(tracer.finish(forGeneralizing));
}

void KernelCache::logCompile(KeyView key, const std::string &why) const {
  logRecord(LogLevel::Info, "compiling kernel '" + name + "' for (" +
                                describeKey(key, paramNames) + "): " + why);
}

/// Traces and compiles the variant for `arrays` (whose key follows
/// `previous`).
std::shared_ptr<const Executable>
KernelCache::compile(std::span<const ArrayView> arrays,
                     llvm::ArrayRef<int> aliasOf, KeyView key, KeyView previous,
                     const std::string &whyStatic) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  Signature sig = signature(arrays, aliasOf);
  logCompile(key,
             explainKeyChange(previous, key, paramNames) +
                 (whyStatic.empty() ? "" : "; static sizes: " + whyStatic));
  CompileGate gate;
  std::shared_ptr<CompileContext> context = CompileContexts::acquire();
  mlir::OwningOpRef<mlir::ModuleOp> module = traceFor(sig, context->context);
  double traced = std::chrono::duration<double>(Clock::now() - start).count();
  return finishCompile(*context, *module, traced, key);
}

/// Compiles a traced module (`traced`: the seconds its tracing took).
std::shared_ptr<const Executable>
KernelCache::finishCompile(CompileContext &context, mlir::ModuleOp module,
                           double traced, KeyView key) {
  // (The last holder may be any thread, outside the gate: see
  // destroyInsideGate.)
  std::shared_ptr<const Executable> compiled =
      options.backend == Backend::Vulkan
          ? std::shared_ptr<const Executable>(
                VulkanKernel::compile(module, options.vulkan).release(),
                DeleteInsideGate())
          : std::shared_ptr<const Executable>(
                CompiledKernel::compile(module, options.compile,
                                        &context.pipelines)
                    .release(),
                DeleteInsideGate());
  if (compiled->loadedFromDiskCache())
    diskLoads.fetch_add(1, std::memory_order_relaxed);
  auto milliseconds = [](double seconds) {
    return std::to_string(int64_t(seconds * 1e3 + 0.5)) + " ms";
  };
  const CompileTimes &times = compiled->times();
  logRecord(
      LogLevel::Info,
      (compiled->loadedFromDiskCache() ? "loaded kernel '"
                                       : "compiled kernel '") +
          name + "' for (" + describeKey(key, paramNames) + ")" +
          (compiled->loadedFromDiskCache() ? " from the disk cache" : "") +
          " in " +
          milliseconds(traced + times.pipelineSeconds + times.codegenSeconds) +
          " (trace " + milliseconds(traced) + ", pipeline " +
          milliseconds(times.pipelineSeconds) + ", code generation " +
          milliseconds(times.codegenSeconds) + ")");
  std::lock_guard<ForkSafeMutex> lock(statsMutex);
  traceSeconds += traced;
  pipelineSeconds += compiled->times().pipelineSeconds;
  codegenSeconds += compiled->times().codegenSeconds;
  return compiled;
}

const Executable *KernelCache::prepare(
    std::span<const ArrayView> arrays, llvm::SmallVectorImpl<int> &param,
    llvm::SmallVectorImpl<std::pair<int, int>> &partialOverlaps,
    bool mayCompile) {
  llvm::SmallVector<int64_t, 64> key;
  llvm::SmallVector<int, 16> aliasOf;
  checkArguments(arrays, arity, name, paramNames, aliasOf, partialOverlaps);
  encodeKey(arrays, aliasOf, key);
  KeyView view(key.data(), key.size());
  bool dynamicAllowed = options.dynamic != DynamicSizes::Never;
  auto servedByDynamicVariant = [&](KeyView variantKey) {
    if (!dynamicAllowed || variantKey.empty() || variantKey[0] >= 0)
      return false;
    size_t count = maskCount.load(std::memory_order_acquire);
    for (size_t i = 0; i < count; ++i)
      if (hasPattern(view, masks[i].pattern) &&
          servesDynamicKey(view, masks[i].mask, variantKey))
        return true;
    return false;
  };
  const Executable *found = variants.findInMemo(view, servedByDynamicVariant);
  if (!found && dynamicAllowed) {
    // The dynamic-sizes variants first: one serves every size.
    llvm::SmallVector<int64_t, 64> dynamicKey;
    llvm::SmallVector<int64_t, 8> sizes;
    size_t count = maskCount.load(std::memory_order_acquire);
    for (size_t i = 0; i < count && !found; ++i) {
      dynamicKey.clear();
      sizes.clear();
      if (hasPattern(view, masks[i].pattern) &&
          encodeDynamicKey(view, masks[i].mask, dynamicKey, sizes))
        found = variants.find(KeyView(dynamicKey.data(), dynamicKey.size()),
                              view, /*wait=*/mayCompile);
    }
  }
  // (A caller that may not compile holds a lock a compile may need: it
  // does not wait for one either.)
  if (!found)
    found = variants.find(view, {}, /*wait=*/mayCompile);
  if (!found && !mayCompile)
    return nullptr;
  if (!found)
    found = &compileOnMiss(arrays, aliasOf, view, dynamicAllowed);
  param.resize_for_overwrite(arrays.size());
  int next = 0;
  for (size_t i = 0; i < arrays.size(); ++i)
    param[i] = aliasOf[i] >= 0 ? param[aliasOf[i]] : next++;
  return found;
}

bool KernelCache::call(std::span<const ArrayView> arrays, bool mayCompile) {
  llvm::SmallVector<int, 16> param;
  llvm::SmallVector<std::pair<int, int>, 4> partialOverlaps;
  const Executable *found = prepare(arrays, param, partialOverlaps, mayCompile);
  if (!found)
    return false;
  const Executable &compiled = *found;
  const auto &params = compiled.params();
  // (Every parameter is some argument's: each entry is written.)
  llvm::SmallVector<void *, 16> data;
  llvm::SmallVector<const int64_t *, 16> shapes;
  data.resize_for_overwrite(params.size());
  shapes.resize_for_overwrite(params.size());
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
  return true;
}

std::vector<bool> KernelCache::written(std::span<const ArrayView> arrays) {
  llvm::SmallVector<int, 16> param;
  llvm::SmallVector<std::pair<int, int>, 4> partialOverlaps;
  const Executable &compiled = *prepare(arrays, param, partialOverlaps);
  std::vector<bool> result;
  for (int index : param)
    result.push_back(compiled.params()[index].written);
  return result;
}

CacheStats KernelCache::stats() const {
  CacheStats result;
  result.hits = variants.hits();
  result.misses = variants.misses();
  result.evictions = variants.evictions();
  result.diskLoads = diskLoads.load();
  result.entries = variants.size();
  std::lock_guard<ForkSafeMutex> lock(statsMutex);
  result.traceSeconds = traceSeconds;
  result.pipelineSeconds = pipelineSeconds;
  result.codegenSeconds = codegenSeconds;
  return result;
}

std::optional<Signature> KernelCache::lastSignature() const {
  std::optional<Key> key = variants.lastCompiledKey();
  if (!key)
    return std::nullopt;
  return signatureOfKey(*key, paramNames);
}

void KernelCache::clear() {
  variants.clear();
  // (The masks stay: calls may be reading them.)
  std::lock_guard<ForkSafeMutex> lock(patternsMutex);
  lastSizes.clear();
  variedSizes.clear();
  staticOnly.clear();
  dynamicSources.clear();
}

} // namespace pk::detail
