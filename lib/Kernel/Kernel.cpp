//===- Kernel.cpp - kernels compiled on first use, cached by guard --------===//

#include "picokernel/Kernel/Kernel.h"

#include "KernelCache.h"

#include "picokernel/Frontend/TraceIR.h"

#include <stdexcept>
#include <string>

namespace pk {

namespace {
/// `options`, or std::invalid_argument naming the first that is out of
/// range.
KernelOptions checked(KernelOptions options) {
  if (options.compile.parallelThreshold < 0)
    throw std::invalid_argument(
        "parallel threshold must be at least 0 (0: always serial), got " +
        std::to_string(options.compile.parallelThreshold));
  return options;
}
} // namespace

Kernel::Kernel(std::string name, Body body, int arity,
               std::vector<std::string> paramNames, KernelOptions options)
    : cache(std::make_unique<detail::KernelCache>(
          std::move(name), std::move(body), arity, std::move(paramNames),
          checked(std::move(options)))) {}

Kernel::~Kernel() = default;

detail::KernelCache &Kernel::live() const {
  if (!cache)
    throw std::logic_error("pk::Kernel: used after it was moved from");
  return *cache;
}
Kernel::Kernel(Kernel &&) noexcept = default;
Kernel &Kernel::operator=(Kernel &&) noexcept = default;

void Kernel::operator()(std::span<const ArrayView> arrays) const {
  live().call(arrays);
}

bool Kernel::runIfCompiled(std::span<const ArrayView> arrays) const {
  return live().call(arrays, /*mayCompile=*/false);
}

Module Kernel::trace(std::span<const ArrayView> arrays,
                     TraceContext context) const {
  return trace(signatureOf(arrays), context);
}

Signature Kernel::signatureOf(std::span<const ArrayView> arrays) const {
  llvm::SmallVector<int, 16> aliasOf;
  llvm::SmallVector<std::pair<int, int>, 4> partialOverlaps;
  detail::checkArguments(arrays, live().arity, live().name, live().paramNames,
                         aliasOf, partialOverlaps);
  return live().signature(arrays, aliasOf);
}

Module Kernel::trace(const Signature &signature, TraceContext context) const {
  std::shared_ptr<mlir::MLIRContext> own;
  mlir::MLIRContext &traceContext = contextFor(context, own);
  return wrapModule(live().traceFor(signature, traceContext), std::move(own));
}

std::vector<bool>
Kernel::writtenArguments(std::span<const ArrayView> arrays) const {
  return live().written(arrays);
}

std::optional<Signature> Kernel::lastCompiledSignature() const {
  return live().lastSignature();
}

Module Kernel::lastCompiledModule(TraceContext context) const {
  std::shared_ptr<mlir::MLIRContext> own;
  mlir::MLIRContext &traceContext = contextFor(context, own);
  mlir::OwningOpRef<mlir::ModuleOp> module = live().lastModule(traceContext);
  if (!module)
    return Module();
  return wrapModule(std::move(module), std::move(own));
}

CacheStats Kernel::stats() const { return live().stats(); }
void Kernel::clearCache() const { live().clear(); }
const std::string &Kernel::name() const { return live().name; }

} // namespace pk
