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

#include "picokernel/Support/CompileError.h"
#include "picokernel/Support/Module.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pk {

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

/// The object file (ELF) of every kernel in `module`, which is not
/// modified. Throws CompileError (a kernel the C ABI cannot take, an
/// unknown CPU or triple, a failing pass).
std::vector<char> compileToObject(const Module &module,
                                  const ObjectOptions &options = {});

/// The C header declaring the object's `pk_<kernel>` functions, with each
/// array's shape and dtype. Throws CompileError.
std::string cHeader(const Module &module);

} // namespace pk

#endif // PICOKERNEL_TARGET_OBJECT_H
