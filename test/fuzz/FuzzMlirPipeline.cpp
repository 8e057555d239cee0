//===- FuzzMlirPipeline.cpp - fuzz the parser, verifier and CPU pipeline --===//
//
// libFuzzer target: the input is MLIR text (split at `// -----` like
// --split-input-file). Every chunk that parses and verifies and holds only
// pk kernels goes through the whole CPU pipeline and the translation to LLVM
// IR. Diagnostics are expected; crashes, sanitizer reports and hangs are
// bugs.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Dialect/Pk/IR/PkDialect.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace {

const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry instance = [] {
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

/// One chunk: parse, and when it is a module of pk kernels, compile it.
void compileChunk(std::string_view chunk) {
  // MLIR's lexer reads up to a terminating NUL, which fuzzer data lacks.
  std::string text(chunk);
  // A fresh context per input: uniqued types and attributes would otherwise
  // accumulate over millions of inputs.
  mlir::MLIRContext context(registry(), mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module || !onlyKernels(*module))
    return;
  mlir::PassManager pm(&context);
  mlir::pk::buildPkCpuPipeline(pm, {});
  if (mlir::failed(pm.run(*module)))
    return;
  llvm::LLVMContext llvmContext;
  (void)mlir::translateModuleToLLVMIR(*module, llvmContext);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  constexpr std::string_view separator = "// -----";
  while (true) {
    size_t split = input.find(separator);
    compileChunk(input.substr(0, split));
    if (split == std::string_view::npos)
      return 0;
    input.remove_prefix(split + separator.size());
  }
}
