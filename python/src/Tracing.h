//===- Tracing.h - Python proxies over the C++ tracer -----------*- C++ -*-===//
//
// Inside a Python kernel, parameters are `Ref` objects and array values are
// `Value` objects. Both forward every operation to the C++ tracer
// (Frontend/Trace.h) with the Python caller's file and line: there is one
// frontend, not two.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_TRACING_H
#define PICOKERNEL_PYTHON_TRACING_H

#include "picokernel/Frontend/Trace.h"

#include <nanobind/nanobind.h>

namespace pk::python {

/// Raises a Python exception of `type` (any built-in exception class).
[[noreturn]] void raise(PyObject *type, const std::string &message);

/// The Python source location of the innermost Python frame.
SourceLoc pythonLocation();

/// Where `function` is defined (its code's file and first line), if it is a
/// Python function.
SourceLoc definitionOf(nanobind::handle function);

/// A Python object as an operand: a traced Value, a Python bool/int/float
/// (weakly typed), a NumPy scalar or 0-d array (typed), or a NumPy array (a
/// constant). Nothing if the object is none of these.
std::optional<Operand> toOperand(nanobind::handle object);

/// Registers the Ref and Value classes.
void bindTracing(nanobind::module_ &module);

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_TRACING_H
