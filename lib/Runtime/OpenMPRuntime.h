//===- OpenMPRuntime.h - the OpenMP runtime of threaded kernels -*- C++ -*-===//
//
// Private to the runtime. Threaded kernels call libomp's entry points
// (__kmpc_fork_call, ...), which the JIT resolves from the process.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_RUNTIME_OPENMPRUNTIME_H
#define PICOKERNEL_LIB_RUNTIME_OPENMPRUNTIME_H

#include "llvm/Support/Error.h"

namespace pk::detail {

/// Makes an OpenMP runtime's symbols visible process-wide, after
/// prepareOpenMPEnvironment: the runtime already in the process where there
/// is one (another library's; libomp aborts the process when a second copy
/// starts), else the copy next to the module holding this code (the Python
/// package's: PK_BUNDLED_OPENMP), else the one found at build time
/// (PK_OPENMP_LIBRARY). An error names the files that did not load.
llvm::Error loadOpenMPRuntime();

} // namespace pk::detail

#endif // PICOKERNEL_LIB_RUNTIME_OPENMPRUNTIME_H
