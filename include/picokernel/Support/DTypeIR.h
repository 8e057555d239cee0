//===- DTypeIR.h - dtypes as MLIR element types -----------------*- C++ -*-===//
//
// The MLIR element type of each dtype (Support/DType.h) and back: i1 for
// bool, signless integers for the signed ones, unsigned ones (ui8) for the
// unsigned, and MLIR's float types.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_DTYPEIR_H
#define PICOKERNEL_SUPPORT_DTYPEIR_H

#include "picokernel/Support/DType.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace pk {

mlir::Type toMlirType(DType dtype, mlir::MLIRContext &context);
std::optional<DType> fromMlirType(mlir::Type type);

} // namespace pk

#endif // PICOKERNEL_SUPPORT_DTYPEIR_H
