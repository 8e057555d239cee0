//===- KernelNames.h - renaming kernels' symbols ----------------*- C++ -*-===//
//
// Private to the transforms; shared by pk-rename-kernel-functions and
// pk-name-c-interfaces-after-kernels.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_KERNELNAMES_H
#define PICOKERNEL_LIB_TRANSFORMS_KERNELNAMES_H

#include "mlir/IR/SymbolTable.h"

namespace mlir::pk {

/// Renames `symbol` to `name` in `symbols` and its uses; an error on
/// `symbol` where the module already has a symbol `name`.
inline LogicalResult renameUnlessTaken(SymbolTable &symbols, Operation *symbol,
                                       StringRef name) {
  if (symbols.lookup(name))
    return symbol->emitOpError("cannot be renamed '")
           << name << "': the module has a symbol of that name";
  return symbols.rename(symbol, name);
}

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_KERNELNAMES_H
