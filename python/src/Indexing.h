//===- Indexing.h - Python keys as pk::Index --------------------*- C++ -*-===//

#ifndef PICOKERNEL_PYTHON_INDEXING_H
#define PICOKERNEL_PYTHON_INDEXING_H

#include "picokernel/Frontend/Trace.h"

#include <nanobind/nanobind.h>

#include <optional>

namespace pk::python {

/// The key of `x[key]` for an array of `rank` dimensions: an int, a slice,
/// `...`, or a tuple of those (NumPy's basic indexing). Nothing when the key
/// is the whole array (`x[...]`, `x[:]` on 1-d, ...). Anything else (None,
/// booleans, arrays, traced values) raises IndexError/TypeError naming it.
std::optional<Index> toIndex(nanobind::handle key, size_t rank);

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_INDEXING_H
