//===- Introspection.h - tracing and lowering without a kernel --*- C++ -*-===//

#ifndef PICOKERNEL_PYTHON_INTROSPECTION_H
#define PICOKERNEL_PYTHON_INTROSPECTION_H

#include <nanobind/nanobind.h>

namespace pk::python {

/// Registers `_trace_function` (a function traced for shapes and dtypes:
/// trace_kernel, picokernel.dask) and `_lower_mlir` (a KernelIR's module
/// lowered to a stage).
void bindIntrospection(nanobind::module_ &module);

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_INTROSPECTION_H
