//===- Errors.h - C++ exceptions as Python exceptions -----------*- C++ -*-===//
//
// picokernel's exceptions (TraceError, ArgumentError, CompileError,
// VulkanError) as the Python exceptions a NumPy user expects, for nanobind's
// bound functions and for the code of a type slot, which nanobind does not
// wrap.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_ERRORS_H
#define PICOKERNEL_PYTHON_ERRORS_H

#include <nanobind/nanobind.h>

#include <exception>

namespace pk::python {

/// nanobind's exception translator for picokernel's exceptions (rethrows
/// any other, for the next translator).
void translateErrors(const std::exception_ptr &error, void *);

/// Sets the Python exception for the C++ exception being handled, as
/// nanobind does for a bound function: for code outside one (a type slot).
void raisePythonError();

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_ERRORS_H
