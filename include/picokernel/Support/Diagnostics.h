//===- Diagnostics.h - collect MLIR diagnostics as text ---------*- C++ -*-===//

#ifndef PICOKERNEL_SUPPORT_DIAGNOSTICS_H
#define PICOKERNEL_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace pk {

/// While alive, collects the diagnostics emitted to a context ("location:
/// message" lines) instead of printing them, so that a failure can be
/// reported as an exception carrying them.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diagnostic) {
          llvm::raw_string_ostream os(collected);
          os << diagnostic.getLocation() << ": " << diagnostic.str() << "\n";
          return mlir::success();
        }) {}

  const std::string &text() const { return collected; }

private:
  std::string collected;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace pk

#endif // PICOKERNEL_SUPPORT_DIAGNOSTICS_H
