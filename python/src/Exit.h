//===- Exit.h - the interpreter's exit while threads compile ----*- C++ -*-===//
//
// Python's daemon threads keep running while the interpreter exits, and
// exit's teardown of LLVM's and MLIR's state under a compile crashed the
// process.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_EXIT_H
#define PICOKERNEL_PYTHON_EXIT_H

namespace pk::python {

/// Makes the interpreter's finalization, once no Python code is left to
/// run, wait for other threads' compiles and keep them out from then on
/// (pk::closeCompileGateForExit).
void closeCompileGateAtExit();

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_EXIT_H
