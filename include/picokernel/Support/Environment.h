//===- Environment.h - environment switches ---------------------*- C++ -*-===//
//
// One reading of the on/off environment variables (PK_CACHE,
// PK_LOG_COMPILES, PK_PERF, PK_LEAK_WARNINGS, and the Python package's
// PK_DISABLE_JIT), so that each takes the same spellings; and where the
// CUDA toolkit is.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_ENVIRONMENT_H
#define PICOKERNEL_SUPPORT_ENVIRONMENT_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace pk {

/// A switch's value as written: on for 1, true, on and yes, off for 0,
/// false, off and no (any case, spaces around ignored); none for the empty
/// string and anything else.
std::optional<bool> parseSwitch(llvm::StringRef value);

/// Environment variable `name` read as a switch (see parseSwitch): `unset`
/// where it is not set or empty. Any other value leaves `unset` and warns
/// (a log record naming the variable and the spellings), once per variable
/// in a process. Read at every call, so that programs can flip switches.
bool environmentSwitch(llvm::StringRef name, bool unset);

/// The CUDA toolkit's directory (libdevice for math functions, ptxas): the
/// first of CUDA_ROOT, CUDA_HOME and CUDA_PATH that is set, else
/// /usr/local/cuda where it exists; empty without one.
std::string cudaToolkitPath();

} // namespace pk

#endif // PICOKERNEL_SUPPORT_ENVIRONMENT_H
