//===- PkToLinalgPatterns.h - pk-to-linalg pattern families -----*- C++ -*-===//
//
// Private to lib/Conversion/PkToLinalg: the families of patterns, one source
// file each, that populatePkToLinalgConversionPatterns gathers, and the
// helpers that more than one of those files uses.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_CONVERSION_PKTOLINALG_PKTOLINALGPATTERNS_H
#define PICOKERNEL_LIB_CONVERSION_PKTOLINALG_PKTOLINALGPATTERNS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pk {

//===----------------------------------------------------------------------===//
// Pattern families
//===----------------------------------------------------------------------===//

/// pk.kernel to func.func, pk.load and pk.store to bufferization ops on the
/// converted refs, pk.return and pk.constant to func.return and
/// arith.constant (PkToLinalg.cpp).
void populatePkKernelAndMemoryConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns);

/// The elementwise operations, pk.cast and pk.broadcast to linalg.generic
/// with parallel iterators (ElementwiseToLinalg.cpp).
void populatePkElementwiseConversionPatterns(const TypeConverter &typeConverter,
                                             RewritePatternSet &patterns);

/// pk.reduce_sum, pk.reduce_max and pk.reduce_min to linalg.generic with
/// reduction iterators (ReductionToLinalg.cpp).
void populatePkReductionConversionPatterns(const TypeConverter &typeConverter,
                                           RewritePatternSet &patterns);

/// pk.matmul to linalg's named contractions, or to one linalg.generic for the
/// shapes they do not cover (MatmulToLinalg.cpp).
void populatePkMatmulConversionPatterns(const TypeConverter &typeConverter,
                                        RewritePatternSet &patterns);

/// max(0, ceil((size - offset) / step)) in index arithmetic: the size of
/// a slice (pk.slice_size), or of a class derived from another.
Value buildSliceSize(OpBuilder &builder, Location loc, Value size,
                     int64_t offset, int64_t step);

/// pk.extract_slice and pk.insert_slice to tensor.extract_slice and
/// tensor.insert_slice (SliceToTensor.cpp).
void populatePkSliceConversionPatterns(const TypeConverter &typeConverter,
                                       RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// Elementwise generics (ElementwiseToLinalg.cpp), which also build
// broadcasts and reverse slice dimensions
//===----------------------------------------------------------------------===//

/// Computes one result element from the operands' elements, given the result
/// element type as pk types it: an unsigned integer type there says which
/// operations to use on the signless elements.
using ScalarBuilder =
    function_ref<Value(OpBuilder &, Location, ValueRange, Type)>;

/// A linalg.generic computing `result[i] = body(inputs[map_k(i)]...)` into a
/// fresh tensor, with identity maps unless `inputMaps` says otherwise
/// (`resultType` as pk types it: the tensor has signless elements). The
/// size of each dynamic result dimension is the next of `dynamicSizes`, or,
/// where none are given, that of an input dimension read along it; null if
/// there is none.
Value buildElementwise(OpBuilder &builder, Location loc,
                       RankedTensorType resultType, ValueRange inputs,
                       ArrayRef<AffineMap> inputMaps, ScalarBuilder body,
                       ValueRange dynamicSizes = {});

/// The sizes of the dimensions `dims` of `tensor`: attributes where static,
/// tensor.dim where dynamic (for tensor.empty).
SmallVector<OpFoldResult> sizesOf(OpBuilder &builder, Location loc,
                                  Value tensor, ArrayRef<int64_t> dims);

//===----------------------------------------------------------------------===//
// Scalar math (ScalarMath.cpp): the arith and math operations computing one
// result element from the operands' elements, as elementwise generic bodies.
// The templates are defined here, where the patterns instantiate them.
//===----------------------------------------------------------------------===//

template <typename FloatOp, typename IntOp>
Value floatOrIntBody(OpBuilder &b, Location loc, ValueRange args,
                     Type element) {
  if (isa<FloatType>(element))
    return FloatOp::create(b, loc, args[0], args[1]);
  return IntOp::create(b, loc, args[0], args[1]);
}

/// maximum/minimum: for floats NumPy's (the first operand when it `wins`
/// or is NaN, else the second: a NaN in either gives that NaN; of equal
/// ones such as 0.0 and -0.0 the second, but the first for float16, whose
/// NumPy loop is another), signed or unsigned for integers, logical or/and
/// for booleans (SPIR-V has no i1 max or min).
template <arith::CmpFPredicate wins, arith::CmpFPredicate winsOrTies,
          typename SignedOp, typename UnsignedOp, typename BoolOp>
Value extremumBody(OpBuilder &b, Location loc, ValueRange args, Type element) {
  if (isa<FloatType>(element)) {
    arith::CmpFPredicate predicate = element.isF16() ? winsOrTies : wins;
    Value first = arith::OrIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, predicate, args[0], args[1]),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, args[0],
                              args[0]));
    return arith::SelectOp::create(b, loc, first, args[0], args[1]);
  }
  if (element.isInteger(1))
    return BoolOp::create(b, loc, args[0], args[1]);
  if (element.isUnsignedInteger())
    return UnsignedOp::create(b, loc, args[0], args[1]);
  return SignedOp::create(b, loc, args[0], args[1]);
}

/// Comparisons of operands of the element type `element`: ordered float
/// predicates (false with NaN; `ne` unordered, true with NaN), signed
/// integers, unsigned integers and booleans.
template <arith::CmpFPredicate floatPredicate,
          arith::CmpIPredicate signedPredicate,
          arith::CmpIPredicate unsignedPredicate>
Value compareBody(OpBuilder &b, Location loc, ValueRange args, Type element) {
  if (isa<FloatType>(element))
    return arith::CmpFOp::create(b, loc, floatPredicate, args[0], args[1]);
  bool isUnsigned = element.isInteger(1) || element.isUnsignedInteger();
  return arith::CmpIOp::create(b, loc,
                               isUnsigned ? unsignedPredicate : signedPredicate,
                               args[0], args[1]);
}

Value absBody(OpBuilder &b, Location loc, ValueRange args, Type element);

/// A unary float op as one math op in a generic body.
template <typename MathOp>
Value mathBody(OpBuilder &b, Location loc, ValueRange args, Type) {
  return MathOp::create(b, loc, args[0]);
}

/// log1p and expm1 from log and exp without losing the small arguments they
/// exist for: math-to-llvm and math-to-spirv expand math.log1p as log(1 + x)
/// and math.expm1 as exp(x) - 1, which return 0 for x = 1e-10 in float32.
/// Goldberg's and Kahan's corrections divide out the rounding of 1 + x and
/// of exp(x), leaving the error of log/exp (a few ulps).
Value log1pBody(OpBuilder &b, Location loc, ValueRange args, Type type);
Value expm1Body(OpBuilder &b, Location loc, ValueRange args, Type type);

Value sigmoidBody(OpBuilder &b, Location loc, ValueRange args, Type element);

/// A float body computed in float32 for float16 and bfloat16 operands and
/// rounded once, as NumPy computes its half-precision math functions: a
/// body of several operations rounding to 11 (or 8) bits at every step
/// loses most of them (float16 expm1(1e-3) came out 9.78e-4).
template <Value (*body)(OpBuilder &, Location, ValueRange, Type)>
Value inFloat32(OpBuilder &b, Location loc, ValueRange args, Type element) {
  if (!element.isF16() && !element.isBF16())
    return body(b, loc, args, element);
  Type f32 = b.getF32Type();
  SmallVector<Value> wide;
  for (Value arg : args)
    wide.push_back(arith::ExtFOp::create(b, loc, f32, arg));
  return arith::TruncFOp::create(b, loc, element, body(b, loc, wide, f32));
}

/// Floor division and its remainder with NumPy's results: `quotient` is
/// `lhs // rhs`, `remainder` is `lhs % rhs` (the sign of the divisor).
struct FloorDivision {
  Value quotient, remainder;
};

/// NumPy's npy_divmod: fmod, then move the remainder to the divisor's sign;
/// the quotient is computed from the exact difference and rounded to the
/// nearest integer so that it stays consistent with the remainder.
FloorDivision buildFloatFloorDivision(OpBuilder &b, Location loc, Value lhs,
                                      Value rhs);

/// Signed integers: truncating division corrected towards negative
/// infinity. Division by 0 and the overflowing MIN / -1 are undefined in
/// LLVM and SPIR-V, so those divisors are replaced by 1 and the results
/// NumPy gives (0; for -1 the wrapping negation and 0) selected afterwards.
FloorDivision buildIntegerFloorDivision(OpBuilder &b, Location loc, Value lhs,
                                        Value rhs);

/// Unsigned integers: division and remainder, 0 for both where the divisor
/// is 0 (as NumPy gives, with a warning), without dividing by it.
FloorDivision buildUnsignedFloorDivision(OpBuilder &b, Location loc, Value lhs,
                                         Value rhs);

template <Value FloorDivision::*part>
Value floorDivisionBody(OpBuilder &b, Location loc, ValueRange args,
                        Type element) {
  if (element.isUnsignedInteger())
    return buildUnsignedFloorDivision(b, loc, args[0], args[1]).*part;
  if (!isa<FloatType>(element))
    return buildIntegerFloorDivision(b, loc, args[0], args[1]).*part;
  if (element.getIntOrFloatBitWidth() >= 32)
    return buildFloatFloorDivision(b, loc, args[0], args[1]).*part;
  // NumPy divides float16 in float32 and rounds the result once.
  Type f32 = b.getF32Type();
  Value result = buildFloatFloorDivision(
                     b, loc, arith::ExtFOp::create(b, loc, f32, args[0]),
                     arith::ExtFOp::create(b, loc, f32, args[1])).*
                 part;
  return arith::TruncFOp::create(b, loc, element, result);
}

Value selectBody(OpBuilder &b, Location loc, ValueRange args, Type);

Value negBody(OpBuilder &b, Location loc, ValueRange args, Type element);

/// One element converted from the element type `from` to `to` (as pk types
/// them; `value` is signless) as NumPy's astype does (see pk.cast).
Value convertElement(OpBuilder &b, Location loc, Value value, Type from,
                     Type to);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_CONVERSION_PKTOLINALG_PKTOLINALGPATTERNS_H
