//===- Module.cpp - traced modules, held for the caller -------------------===//
//
// pk::Module (Support/Module.h) and the MLIR module it holds
// (Support/ModuleIR.h), and printing it.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Support/ModuleIR.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

namespace pk {

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module::Module() = default;
Module::~Module() = default;
Module::Module(Module &&) noexcept = default;
Module &Module::operator=(Module &&) noexcept = default;

Module::operator bool() const { return storage && storage->module; }

Module wrapModule(mlir::OwningOpRef<mlir::ModuleOp> module,
                  std::shared_ptr<mlir::MLIRContext> ownContext) {
  auto storage = std::make_unique<detail::ModuleStorage>();
  storage->ownContext = std::move(ownContext);
  storage->module = std::move(module);
  return detail::ModuleAccess::make(std::move(storage));
}

mlir::ModuleOp irOf(const Module &module) {
  detail::ModuleStorage *storage = detail::ModuleAccess::storage(module);
  return storage ? storage->module.get() : mlir::ModuleOp();
}

mlir::OwningOpRef<mlir::ModuleOp> takeIR(Module &&module) {
  detail::ModuleStorage *storage = detail::ModuleAccess::storage(module);
  if (!storage)
    return nullptr;
  assert(!storage->ownContext && "the module's context would go with it");
  return std::move(storage->module);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

std::string printModule(mlir::ModuleOp module, bool withLocations) {
  if (!module)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.printNameLocAsPrefix(true);
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/true);
  module->print(os, flags);
  return text;
}

std::string printModule(const Module &module, bool withLocations) {
  return printModule(irOf(module), withLocations);
}

} // namespace pk
