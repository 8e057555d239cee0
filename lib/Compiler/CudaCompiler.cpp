//===- CudaCompiler.cpp - pk kernels to PTX for NVIDIA GPUs ---------------===//

#include "picokernel/Compiler/CudaCompiler.h"
#include "picokernel/Compiler/Registry.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Regex.h"

using namespace mlir;

/// The first function the PTX declares but does not define (`.extern .func
/// (.param .b32 func_retval0) __nv_expf(...)`): a libdevice function that
/// the toolkit's libdevice did not provide. Empty if none.
static std::string unresolvedFunction(StringRef ptx) {
  llvm::Regex declaration("\\.extern[ \t]+\\.func[ \t]*(\\([^)]*\\))?[ \t]*"
                          "([A-Za-z_$][A-Za-z0-9_$]*)");
  SmallVector<StringRef, 3> groups;
  if (!declaration.match(ptx, &groups))
    return {};
  return groups[2].str();
}

LogicalResult mlir::pk::compileToPtx(ModuleOp module,
                                     const CudaPipelineOptions &options,
                                     std::string &ptx) {
  if (!module.getOps<gpu::GPUModuleOp>().empty())
    return module.emitError("expected pk kernels, not GPU modules: the "
                            "pipeline makes its own");
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
  if (std::string missing = unresolvedFunction(ptx); !missing.empty()) {
    ptx.clear();
    return binaries.front().emitError("the PTX calls ")
           << missing
           << ", which the toolkit's libdevice did not define (is "
              "nvvm/libdevice/libdevice.10.bc CUDA's?)";
  }
  return success();
}
