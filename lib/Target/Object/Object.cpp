//===- Object.cpp - ahead-of-time compilation at the API's edge -----------===//
//
// Target/Object.h: a pk::Module in, an object file or a C header out, and
// the diagnostics of a failure as a CompileError (PkToObject.cpp does the
// work in MLIR's terms).
//
//===----------------------------------------------------------------------===//

#include "picokernel/Target/Object.h"
#include "picokernel/Support/Diagnostics.h"
#include "picokernel/Support/ModuleIR.h"
#include "picokernel/Target/PkToObject.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace pk {
namespace {
/// The IR of `module`, or a CompileError naming `what` if it is empty.
mlir::ModuleOp nonEmpty(const Module &module, const char *what) {
  if (!module)
    throw CompileError(std::string(what) +
                       ": the module is empty (a kernel never traced)");
  return irOf(module);
}
} // namespace

std::vector<char> compileToObject(const Module &module,
                                  const ObjectOptions &options) {
  mlir::ModuleOp ir = nonEmpty(module, "compileToObject");
  DiagnosticCollector diagnostics(ir.getContext());
  llvm::SmallVector<char> object;
  if (mlir::failed(mlir::pk::compileToObject(ir, options, object)))
    throw CompileError("compileToObject: " + diagnostics.text());
  return std::vector<char>(object.begin(), object.end());
}

std::string cHeader(const Module &module) {
  mlir::ModuleOp ir = nonEmpty(module, "cHeader");
  DiagnosticCollector diagnostics(ir.getContext());
  std::string text;
  llvm::raw_string_ostream os(text);
  if (mlir::failed(mlir::pk::writeCHeader(ir, os)))
    throw CompileError("cHeader: " + diagnostics.text());
  return text;
}
} // namespace pk
