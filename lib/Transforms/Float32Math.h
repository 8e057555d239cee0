//===- Float32Math.h - float32 exp, log, tanh as arithmetic ------*- C++
//-*-===//
//
// Private to the transforms: patterns that expand float32 math.exp,
// math.log and math.tanh (scalar or vector) into inline arithmetic
// (pk-inline-cpu-math).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_FLOAT32MATH_H
#define PICOKERNEL_LIB_TRANSFORMS_FLOAT32MATH_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {

/// float32 exp within about 1 ulp over the whole range (subnormal results
/// included), log likewise (subnormal arguments included) and tanh within
/// a few, as Cephes computes them; NaN, infinities, zeros and negative
/// arguments as libm.
void populateFloat32MathPatterns(RewritePatternSet &patterns);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_FLOAT32MATH_H
