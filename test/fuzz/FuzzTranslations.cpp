//===- FuzzTranslations.cpp - fuzz the translations out of pk -------------===//
//
// libFuzzer target: the input is MLIR text (split at `// -----`). Every
// chunk that parses into a module of pk kernels goes through each
// translation pk-translate offers: the C header, an object file for a
// generic x86-64 CPU, SPIR-V for Vulkan (serialized and validated by the
// serializer's own checks), and Metal Shading Language and GLSL through
// SPIRV-Cross. Diagnostics are expected; crashes, sanitizer reports and
// hangs are bugs.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Dialect/Pk/IR/PkDialect.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Target/Object.h"
#include "picokernel/Target/SPIRV.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace {

const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry instance = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::DialectRegistry r;
    r.insert<mlir::pk::PkDialect>();
    mlir::registerAllDialects(r);
    mlir::registerAllExtensions(r);
    mlir::registerAllToLLVMIRTranslations(r);
    return r;
  }();
  return instance;
}

bool onlyKernels(mlir::ModuleOp module) {
  for (mlir::Operation &op : module.getBody()->getOperations())
    if (!mlir::isa<mlir::pk::KernelOp>(op))
      return false;
  return !module.getBody()->empty();
}

void translateChunk(std::string_view chunk) {
  std::string text(chunk); // the lexer reads to a NUL fuzzer data lacks
  mlir::MLIRContext context(registry(), mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module || !onlyKernels(*module))
    return;

  std::string header;
  llvm::raw_string_ostream headerStream(header);
  (void)mlir::pk::writeCHeader(*module, headerStream);

  mlir::pk::ObjectOptions objectOptions;
  objectOptions.cpu = "x86-64";
  llvm::SmallVector<char> object;
  (void)mlir::pk::compileToObject(*module, objectOptions, object);

  // SPIR-V compiles the module in place: last.
  llvm::SmallVector<uint32_t> binary;
  if (mlir::failed(
          mlir::pk::compileToSpirv(*module, mlir::pk::SpirvPipelineOptions(),
                                   binary)) ||
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
  std::string_view input(reinterpret_cast<const char *>(data), size);
  constexpr std::string_view separator = "// -----";
  while (true) {
    size_t split = input.find(separator);
    translateChunk(input.substr(0, split));
    if (split == std::string_view::npos)
      return 0;
    input.remove_prefix(split + separator.size());
  }
}
