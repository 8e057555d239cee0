//===- Accesses.h - the accesses analysis, for picokernel.dask --*- C++ -*-===//

#ifndef PICOKERNEL_PYTHON_ACCESSES_H
#define PICOKERNEL_PYTHON_ACCESSES_H

#include <nanobind/nanobind.h>

namespace pk::python {

/// Registers `_accesses(mlir)`: what each stored array of a traced kernel
/// reads (Dialect/Pk/Analysis/Accesses.h), as Python lists and dicts.
void bindAccesses(nanobind::module_ &module);

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_ACCESSES_H
