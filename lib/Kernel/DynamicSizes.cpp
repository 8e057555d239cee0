//===- DynamicSizes.cpp - one variant for every size ----------------------===//
//
// The kernel layer's side of dynamic sizes: when a call gets a variant for
// dynamic sizes (the policy, the sizes that changed), the two traces that
// make it (Frontend/Generalize.h), which sizes stay static when some cannot
// vary, and the lookup of such variants.
//
//===----------------------------------------------------------------------===//

#include "KernelCache.h"
#include "SecondTrace.h"

#include "picokernel/Dialect/Pk/IR/SizeClasses.h"
#include "picokernel/Frontend/Generalize.h"
#include "picokernel/Support/Fork.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <chrono>

namespace pk::detail {

namespace {
/// Per size of `sizes` (a class of `real`'s dynamic sizes): the least
/// size the kernel of size classes `classes` takes there (0: any).
llvm::SmallVector<int64_t, 4> leastSizes(const mlir::pk::SizeClasses &classes,
                                         const Signature &real,
                                         llvm::ArrayRef<int64_t> sizes) {
  llvm::SmallVector<int64_t, 4> least(sizes.size(), 0);
  // Parameters are the arrays that alias no earlier one, in order.
  size_t parameter = 0;
  for (const ArgSpec &arg : real) {
    if (arg.aliasOf >= 0)
      continue;
    if (parameter >= classes.ofParameter.size())
      break;
    for (auto [d, cls] : llvm::enumerate(classes.ofParameter[parameter])) {
      size_t k = llvm::find(sizes, arg.shape[d]) - sizes.begin();
      if (cls >= 0 && k < sizes.size())
        least[k] = std::max(least[k], classes.minimum[cls]);
    }
    ++parameter;
  }
  return least;
}

/// An error's last line (a Python error's what() starts with the
/// traceback).
std::string lastLine(const std::exception &error) {
  llvm::StringRef what = llvm::StringRef(error.what()).rtrim();
  return what.substr(what.rfind('\n') + 1).str();
}

} // namespace

/// Traces the kernel for `arrays` and again with the sizes `mask` marks
/// changed (`sizes`: the distinct ones, one class each; sizes the mask
/// computes from them move with them) and generalizes the first trace to
/// dynamic sizes. An error of the first trace is the user's and
/// propagates. Where classes fail to trace moved alone but trace moved
/// together (o[...] = x[1:] - x[:-1]), the trace says which are computed
/// from which (`derivedFrom`) for the caller to try again.
DynamicTrace KernelCache::traceDynamic(const Signature &real,
                                       const SizeMask &mask,
                                       llvm::ArrayRef<int64_t> sizes,
                                       mlir::MLIRContext &context) const {
  auto start = std::chrono::steady_clock::now();
  DynamicTrace result;
  SizeRoles roles = rolesOf(real, mask, sizes);
  std::vector<int64_t> moved = secondSizes(real, roles, sizes);
  std::vector<SizeSymbol> symbols;
  for (auto [k, size] : llvm::enumerate(sizes))
    symbols.push_back({size, moved.empty() ? size : moved[k]});
  // The sizes computed from a class, after the classes.
  std::vector<int> derivedFrom(sizes.size(), -1);
  for (auto related : roles.related)
    if (related && !moved.empty()) {
      SizeSymbol symbol{sizes[related->first] + related->second,
                        moved[related->first] + related->second};
      if (llvm::is_contained(symbols, symbol))
        continue;
      symbols.push_back(symbol);
      derivedFrom.push_back(int(related->first));
    }
  // `real` with the classes `classes` (all: empty) moved.
  auto perturbed = [&](llvm::ArrayRef<size_t> classes) {
    std::vector<int64_t> classSizes(sizes.begin(), sizes.end());
    for (size_t k = 0; k < sizes.size(); ++k)
      if (classes.empty() || llvm::is_contained(classes, k))
        classSizes[k] = moved[k];
    return withClassSizes(real, roles, classSizes);
  };
  // Whether the kernel traces for `other`; an error that ends the call
  // whatever the sizes (Ctrl-C, memory) propagates.
  auto traces = [&](const Signature &other,
                    mlir::OwningOpRef<mlir::ModuleOp> *module) {
    try {
      mlir::OwningOpRef<mlir::ModuleOp> traced =
          traceFor(other, context, nullptr, /*forGeneralizing=*/true);
      if (module)
        *module = std::move(traced);
      return true;
    } catch (const TraceAbort &) {
      throw;
    } catch (const std::bad_alloc &) {
      throw;
    } catch (const std::exception &error) {
      if (result.whyStatic.empty())
        result.whyStatic = "it fails for other sizes: " + lastLine(error);
      result.failedForOtherSizes = true;
      return false;
    }
  };
  bool readSizes = false;
  result.module = traceFor(real, context, &readSizes, /*forGeneralizing=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> otherModule;
  if (readSizes) {
    result.whyStatic = "its code reads the sizes (.shape, len()) or goes on "
                       "after an error of its trace";
  } else if (moved.empty()) {
    result.whyStatic = "no other sizes keep its arrays countable in bytes";
  } else if (!traces(perturbed({}), &otherModule)) {
    // The classes that fail when moved alone stay static: the others may
    // still be dynamic (a batch, next to a size a constant array of the
    // kernel's fixes).
    std::vector<size_t> failing;
    for (size_t k = 0; k < sizes.size() && sizes.size() > 1; ++k)
      if (!traces(perturbed({k}), nullptr))
        failing.push_back(k);
    result.derivedFrom = relateSizes(
        real, roles, sizes, moved, failing,
        [&](const Signature &other) { return traces(other, nullptr); });
    if (!result.derivedFrom.empty()) {
      result.whyStatic.clear();
      result.failedForOtherSizes = false;
      result.module = nullptr;
      return result;
    }
    for (size_t k : failing)
      result.keepStatic.push_back(sizes[k]);
    if (result.keepStatic.size() == sizes.size())
      result.keepStatic.clear();
  }
  // (A generalized module that does not verify keeps the kernel static,
  // with the reason: its diagnostics are not the user's.)
  std::string diagnostic;
  mlir::ScopedDiagnosticHandler quiet(&context, [&](mlir::Diagnostic &error) {
    if (diagnostic.empty())
      diagnostic = error.str();
    return mlir::success();
  });
  if (otherModule &&
      (mlir::failed(generalizeSizes(*result.module, *otherModule, symbols,
                                    result.whyStatic, result.keepStatic,
                                    derivedFrom)) ||
       mlir::failed(mlir::verify(*result.module))) &&
      result.whyStatic.empty())
    result.whyStatic = "its generalized IR does not verify: " + diagnostic;
  if (result.whyStatic.empty()) {
    // (The generalizer checked that the module holds one kernel.)
    auto kernel = *result.module->getOps<mlir::pk::KernelOp>().begin();
    mlir::pk::SizeClasses classes = mlir::pk::computeSizeClasses(kernel);
    if (derivesAsKeyed(classes, real, roles))
      result.minimum = leastSizes(classes, real, sizes);
    else
      result.whyStatic = "it computes sizes from others in a way its "
                         "variant for dynamic sizes cannot check";
  }
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
  // Sizes a previous round kept static say why in the log.
  std::string reason = why;
  while (true) {
    llvm::SmallVector<int64_t, 64> dynamicKey;
    llvm::SmallVector<int64_t, 8> sizes;
    if (!encodeDynamicKey(view, mask, dynamicKey, sizes))
      return nullptr;
    Key dynamic(dynamicKey.begin(), dynamicKey.end());
    Key pattern = patternOf(view);
    if (!publishMask(pattern, mask, /*add=*/false)) {
      whyStatic = "it has " + std::to_string(kMaxMasks) +
                  " variants for dynamic sizes already";
      return nullptr;
    }
    {
      std::lock_guard<ForkSafeMutex> lock(patternsMutex);
      auto refused = staticOnly.find(dynamic);
      if (refused != staticOnly.end()) {
        whyStatic = refused->second;
        return nullptr;
      }
    }
    std::shared_ptr<CompileContext> context;
    DynamicTrace traced;
    {
      CompileGate gate;
      context = CompileContexts::acquire();
      traced = traceDynamic(signature(arrays, aliasOf), mask, sizes,
                            context->context);
    }
    if (!traced.derivedFrom.empty()) {
      // Sizes computed from others: their variant takes them from those.
      mask = withRelations(view, mask, sizes, traced.derivedFrom);
      continue;
    }
    whyStatic = traced.whyStatic;
    if (traced.module) {
      // Sizes below the least the kernel takes (it slices x[:4]) stay in
      // the key.
      if (llvm::any_of(traced.minimum,
                       [](int64_t least) { return least > 2; })) {
        mask = withMinimums(view, mask, sizes, traced.minimum);
        dynamicKey.clear();
        sizes.clear();
        encodeDynamicKey(view, mask, dynamicKey, sizes);
        dynamic.assign(dynamicKey.begin(), dynamicKey.end());
      }
      try {
        const Executable &compiled = variants.lookup(dynamic, [&](KeyView) {
          logCompile(dynamic, "dynamic sizes: " + reason);
          {
            std::lock_guard<ForkSafeMutex> lock(patternsMutex);
            dynamicSources[dynamic] = {Key(view.begin(), view.end()), mask};
          }
          CompileGate gate;
          return finishCompile(*context, *traced.module, traced.seconds,
                               dynamic);
        });
        publishMask(pattern, mask, /*add=*/true);
        return &compiled;
      } catch (const CompileError &error) {
        // A compiler limit on dynamic sizes: static sizes still work.
        whyStatic =
            std::string("compiling for dynamic sizes failed: ") + error.what();
      }
    }
    if (traced.keepStatic.empty()) {
      // (Longer sizes of the key may still take dynamic sizes.)
      if (!traced.failedForOtherSizes) {
        std::lock_guard<ForkSafeMutex> lock(patternsMutex);
        staticOnly[dynamic] = whyStatic;
      }
      return nullptr;
    }
    // (Each round makes at least one more size static: it ends.)
    mask = withoutSizes(view, mask, traced.keepStatic);
    reason += "; some sizes kept static: " + whyStatic;
  }
}

/// Why the call with exact key `key` gets a dynamic-sizes variant, and
/// which of its sizes are dynamic (`mask`); empty if it does not.
/// Automatic: the sizes that differ from the last miss's of the pattern,
/// and those that differed at any earlier miss (sizes that change in
/// turn become dynamic together; a first call with a size 0 or 1 there
/// does not block them).
std::string KernelCache::wantDynamic(KeyView key, SizeMask &mask) {
  if (options.dynamic == DynamicSizes::Always)
    return "asked for (dynamic=True)";
  std::lock_guard<ForkSafeMutex> lock(patternsMutex);
  Key pattern = patternOf(key);
  auto [last, inserted] =
      lastSizes.try_emplace(pattern, Key(key.begin(), key.end()));
  if (inserted)
    return "";
  Key previous = std::exchange(last->second, Key(key.begin(), key.end()));
  mask = differingSizes(previous, key);
  if (llvm::all_of(mask, [](int64_t least) { return least == 0; }))
    return "";
  SizeMask &varied = variedSizes[pattern];
  varied.resize(mask.size(), 0);
  for (auto [now, before] : llvm::zip(mask, varied))
    now = before = std::max(now, before);
  return explainKeyChange(previous, key, paramNames);
}

bool KernelCache::publishMask(const Key &pattern, const SizeMask &mask,
                              bool add) {
  std::lock_guard<ForkSafeMutex> lock(patternsMutex);
  size_t count = maskCount.load(std::memory_order_relaxed);
  for (size_t i = 0; i < count; ++i)
    if (masks[i].pattern == pattern && masks[i].mask == mask)
      return true;
  if (count == kMaxMasks)
    return false;
  if (add) {
    masks[count] = {pattern, mask};
    maskCount.store(count + 1, std::memory_order_release);
  }
  return true;
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
    std::lock_guard<ForkSafeMutex> lock(patternsMutex);
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
