//===- CudaCompiler.cpp - pk kernels to PTX for NVIDIA GPUs ---------------===//

#include "picokernel/Compiler/CudaCompiler.h"
#include "picokernel/Compiler/Registry.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

LogicalResult mlir::pk::compileToPtx(ModuleOp module,
                                     const CudaPipelineOptions &options,
                                     std::string &ptx) {
  prepareContextForCompilation(*module.getContext());
  CudaPipelineOptions isa;
  isa.copyOptionValuesFrom(options);
  isa.format = "isa";
  // An error reported without failing the pass (gpu-module-to-binary's
  // when CUDA_HOME holds no libdevice) fails the compile all the same.
  bool reportedError = false;
  ScopedDiagnosticHandler noteErrors(
      module.getContext(), [&](Diagnostic &diagnostic) {
        reportedError |= diagnostic.getSeverity() == DiagnosticSeverity::Error;
        return failure(); // on to the handlers before this one
      });
  PassManager pm(module.getContext());
  buildPkCudaPipeline(pm, isa);
  if (failed(pm.run(module)) || reportedError)
    return failure();
  ptx.clear();
  auto binaries = llvm::to_vector(module.getOps<gpu::BinaryOp>());
  if (binaries.empty())
    return success();
  if (binaries.size() != 1)
    return module.emitError("expected one module of GPU kernels, got ")
           << binaries.size();
  auto object = cast<gpu::ObjectAttr>(binaries.front().getObjects()[0]);
  ptx = object.getObject().getValue().str();
  return success();
}
