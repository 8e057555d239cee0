//===- PkToSPIRV.cpp - pk kernels to SPIR-V, MSL and GLSL -----------------===//

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Config.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Support/Defaults.h"
#include "picokernel/Target/SPIRV.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

#if PK_ENABLE_SPIRV_CROSS
#include <spirv_cross/spirv_cross_c.h>
#endif

using namespace mlir;

FailureOr<std::string> mlir::pk::crossCompile(ArrayRef<uint32_t> binary,
                                              ShadingLanguage language,
                                              std::string &error) {
#if !PK_ENABLE_SPIRV_CROSS
  error = "this picokernel was built without SPIRV-Cross "
          "(PK_ENABLE_SPIRV_CROSS=OFF)";
  return failure();
#else
  spvc_context context = nullptr;
  if (spvc_context_create(&context) != SPVC_SUCCESS) {
    error = "SPIRV-Cross: cannot create a context";
    return failure();
  }
  auto fail = [&]() -> FailureOr<std::string> {
    error = std::string("SPIRV-Cross: ") +
            spvc_context_get_last_error_string(context);
    spvc_context_destroy(context);
    return failure();
  };
  spvc_parsed_ir ir = nullptr;
  if (spvc_context_parse_spirv(context, binary.data(), binary.size(), &ir) !=
      SPVC_SUCCESS)
    return fail();
  spvc_backend backend =
      language == ShadingLanguage::MSL ? SPVC_BACKEND_MSL : SPVC_BACKEND_GLSL;
  spvc_compiler compiler = nullptr;
  if (spvc_context_create_compiler(context, backend, ir,
                                   SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                   &compiler) != SPVC_SUCCESS)
    return fail();
  spvc_compiler_options options = nullptr;
  if (spvc_compiler_create_compiler_options(compiler, &options) != SPVC_SUCCESS)
    return fail();
  if (language == ShadingLanguage::MSL)
    spvc_compiler_options_set_uint(options, SPVC_COMPILER_OPTION_MSL_VERSION,
                                   SPVC_MAKE_MSL_VERSION(2, 0, 0));
  else
    spvc_compiler_options_set_uint(options, SPVC_COMPILER_OPTION_GLSL_VERSION,
                                   450);
  if (spvc_compiler_install_compiler_options(compiler, options) != SPVC_SUCCESS)
    return fail();

  // MSL holds every kernel in one source; GLSL has one entry point per
  // shader, so each kernel is compiled on its own.
  const spvc_entry_point *entryPoints = nullptr;
  size_t count = 0;
  if (spvc_compiler_get_entry_points(compiler, &entryPoints, &count) !=
      SPVC_SUCCESS)
    return fail();
  std::string text;
  for (size_t i = 0; i < (language == ShadingLanguage::MSL ? 1 : count); ++i) {
    if (language == ShadingLanguage::GLSL) {
      if (spvc_compiler_set_entry_point(compiler, entryPoints[i].name,
                                        entryPoints[i].execution_model) !=
          SPVC_SUCCESS)
        return fail();
      text += std::string("// kernel ") + entryPoints[i].name + "\n";
    }
    const char *source = nullptr;
    if (spvc_compiler_compile(compiler, &source) != SPVC_SUCCESS)
      return fail();
    text += source;
  }
  spvc_context_destroy(context);
  return text;
#endif
}

namespace {
llvm::cl::opt<int64_t>
    workgroupSizeOption("pk-workgroup-size",
                        llvm::cl::desc("Threads per workgroup for SPIR-V"),
                        llvm::cl::init(::pk::defaults::kWorkgroupSize));
llvm::cl::opt<std::string> vulkanVersionOption(
    "pk-vulkan-version",
    llvm::cl::desc("Target Vulkan version for SPIR-V (1.0 to 1.3)"),
    llvm::cl::init(::pk::defaults::kVulkanVersion));

LogicalResult toBinary(Operation *op, SmallVectorImpl<uint32_t> &binary) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  if (module.getOps<mlir::pk::KernelOp>().empty())
    return module.emitError("no pk.kernel to compile");
  mlir::pk::SpirvPipelineOptions options;
  options.workgroupSize = workgroupSizeOption;
  options.vulkanVersion = vulkanVersionOption;
  if (failed(mlir::pk::compileToSpirv(module, options, binary)))
    return failure();
  if (binary.empty())
    return module.emitError("the kernel has no loop nest to run on the GPU "
                            "(it only copies arrays)");
  return success();
}

LogicalResult toSource(Operation *op, llvm::raw_ostream &os,
                       mlir::pk::ShadingLanguage language) {
  SmallVector<uint32_t> binary;
  if (failed(toBinary(op, binary)))
    return failure();
  std::string error;
  FailureOr<std::string> source =
      mlir::pk::crossCompile(binary, language, error);
  if (failed(source))
    return op->emitError(error);
  os << *source;
  return success();
}
} // namespace

void mlir::pk::registerToSpirvTranslations() {
  TranslateFromMLIRRegistration spirvRegistration(
      "pk-to-spirv", "compile pk kernels to a SPIR-V binary for Vulkan",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        SmallVector<uint32_t> binary;
        if (failed(toBinary(op, binary)))
          return failure();
        os.write(reinterpret_cast<const char *>(binary.data()),
                 binary.size() * sizeof(uint32_t));
        return success();
      },
      mlir::pk::registerPkCompilerDialects);
  if (!PK_ENABLE_SPIRV_CROSS)
    return; // no MSL or GLSL without SPIRV-Cross
  TranslateFromMLIRRegistration mslRegistration(
      "pk-to-msl", "compile pk kernels to Metal Shading Language",
      [](Operation *op, llvm::raw_ostream &os) {
        return toSource(op, os, ShadingLanguage::MSL);
      },
      mlir::pk::registerPkCompilerDialects);
  TranslateFromMLIRRegistration glslRegistration(
      "pk-to-glsl", "compile pk kernels to GLSL compute shaders",
      [](Operation *op, llvm::raw_ostream &os) {
        return toSource(op, os, ShadingLanguage::GLSL);
      },
      mlir::pk::registerPkCompilerDialects);
}
