//===- Arguments.h - a kernel call's arguments as arrays --------*- C++ -*-===//
//
// What a kernel call accepts besides NumPy arrays passed by position:
// arrays by parameter name, and array-likes (Python and NumPy scalars,
// lists, objects with __array__ or __dlpack__) that NumPy converts once per
// call for the kernel to read.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_ARGUMENTS_H
#define PICOKERNEL_PYTHON_ARGUMENTS_H

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

namespace pk::python {

/// The arguments of a call of kernel `name` in parameter order: `args`
/// first, then `kwargs` by parameter name. Throws a TypeError, as Python
/// does for functions, for an unknown or repeated name or a missing array.
nanobind::args bindKeywords(const std::string &name,
                            const std::vector<std::string> &paramNames,
                            nanobind::handle args, nanobind::handle kwargs);

/// `value`, the argument for parameter `param` that is not a NumPy array,
/// as one: numpy.asarray (a Python float is a 0-d float64, an int int64, a
/// bool bool), or numpy.from_dlpack for an object with __dlpack__ and no
/// __array__. Throws a TypeError naming the parameter where NumPy cannot.
nanobind::object asArray(nanobind::handle value, const std::string &param);

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_ARGUMENTS_H
