//===- FuzzTranslations.cpp - fuzz the translations out of pk -------------===//
//
// libFuzzer target: the input is MLIR text (split at `// -----`). Every
// chunk that parses into a module of pk kernels goes through each
// translation pk-translate offers: the C header, an object file for a
// generic x86-64 CPU, PTX for NVIDIA GPUs, SPIR-V for Vulkan (serialized and
// validated by the serializer's own checks), and Metal Shading Language and
// GLSL through SPIRV-Cross. Diagnostics are expected; crashes, sanitizer
// reports and hangs are bugs.
//
//===----------------------------------------------------------------------===//

#include "MlirChunks.h"

#include "picokernel/Compiler/CudaCompiler.h"
#include "picokernel/Target/PkToObject.h"
#include "picokernel/Target/SPIRV.h"

#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace {

void translate(mlir::ModuleOp module) {
  std::string header;
  llvm::raw_string_ostream headerStream(header);
  (void)mlir::pk::writeCHeader(module, headerStream);

  mlir::pk::ObjectOptions objectOptions;
  objectOptions.cpu = "x86-64";
  llvm::SmallVector<char> object;
  (void)mlir::pk::compileToObject(module, objectOptions, object);

  // PTX and SPIR-V compile the module in place: PTX a copy, SPIR-V last.
  {
    mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
    std::string ptx;
    (void)mlir::pk::compileToPtx(*copy, mlir::pk::CudaPipelineOptions(), ptx);
  }

  llvm::SmallVector<uint32_t> binary;
  if (mlir::failed(mlir::pk::compileToSpirv(
          module, mlir::pk::SpirvPipelineOptions(), binary)) ||
      binary.empty())
    return;
  for (auto language :
       {mlir::pk::ShadingLanguage::MSL, mlir::pk::ShadingLanguage::GLSL}) {
    std::string error;
    (void)mlir::pk::crossCompile(binary, language, error);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const bool targets = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)targets;
  pk::fuzz::forEachKernelModule(data, size, translate);
  return 0;
}
