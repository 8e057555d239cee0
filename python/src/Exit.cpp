//===- Exit.cpp - the interpreter's exit while threads compile ------------===//

#include "Exit.h"

#include "Gil.h"

#include "picokernel/Support/Fork.h"

namespace pk::python {

void bindExit(nanobind::module_ &module) {
  module.def(
      "_close_compile_gate_for_exit",
      [] {
        ReleaseGil release;
        closeCompileGateForExit();
      },
      "At exit: waits for other threads' compiles and keeps them out.");
}

} // namespace pk::python
