//===- CudaCompiler.h - pk kernels to PTX for NVIDIA GPUs -------*- C++ -*-===//
//
// The NVIDIA half of the GPU compile driver: the CUDA pipeline turns a pk
// kernel into GPU kernels compiled to PTX (one module, one entry point per
// launch) and a host function that launches them.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_COMPILER_CUDACOMPILER_H
#define PICOKERNEL_COMPILER_CUDACOMPILER_H

#include "picokernel/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::pk {

/// Compiles the pk kernels in `module` (rewritten in place: the host
/// functions and a gpu.binary remain) with the CUDA pipeline and returns
/// their PTX in `ptx`, every kernel in one PTX module; `ptx` stays empty
/// when nothing runs on the GPU (the kernels only copy whole arrays).
/// `options.format` is ignored (PTX is text). A kernel calling a math
/// function needs CUDA's libdevice (`options.toolkit`, or the toolkit that
/// pk::cudaToolkitPath finds): without it, an error names the function.
/// Diagnostics go to the module's context; any error fails the compile.
LogicalResult compileToPtx(ModuleOp module, const CudaPipelineOptions &options,
                           std::string &ptx);

} // namespace mlir::pk

#endif // PICOKERNEL_COMPILER_CUDACOMPILER_H
