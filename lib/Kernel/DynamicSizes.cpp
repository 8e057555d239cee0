//===- DynamicSizes.cpp - one variant for every size ----------------------===//
//
// The kernel layer's side of dynamic sizes: when a call gets a variant for
// dynamic sizes (the policy, the sizes that changed), the two traces that
// make it (Frontend/Generalize.h), which sizes stay static when some cannot
// vary, and the lookup of such variants.
//
//===----------------------------------------------------------------------===//

#include "KernelCache.h"

#include "picokernel/Frontend/Generalize.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"

#include <chrono>

namespace pk::detail {

namespace {
/// The size class k of a dynamic compile takes in its second trace: far
/// from every size of the first (distinct classes stay distinct), odd.
int64_t perturbedSize(int64_t size, size_t k) {
  return size + 1009 * int64_t(k + 1);
}

} // namespace

/// Traces the kernel for `arrays` and again with the sizes `mask` marks
/// changed (`sizes`: the distinct ones, one class each) and generalizes
/// the first trace to dynamic sizes. An error of the first trace is the
/// user's and propagates.
DynamicTrace KernelCache::traceDynamic(const Signature &real,
                                       const SizeMask &mask,
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

/// On a miss: the dynamic-sizes variant where the policy asks for one and
/// the kernel allows it, else the static one.
const Executable &KernelCache::compileOnMiss(std::span<const ArrayView> arrays,
                                             llvm::ArrayRef<int> aliasOf,
                                             KeyView view,
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
const Executable *KernelCache::compileDynamic(std::span<const ArrayView> arrays,
                                              llvm::ArrayRef<int> aliasOf,
                                              KeyView view, SizeMask mask,
                                              const std::string &why,
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
    DynamicTrace traced =
        traceDynamic(signature(arrays, aliasOf), mask, sizes, context->context);
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
        whyStatic =
            std::string("compiling for dynamic sizes failed: ") + error.what();
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
std::string KernelCache::wantDynamic(KeyView key, SizeMask &mask) {
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
void KernelCache::addMask(const SizeMask &mask) {
  std::lock_guard<std::mutex> lock(patternsMutex);
  size_t count = maskCount.load(std::memory_order_relaxed);
  if (count == kMaxMasks ||
      llvm::is_contained(llvm::ArrayRef(masks.data(), count), mask))
    return;
  masks[count] = mask;
  maskCount.store(count + 1, std::memory_order_release);
}

/// The module of the most recent compile (traced again), if any.
mlir::OwningOpRef<mlir::ModuleOp>
KernelCache::lastModule(mlir::MLIRContext &context) const {
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

} // namespace pk::detail
