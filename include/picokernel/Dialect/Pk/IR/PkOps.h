//===- PkOps.h - picokernel dialect operations ------------------*- C++ -*-===//

#ifndef PICOKERNEL_DIALECT_PK_IR_PKOPS_H
#define PICOKERNEL_DIALECT_PK_IR_PKOPS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "picokernel/Dialect/Pk/IR/PkDialect.h"
#include "picokernel/Dialect/Pk/IR/PkTypes.h"

#define GET_OP_CLASSES
#include "picokernel/Dialect/Pk/IR/PkOps.h.inc"

#endif // PICOKERNEL_DIALECT_PK_IR_PKOPS_H
