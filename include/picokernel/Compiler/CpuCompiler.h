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

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::pk {

/// Runs the CPU pipeline on `module` in place, one stage at a time, calling
/// `beforeStage` (when given) before each stage and after the last: it may
/// throw to abandon the compile (Ctrl-C). With `lastStage` (a name from
/// cpuStageNames()), stops after that stage. Diagnostics go to the module's
/// context.
LogicalResult runCpuPipeline(ModuleOp module, const CpuPipelineOptions &options,
                             function_ref<void()> beforeStage = nullptr,
                             StringRef lastStage = {});

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
