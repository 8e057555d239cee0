//===- Passes.h - picokernel conversion passes ------------------*- C++ -*-===//

#ifndef PICOKERNEL_CONVERSION_PASSES_H
#define PICOKERNEL_CONVERSION_PASSES_H

#include "picokernel/Conversion/PkToLinalg/PkToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pk {

#define GEN_PASS_DECL
#include "picokernel/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "picokernel/Conversion/Passes.h.inc"

} // namespace mlir::pk

#endif // PICOKERNEL_CONVERSION_PASSES_H
