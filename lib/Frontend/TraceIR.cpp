//===- TraceIR.cpp - the contexts traces live in, values' IR --------------===//
//
// Frontend/TraceIR.h: the shared and per-module contexts, traces begun in
// a given context, and the IR behind a traced value's opaque handle.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"

#include "picokernel/Frontend/TraceIR.h"
#include "picokernel/Support/SharedContext.h"

namespace pk {

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

mlir::MLIRContext &defaultContext() {
  // Never destroyed: modules handed out may outlive static destruction.
  static mlir::MLIRContext *context = [] {
    // Shared by threads, starting none (see Support/SharedContext.h).
    auto *created =
        new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    shareWithoutThreads(*created);
    created->loadDialect<mlir::pk::PkDialect>();
    return created;
  }();
  return *context;
}

std::shared_ptr<mlir::MLIRContext> newOwnContext() {
  auto context = std::make_shared<mlir::MLIRContext>(
      mlir::MLIRContext::Threading::DISABLED);
  // One module may be read by several threads at once (const pk::Module&).
  shareWithoutThreads(*context);
  context->loadDialect<mlir::pk::PkDialect>();
  return context;
}

mlir::MLIRContext &contextFor(TraceContext kind,
                              std::shared_ptr<mlir::MLIRContext> &own) {
  if (kind == TraceContext::Shared)
    return defaultContext();
  if (!own)
    own = newOwnContext();
  return *own;
}

detail::StartedTrace startTrace(mlir::MLIRContext &context, std::string name,
                                const Signature &signature,
                                const SourceLoc &where) {
  return {std::make_shared<detail::TraceState>(context, std::move(name),
                                               signature, where)};
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

struct detail::ValueAccess {
  static const void *ir(const Value &value) { return value.ir; }
};

mlir::Value irOf(const Value &value) {
  return mlir::Value::getFromOpaquePointer(detail::ValueAccess::ir(value));
}

} // namespace pk
