//===- pk-translate.cpp - picokernel translation driver -------------------===//
//
// mlir-translate with the pk dialect and its translations to other formats.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Target/LLVMIR.h"
#include "picokernel/Target/PTX.h"
#include "picokernel/Target/PkToListing.h"
#include "picokernel/Target/PkToObject.h"
#include "picokernel/Target/SPIRV.h"
#include "picokernel/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  // --version prints picokernel's version after LLVM's.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "picokernel version " PICOKERNEL_VERSION "\n";
  });
  mlir::registerAllTranslations();
  mlir::pk::registerToListingTranslation();
  mlir::pk::registerToLLVMIRTranslation();
  mlir::pk::registerToObjectTranslations();
  mlir::pk::registerToSpirvTranslations();
  mlir::pk::registerToPtxTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "picokernel translation driver\n"));
}
