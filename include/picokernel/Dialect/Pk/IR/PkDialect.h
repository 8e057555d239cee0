//===- PkDialect.h - picokernel dialect -------------------------*- C++ -*-===//

#ifndef PICOKERNEL_DIALECT_PK_IR_PKDIALECT_H
#define PICOKERNEL_DIALECT_PK_IR_PKDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"

#include "picokernel/Dialect/Pk/IR/PkDialect.h.inc"

#endif // PICOKERNEL_DIALECT_PK_IR_PKDIALECT_H
