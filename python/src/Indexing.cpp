//===- Indexing.cpp - Python keys as pk::Index ----------------------------===//

#include "Indexing.h"
#include "Tracing.h"

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace pk::python {

namespace {

std::string reprOf(nb::handle object) {
  return nb::cast<std::string>(nb::repr(object));
}

[[noreturn]] void invalidIndex(nb::handle item, const std::string &why) {
  raise(PyExc_IndexError,
        pythonLocation().str() +
            ": error: only integers, slices (`:`) and ellipsis (`...`) are "
            "valid indices "
            "in a picokernel kernel; got " +
            reprOf(item) + why);
}

/// A Python integer (or anything with __index__, like np.int64) as int64.
/// Beyond int64, a slice bound saturates (it is clamped anyway), and a
/// position is an error as in NumPy: OverflowError up to 2^64 (NumPy
/// converts it to a C integer first), IndexError beyond either end.
int64_t toInteger(nb::handle item, bool isBound) {
  nb::object integer = nb::steal(PyNumber_Index(item.ptr()));
  if (!integer.is_valid()) {
    PyErr_Clear();
    raise(PyExc_TypeError,
          pythonLocation().str() + ": error: indexing: " +
              (isBound ? "slice indices must be integers or None or have an "
                         "__index__ method; got "
                       : "an index must be an integer; got ") +
              reprOf(item));
  }
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
  if (!overflow)
    return value;
  if (isBound)
    return overflow > 0 ? INT64_MAX : INT64_MIN;
  std::string where = pythonLocation().str() + ": error: indexing: ";
  if (overflow > 0) {
    PyLong_AsUnsignedLongLong(integer.ptr());
    bool belowTwoTo64 = !PyErr_Occurred();
    PyErr_Clear();
    if (belowTwoTo64)
      raise(PyExc_OverflowError,
            where + "index " + reprOf(integer) +
                " does not fit in int64 (NumPy: Python int too large to "
                "convert to C long)");
  }
  raise(PyExc_IndexError, where + "index " + reprOf(integer) +
                              " is out of bounds (beyond int64)");
}

std::optional<int64_t> toBound(nb::handle bound) {
  if (bound.is_none())
    return std::nullopt;
  return toInteger(bound, /*isBound=*/true);
}

IndexItem toItem(nb::handle item) {
  PyObject *ptr = item.ptr();
  if (PySlice_Check(ptr)) {
    auto *range = reinterpret_cast<PySliceObject *>(ptr);
    std::optional<int64_t> step = toBound(range->step);
    return Slice{toBound(range->start), toBound(range->stop), step.value_or(1)};
  }
  if (item.is_none())
    invalidIndex(item, " (np.newaxis: reshape outside the kernel instead)");
  if (PyBool_Check(ptr) || nb::isinstance<Value>(item) ||
      PySequence_Check(ptr) || !PyIndex_Check(ptr))
    invalidIndex(item, " (indices are constants fixed when the kernel is "
                       "traced: no boolean masks, index arrays or traced "
                       "values)");
  return toInteger(item, /*isBound=*/false);
}

} // namespace

std::optional<Index> toIndex(nb::handle key, size_t rank) {
  SourceLoc where = pythonLocation();
  nb::object items = PyTuple_Check(key.ptr()) ? nb::borrow(key)
                                              : nb::object(nb::make_tuple(key));
  size_t count = nb::len(items);
  size_t ellipses = 0;
  for (nb::handle item : items)
    ellipses += item.ptr() == Py_Ellipsis;
  if (ellipses > 1)
    raise(PyExc_IndexError, "an index can only have a single ellipsis ('...')");

  std::vector<IndexItem> resolved;
  bool whole = true;
  for (nb::handle item : items) {
    if (item.ptr() == Py_Ellipsis) {
      // `...` stands for as many whole dimensions as the others leave.
      size_t others = count - 1;
      for (size_t d = others; d < rank; ++d)
        resolved.push_back(all);
      continue;
    }
    IndexItem converted = toItem(item);
    const bool isWholeSlice =
        !converted.isPosition() && !converted.getSlice().start &&
        !converted.getSlice().stop && converted.getSlice().step == 1;
    whole = whole && isWholeSlice;
    resolved.push_back(converted);
  }
  // `x[()]` of a 0-d array is its element (NumPy assigns it as one).
  if (whole && resolved.size() <= rank && !(rank == 0 && count == 0))
    return std::nullopt;
  return Index(std::move(resolved), std::move(where));
}

} // namespace pk::python
