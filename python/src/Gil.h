//===- Gil.h - holding and releasing the GIL where Python may exit -*- C++
//-*-===//
//
// When the interpreter exits, a thread that takes the GIL back (a daemon
// thread calling or compiling a kernel) is ended by pthread_exit, whose
// forced unwinding must pass through the guards that took it: nanobind's
// are noexcept (the process would abort), these are not.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_GIL_H
#define PICOKERNEL_PYTHON_GIL_H

#include <Python.h>

#include <exception>
#include <unistd.h>

namespace pk::python {

/// Releases the GIL for its scope.
class ReleaseGil {
public:
  ReleaseGil() : state(PyEval_SaveThread()) {}
  ~ReleaseGil() noexcept(false) {
    // Unwinding already (the thread ended while it held the GIL deeper
    // down) while Python exits: taking the GIL would end the thread again,
    // inside this unwinding, which aborts. The thread waits for the exit.
    if (std::uncaught_exceptions() > 0 && finalizing())
      for (;;)
        pause();
    PyEval_RestoreThread(state);
  }
  ReleaseGil(const ReleaseGil &) = delete;
  ReleaseGil &operator=(const ReleaseGil &) = delete;

private:
  static bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
  }

  PyThreadState *state;
};

/// Holds the GIL for its scope, from any thread.
class AcquireGil {
public:
  AcquireGil() : state(PyGILState_Ensure()) {}
  ~AcquireGil() { PyGILState_Release(state); }
  AcquireGil(const AcquireGil &) = delete;
  AcquireGil &operator=(const AcquireGil &) = delete;

private:
  PyGILState_STATE state;
};

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_GIL_H
