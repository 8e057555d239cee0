//===- NumPy.h - NumPy arrays and dtypes for the extension ------*- C++ -*-===//
//
// The NumPy C API (imported once per module) and the mapping between NumPy
// dtypes and picokernel's. Every translation unit of the extension shares
// one PyArray_API table.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_NUMPY_H
#define PICOKERNEL_PYTHON_NUMPY_H

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL picokernel_ARRAY_API
#ifndef PICOKERNEL_PYTHON_IMPORTS_NUMPY
#define NO_IMPORT_ARRAY
#endif

#include <nanobind/nanobind.h>
#include <numpy/arrayobject.h>

#include "picokernel/Support/DType.h"

#include <optional>
#include <string>

namespace pk::python {

/// The picokernel dtype of a NumPy dtype, if it has one.
std::optional<DType> fromNumPy(PyArray_Descr *descr);

/// The NumPy dtype object for a picokernel dtype (bfloat16 needs ml_dtypes).
nanobind::object toNumPy(DType dtype);

/// A readable name for any NumPy dtype ("uint8", "complex128", ...).
std::string numpyName(PyArray_Descr *descr);

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_NUMPY_H
