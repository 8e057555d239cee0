//===- LLVMIR.h - pk kernels to LLVM IR -------------------------*- C++ -*-===//

#ifndef PICOKERNEL_TARGET_LLVMIR_H
#define PICOKERNEL_TARGET_LLVMIR_H

namespace mlir::pk {

/// Registers `--pk-to-llvmir`: runs the CPU pipeline on a module of pk
/// kernels and prints the LLVM IR (host target triple), which exports
/// `_mlir_ciface_<kernel>(descriptor *...)` for each kernel.
void registerToLLVMIRTranslation();

} // namespace mlir::pk

#endif // PICOKERNEL_TARGET_LLVMIR_H
