//===- Object.h - pk kernels to object files and C headers -----*- C++ -*-===//
//
// Ahead-of-time compilation: a module of pk kernels becomes a relocatable
// object file whose only exported symbols are plain C functions, one per
// kernel, `void pk_<kernel>(const T *in..., T *out...)` over C-contiguous
// arrays of the kernel's static shapes, and a C header declaring them.
// Programs link the object with libc and libm only: no MLIR, LLVM or
// picokernel at run time (and no OpenMP runtime unless asked for).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_TARGET_OBJECT_H
#define PICOKERNEL_TARGET_OBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::pk {

struct ObjectOptions {
  /// Target triple; empty: the host's.
  std::string triple;
  /// CPU to tune and select instructions for: "host" (this machine's, the
  /// fastest code; the object then needs a CPU like it) or an LLVM CPU name
  /// such as "x86-64-v2" or "generic".
  std::string cpu = "host";
  /// Loop nests with at least this many iterations run their outermost
  /// loop through OpenMP (the program must then link libomp); 0: never.
  int64_t parallelThreshold = 0;
  unsigned optLevel = 3;
};

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

#endif // PICOKERNEL_TARGET_OBJECT_H
