//===- ModuleIR.h - the MLIR module a pk::Module holds ----------*- C++ -*-===//
//
// The public API holds traced modules behind pk::Module (Support/Module.h)
// so that embedders need no MLIR headers; picokernel's own layers and the
// Python bindings make and read them here.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_MODULEIR_H
#define PICOKERNEL_SUPPORT_MODULEIR_H

#include "picokernel/Support/Module.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>

namespace pk {

namespace detail {
struct ModuleStorage {
  /// The module's own context, or null (it lives in one the caller keeps);
  /// declared first, so that it outlives the module.
  std::shared_ptr<mlir::MLIRContext> ownContext;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

struct ModuleAccess {
  static ModuleStorage *storage(const Module &module) {
    return module.storage.get();
  }
  static Module make(std::unique_ptr<ModuleStorage> storage) {
    Module module;
    module.storage = std::move(storage);
    return module;
  }
};
} // namespace detail

/// `module` held as a pk::Module; `ownContext`, if given, is the context it
/// lives in, freed with it.
Module wrapModule(mlir::OwningOpRef<mlir::ModuleOp> module,
                  std::shared_ptr<mlir::MLIRContext> ownContext = nullptr);
/// The IR of `module`; null for an empty Module. Valid while `module` is.
mlir::ModuleOp irOf(const Module &module);
/// The IR `module` holds, taken out of it; `module` must live in a context
/// the caller keeps (not one of its own).
mlir::OwningOpRef<mlir::ModuleOp> takeIR(Module &&module);

/// The module as MLIR text, parameters named as in the signature.
std::string printModule(mlir::ModuleOp module, bool withLocations = false);

} // namespace pk

#endif // PICOKERNEL_SUPPORT_MODULEIR_H
