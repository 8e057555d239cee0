//===- NumPy.cpp - NumPy arrays and dtypes for the extension --------------===//

#include "NumPy.h"

namespace nb = nanobind;

namespace pk::python {

std::optional<DType> fromNumPy(PyArray_Descr *descr) {
  int size = int(PyDataType_ELSIZE(descr));
  switch (descr->kind) {
  case 'b':
    return DType::Bool;
  case 'i':
  case 'u':
    return integerOfSize(size_t(size), descr->kind == 'u');
  case 'f':
    switch (size) {
    case 2:
      return DType::F16;
    case 4:
      return DType::F32;
    case 8:
      return DType::F64;
    }
    return std::nullopt;
  default:
    // ml_dtypes' bfloat16 is a NumPy extension type of kind 'V'.
    if (numpyName(descr) == "bfloat16")
      return DType::BF16;
    return std::nullopt;
  }
}

std::string numpyName(PyArray_Descr *descr) {
  nb::object name = nb::getattr(nb::handle((PyObject *)descr), "name");
  return nb::cast<std::string>(name);
}

nb::object toNumPy(DType dtype) {
  nb::object numpy = nb::module_::import_("numpy");
  if (dtype == DType::BF16)
    return numpy.attr("dtype")(
        nb::module_::import_("ml_dtypes").attr("bfloat16"));
  std::string_view name = dtypeName(dtype);
  return numpy.attr("dtype")(nb::str(name.data(), name.size()));
}

} // namespace pk::python
