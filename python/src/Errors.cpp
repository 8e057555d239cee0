//===- Errors.cpp - C++ exceptions as Python exceptions -------------------===//

#include "Errors.h"

#include "picokernel/Frontend/Trace.h"
#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Runtime/Vulkan.h"

namespace nb = nanobind;

namespace pk::python {

void translateErrors(const std::exception_ptr &error, void *) {
  try {
    std::rethrow_exception(error);
  } catch (const TraceError &e) {
    PyObject *type = PyExc_ValueError;
    if (e.category() == TraceError::Category::Type)
      type = PyExc_TypeError;
    else if (e.category() == TraceError::Category::Overflow)
      type = PyExc_OverflowError;
    else if (e.category() == TraceError::Category::Index)
      type = PyExc_IndexError;
    if (e.category() == TraceError::Category::Axis) {
      // numpy.exceptions.AxisError: a ValueError and an IndexError.
      nb::object numpy = nb::module_::import_("numpy");
      nb::object axisError =
          (nb::hasattr(numpy, "exceptions") ? numpy.attr("exceptions")
                                            : numpy) // NumPy < 1.25
              .attr("AxisError");
      PyErr_SetObject(axisError.ptr(), nb::str(e.what()).ptr());
      return;
    }
    PyErr_SetString(type, e.what());
  } catch (const ArgumentError &e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const CompileError &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const VulkanError &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

/// Sets the Python exception for the C++ exception being handled, as
/// nanobind does for a bound function (for code outside one: a type slot).
void raisePythonError() {
  try {
    throw;
  } catch (nb::python_error &e) {
    e.restore();
  } catch (const nb::builtin_exception &e) {
    PyObject *type = PyExc_RuntimeError;
    switch (e.type()) {
    case nb::exception_type::stop_iteration:
      type = PyExc_StopIteration;
      break;
    case nb::exception_type::index_error:
      type = PyExc_IndexError;
      break;
    case nb::exception_type::key_error:
      type = PyExc_KeyError;
      break;
    case nb::exception_type::value_error:
      type = PyExc_ValueError;
      break;
    case nb::exception_type::type_error:
      type = PyExc_TypeError;
      break;
    case nb::exception_type::buffer_error:
      type = PyExc_BufferError;
      break;
    case nb::exception_type::import_error:
      type = PyExc_ImportError;
      break;
    case nb::exception_type::attribute_error:
      type = PyExc_AttributeError;
      break;
    default:
      break;
    }
    PyErr_SetString(type, e.what());
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  } catch (...) {
    // (A translator rethrows what it does not know, for the next one.)
    try {
      translateErrors(std::current_exception(), nullptr);
    } catch (...) {
    }
    if (PyErr_Occurred())
      return;
    // nanobind's defaults for the standard exceptions.
    try {
      throw;
    } catch (const std::out_of_range &e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const std::overflow_error &e) {
      PyErr_SetString(PyExc_OverflowError, e.what());
    } catch (const std::logic_error &e) {
      // invalid_argument, domain_error, length_error
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::range_error &e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::exception &e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
      PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
    }
  }
}

} // namespace pk::python
