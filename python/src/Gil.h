//===- Gil.h - the GIL, and Python calls, where Python may exit -*- C++ -*-===//
//
// While the interpreter exits (Python 3.11 to 3.13), a thread that takes the
// GIL back (a daemon thread calling or compiling a kernel, or running a
// kernel's Python body) is ended by pthread_exit, whose forced unwinding
// would run picokernel's and nanobind's destructors without the GIL: they
// touch Python objects (a crash) or release a GIL not held (an abort). The
// places that take the GIL back stop that unwinding where it starts and park
// the thread until the process ends.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_GIL_H
#define PICOKERNEL_PYTHON_GIL_H

#include <Python.h>
#include <nanobind/nanobind.h>

#include <cxxabi.h>
#include <unistd.h>

namespace pk::python {

/// A thread Python ends while it exits (not the exiting thread) waits here
/// for the process's end.
[[noreturn]] inline void parkForExit() {
  for (;;)
    pause();
}

/// Releases the GIL for its scope.
class ReleaseGil {
public:
  ReleaseGil() : state(PyEval_SaveThread()) {}
  ~ReleaseGil() noexcept(false) {
    try {
      PyEval_RestoreThread(state);
    } catch (abi::__forced_unwind &) {
      parkForExit();
    }
  }
  ReleaseGil(const ReleaseGil &) = delete;
  ReleaseGil &operator=(const ReleaseGil &) = delete;

private:
  PyThreadState *state;
};

/// Holds the GIL for its scope, from any thread.
class AcquireGil {
public:
  AcquireGil() {
    try {
      state = PyGILState_Ensure();
    } catch (abi::__forced_unwind &) {
      parkForExit();
    }
  }
  ~AcquireGil() { PyGILState_Release(state); }
  AcquireGil(const AcquireGil &) = delete;
  AcquireGil &operator=(const AcquireGil &) = delete;

private:
  PyGILState_STATE state;
};

/// `callable(*arguments)` with the GIL held: Python code may let the GIL go
/// and take it back (and be ended there while Python exits). A Python
/// exception is thrown as nanobind's python_error.
inline nanobind::object callPython(nanobind::handle callable,
                                   nanobind::handle arguments) {
  PyObject *result = nullptr;
  try {
    result = PyObject_Call(callable.ptr(), arguments.ptr(), nullptr);
  } catch (abi::__forced_unwind &) {
    parkForExit();
  }
  if (!result)
    throw nanobind::python_error();
  return nanobind::steal(result);
}

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_GIL_H
