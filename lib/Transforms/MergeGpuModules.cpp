//===- MergeGpuModules.cpp - every outlined kernel in one gpu.module ------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKMERGEGPUMODULES
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// `name` with every character outside [A-Za-z0-9_$] replaced by '_', and
/// a leading digit prefixed by one: a C identifier (almost), as PTX wants.
std::string identifierFor(StringRef name) {
  std::string legal;
  for (char c : name)
    legal += llvm::isAlnum(c) || c == '_' || c == '$' ? c : '_';
  if (legal.empty() || llvm::isDigit(legal.front()))
    legal.insert(legal.begin(), '_');
  return legal;
}

struct MergeGpuModulesPass
    : public mlir::pk::impl::PkMergeGpuModulesBase<MergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty())
      return;
    gpu::GPUModuleOp target = gpuModules.front();
    SymbolTable symbols(target);
    // Where each kernel went, for the launches.
    DenseMap<SymbolRefAttr, SymbolRefAttr> moved;
    auto record = [&](StringAttr from, StringAttr oldName, StringAttr newName) {
      if (from == target.getSymNameAttr() && oldName == newName)
        return;
      moved[SymbolRefAttr::get(from, {FlatSymbolRefAttr::get(oldName)})] =
          SymbolRefAttr::get(target.getSymNameAttr(),
                             {FlatSymbolRefAttr::get(newName)});
    };
    // Names outlining derived from the function's, which may be any string
    // ("<lambda>_kernel"): identifiers, which every device target accepts.
    for (Operation &op :
         llvm::make_early_inc_range(target.getBody()->getOperations())) {
      if (!isa<SymbolOpInterface>(op))
        continue;
      StringAttr oldName = SymbolTable::getSymbolName(&op);
      std::string legal = identifierFor(oldName.getValue());
      if (legal == oldName.getValue())
        continue;
      symbols.remove(&op);
      SymbolTable::setSymbolName(&op, legal);
      record(target.getSymNameAttr(), oldName, symbols.insert(&op));
    }
    for (gpu::GPUModuleOp other : ArrayRef(gpuModules).drop_front()) {
      for (Operation &op :
           llvm::make_early_inc_range(other.getBody()->getOperations())) {
        // (Outlining puts only the kernel in a module; anything else, such
        // as a declaration, moves along the same way.)
        if (!isa<SymbolOpInterface>(op))
          continue;
        StringAttr oldName = SymbolTable::getSymbolName(&op);
        op.remove();
        SymbolTable::setSymbolName(&op, identifierFor(oldName.getValue()));
        StringAttr newName = symbols.insert(&op); // renamed if taken
        record(other.getSymNameAttr(), oldName, newName);
      }
      other.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr newRef = moved.lookup(launch.getKernel()))
        launch.setKernelAttr(newRef);
    });
  }
};

} // namespace
