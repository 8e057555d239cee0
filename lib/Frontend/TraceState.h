//===- TraceState.h - the state of one trace (private) ---------*- C++ -*-===//
//
// Each trace owns a TraceState: the module being built, a builder positioned
// in the kernel body, and the open flag that makes values unusable once
// their trace has ended. The state checks that operands belong to one open
// trace and wraps IR values as traced values; the operations themselves are
// the stateless builders of OpBuilders.h. Defined in TraceState.cpp
// (parameters, loads, stores, ownership, the end of the trace).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_FRONTEND_TRACESTATE_H
#define PICOKERNEL_LIB_FRONTEND_TRACESTATE_H

#include "OpBuilders.h"
#include "picokernel/Frontend/TraceIR.h"
#include "picokernel/Support/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pk {
namespace detail {

class TraceState : public std::enable_shared_from_this<TraceState> {
public:
  TraceState(mlir::MLIRContext &context, std::string kernelName,
             const Signature &signature, const SourceLoc &where);

  /// Names become symbols and locations: no NUL, and a kernel's not empty.
  static void checkName(const std::string &what, const std::string &name,
                        const SourceLoc &where, bool mayBeEmpty = false);

  const std::string &kernelName() const { return name; }
  /// Whether the kernel's code read a size (Value::shape, Ref::shape): its
  /// trace may then depend on sizes in ways a second trace cannot see, so
  /// it is not compiled for dynamic sizes.
  bool sizesRead = false;
  const std::string &argName(unsigned index) const { return refNames[index]; }
  unsigned numRefs() const { return refNames.size(); }
  /// The trace's own context (TraceContext::Own), handed to its module.
  std::shared_ptr<mlir::MLIRContext> ownContext;
  mlir::BlockArgument refValue(unsigned index);
  mlir::pk::RefType refType(unsigned index);

  //===--------------------------------------------------------------------===//
  // Ownership: values belong to one open trace
  //===--------------------------------------------------------------------===//

  static std::shared_ptr<TraceState> &stateOf(const Value &value);

  void checkOpen(const std::string &op, const SourceLoc &where) const;

  /// The trace that the traced operands of one operation belong to.
  static TraceState &owner(std::initializer_list<const Operand *> operands,
                           const std::string &op);

  //===--------------------------------------------------------------------===//
  // Building blocks
  //===--------------------------------------------------------------------===//

  Value wrap(mlir::Value value) {
    return Value(shared_from_this(), value.getAsOpaquePointer());
  }

  /// The builder positioned at the end of the kernel body.
  mlir::OpBuilder &opBuilder() { return builder; }

  //===--------------------------------------------------------------------===//
  // Loads and stores
  //===--------------------------------------------------------------------===//

  Value load(unsigned index, const SourceLoc &where);

  void store(unsigned index, const Operand &value);

  /// `ref[index] = value`: the ref's contents with the slice replaced.
  void store(unsigned ref, const Index &index, const Operand &value);

  /// `value` checked and converted for a store into `target` (a part of
  /// ref `index` with shape `targetShape`).
  mlir::Value storable(unsigned index, const Operand &value,
                       const Shape &targetShape, const std::string &target,
                       const std::string &op);

  //===--------------------------------------------------------------------===//
  // End of the trace
  //===--------------------------------------------------------------------===//

  mlir::OwningOpRef<mlir::ModuleOp> finish(const SourceLoc &where);

  void abandon();

private:
  mlir::Block &body() { return kernel.getBody().front(); }

  std::string name;
  mlir::OpBuilder builder;
  mlir::Location kernelLoc = builder.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::pk::KernelOp kernel;
  std::vector<std::string> refNames; // per parameter
  std::vector<unsigned> refArg;      // parameter -> kernel argument
  bool open = true;
  bool hasStore = false;
};

} // namespace detail
} // namespace pk

#endif // PICOKERNEL_LIB_FRONTEND_TRACESTATE_H
