//===- FuzzMlirPipeline.cpp - fuzz the parser, verifier and CPU pipeline --===//
//
// libFuzzer target: the input is MLIR text (split at `// -----` like
// --split-input-file). Every chunk that parses and verifies and holds only
// pk kernels goes through the whole CPU pipeline and the translation to LLVM
// IR. Diagnostics are expected; crashes, sanitizer reports and hangs are
// bugs.
//
//===----------------------------------------------------------------------===//

#include "MlirChunks.h"

#include "picokernel/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pk::fuzz::forEachKernelModule(data, size, [](mlir::ModuleOp module) {
    mlir::PassManager pm(module.getContext());
    mlir::pk::buildPkCpuPipeline(pm, {});
    if (mlir::failed(pm.run(module)))
      return;
    llvm::LLVMContext llvmContext;
    (void)mlir::translateModuleToLLVMIR(module, llvmContext);
  });
  return 0;
}
