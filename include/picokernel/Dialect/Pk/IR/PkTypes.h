//===- PkTypes.h - picokernel dialect types ---------------------*- C++ -*-===//

#ifndef PICOKERNEL_DIALECT_PK_IR_PKTYPES_H
#define PICOKERNEL_DIALECT_PK_IR_PKTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "picokernel/Dialect/Pk/IR/PkTypes.h.inc"

namespace mlir::pk {

// isPkElementType(Type): one of the element types kernels compute on
// (Pk_ElementType in PkTypes.td).
#include "picokernel/Dialect/Pk/IR/PkTypeConstraints.h.inc"

} // namespace mlir::pk

#endif // PICOKERNEL_DIALECT_PK_IR_PKTYPES_H
