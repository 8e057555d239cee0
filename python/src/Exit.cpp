//===- Exit.cpp - the interpreter's exit while threads compile ------------===//

#include "Exit.h"

#include "picokernel/Support/Fork.h"

#include <Python.h>
#include <nanobind/nanobind.h>

namespace pk::python {

void closeCompileGateAtExit() {
  // At the end of Py_Finalize, after the last Python code (atexit handlers
  // may still wait for other threads' compiles), before exit's teardown.
  // (A warning that warnings' filters turn into an error fails the import.)
  if (Py_AtExit(closeCompileGateForExit) != 0 &&
      PyErr_WarnEx(PyExc_RuntimeWarning,
                   "picokernel: too many exit functions; daemon threads "
                   "compiling at exit may crash it",
                   1) != 0)
    throw nanobind::python_error();
}

} // namespace pk::python
