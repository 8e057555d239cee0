//===- picokernel.h - the one header an embedder includes -------*- C++ -*-===//
//
// picokernel's C++ API: trace kernels written over pk::Ref proxies into the
// pk MLIR dialect (Frontend/Trace.h), with NumPy's dtypes and rules
// (Frontend/DType.h), and print them as MLIR or as a compact listing.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PICOKERNEL_H
#define PICOKERNEL_PICOKERNEL_H

#include "picokernel/Frontend/DType.h"
#include "picokernel/Frontend/Trace.h"

#endif // PICOKERNEL_PICOKERNEL_H
