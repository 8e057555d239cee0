//===- PkToPTX.cpp - pk kernels to PTX for NVIDIA GPUs --------------------===//

#include "picokernel/Compiler/CudaCompiler.h"
#include "picokernel/Compiler/Registry.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Target/PTX.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

namespace {
llvm::cl::opt<unsigned>
    smOption("sm",
             llvm::cl::desc("NVIDIA architecture for PTX, as sm_<N> (80: "
                            "Ampere; 90: Hopper; 0: the pipeline's default)"),
             llvm::cl::init(0));
llvm::cl::opt<unsigned> ptxVersionOption(
    "ptx-version",
    llvm::cl::desc("PTX ISA version times ten (80: PTX 8.0; 0: the oldest "
                   "that the architecture allows)"),
    llvm::cl::init(0));

LogicalResult toPtx(Operation *op, llvm::raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  if (module.getOps<mlir::pk::KernelOp>().empty())
    return module.emitError("no pk.kernel to compile");
  mlir::pk::CudaPipelineOptions options;
  if (smOption != 0)
    options.chip = "sm_" + std::to_string(smOption);
  options.ptxVersion = ptxVersionOption;
  std::string ptx;
  if (failed(mlir::pk::compileToPtx(module, options, ptx)))
    return failure();
  if (ptx.empty())
    return module.emitError("the kernel has no loop nest to run on the GPU "
                            "(it only copies arrays)");
  os << ptx;
  return success();
}
} // namespace

void mlir::pk::registerToPtxTranslation() {
  TranslateFromMLIRRegistration registration(
      "pk-to-ptx", "compile pk kernels to PTX for NVIDIA GPUs", toPtx,
      mlir::pk::registerPkCompilerDialects);
}
