//===- Kernel.h - kernels compiled on first use, cached --------*- C++ -*-===//
//
//   pk::Kernel fma("fma", [](pk::Ref a, pk::Ref b, pk::Ref c, pk::Ref o) {
//     o[pk::all] = a[pk::all] * b[pk::all] + c[pk::all];
//   });
//   std::vector<float> a(n, 1), b(n, 2), c(n, 3), o(n);
//   int64_t shape[] = {n};
//   fma({{a.data(), pk::f32, shape}, {b.data(), pk::f32, shape},
//        {c.data(), pk::f32, shape}, {o.data(), pk::f32, shape}});
//
// (scripts/check-embed compiles and runs this example and Trace.h's.)
//
// Each call is checked against a guard, the key (shapes, dtypes, which
// arguments are the same array): a hit runs the machine code compiled for
// it; a miss traces the kernel for these arrays, compiles it and caches it.
// The cache is thread-safe (each key is compiled once, however many threads
// ask at the same time), bounded (least recently used entries are evicted)
// and counts hits, misses and compile time. Every compile is a log record
// (Support/Log.h: on stderr with PK_LOG_COMPILES=1) with the reason, which
// argument's shape or dtype differs from the previous compile, and its time.
//
// Arrays are C-contiguous. The same array may be passed for several
// parameters (the output may be an input: `o[...] = expr` semantics);
// arrays that overlap without being the same array are rejected when the
// kernel writes to one of them.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_KERNEL_KERNEL_H
#define PICOKERNEL_KERNEL_KERNEL_H

#include "picokernel/Frontend/Trace.h"
#include "picokernel/Runtime/Jit.h"
#include "picokernel/Runtime/Vulkan.h"
#include "picokernel/Support/Defaults.h"

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace pk {

/// A caller-owned array: data, element type, shape and (optionally) strides
/// in elements. Empty strides mean C-contiguous.
struct ArrayView {
  void *data;
  DType dtype;
  std::span<const int64_t> shape;
  std::span<const int64_t> strides = {};
  /// A read-only array may only be read: a kernel storing to it is refused.
  bool readOnly = false;
};

/// An argument the kernel cannot run on (count, rank, layout, overlap).
class ArgumentError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

/// Two arrays overlap in memory without being the same array, and the
/// kernel writes to one of them (a caller can retry on copies).
class OverlapError : public ArgumentError {
public:
  using ArgumentError::ArgumentError;
};

/// Where compiled kernels run.
enum class Backend { CPU, Vulkan };

/// When a kernel is compiled for dynamic sizes: one compile serving every
/// size of the same ranks, dtypes, aliasing, sizes 0 and 1 (broadcasting)
/// and equalities between sizes.
enum class DynamicSizes {
  /// Static first; when a second size is seen where the first call had
  /// another, one kernel with dynamic sizes serves that call and every
  /// later one (like torch.compile's automatic dynamic shapes). Sizes
  /// that varied once stay dynamic in later compiles of the pattern.
  Automatic,
  /// Dynamic from the first call.
  Always,
  /// One compile per shape.
  Never,
};

struct KernelOptions {
  Backend backend = Backend::CPU;
  CompileOptions compile; ///< for Backend::CPU
  VulkanOptions vulkan;   ///< for Backend::Vulkan
  /// Some sizes stay static, with the reason in PK_LOG_COMPILES's log:
  /// those a kernel reads as numbers (`x.shape`), those sliced from one
  /// end to a bound counted from the other (`x[-5:4]`), sizes that follow
  /// others other than by a constant difference (an output of `x[::2]`),
  /// and, on a Vulkan device that limits loop iterations (llvmpipe), the
  /// sizes of kernels with loops over them. A Vulkan variant of dynamic
  /// sizes holds the buffers of its last call's sizes, which
  /// maxDeviceBytes does not count. Sizes sliced to a constant size
  /// (`x[:4]`, `x[2]`, `x[-3:]`) are dynamic from the least size that
  /// holds the slice; each shorter one compiles for itself. A size that
  /// is another's plus a constant (o in `o[...] = x[1:] - x[:-1]`, in
  /// `o[1:-1] = x[...]`) is computed from it: one variant serves the
  /// sizes where that difference holds (and the derived size is at least
  /// 2), the log shows it (`o: (n - 1,)`).
  DynamicSizes dynamic = DynamicSizes::Automatic;
  /// Compiled variants kept at most; the least recently used goes first.
  size_t maxCacheEntries = defaults::kMaxCacheEntries;
  /// Bytes of device buffers (Vulkan: every array and temporary of a
  /// variant, kept for its life) the variants keep at most, besides the
  /// newest; the least recently used go first.
  uint64_t maxDeviceBytes = defaults::kMaxDeviceBytes;
  /// Where the kernel is defined: errors about the kernel as a whole (it
  /// stores nothing) point there. Empty: the kernel's name.
  SourceLoc definedAt;
};

struct CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  /// Misses whose machine code came from the disk cache (Runtime/DiskCache.h)
  /// instead of being compiled.
  uint64_t diskLoads = 0;
  size_t entries = 0;
  double traceSeconds = 0;    ///< total, over all compiles
  double pipelineSeconds = 0; ///< total MLIR pass time
  double codegenSeconds = 0;  ///< total LLVM time
};

namespace detail {
class KernelCache;
} // namespace detail

class Kernel {
public:
  /// A kernel body over a vector of refs, whatever the user's signature.
  using Body = std::function<void(const std::vector<Ref> &)>;

  /// `body` takes one pk::Ref per array (or a const std::vector<pk::Ref>&).
  /// `paramNames` name the parameters in IR and messages (default argN).
  template <typename Fn>
  Kernel(std::string name, Fn body, std::vector<std::string> paramNames = {},
         KernelOptions options = {})
      : Kernel(std::move(name), adapt(std::move(body)),
               detail::refArity<Fn &>(), std::move(paramNames),
               std::move(options)) {}
  ~Kernel();
  Kernel(Kernel &&) noexcept;
  Kernel &operator=(Kernel &&) noexcept;

  /// Runs the kernel on `arrays` (compiling on a cache miss). Throws
  /// ArgumentError, TraceError or CompileError.
  void operator()(std::span<const ArrayView> arrays) const;
  void operator()(std::initializer_list<ArrayView> arrays) const {
    (*this)(std::span<const ArrayView>(arrays.begin(), arrays.size()));
  }

  /// Runs the kernel on `arrays` if a compiled variant for them is cached;
  /// returns false, without tracing, compiling or running, if none is. For
  /// callers that hold a lock they would release around a compile (Python's
  /// GIL) but not around a short run. Throws ArgumentError.
  bool runIfCompiled(std::span<const ArrayView> arrays) const;

  /// The traced pk module for arrays of these shapes and dtypes (no
  /// compilation; arrays' data is not read), in the context `context`
  /// names (Frontend/Trace.h's TraceContext: Own for a module made once,
  /// which the shared context would otherwise keep for the process's life;
  /// Shared for many, which make their types once).
  Module trace(std::span<const ArrayView> arrays,
               TraceContext context = TraceContext::Shared) const;
  /// The traced pk module for a signature (names, shapes, dtypes, aliases).
  Module trace(const Signature &signature,
               TraceContext context = TraceContext::Shared) const;
  /// The signature of `arrays` (names, shapes, dtypes, aliases).
  Signature signatureOf(std::span<const ArrayView> arrays) const;

  /// The signature of the most recent compile, if any (kDynamicSize for
  /// the sizes of a kernel compiled for dynamic sizes).
  std::optional<Signature> lastCompiledSignature() const;
  /// The pk module of the most recent compile, traced again (with `?`
  /// sizes for a kernel compiled for dynamic sizes) in the context
  /// `context` names; empty if none (or after clearCache).
  Module lastCompiledModule(TraceContext context = TraceContext::Shared) const;

  /// Which of `arrays` the kernel stores to (compiling on a cache miss).
  std::vector<bool> writtenArguments(std::span<const ArrayView> arrays) const;

  CacheStats stats() const;
  /// Forgets every compiled variant, and which was compiled last.
  void clearCache() const;
  const std::string &name() const;

private:
  template <typename Fn> static Body adapt(Fn body) {
    constexpr int arity = detail::refArity<Fn &>();
    if constexpr (arity < 0)
      return Body(std::move(body));
    else
      return [body = std::move(body)](const std::vector<Ref> &refs) mutable {
        detail::callWithRefs(body, refs,
                             std::make_index_sequence<size_t(arity)>());
      };
  }

  Kernel(std::string name, Body body, int arity,
         std::vector<std::string> paramNames, KernelOptions options);
  /// The cache, or std::logic_error for a moved-from Kernel.
  detail::KernelCache &live() const;

  std::unique_ptr<detail::KernelCache> cache;
};

} // namespace pk

#endif // PICOKERNEL_KERNEL_KERNEL_H
