//===- Jit.h - how kernels compile for the host CPU -------------*- C++ -*-===//
//
// A traced pk module goes through the CPU pipeline (Pipelines.h) and LLVM
// (O3, the host CPU's name and features) into machine code in this process
// (Runtime/CompiledKernel.h). This is what an embedder sets and sees of it:
// the options and the module lowered to each stage as text.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_JIT_H
#define PICOKERNEL_RUNTIME_JIT_H

#include "picokernel/Support/CompileError.h"
#include "picokernel/Support/Defaults.h"
#include "picokernel/Support/Module.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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
};

/// The stages of the CPU pipeline, in order: "pk" (as traced), "linalg",
/// "fused", "tiled", "bufferized", "llvm" (MLIR's LLVM dialect), then
/// "llvmir" (LLVM IR as LLVM optimizes it for this CPU) and "asm" (this
/// CPU's assembly), as the JIT compiles the kernel.
const std::vector<std::string> &stageNames();

/// `module` (unchanged) lowered up to and including `stage`, as MLIR text
/// (LLVM IR or assembly for the last two stages).
/// Throws CompileError for an unknown stage or a failing pass.
std::string lowerToStage(const Module &module, const std::string &stage,
                         const CompileOptions &options = {});

} // namespace pk

#endif // PICOKERNEL_RUNTIME_JIT_H
