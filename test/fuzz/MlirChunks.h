//===- MlirChunks.h - MLIR text inputs for the fuzz targets -----*- C++ -*-===//
//
// What the fuzz targets that take MLIR text share: one dialect registry for
// the process, inputs split at `// -----` like --split-input-file, and each
// chunk parsed in a fresh context with its diagnostics swallowed.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_TEST_FUZZ_MLIRCHUNKS_H
#define PICOKERNEL_TEST_FUZZ_MLIRCHUNKS_H

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace pk::fuzz {

inline const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry instance = [] {
    mlir::DialectRegistry r;
    mlir::pk::registerPkCompilerDialects(r);
    return r;
  }();
  return instance;
}

inline bool onlyKernels(mlir::ModuleOp module) {
  for (mlir::Operation &op : module.getBody()->getOperations())
    if (!mlir::isa<mlir::pk::KernelOp>(op))
      return false;
  return !module.getBody()->empty();
}

/// Calls `process(module)` for every chunk of the input that parses into a
/// module of pk kernels, each in a fresh context (uniqued types and
/// attributes would otherwise accumulate over millions of inputs).
template <typename Process>
void forEachKernelModule(const uint8_t *data, size_t size, Process process) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  constexpr std::string_view separator = "// -----";
  while (true) {
    size_t split = input.find(separator);
    // MLIR's lexer reads up to a terminating NUL, which fuzzer data lacks.
    std::string text(input.substr(0, split));
    mlir::MLIRContext context(registry(),
                              mlir::MLIRContext::Threading::DISABLED);
    mlir::ScopedDiagnosticHandler quiet(
        &context, [](mlir::Diagnostic &) { return mlir::success(); });
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (module && onlyKernels(*module))
      process(*module);
    if (split == std::string_view::npos)
      return;
    input.remove_prefix(split + separator.size());
  }
}

} // namespace pk::fuzz

#endif // PICOKERNEL_TEST_FUZZ_MLIRCHUNKS_H
