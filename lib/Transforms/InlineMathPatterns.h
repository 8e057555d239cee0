//===- InlineMathPatterns.h - exp, log, tanh as arithmetic ------*- C++ -*-===//
//
// Private to the transforms: patterns that expand float32 math.exp,
// math.log and math.tanh and float64 math.exp (scalar or vector) into
// inline arithmetic (pk-inline-cpu-math).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_INLINEMATHPATTERNS_H
#define PICOKERNEL_LIB_TRANSFORMS_INLINEMATHPATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {

/// float32 exp and log within 1 ulp over the whole range (exp's subnormal
/// results and log's subnormal arguments included), float32 tanh within 2
/// and float64 exp within 2; NaN, infinities, zeros and
/// negative arguments as libm. With `scaleWithLdexp` (AVX-512 targets), exp
/// applies its power of two with one `llvm.intr.ldexp` (vscalefps).
void populateInlineMathPatterns(RewritePatternSet &patterns,
                                bool scaleWithLdexp);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_INLINEMATHPATTERNS_H
