//===- CpuCompiler.h - pk kernels to LLVM IR and objects -------*- C++ -*-===//
//
// The CPU half of the compile driver, shared by the JIT (Runtime/Jit.h) and
// the ahead-of-time object compiler (Target/Object.h): the CPU pipeline run
// stage by stage, translation to LLVM IR for a target machine, picokernel's
// LLVM optimization pipeline, and object code emission.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_COMPILER_CPUCOMPILER_H
#define PICOKERNEL_COMPILER_CPUCOMPILER_H

#include "picokernel/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
class PassManager;
} // namespace mlir

namespace mlir::pk {

/// Initialized pass managers of the CPU pipeline's stages, kept for later
/// compiles in one context: building a stage's passes (above all the
/// canonicalizers' pattern sets) took about a third of a small kernel's
/// pipeline time. Thread-safe: a compile takes a stage's pass manager out
/// (or builds one) and gives it back after running it. Destroy the cache
/// before its context.
class CpuPipelineCache {
public:
  explicit CpuPipelineCache(MLIRContext &context);
  ~CpuPipelineCache();
  CpuPipelineCache(const CpuPipelineCache &) = delete;
  CpuPipelineCache &operator=(const CpuPipelineCache &) = delete;

  /// The context whose pass managers this cache keeps.
  MLIRContext &getContext() const { return context; }
  /// A pass manager for `stage` with `options` (its key, from stageKey()),
  /// or null when none is idle.
  std::unique_ptr<PassManager> take(const std::string &key);
  /// Keeps `pm` for the next compile with the same key.
  void giveBack(const std::string &key, std::unique_ptr<PassManager> pm);

private:
  MLIRContext &context;
  std::mutex mutex;
  std::map<std::string, std::vector<std::unique_ptr<PassManager>>> idle;
};

/// Runs the CPU pipeline on `module` in place, one stage at a time, calling
/// `beforeStage` (when given) before each stage and after the last: it may
/// throw to abandon the compile (Ctrl-C). With `lastStage` (a name from
/// cpuStageNames()), stops after that stage. Diagnostics go to the module's
/// context. With `cache` (of the module's context), the stages' pass
/// managers are reused across compiles.
LogicalResult runCpuPipeline(ModuleOp module, const CpuPipelineOptions &options,
                             function_ref<void()> beforeStage = nullptr,
                             StringRef lastStage = {},
                             CpuPipelineCache *cache = nullptr);

/// `module`, lowered to the LLVM dialect, as LLVM IR for `machine` (its
/// triple and data layout set), or null after a diagnostic.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context,
                                                llvm::TargetMachine &machine);

/// LLVM's default O`level` pipeline for `machine`, without loop unrolling:
/// static trip counts would otherwise be unrolled fully (a 1000-element
/// kernel becomes pages of code and compiles 5x slower), while vectorization
/// and interleaving already give the loops their speed. With
/// `vectorMathLibrary` (x86 Linux, glibc's libmvec loaded into the process
/// that will run the code), math calls in loops vectorize through libmvec.
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine,
                        unsigned level, bool vectorMathLibrary);

/// `module`'s machine code for `machine`, as a relocatable object file.
LogicalResult emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine,
                             SmallVectorImpl<char> &object);

} // namespace mlir::pk

#endif // PICOKERNEL_COMPILER_CPUCOMPILER_H
