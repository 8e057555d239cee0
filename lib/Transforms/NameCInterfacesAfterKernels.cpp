//===- NameCInterfacesAfterKernels.cpp - C interfaces by kernel name ------===//

#include "KernelNames.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKNAMECINTERFACESAFTERKERNELS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kInterfacePrefix = "_mlir_ciface_";

struct NameCInterfacesAfterKernelsPass
    : public mlir::pk::impl::PkNameCInterfacesAfterKernelsBase<
          NameCInterfacesAfterKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (function->hasAttr(mlir::pk::kKernelNameAttrName))
        kernels.push_back(function);
    for (LLVM::LLVMFuncOp function : kernels) {
      auto name =
          function->getAttrOfType<StringAttr>(mlir::pk::kKernelNameAttrName);
      function->removeAttr(mlir::pk::kKernelNameAttrName);
      if (!name)
        continue;
      Operation *interface =
          symbols.lookup((kInterfacePrefix + function.getSymName()).str());
      if (!interface)
        continue;
      interface->removeAttr(mlir::pk::kKernelNameAttrName);
      std::string renamed = (kInterfacePrefix + name.getValue()).str();
      if (failed(mlir::pk::renameUnlessTaken(symbols, interface, renamed)))
        return signalPassFailure();
    }
  }
};

} // namespace
