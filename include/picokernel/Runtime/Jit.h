//===- Jit.h - compile a pk kernel for the host CPU -------------*- C++ -*-===//
//
// A traced pk module goes through the CPU pipeline (Pipelines.h) and LLVM
// (O3, the host CPU's name and features) into machine code in this process.
// The result is called with one data pointer per distinct array.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_JIT_H
#define PICOKERNEL_RUNTIME_JIT_H

#include "picokernel/Frontend/DType.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class MLIRContext;
} // namespace mlir

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace pk {

/// The pipeline or LLVM failed on a kernel; what() has the diagnostics.
class CompileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct CompileOptions {
  /// Loop nests with at least this many iterations run on all cores
  /// (OpenMP); 0 keeps every kernel serial.
  int64_t parallelThreshold = 1 << 15;
  /// LLVM optimization level (0-3).
  unsigned optLevel = 3;
  /// Called between the pipeline's stages and before code generation: it
  /// throws to abandon the compile (Python: a KeyboardInterrupt pending
  /// after Ctrl-C). Not part of what the compile produces.
  std::function<void()> checkInterrupt;
};

/// Where the time of one compilation went.
struct CompileTimes {
  double pipelineSeconds = 0; ///< pk -> LLVM dialect (MLIR passes)
  double codegenSeconds = 0;  ///< LLVM IR, O3 and machine code
};

/// A parameter of a compiled kernel: one distinct array.
struct CompiledParam {
  Shape shape;
  DType dtype;
  bool read = false;    ///< the kernel loads it
  bool written = false; ///< the kernel stores to it
};

/// Registers and loads everything the CPU pipeline and the JIT need into
/// `context` (idempotent). Compilation calls it; calling it up front keeps
/// dialect loading out of concurrent compiles.
void prepareContextForCompilation(mlir::MLIRContext &context);

/// The stages of the CPU pipeline, in order: "pk" (as traced), "linalg",
/// "fused", "bufferized", "llvm".
const std::vector<std::string> &stageNames();

/// `module` (unchanged) lowered up to and including `stage`, as MLIR text.
/// Throws CompileError for an unknown stage or a failing pass.
std::string lowerToStage(mlir::ModuleOp module, const std::string &stage,
                         const CompileOptions &options = {});

/// A kernel compiled for some target, ready to run on arrays of the shapes
/// and dtypes it was compiled for.
class Executable {
public:
  virtual ~Executable();
  /// Runs the kernel on `data[i]`, the data of parameter i: contiguous
  /// arrays of exactly the compiled shapes and dtypes.
  virtual void run(void *const *data) const = 0;

  const std::string &name() const { return kernelName; }
  const std::vector<CompiledParam> &params() const { return parameters; }
  const CompileTimes &times() const { return compileTimes; }
  /// Whether the machine code came from the disk cache
  /// (Runtime/DiskCache.h) instead of being compiled.
  bool loadedFromDiskCache() const { return fromDiskCache; }
  /// Bytes of device memory it holds for its whole life (buffers).
  virtual uint64_t deviceBytes() const { return 0; }

protected:
  /// Reads the name and parameters of the one pk.kernel in `module`.
  void describe(mlir::ModuleOp module);

  std::string kernelName;
  std::vector<CompiledParam> parameters;
  CompileTimes compileTimes;
  bool fromDiskCache = false;
};

/// One kernel compiled to machine code for the host CPU.
class CompiledKernel : public Executable {
public:
  /// Compiles the one pk.kernel in `module`, which the pipeline rewrites in
  /// place. Throws CompileError.
  static std::unique_ptr<CompiledKernel>
  compile(mlir::ModuleOp module, const CompileOptions &options = {});
  ~CompiledKernel() override;

  void run(void *const *data) const override;

  /// Whether the kernel runs its large loops on all cores.
  bool usesThreads() const { return threaded; }
  /// Everything the disk cache key is the hash of: this build of
  /// picokernel, the LLVM version, the host CPU and its features, the
  /// options and the kernel's IR (without locations).
  static std::string cacheKeyText(mlir::ModuleOp module,
                                  const CompileOptions &options);

private:
  CompiledKernel() = default;

  /// Memref descriptors for every parameter, laid end to end: pointers and
  /// offset to patch per call, static sizes and strides filled in once.
  std::vector<int64_t> descriptorTemplate;
  std::vector<size_t> descriptorOffsets;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  /// The code when it came from the disk cache instead.
  std::unique_ptr<llvm::orc::LLJIT> loadedObject;
  void (*entry)(void **) = nullptr;
  bool threaded = false;
};

} // namespace pk

#endif // PICOKERNEL_RUNTIME_JIT_H
