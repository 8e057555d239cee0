//===- CudaCompiler.cpp - pk kernels to PTX for NVIDIA GPUs ---------------===//

#include "picokernel/Compiler/CudaCompiler.h"
#include "picokernel/Compiler/Registry.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Regex.h"

using namespace mlir;

/// The first function that `ptx` declares but does not define (a
/// libdevice function left unlinked); empty if none. Its declaration reads
/// `.extern .func (.param .b32 func_retval0) __nv_expf(...)`.
static std::string unresolvedFunction(StringRef ptx) {
  llvm::Regex declaration("\\.extern[ \t]+\\.func[ \t]*(\\([^)]*\\))?[ "
                          "\t]*([A-Za-z_$][A-Za-z0-9_$]*)");
  SmallVector<StringRef, 3> groups;
  if (!declaration.match(ptx, &groups))
    return {};
  return groups[2].str();
}

LogicalResult mlir::pk::compileToPtx(ModuleOp module,
                                     const CudaPipelineOptions &options,
                                     std::string &ptx) {
  prepareContextForCompilation(*module.getContext());
  CudaPipelineOptions isa;
  isa.copyOptionValuesFrom(options);
  isa.format = "isa";
  PassManager pm(module.getContext());
  buildPkCudaPipeline(pm, isa);
  if (failed(pm.run(module)))
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
    return binaries.front().emitError("the kernel calls ")
           << missing
           << ", a math function of CUDA's libdevice, which was not found: "
              "point CUDA_HOME (or the pipeline's toolkit option) at a CUDA "
              "toolkit (one with nvvm/libdevice/libdevice.10.bc)";
  }
  return success();
}
