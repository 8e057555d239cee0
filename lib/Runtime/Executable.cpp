//===- Executable.cpp - a kernel compiled for some target -----------------===//

#include "picokernel/Runtime/Executable.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace pk {

Executable::~Executable() = default;

void Executable::describe(mlir::ModuleOp module) {
  auto kernels = llvm::to_vector(module.getOps<mlir::pk::KernelOp>());
  if (kernels.size() != 1)
    throw CompileError("compile: expected a module with one pk.kernel, got " +
                       std::to_string(kernels.size()));
  signature = signatureOf(kernels.front());
}

bool Executable::hasDynamicSizes() const {
  return llvm::any_of(signature.params, [](const CompiledParam &param) {
    return llvm::is_contained(param.shape, kDynamicSize);
  });
}

} // namespace pk
