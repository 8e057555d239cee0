//===- TraceIR.h - traced values and modules as MLIR IR ---------*- C++ -*-===//
//
// The public API (Trace.h) holds traced values behind opaque handles so
// that embedders need no MLIR headers; picokernel's own layers and the
// Python bindings reach their IR and the contexts traces are recorded in
// here (and modules' IR through Support/ModuleIR.h, which this includes).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_FRONTEND_TRACEIR_H
#define PICOKERNEL_FRONTEND_TRACEIR_H

#include "picokernel/Frontend/Trace.h"
#include "picokernel/Support/ModuleIR.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Value.h"

#include <memory>
#include <string>

namespace pk {

/// The context pk::trace uses when none is given: one per process.
mlir::MLIRContext &defaultContext();
/// A context for one module (TraceContext::Own), with the pk dialect.
std::shared_ptr<mlir::MLIRContext> newOwnContext();
/// The context `kind` names: the shared one, or `own`, made on first use.
mlir::MLIRContext &contextFor(TraceContext kind,
                              std::shared_ptr<mlir::MLIRContext> &own);

/// The IR of a traced value; valid while the trace that made it is open.
mlir::Value irOf(const Value &value);

namespace detail {
/// A trace begun in a given context, for a Tracer to drive.
struct StartedTrace {
  std::shared_ptr<TraceState> state;
};
} // namespace detail

/// A trace recorded in `context`, for the layers that keep contexts of
/// their own (the kernel cache's compile contexts):
/// `Tracer tracer(startTrace(context, ...), where)`.
detail::StartedTrace startTrace(mlir::MLIRContext &context, std::string name,
                                const Signature &signature,
                                const SourceLoc &where);

} // namespace pk

#endif // PICOKERNEL_FRONTEND_TRACEIR_H
