//===- CompiledKernel.h - a pk kernel compiled for the host CPU -*- C++ -*-===//
//
// The JIT: one kernel's module through the CPU pipeline and LLVM into
// machine code in this process (or loaded from the disk cache), called with
// one data pointer per distinct array. The kernel layer (Kernel/Kernel.h)
// caches these; the options are Runtime/Jit.h's.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_COMPILEDKERNEL_H
#define PICOKERNEL_RUNTIME_COMPILEDKERNEL_H

#include "picokernel/Runtime/Executable.h"
#include "picokernel/Runtime/Jit.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::pk {
class CpuPipelineCache;
} // namespace mlir::pk

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace pk {

/// `module` (unchanged) lowered up to and including `stage` (see
/// stageNames), as text. `pipelines`: pass managers to reuse, of the
/// module's context (or null). Throws CompileError.
std::string lowerToStage(mlir::ModuleOp module, const std::string &stage,
                         const CompileOptions &options = {},
                         mlir::pk::CpuPipelineCache *pipelines = nullptr);

/// One kernel compiled to machine code for the host CPU.
class CompiledKernel : public Executable {
public:
  /// Compiles the one pk.kernel in `module`, which the pipeline rewrites in
  /// place. Throws CompileError.
  /// `pipelines`: pass managers to reuse, of the module's context (or
  /// null); not part of what the compile produces.
  static std::unique_ptr<CompiledKernel>
  compile(mlir::ModuleOp module, const CompileOptions &options = {},
          mlir::pk::CpuPipelineCache *pipelines = nullptr);
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

#endif // PICOKERNEL_RUNTIME_COMPILEDKERNEL_H
