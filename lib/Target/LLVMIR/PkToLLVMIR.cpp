//===- PkToLLVMIR.cpp - pk kernels to LLVM IR -----------------------------===//

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Pipelines/Pipelines.h"
#include "picokernel/Target/LLVMIR.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

void mlir::pk::registerToLLVMIRTranslation() {
  TranslateFromMLIRRegistration registration(
      "pk-to-llvmir", "compile pk kernels for the CPU to LLVM IR",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        PassManager pm(op->getContext());
        buildPkCpuPipeline(pm, CpuPipelineOptions());
        if (failed(pm.run(module)))
          return failure();
        llvm::LLVMContext llvmContext;
        std::unique_ptr<llvm::Module> llvmModule =
            translateModuleToLLVMIR(module, llvmContext);
        if (!llvmModule)
          return module.emitError("translation to LLVM IR failed");
        llvmModule->setTargetTriple(
            llvm::Triple(llvm::sys::getDefaultTargetTriple()));
        llvmModule->print(os, nullptr);
        return success();
      },
      registerPkCompilerDialects);
}
