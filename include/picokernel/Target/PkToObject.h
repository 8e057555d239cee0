//===- PkToObject.h - pk kernels to object files, in MLIR terms -*- C++ -*-===//
//
// The ahead-of-time compiler behind pk::compileToObject and pk::cHeader
// (Target/Object.h, which describes the objects) and pk-translate's
// --pk-to-object and --pk-to-c-header: failures are diagnostics on the
// module's context.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_TARGET_PKTOOBJECT_H
#define PICOKERNEL_TARGET_PKTOOBJECT_H

#include "picokernel/Target/Object.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::pk {

using ObjectOptions = ::pk::ObjectOptions;

/// Compiles every pk.kernel in `module` into an ELF object file, written to
/// `object`. `module` is not modified (a copy is compiled in a private
/// context); diagnostics go to `module`'s context.
LogicalResult compileToObject(ModuleOp module, const ObjectOptions &options,
                              SmallVectorImpl<char> &object);

/// The C header declaring the entry points of the pk kernels in `module`
/// (before compilation), with each array's shape and dtype.
LogicalResult writeCHeader(ModuleOp module, llvm::raw_ostream &os);

/// Registers `--pk-to-object` and `--pk-to-c-header` (with the
/// `--pk-object-cpu` and `--pk-object-parallel-threshold` options).
void registerToObjectTranslations();

} // namespace mlir::pk

#endif // PICOKERNEL_TARGET_PKTOOBJECT_H
