//===- picokernel.h - the one header an embedder includes -------*- C++ -*-===//
//
// picokernel's C++ API: kernels written over pk::Ref proxies, traced into
// the pk MLIR dialect (Frontend/Trace.h) with NumPy's dtypes and rules
// (Frontend/DType.h), compiled for the CPU and cached by shapes and dtypes
// (Runtime/Kernel.h, Runtime/Jit.h), or ahead of time into an object file
// and a C header (Target/Object.h).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PICOKERNEL_H
#define PICOKERNEL_PICOKERNEL_H

#include "picokernel/Frontend/DType.h"
#include "picokernel/Frontend/Trace.h"
#include "picokernel/Runtime/Jit.h"
#include "picokernel/Runtime/Kernel.h"
#include "picokernel/Target/Object.h"

#endif // PICOKERNEL_PICOKERNEL_H
