//===- Registry.h - the dialects every compile path needs -------*- C++ -*-===//
//
// One place says which dialects, interfaces and translations picokernel's
// tools and compile paths use: pk-opt, pk-translate, the JIT, the AOT
// object compiler and the SPIR-V compiler all register them through here.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_COMPILER_REGISTRY_H
#define PICOKERNEL_COMPILER_REGISTRY_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace mlir::pk {

/// The pk dialect, every upstream dialect and extension, and the
/// translations to LLVM IR.
void registerPkCompilerDialects(DialectRegistry &registry);

/// Registers and loads into `context` everything the CPU and SPIR-V
/// pipelines create (idempotent, thread-safe). Compiles call it; calling it
/// up front keeps dialect loading out of concurrent compiles, which share
/// the context.
void prepareContextForCompilation(MLIRContext &context);

} // namespace mlir::pk

#endif // PICOKERNEL_COMPILER_REGISTRY_H
