//===- Registry.cpp - the dialects every compile path needs ---------------===//

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Dialect/Pk/IR/PkDialect.h"
#include "picokernel/Pipelines/Pipelines.h"
#include "picokernel/Support/Fork.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <mutex>
#include <new>

void mlir::pk::registerPkCompilerDialects(DialectRegistry &registry) {
  registry.insert<PkDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

/// Held while dialects load into a context. A fork takes it, so that no
/// thread of the parent holds it (for ever, in the child) and no context is
/// half loaded.
static std::mutex &preparingMutex() {
  static std::mutex *mutex = [] {
    auto *created = new std::mutex; // never destroyed: forks may use it
    pk::registerForkHandler(pk::ForkStage::TakeLocks,
                            {[] { preparingMutex().lock(); },
                             [] { preparingMutex().unlock(); },
                             [] { new (&preparingMutex()) std::mutex; }});
    return created;
  }();
  return *mutex;
}

/// Made while the library loads (see Support/Fork.h).
[[maybe_unused]] static const bool preparingMutexMadeAtLoad =
    (preparingMutex(), true);

void mlir::pk::prepareContextForCompilation(MLIRContext &context) {
  std::lock_guard<std::mutex> lock(preparingMutex());
  if (context.getLoadedDialect<omp::OpenMPDialect>() &&
      context.getLoadedDialect<PkDialect>())
    return; // loaded last below: everything else is there
  DialectRegistry registry;
  registerPkCompilerDialects(registry);
  context.appendDialectRegistry(registry);
  // Everything the pipelines create (CPU and SPIR-V), loaded once, before
  // any concurrent use: two Vulkan kernels compiling at once loaded the
  // SPIR-V dialects into the shared context together, and crashed.
  OpPassManager cpu(ModuleOp::getOperationName());
  buildPkCpuPipeline(cpu, {});
  OpPassManager spirv(ModuleOp::getOperationName());
  buildPkSpirvPipeline(spirv, {});
  DialectRegistry dependent;
  cpu.getDependentDialects(dependent);
  spirv.getDependentDialects(dependent);
  context.appendDialectRegistry(dependent);
  for (StringRef name : dependent.getDialectNames())
    context.getOrLoadDialect(name);
  context.loadDialect<PkDialect, LLVM::LLVMDialect>();
  context.loadDialect<omp::OpenMPDialect>();
}
