//===- PkTypes.h - picokernel dialect types ---------------------*- C++ -*-===//

#ifndef PICOKERNEL_DIALECT_PK_IR_PKTYPES_H
#define PICOKERNEL_DIALECT_PK_IR_PKTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#include <string>

#define GET_TYPEDEF_CLASSES
#include "picokernel/Dialect/Pk/IR/PkTypes.h.inc"

namespace mlir::pk {

/// Whether `type` is one of the element types kernels compute on:
/// f16, bf16, f32, f64, i1, i8, i16, i32, i64.
bool isPkElementType(Type type);

/// A shape the way NumPy users read it: `(2, 3)`, `(4,)`, `()`.
std::string formatShape(ArrayRef<int64_t> shape);

} // namespace mlir::pk

#endif // PICOKERNEL_DIALECT_PK_IR_PKTYPES_H
