//===- Jit.h - compile a pk kernel for the host CPU -------------*- C++ -*-===//
//
// A traced pk module goes through the CPU pipeline (Pipelines.h) and LLVM
// (O3, the host CPU's name and features) into machine code in this process.
// The result is called with one data pointer per distinct array.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_JIT_H
#define PICOKERNEL_RUNTIME_JIT_H

#include "picokernel/Runtime/Executable.h"
#include "picokernel/Support/Defaults.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class MLIRContext;
} // namespace mlir

namespace mlir::pk {
class CpuPipelineCache;
} // namespace mlir::pk

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace pk {

struct CompileOptions {
  /// Loop nests with at least this many iterations run on all cores
  /// (OpenMP); 0 keeps every kernel serial. pk::Kernel rejects negative
  /// values (std::invalid_argument).
  int64_t parallelThreshold = defaults::kParallelThreshold;
  /// LLVM optimization level (0-3).
  unsigned optLevel = defaults::kOptLevel;
  /// Called between the pipeline's stages and before code generation: it
  /// throws to abandon the compile (Python: a KeyboardInterrupt pending
  /// after Ctrl-C). Not part of what the compile produces.
  std::function<void()> checkInterrupt;
  /// Pass managers to reuse, of the module's context (or null). Not part
  /// of what the compile produces.
  mlir::pk::CpuPipelineCache *pipelines = nullptr;
};

/// The stages of the CPU pipeline, in order: "pk" (as traced), "linalg",
/// "fused", "tiled", "bufferized", "llvm" (MLIR's LLVM dialect), then
/// "llvmir" (LLVM IR as LLVM optimizes it for this CPU) and "asm" (this
/// CPU's assembly), as the JIT compiles the kernel.
const std::vector<std::string> &stageNames();

/// `module` (unchanged) lowered up to and including `stage`, as MLIR text
/// (LLVM IR or assembly for the last two stages).
/// Throws CompileError for an unknown stage or a failing pass.
std::string lowerToStage(mlir::ModuleOp module, const std::string &stage,
                         const CompileOptions &options = {});

/// One kernel compiled to machine code for the host CPU.
class CompiledKernel : public Executable {
public:
  /// Compiles the one pk.kernel in `module`, which the pipeline rewrites in
  /// place. Throws CompileError.
  static std::unique_ptr<CompiledKernel>
  compile(mlir::ModuleOp module, const CompileOptions &options = {});
  ~CompiledKernel() override;

  void run(void *const *data, const int64_t *const *shapes) const override;

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
  /// The parameters with dynamic sizes: their sizes and strides are filled
  /// in per call.
  std::vector<size_t> dynamicParams;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  /// The code when it came from the disk cache instead.
  std::unique_ptr<llvm::orc::LLJIT> loadedObject;
  void (*entry)(void **) = nullptr;
  bool threaded = false;
};

} // namespace pk

#endif // PICOKERNEL_RUNTIME_JIT_H
