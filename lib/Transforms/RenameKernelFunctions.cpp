//===- RenameKernelFunctions.cpp - kernels under symbols no library uses --===//

#include "KernelNames.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKRENAMEKERNELFUNCTIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct RenameKernelFunctionsPass
    : public mlir::pk::impl::PkRenameKernelFunctionsBase<
          RenameKernelFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isPrivate() && !function.isExternal() &&
          function->hasAttr("llvm.emit_c_interface") &&
          !function->hasAttr(mlir::pk::kKernelNameAttrName))
        kernels.push_back(function);
    // `kernel.a` before `a`: a kernel's new name is longer than its own
    // (symbols are unique: the order is total).
    llvm::sort(kernels, [](func::FuncOp a, func::FuncOp b) {
      StringRef x = a.getSymName(), y = b.getSymName();
      return x.size() != y.size() ? x.size() > y.size() : x < y;
    });
    SymbolTable symbols(module);
    for (func::FuncOp function : kernels) {
      StringAttr name = function.getSymNameAttr();
      std::string renamed =
          (mlir::pk::kKernelSymbolPrefix + name.getValue()).str();
      if (failed(mlir::pk::renameUnlessTaken(symbols, function, renamed)))
        return signalPassFailure();
      function->setAttr(mlir::pk::kKernelNameAttrName, name);
    }
  }
};

} // namespace
