//===- ScalarMath.cpp - arith and math ops computing one element ----------===//

#include "PkToLinalgPatterns.h"
#include "picokernel/Conversion/PkToLinalg/PkToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::pk;

Value mlir::pk::absBody(OpBuilder &b, Location loc, ValueRange args,
                        Type element) {
  if (isa<FloatType>(element))
    return math::AbsFOp::create(b, loc, args[0]);
  if (element.isInteger(1) || element.isUnsignedInteger())
    return args[0];
  return math::AbsIOp::create(b, loc, args[0]);
}

Value mlir::pk::log1pBody(OpBuilder &b, Location loc, ValueRange args,
                          Type type) {
  Value x = args[0];
  Value one = arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 1));
  Value infinity = arith::ConstantOp::create(
      b, loc, type,
      b.getFloatAttr(type, std::numeric_limits<double>::infinity()));
  Value u = arith::AddFOp::create(b, loc, one, x);
  // log(u) * (x / (u - 1)); exact x where 1 + x rounds to 1, log(u) at +inf.
  // The ratio is about 1, so the product cannot overflow for large x.
  Value corrected = arith::MulFOp::create(
      b, loc, math::LogOp::create(b, loc, u),
      arith::DivFOp::create(b, loc, x, arith::SubFOp::create(b, loc, u, one)));
  Value uIsOne =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, u, one);
  Value uIsInfinite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, u, infinity);
  Value result = arith::SelectOp::create(b, loc, uIsInfinite, u, corrected);
  return arith::SelectOp::create(b, loc, uIsOne, x, result);
}

Value mlir::pk::expm1Body(OpBuilder &b, Location loc, ValueRange args,
                          Type type) {
  Value x = args[0];
  Value one = arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 1));
  Value minusOne =
      arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, -1));
  Value infinity = arith::ConstantOp::create(
      b, loc, type,
      b.getFloatAttr(type, std::numeric_limits<double>::infinity()));
  Value u = math::ExpOp::create(b, loc, x);
  Value uMinusOne = arith::SubFOp::create(b, loc, u, one);
  // (u - 1) * (x / log(u)); exact x where exp(x) rounds to 1, -1 where it
  // underflows to 0 (u - 1 == -1), +inf where it overflows. The ratio is
  // about 1: (u - 1) * x overflowed for x > 80 in float32 (inf / log(u)).
  Value corrected = arith::MulFOp::create(
      b, loc, uMinusOne,
      arith::DivFOp::create(b, loc, x, math::LogOp::create(b, loc, u)));
  auto equals = [&](Value lhs, Value rhs) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs)
        .getResult();
  };
  Value result =
      arith::SelectOp::create(b, loc, equals(u, infinity), u, corrected);
  result = arith::SelectOp::create(b, loc, equals(uMinusOne, minusOne),
                                   minusOne, result);
  return arith::SelectOp::create(b, loc, equals(u, one), x, result);
}

Value mlir::pk::sigmoidBody(OpBuilder &b, Location loc, ValueRange args,
                            Type element) {
  // e = exp(-|x|) never overflows: 1 / (1 + e) for x >= 0 and e / (1 + e)
  // below, which keeps the subnormal results of x < -87 (float32) that
  // 1 / (1 + exp(-x)) loses to an overflowed exp.
  Value x = args[0];
  Value one =
      arith::ConstantOp::create(b, loc, element, b.getFloatAttr(element, 1.0));
  Value zero =
      arith::ConstantOp::create(b, loc, element, b.getFloatAttr(element, 0.0));
  Value e = math::ExpOp::create(
      b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x)));
  Value nonNegative =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, zero);
  Value numerator = arith::SelectOp::create(b, loc, nonNegative, one, e);
  return arith::DivFOp::create(b, loc, numerator,
                               arith::AddFOp::create(b, loc, one, e));
}

FloorDivision mlir::pk::buildFloatFloorDivision(OpBuilder &b, Location loc,
                                                Value lhs, Value rhs) {
  Type type = lhs.getType();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  };
  auto compare = [&](arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, predicate, x, y).getResult();
  };
  Value zero = constant(0.0), one = constant(1.0);
  // fmod(x, ±inf) is x for finite x; stated explicitly because SPIR-V's
  // OpFRem may compute x - y * trunc(x / y), which is NaN there.
  Value infinity = constant(std::numeric_limits<double>::infinity());
  Value divisorIsInfinite = compare(
      arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, rhs), infinity);
  Value dividendIsFinite = compare(arith::CmpFPredicate::OLT,
                                   math::AbsFOp::create(b, loc, lhs), infinity);
  Value mod = arith::SelectOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, divisorIsInfinite, dividendIsFinite), lhs,
      arith::RemFOp::create(b, loc, lhs, rhs));
  Value div = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, lhs, mod), rhs);
  // A nonzero remainder (NaN counts) whose sign differs from the divisor's.
  Value signsDiffer = arith::XOrIOp::create(
      b, loc, compare(arith::CmpFPredicate::OLT, rhs, zero),
      compare(arith::CmpFPredicate::OLT, mod, zero));
  Value modIsNonzero = compare(arith::CmpFPredicate::UNE, mod, zero);
  Value adjust = arith::AndIOp::create(b, loc, modIsNonzero, signsDiffer);
  mod = arith::SelectOp::create(
      b, loc, adjust, arith::AddFOp::create(b, loc, mod, rhs),
      arith::SelectOp::create(b, loc, modIsNonzero, mod,
                              math::CopySignOp::create(b, loc, zero, rhs)));
  div = arith::SelectOp::create(b, loc, adjust,
                                arith::SubFOp::create(b, loc, div, one), div);
  Value floored = math::FloorOp::create(b, loc, div);
  Value roundUp =
      compare(arith::CmpFPredicate::OGT,
              arith::SubFOp::create(b, loc, div, floored), constant(0.5));
  floored = arith::SelectOp::create(
      b, loc, roundUp, arith::AddFOp::create(b, loc, floored, one), floored);
  Value zeroQuotient = math::CopySignOp::create(
      b, loc, zero, arith::DivFOp::create(b, loc, lhs, rhs));
  Value quotient = arith::SelectOp::create(
      b, loc, compare(arith::CmpFPredicate::UNE, div, zero), floored,
      zeroQuotient);
  // x // 0 is x / 0 (±inf or NaN), as NumPy's floor_divide returns.
  Value divisorIsZero = compare(arith::CmpFPredicate::OEQ, rhs, zero);
  quotient = arith::SelectOp::create(
      b, loc, divisorIsZero, arith::DivFOp::create(b, loc, lhs, rhs), quotient);
  return {quotient, mod};
}

FloorDivision mlir::pk::buildIntegerFloorDivision(OpBuilder &b, Location loc,
                                                  Value lhs, Value rhs) {
  Type type = lhs.getType();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, type,
                                     b.getIntegerAttr(type, value));
  };
  auto equals = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y)
        .getResult();
  };
  Value zero = constant(0), one = constant(1), minusOne = constant(-1);
  Value divisorIsZero = equals(rhs, zero);
  Value divisorIsMinusOne = equals(rhs, minusOne);
  Value safeDivisor = arith::SelectOp::create(
      b, loc, arith::OrIOp::create(b, loc, divisorIsZero, divisorIsMinusOne),
      one, rhs);
  Value quotient = arith::DivSIOp::create(b, loc, lhs, safeDivisor);
  // Not arith.remsi: its SPIR-V lowering takes absolute values and gets the
  // sign wrong for the most negative dividend. This product cannot overflow.
  Value remainder = arith::SubIOp::create(
      b, loc, lhs, arith::MulIOp::create(b, loc, quotient, safeDivisor));
  Value signsDiffer = arith::XOrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, remainder, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, safeDivisor,
                            zero));
  Value adjust = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, remainder, zero),
      signsDiffer);
  quotient = arith::SelectOp::create(
      b, loc, adjust, arith::SubIOp::create(b, loc, quotient, one), quotient);
  remainder = arith::SelectOp::create(
      b, loc, adjust, arith::AddIOp::create(b, loc, remainder, safeDivisor),
      remainder);
  quotient = arith::SelectOp::create(b, loc, divisorIsMinusOne,
                                     arith::SubIOp::create(b, loc, zero, lhs),
                                     quotient);
  quotient = arith::SelectOp::create(b, loc, divisorIsZero, zero, quotient);
  return {quotient, remainder};
}

FloorDivision mlir::pk::buildUnsignedFloorDivision(OpBuilder &b, Location loc,
                                                   Value lhs, Value rhs) {
  Type type = lhs.getType();
  Value zero =
      arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 0));
  Value one =
      arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, 1));
  Value divisorIsZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs, zero);
  Value safeDivisor = arith::SelectOp::create(b, loc, divisorIsZero, one, rhs);
  Value quotient = arith::DivUIOp::create(b, loc, lhs, safeDivisor);
  Value remainder = arith::RemUIOp::create(b, loc, lhs, safeDivisor);
  return {arith::SelectOp::create(b, loc, divisorIsZero, zero, quotient),
          arith::SelectOp::create(b, loc, divisorIsZero, zero, remainder)};
}

Value mlir::pk::selectBody(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

Value mlir::pk::negBody(OpBuilder &b, Location loc, ValueRange args,
                        Type element) {
  if (isa<FloatType>(element))
    return arith::NegFOp::create(b, loc, args[0]);
  // Unsigned integers wrap too (NumPy's -uint8(1) is 255).
  Type bits = args[0].getType();
  Value zero =
      arith::ConstantOp::create(b, loc, bits, b.getIntegerAttr(bits, 0));
  return arith::SubIOp::create(b, loc, zero, args[0]);
}

/// An integer as a float64 from which a rounding to bfloat16 is the
/// integer's own: exact below 2^53; above, the bits lost to float64 are
/// folded into one sticky bit (round to odd), so that a value just past a
/// tie is not rounded onto it first.
static Value exactInFloat64(OpBuilder &b, Location loc, Value value,
                            bool isSigned) {
  Type f64 = b.getF64Type();
  if (value.getType().getIntOrFloatBitWidth() < 64)
    return isSigned ? arith::SIToFPOp::create(b, loc, f64, value).getResult()
                    : arith::UIToFPOp::create(b, loc, f64, value).getResult();
  Type i64 = value.getType();
  auto constant = [&](int64_t bits) -> Value {
    return arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, bits));
  };
  auto compare = [&](arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y).getResult();
  };
  // The magnitude, as unsigned (that of INT64_MIN is 2^63).
  Value negative = isSigned
                       ? compare(arith::CmpIPredicate::slt, value, constant(0))
                       : Value();
  Value magnitude =
      isSigned ? arith::SelectOp::create(
                     b, loc, negative,
                     arith::SubIOp::create(b, loc, constant(0), value), value)
                     .getResult()
               : value;
  // From 2^53 up, bits 12 and up fit float64's 53; bit 11 keeps whether
  // any of bits 0-11 was set.
  Value lost = arith::AndIOp::create(b, loc, magnitude, constant(0xFFF));
  Value sticky = arith::SelectOp::create(
      b, loc, compare(arith::CmpIPredicate::ne, lost, constant(0)),
      constant(0x800), constant(0));
  Value odd = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, magnitude, constant(~0xFFFll)),
      sticky);
  Value large =
      compare(arith::CmpIPredicate::uge, magnitude, constant(int64_t(1) << 53));
  Value exact = arith::UIToFPOp::create(
      b, loc, f64, arith::SelectOp::create(b, loc, large, odd, magnitude));
  if (!isSigned)
    return exact;
  return arith::SelectOp::create(b, loc, negative,
                                 arith::NegFOp::create(b, loc, exact), exact);
}

Value mlir::pk::convertElement(OpBuilder &b, Location loc, Value value,
                               Type from, Type to) {
  if (from == to)
    return value;
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  // A source is widened by its own sign: zeros for unsigned integers and
  // bools, copies of the sign bit for signed integers.
  bool zeroExtends =
      fromInt && (fromInt.getWidth() == 1 || fromInt.isUnsigned());
  from = value.getType();
  to = toSignless(to);
  if (from == to)
    return value; // the same bits: int8 <-> uint8
  if (toInt && toInt.getWidth() == 1) {
    // To bool: nonzero (a NaN is nonzero).
    if (fromInt)
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne, value,
          arith::ConstantOp::create(b, loc, from, b.getIntegerAttr(from, 0)));
    return arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::UNE, value,
        arith::ConstantOp::create(b, loc, from, b.getFloatAttr(from, 0.0)));
  }
  if (fromInt && toInt) {
    if (toInt.getWidth() < fromInt.getWidth())
      return arith::TruncIOp::create(b, loc, to, value);
    if (zeroExtends)
      return arith::ExtUIOp::create(b, loc, to, value);
    return arith::ExtSIOp::create(b, loc, to, value);
  }
  if (fromInt) {
    // bfloat16 computes in float32 (arith-emulate-unsupported-floats): an
    // integer of more than 24 bits would round twice, to float32 and then
    // to bfloat16. It goes through float64 instead, exactly (see
    // exactInFloat64), and float64 -> bf16 rounds once.
    if (!to.isBF16() || fromInt.getWidth() <= 24)
      return zeroExtends
                 ? arith::UIToFPOp::create(b, loc, to, value).getResult()
                 : arith::SIToFPOp::create(b, loc, to, value).getResult();
    Value converted = exactInFloat64(b, loc, value, !zeroExtends);
    // An explicit rounding mode keeps canonicalization from folding the
    // pair back into one conversion to bf16.
    return arith::TruncFOp::create(
        b, loc, to, converted,
        arith::RoundingModeAttr::get(b.getContext(),
                                     arith::RoundingMode::to_nearest_even),
        arith::FastMathFlagsAttr());
  }
  if (toInt) {
    if (toInt.isUnsigned())
      return arith::FPToUIOp::create(b, loc, to, value);
    return arith::FPToSIOp::create(b, loc, to, value);
  }
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth() ||
      (from.isF16() && to.isBF16()) || (from.isBF16() && to.isF16())) {
    // f16 <-> bf16 goes through f32, which holds both exactly.
    if (from.getIntOrFloatBitWidth() == to.getIntOrFloatBitWidth()) {
      Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
      return arith::TruncFOp::create(b, loc, to, wide);
    }
    return arith::ExtFOp::create(b, loc, to, value);
  }
  return arith::TruncFOp::create(b, loc, to, value);
}
