//===- Executable.h - a kernel compiled for some target ---------*- C++ -*-===//
//
// What every runtime gives back from a compile: an Executable that runs on
// arrays of the shapes and dtypes it was compiled for, with its parameters,
// where the compile time went and whether the code came from the disk
// cache. The kernel layer (Kernel/Kernel.h) caches Executables.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_EXECUTABLE_H
#define PICOKERNEL_RUNTIME_EXECUTABLE_H

#include "picokernel/Compiler/KernelSignature.h"
#include "picokernel/Support/CompileError.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace pk {

/// The pipeline or LLVM failed on a kernel; what() has the diagnostics.
/// Where the time of one compilation went.
struct CompileTimes {
  double pipelineSeconds = 0; ///< pk -> LLVM dialect (MLIR passes)
  double codegenSeconds = 0;  ///< LLVM IR, O3 and machine code
};

/// A kernel compiled for some target, ready to run on arrays of the shapes
/// and dtypes it was compiled for.
class Executable {
public:
  virtual ~Executable();
  /// Runs the kernel on `data[i]`, the data of parameter i: contiguous
  /// arrays of the compiled dtypes and shapes, whose dynamic sizes are
  /// `shapes[i]` (one size per dimension; null for a static kernel).
  virtual void run(void *const *data, const int64_t *const *shapes) const = 0;
  /// Whether some parameter has a dynamic (`?`) size.
  bool hasDynamicSizes() const;

  const std::string &name() const { return signature.name; }
  const std::vector<CompiledParam> &params() const { return signature.params; }
  const CompileTimes &times() const { return compileTimes; }
  /// Whether the machine code came from the disk cache
  /// (Runtime/DiskCache.h) instead of being compiled.
  bool loadedFromDiskCache() const { return fromDiskCache; }
  /// Bytes of device memory it holds for its whole life (buffers).
  virtual uint64_t deviceBytes() const { return 0; }

protected:
  /// Reads the signature of the one pk.kernel in `module`; throws
  /// CompileError if there is not exactly one.
  void describe(mlir::ModuleOp module);

  KernelSignature signature;
  CompileTimes compileTimes;
  bool fromDiskCache = false;
};

} // namespace pk

#endif // PICOKERNEL_RUNTIME_EXECUTABLE_H
