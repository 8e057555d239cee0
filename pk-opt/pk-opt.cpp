//===- pk-opt.cpp - picokernel optimizer driver ---------------------------===//
//
// mlir-opt with the pk dialect: parses, verifies, transforms and prints pk
// and upstream IR, and runs the named picokernel pipelines.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Conversion/Passes.h"
#include "picokernel/Dialect/Pk/Transforms/Passes.h"
#include "picokernel/Pipelines/Pipelines.h"
#include "picokernel/Transforms/Passes.h"
#include "picokernel/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  // --version prints picokernel's version after LLVM's.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "picokernel version " PICOKERNEL_VERSION "\n";
  });
  mlir::registerAllPasses();
  mlir::pk::registerPkTransformsPasses();
  mlir::pk::registerPkConversionPasses();
  mlir::pk::registerPkLoweringPasses();
  mlir::pk::registerPkPipelines();

  mlir::DialectRegistry registry;
  mlir::pk::registerPkCompilerDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "picokernel optimizer driver\n", registry));
}
