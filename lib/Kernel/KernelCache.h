//===- KernelCache.h - a kernel's variants, found or compiled ---*- C++ -*-===//
//
// Private to the kernel layer. What a pk::Kernel holds: its body, options
// and compiled variants (GuardCache), and how a call finds its variant or
// compiles one: for its shapes (KernelCache.cpp) or for dynamic sizes
// (DynamicSizes.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_KERNEL_KERNELCACHE_H
#define PICOKERNEL_LIB_KERNEL_KERNELCACHE_H

#include "picokernel/Compiler/CpuCompiler.h"
#include "picokernel/Compiler/Registry.h"
#include "picokernel/Frontend/TraceIR.h"
#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Support/Fork.h"
#include "picokernel/Support/SharedContext.h"

#include "Arguments.h"
#include "GuardCache.h"
#include "GuardKey.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace pk::detail {

/// The MLIR contexts compiles trace into. A context keeps every type and
/// attribute it ever uniqued (each new shape adds a few), so compiles move
/// to a fresh context every kCompilesPerContext; the old one goes when its
/// last compile in flight ends. Compiled kernels keep nothing of MLIR. A
/// context is handed out with every dialect the compilers need already
/// loaded: loading one while another thread uses the context is a race.
/// A context with the CPU pipeline's pass managers kept for its compiles
/// (destroyed before the context).
struct CompileContext {
  // Shared by the threads compiling at once, starting none of its own
  // (see Support/SharedContext.h).
  CompileContext() { shareWithoutThreads(context); }
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::pk::CpuPipelineCache pipelines{context};
};

class CompileContexts {
public:
  static std::shared_ptr<CompileContext> acquire();

private:
  CompileContexts();
  static CompileContexts &instance();
  /// In a forked child: the contexts may be locked by threads the child
  /// does not have, so compiles start a new one (the old ones are leaked).
  static void forgetAfterFork();
  static const bool madeAtLoad;

  static constexpr unsigned kCompilesPerContext = 64;
  std::mutex mutex;
  std::shared_ptr<CompileContext> current;
  unsigned uses = 0;
};

/// A dynamic-sizes module for a call, or why the kernel stays static.
struct DynamicTrace {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string whyStatic;
  /// Where only these sizes keep the kernel static (sums run over them).
  llvm::SmallVector<int64_t, 4> keepStatic;
  /// Per class of sizes: the least size the module takes (0: any; it
  /// slices x[:4]).
  llvm::SmallVector<int64_t, 4> minimum;
  /// Whether the kernel failed to trace for other sizes: these sizes may
  /// be too short for a slice that longer ones take, so the verdict holds
  /// for them only.
  bool failedForOtherSizes = false;
  /// Where some sizes are computed from others (no module then): per class,
  /// the class its size is computed from, or -1.
  std::vector<int> derivedFrom;
  double seconds = 0;
};

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

  /// The traced module; `forGeneralizing` keeps the indices the tracer
  /// records for generalizeSizes (Frontend/Generalize.h).
  mlir::OwningOpRef<mlir::ModuleOp>
  traceFor(const Signature &signature,
           mlir::MLIRContext &context = defaultContext(),
           bool *readSizes = nullptr, bool forGeneralizing = false) const;

  /// Traces the kernel for `arrays` and again with the sizes `mask` marks
  /// changed (`sizes`: the distinct ones, one class each) and generalizes
  /// the first trace to dynamic sizes. An error of the first trace is the
  /// user's and propagates.
  DynamicTrace traceDynamic(const Signature &real, const SizeMask &mask,
                            llvm::ArrayRef<int64_t> sizes,
                            mlir::MLIRContext &context) const;

  /// Logs a compile of the variant for `key`, and why (Support/Log.h).
  void logCompile(KeyView key, const std::string &why) const;

  /// Traces and compiles the variant for `arrays` (whose key follows
  /// `previous`).
  std::shared_ptr<const Executable> compile(std::span<const ArrayView> arrays,
                                            llvm::ArrayRef<int> aliasOf,
                                            KeyView key, KeyView previous,
                                            const std::string &whyStatic);

  /// Compiles a traced module (`traced`: the seconds its tracing took).
  std::shared_ptr<const Executable> finishCompile(CompileContext &context,
                                                  mlir::ModuleOp module,
                                                  double traced, KeyView key);

  /// The compiled kernel for `arrays`, and each array's parameter index;
  /// null on a miss unless `mayCompile`.
  const Executable *
  prepare(std::span<const ArrayView> arrays, llvm::SmallVectorImpl<int> &param,
          llvm::SmallVectorImpl<std::pair<int, int>> &partialOverlaps,
          bool mayCompile = true);

  /// On a miss: the dynamic-sizes variant where the policy asks for one and
  /// the kernel allows it, else the static one.
  const Executable &compileOnMiss(std::span<const ArrayView> arrays,
                                  llvm::ArrayRef<int> aliasOf, KeyView view,
                                  bool dynamicAllowed);

  /// The variant for the sizes `mask` marks dynamic, where the kernel takes
  /// them; sizes a sum runs over become static and it tries again. Null,
  /// with `whyStatic`, where the kernel cannot take any.
  const Executable *compileDynamic(std::span<const ArrayView> arrays,
                                   llvm::ArrayRef<int> aliasOf, KeyView view,
                                   SizeMask mask, const std::string &why,
                                   std::string &whyStatic);

  /// Why the call with exact key `key` gets a dynamic-sizes variant, and
  /// which of its sizes are dynamic (`mask`); empty if it does not.
  /// Automatic: the sizes that differ from the last miss's of the pattern.
  std::string wantDynamic(KeyView key, SizeMask &mask);

  /// Whether a variant with `mask` for calls of `pattern` can be looked
  /// up: it is, or there is room; `add` adds it.
  bool publishMask(const Key &pattern, const SizeMask &mask, bool add);

  /// Runs the kernel on `arrays`, compiling on a miss unless `mayCompile`
  /// is false: then a miss returns false without running.
  bool call(std::span<const ArrayView> arrays, bool mayCompile = true);

  std::vector<bool> written(std::span<const ArrayView> arrays);

  CacheStats stats() const;

  /// The module of the most recent compile (traced again), if any.
  mlir::OwningOpRef<mlir::ModuleOp>
  lastModule(mlir::MLIRContext &context) const;

  std::optional<Signature> lastSignature() const;

  void clear();

  const std::string name;

private:
  Kernel::Body body;

  int arity;

  std::vector<std::string> paramNames;

  KernelOptions options;

  GuardCache variants;

  std::atomic<uint64_t> diskLoads{0};

  /// The dynamic sizes of the dynamic-sizes variants compiled, with the
  /// pattern of the calls they serve (usually one): calls of a pattern
  /// look for a variant with each of its masks. Append-only, written under
  /// patternsMutex, published by maskCount; past kMaxMasks, kernels
  /// compile for static sizes.
  static constexpr size_t kMaxMasks = 16;
  struct DynamicMask {
    Key pattern;
    SizeMask mask;
  };
  std::array<DynamicMask, kMaxMasks> masks;
  std::atomic<size_t> maskCount{0};

  // (Taken outside the compile gate, on a miss: a fork takes it.)
  mutable ForkSafeMutex patternsMutex;

  /// The call each dynamic variant was traced for, and its mask.
  std::unordered_map<Key, std::pair<Key, SizeMask>, KeyHash, KeyEqual>
      dynamicSources;

  /// Per pattern (the key without sizes): the exact key of its last miss
  /// (Automatic); the dynamic keys whose kernel cannot take dynamic sizes,
  /// with the reason.
  std::unordered_map<Key, Key, KeyHash, KeyEqual> lastSizes;
  /// Per pattern: the sizes that ever differed between its misses
  /// (Automatic: they stay dynamic, as torch.compile's do).
  std::unordered_map<Key, SizeMask, KeyHash, KeyEqual> variedSizes;

  std::unordered_map<Key, std::string, KeyHash, KeyEqual> staticOnly;

  mutable ForkSafeMutex statsMutex;

  double traceSeconds = 0, pipelineSeconds = 0, codegenSeconds = 0;

  friend class pk::Kernel;
};

} // namespace pk::detail

#endif // PICOKERNEL_LIB_KERNEL_KERNELCACHE_H
