//===- Diagnostics.h - collect MLIR diagnostics as text ---------*- C++ -*-===//
//
// A DiagnosticCollector takes the diagnostics its thread emits in a context
// while it lives, as text for an exception's message. Contexts are shared
// by threads (the process's tracing context): another thread's diagnostics
// pass on to that thread's own collector, further down the context's stack
// of handlers (the engine calls handlers under its lock).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_DIAGNOSTICS_H
#define PICOKERNEL_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <thread>

namespace pk {

/// While alive, collects the diagnostics its thread emits to a context
/// ("location: message" lines) instead of printing them, so that a failure
/// can be reported as an exception carrying them.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diagnostic) {
          if (std::this_thread::get_id() != thread)
            return mlir::failure(); // another thread's
          llvm::raw_string_ostream os(collected);
          os << diagnostic.getLocation() << ": " << diagnostic.str() << "\n";
          return mlir::success();
        }) {}

  const std::string &text() const { return collected; }

private:
  std::string collected;
  std::thread::id thread = std::this_thread::get_id();
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace pk

#endif // PICOKERNEL_SUPPORT_DIAGNOSTICS_H
