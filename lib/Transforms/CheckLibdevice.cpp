//===- CheckLibdevice.cpp - CUDA's libdevice where math calls it ----------===//

#include "picokernel/Support/Environment.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKCHECKLIBDEVICE
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct CheckLibdevicePass
    : public mlir::pk::impl::PkCheckLibdeviceBase<CheckLibdevicePass> {
  using PkCheckLibdeviceBase::PkCheckLibdeviceBase;

  /// libdevice is linked in when the kernels are serialized, from the
  /// toolkit: without it, its functions would stay unresolved.
  void runOnOperation() override {
    LLVM::CallOp firstCall;
    getOperation().walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && callee->starts_with("__nv_") && !firstCall)
        firstCall = call;
    });
    if (!firstCall)
      return;
    std::string root =
        toolkit.empty() ? ::pk::cudaToolkitPath() : std::string(toolkit);
    SmallString<128> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (!root.empty() && llvm::sys::fs::is_regular_file(libdevice))
      return;
    InFlightDiagnostic diagnostic =
        firstCall.emitError("the kernel calls ")
        << *firstCall.getCallee()
        << ", a math function of CUDA's libdevice, which was not found";
    if (root.empty())
      diagnostic << ": no CUDA toolkit (CUDA_ROOT, CUDA_HOME, CUDA_PATH, "
                    "/usr/local/cuda)";
    else
      diagnostic << " at " << libdevice;
    signalPassFailure();
  }
};

} // namespace
