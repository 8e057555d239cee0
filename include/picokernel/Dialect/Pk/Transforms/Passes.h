//===- Passes.h - pk dialect transformations --------------------*- C++ -*-===//

#ifndef PICOKERNEL_DIALECT_PK_TRANSFORMS_PASSES_H
#define PICOKERNEL_DIALECT_PK_TRANSFORMS_PASSES_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/Pass/Pass.h"

namespace mlir::pk {

#define GEN_PASS_DECL
#include "picokernel/Dialect/Pk/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "picokernel/Dialect/Pk/Transforms/Passes.h.inc"

} // namespace mlir::pk

#endif // PICOKERNEL_DIALECT_PK_TRANSFORMS_PASSES_H
