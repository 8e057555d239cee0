//===- Exit.h - the interpreter's exit while threads compile ----*- C++ -*-===//
//
// Python's daemon threads keep running while the interpreter exits, and
// exit's teardown of LLVM's and MLIR's state under a compile crashed the
// process: the package's atexit handler closes the compile gate first.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_EXIT_H
#define PICOKERNEL_PYTHON_EXIT_H

#include <nanobind/nanobind.h>

namespace pk::python {

/// Defines the module's _close_compile_gate_for_exit: waits (without the
/// GIL) for other threads' compiles and keeps them out from then on
/// (pk::closeCompileGateForExit).
void bindExit(nanobind::module_ &module);

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_EXIT_H
