//===- Exit.cpp - the interpreter's exit while threads compile ------------===//

#include "Exit.h"

#include "picokernel/Support/Fork.h"

#include <Python.h>

namespace pk::python {

void closeCompileGateAtExit() {
  // At the end of Py_Finalize, after the last Python code (atexit handlers
  // may still wait for other threads' compiles), before exit's teardown.
  if (Py_AtExit(closeCompileGateForExit) != 0)
    PyErr_WarnEx(PyExc_RuntimeWarning,
                 "picokernel: too many exit functions; daemon threads "
                 "compiling at exit may crash it",
                 1);
}

} // namespace pk::python
