//===- LLVMIR.h - pk kernels to LLVM IR -------------------------*- C++ -*-===//

#ifndef PICOKERNEL_TARGET_LLVMIR_H
#define PICOKERNEL_TARGET_LLVMIR_H

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::pk {

/// LLVM's default O`level` pipeline for `machine`, without loop unrolling:
/// static trip counts would otherwise be unrolled fully (a 1000-element
/// kernel becomes pages of code and compiles 5x slower), while vectorization
/// and interleaving already give the loops their speed. With
/// `vectorMathLibrary` (x86 Linux, glibc's libmvec loaded into the process
/// that will run the code), math calls in loops vectorize through libmvec.
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine,
                        unsigned level, bool vectorMathLibrary);

/// Registers `--pk-to-llvmir`: runs the CPU pipeline on a module of pk
/// kernels and prints the LLVM IR (host target triple), which exports
/// `_mlir_ciface_<kernel>(descriptor *...)` for each kernel.
void registerToLLVMIRTranslation();

} // namespace mlir::pk

#endif // PICOKERNEL_TARGET_LLVMIR_H
