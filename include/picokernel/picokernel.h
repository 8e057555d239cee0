//===- picokernel.h - the one header an embedder includes -------*- C++ -*-===//
//
// picokernel's C++ API: kernels written over pk::Ref proxies, traced into
// the pk MLIR dialect (Frontend/Trace.h) with NumPy's dtypes and rules
// (Support/DType.h), held as pk::Module (Support/Module.h), printed and
// listed (Target/Listing.h), lowered stage by stage, compiled for the CPU
// and cached by shapes and dtypes (Kernel/Kernel.h, Runtime/Jit.h), run on
// caller-owned arrays or DLPack tensors (Kernel/DLPack.h), or compiled ahead
// of time into an object file and a C header (Target/Object.h).
// PICOKERNEL_VERSION (Version.h) is the library's version.
//
// These headers include no MLIR or LLVM header (scripts/check-embed checks
// it): an embedder needs only picokernel's install. The other installed
// headers are picokernel's internals (the dialect, the passes, compilers
// and runtimes, the IR behind pk::Module in Support/ModuleIR.h), which
// include MLIR's and LLVM's and may change from release to release.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PICOKERNEL_H
#define PICOKERNEL_PICOKERNEL_H

#include "picokernel/Frontend/Trace.h"
#include "picokernel/Kernel/DLPack.h"
#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Runtime/Jit.h"
#include "picokernel/Support/DType.h"
#include "picokernel/Support/Module.h"
#include "picokernel/Target/Listing.h"
#include "picokernel/Target/Object.h"
#include "picokernel/Version.h"

#endif // PICOKERNEL_PICOKERNEL_H
