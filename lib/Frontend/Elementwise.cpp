//===- Elementwise.cpp - elementwise operations of traced values ----------===//

#include "OpBuilders.h"

namespace pk {

const char *mathFunctionName(MathFunction function) {
  switch (function) {
#define PK_MATH_FUNCTION(Kind, name, Op, ...)                                  \
  case MathFunction::Kind:                                                     \
    return #name;
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
  }
  llvm_unreachable("unknown math function");
}

namespace detail {

const char *binaryName(BinaryKind kind) {
  switch (kind) {
#define PK_BINARY(Kind, name, Op, ...)                                         \
  case BinaryKind::Kind:                                                       \
    return #name;
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
  }
  llvm_unreachable("unknown binary operation");
}

const char *compareName(CompareKind kind) {
  switch (kind) {
#define PK_COMPARISON(Kind, name, Op, ...)                                     \
  case CompareKind::Kind:                                                      \
    return #name;
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
  }
  llvm_unreachable("unknown comparison");
}

namespace {
/// The pk op of a binary operation or comparison on operands of one type.
mlir::Value createBinaryOp(mlir::OpBuilder &builder, mlir::Location loc,
                           BinaryKind kind, mlir::Value l, mlir::Value r) {
  switch (kind) {
#define PK_BINARY(Kind, name, Op, ...)                                         \
  case BinaryKind::Kind:                                                       \
    return mlir::pk::Op::create(builder, loc, l, r);
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
  }
  llvm_unreachable("unknown binary operation");
}

mlir::Value createComparisonOp(mlir::OpBuilder &builder, mlir::Location loc,
                               CompareKind kind, mlir::Value l, mlir::Value r) {
  switch (kind) {
#define PK_COMPARISON(Kind, name, Op, ...)                                     \
  case CompareKind::Kind:                                                      \
    return mlir::pk::Op::create(builder, loc, l, r);
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
  }
  llvm_unreachable("unknown comparison");
}

mlir::Value createMathOp(mlir::OpBuilder &builder, mlir::Location loc,
                         MathFunction function, mlir::Value x) {
  switch (function) {
#define PK_MATH_FUNCTION(Kind, name, Op, ...)                                  \
  case MathFunction::Kind:                                                     \
    return mlir::pk::Op::create(builder, loc, x);
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
  }
  llvm_unreachable("unknown math function");
}
} // namespace

mlir::Value buildBinary(mlir::OpBuilder &builder, BinaryKind kind,
                        const Operand &lhs, const Operand &rhs) {
  std::string op = binaryName(kind);
  Shape shape = broadcastOperands(lhs, rhs, op);
  DType dtype = resultType(lhs, rhs);
  mlir::Location loc = location(builder, lhs.where());

  if (kind == BinaryKind::Div && !isFloat(dtype))
    dtype = DType::F64; // true division, as NumPy's `/`
  if (kind == BinaryKind::Max || kind == BinaryKind::Min) {
    mlir::Value l = materialize(builder, lhs, dtype, shape, op);
    mlir::Value r = materialize(builder, rhs, dtype, shape, op);
    return createBinaryOp(builder, loc, kind, l, r);
  }
  if (kind == BinaryKind::FloorDiv || kind == BinaryKind::Rem) {
    if (dtype == DType::Bool)
      dtype = DType::I8; // NumPy's bool // bool and bool % bool are int8
    mlir::Value l = materialize(builder, lhs, dtype, shape, op);
    mlir::Value r = materialize(builder, rhs, dtype, shape, op);
    return createBinaryOp(builder, loc, kind, l, r);
  }
  if (dtype == DType::Bool) {
    if (kind == BinaryKind::Sub)
      fail(lhs.where(), op,
           "boolean subtract, the `-` operator, is not supported (as in "
           "NumPy); cast to a number type first with pk::cast",
           TraceError::Category::Type);
    // NumPy's bool + bool is logical or, bool * bool logical and: compute
    // in int8 (0/1 operands cannot wrap to zero) and compare with zero.
    mlir::Value l = materialize(builder, lhs, DType::I8, shape, op);
    mlir::Value r = materialize(builder, rhs, DType::I8, shape, op);
    mlir::Value result = createBinaryOp(builder, loc, kind, l, r);
    return mlir::pk::CastOp::create(
        builder, loc, tensorType(builder, shape, DType::Bool), result);
  }

  mlir::Value l = materialize(builder, lhs, dtype, shape, op);
  mlir::Value r = materialize(builder, rhs, dtype, shape, op);
  return createBinaryOp(builder, loc, kind, l, r);
}

bool comparedWithHuge(CompareKind kind, bool hugeOnRight, bool positive) {
  bool xBelow = hugeOnRight == positive; // the left side is the smaller
  switch (kind) {
  case CompareKind::Lt:
  case CompareKind::Le:
    return xBelow;
  case CompareKind::Gt:
  case CompareKind::Ge:
    return !xBelow;
  case CompareKind::Eq:
    return false;
  case CompareKind::Ne:
    return true;
  }
  llvm_unreachable("unknown comparison");
}

namespace {
/// Every element's `x kind huge` (`huge kind x` unless hugeOnRight), with
/// huge a number beyond x's dtype of the given sign: a bool splat.
mlir::Value comparisonWithHuge(mlir::OpBuilder &builder, CompareKind kind,
                               bool hugeOnRight, bool positive,
                               const SourceLoc &where, const Shape &shape,
                               const std::string &op) {
  return materialize(
      builder,
      Operand::fromBool(comparedWithHuge(kind, hugeOnRight, positive), where),
      DType::Bool, shape, op);
}

/// `lhs kind rhs` for a uint64 and a signed integer, which NumPy compares
/// exactly (no integer holds both; float64 would round): a negative signed
/// value is below every uint64, and the others compare as uint64.
mlir::Value compareMixedSigns(mlir::OpBuilder &builder, CompareKind kind,
                              const Operand &lhs, const Operand &rhs,
                              const Shape &shape, const std::string &op) {
  bool signedOnRight = isSignedInteger(*arrayType(rhs));
  const Operand &signedSide = signedOnRight ? rhs : lhs;
  mlir::Location loc = location(builder, lhs.where());
  mlir::Value s = materialize(builder, signedSide, DType::I64, shape, op);
  mlir::Value zero =
      materialize(builder, Operand::fromInteger(0, signedSide.where()),
                  DType::I64, shape, op);
  mlir::Value isNegative = mlir::pk::LessOp::create(builder, loc, s, zero);
  // The signed side's bits as uint64 (a cast: a number would not fit).
  mlir::Value u =
      materialize(builder, signedOnRight ? lhs : rhs, DType::U64, shape, op);
  mlir::Value sBits = mlir::pk::CastOp::create(
      builder, loc, tensorType(builder, shape, DType::U64), s);
  mlir::Value asUnsigned = createComparisonOp(
      builder, loc, kind, signedOnRight ? u : sBits, signedOnRight ? sBits : u);
  mlir::Value belowAll = comparisonWithHuge(
      builder, kind, signedOnRight, /*positive=*/false, lhs.where(), shape, op);
  return mlir::pk::SelectOp::create(builder, loc, isNegative, belowAll,
                                    asUnsigned);
}
} // namespace

mlir::Value buildCompare(mlir::OpBuilder &builder, CompareKind kind,
                         const Operand &lhs, const Operand &rhs) {
  std::string op = compareName(kind);
  Shape shape = broadcastOperands(lhs, rhs, op);
  DType dtype = resultType(lhs, rhs);
  std::optional<DType> lhsType = arrayType(lhs), rhsType = arrayType(rhs);
  if (lhsType && rhsType && isInteger(*lhsType) && isInteger(*rhsType) &&
      (*lhsType == DType::U64 || *rhsType == DType::U64) &&
      (isSignedInteger(*lhsType) || isSignedInteger(*rhsType)))
    return compareMixedSigns(builder, kind, lhs, rhs, shape, op);
  // NumPy 2 compares integers with a Python integer their dtype cannot
  // hold by its value (`int8_array < 1000` is all true): in int64, and
  // beyond int64 (or below uint64) by the number's sign alone.
  if (isInteger(dtype))
    for (const Operand *number : {&lhs, &rhs}) {
      if (arrayType(*number) || number->getKind() != Operand::Kind::Integer)
        continue;
      const Operand &array = number == &lhs ? rhs : lhs;
      auto bySign = [&](bool positive) {
        return comparisonWithHuge(builder, kind, number == &rhs, positive,
                                  lhs.where(), shape, op);
      };
      bool inUnsigned64 = dtype == DType::U64 && number->wrappedToInt64();
      if (number->isBigInteger() && !inUnsigned64 && arrayType(array) &&
          isInteger(*arrayType(array)))
        return bySign(number->getFloat() > 0);
      if (!number->isBigInteger() && !fitsIn(number->getInteger(), dtype)) {
        if (dtype == DType::U64) // negative: below every uint64
          return bySign(false);
        dtype = DType::I64;
      }
    }
  mlir::Location loc = location(builder, lhs.where());
  mlir::Value l = materialize(builder, lhs, dtype, shape, op);
  mlir::Value r = materialize(builder, rhs, dtype, shape, op);
  return createComparisonOp(builder, loc, kind, l, r);
}

mlir::Value buildMathFunction(mlir::OpBuilder &builder, MathFunction function,
                              const Operand &operand) {
  std::string op = mathFunctionName(function);
  DType dtype = *arrayType(operand);
  // NumPy 2 rounds integers and booleans to themselves.
  if ((function == MathFunction::Floor || function == MathFunction::Ceil) &&
      !isFloat(dtype))
    return materialize(builder, operand, dtype, shapeOf(operand), op);
  if (!isFloat(dtype))
    dtype = promoteTypes(dtype, DType::F16); // NumPy: int8 -> float16, ...
  mlir::Value x = materialize(builder, operand, dtype, shapeOf(operand), op);
  mlir::Location loc = location(builder, operand.where());
  return createMathOp(builder, loc, function, x);
}

mlir::Value buildPower(mlir::OpBuilder &builder, const Operand &base,
                       const Operand &exponent, bool inPlace) {
  const std::string op = "power";
  Shape shape = broadcastOperands(base, exponent, op);
  DType dtype = resultType(base, exponent);
  // NumPy has no boolean power: bool ** bool, and a boolean array to a
  // Python integer's power, compute in int8.
  if (dtype == DType::Bool ||
      (arrayType(base) == DType::Bool && !arrayType(exponent) &&
       exponent.getKind() == Operand::Kind::Integer))
    dtype = DType::I8;
  bool weakNumber =
      !exponent.numberType() && (exponent.getKind() == Operand::Kind::Integer ||
                                 exponent.getKind() == Operand::Kind::Float);
  mlir::Location loc = location(builder, base.where());
  if (!isFloat(dtype)) {
    if (exponent.getKind() != Operand::Kind::Integer &&
        exponent.getKind() != Operand::Kind::Bool)
      fail(exponent.where(), op,
           "integer powers (" + quoted(dtype) +
               " ** ...) need a constant exponent, whose sign is known "
               "when tracing (NumPy raises for negative ones); use a "
               "floating-point base or exponent",
           TraceError::Category::Type);
    // The exponent converts to the base's integer dtype first (an
    // OverflowError even without elements); NumPy raises for negative
    // ones in its loop, so arrays without elements raise nothing.
    if (exponent.isBigInteger())
      scalarAttr(builder, exponent, dtype, op);
    // From 2^63 to 2^64, an exponent only uint64 holds (checked above).
    std::optional<int64_t> wrapped = exponent.wrappedToInt64();
    bool beyondInt64 = exponent.isBigInteger() && wrapped;
    uint64_t power =
        beyondInt64 ? uint64_t(*wrapped) : uint64_t(exponent.getInteger());
    std::optional<DType> baseType = arrayType(base);
    if (!beyondInt64 && weakNumber && baseType && isInteger(*baseType) &&
        !fitsIn(exponent.getInteger(), *baseType))
      fail(exponent.where(), op,
           "Python integer " + std::to_string(exponent.getInteger()) +
               " out of bounds for " + quoted(*baseType) +
               " (NumPy raises OverflowError)",
           TraceError::Category::Overflow);
    bool empty = llvm::is_contained(shape, 0);
    // In place (`x **= e`), NumPy resolves the output's cast first: where
    // x's dtype cannot take the result, the caller's TypeError comes first.
    bool castFails = inPlace && baseType && !canCastSameKind(dtype, *baseType);
    if (!beyondInt64 && exponent.getInteger() < 0 && !empty && !castFails)
      fail(exponent.where(), op,
           "integers to negative integer powers are not allowed (NumPy "
           "raises ValueError); use a floating-point base",
           TraceError::Category::Value);
    if (empty)
      return materialize(builder, Operand::fromInteger(0, base.where()), dtype,
                         shape, op);
    return integerPower(builder, materialize(builder, base, dtype, shape, op),
                        power, loc);
  }
  mlir::Value b = materialize(builder, base, dtype, shape, op);
  if (weakNumber) {
    // NumPy's fast paths for `array ** python_scalar` (square, sqrt,
    // reciprocal, ones, copy): the same results, without a pow call.
    double e =
        exponent.getKind() == Operand::Kind::Integer && !exponent.isBigInteger()
            ? double(exponent.getInteger())
            : exponent.getFloat();
    auto number = [&](double value) {
      return materialize(builder, Operand::fromFloat(value, base.where()),
                         dtype, shape, op);
    };
    if (e == 2.0)
      return mlir::pk::MulOp::create(builder, loc, b, b);
    // Cubes and fourth powers as multiplications, as jax.numpy and numexpr
    // do (NumPy calls pow): within 2 ulp of it, and no pow call in gelu.
    if (e == 3.0 || e == 4.0) {
      mlir::Value square = mlir::pk::MulOp::create(builder, loc, b, b);
      return mlir::pk::MulOp::create(builder, loc, square,
                                     e == 3.0 ? b : square);
    }
    if (e == 0.5)
      return mlir::pk::SqrtOp::create(builder, loc, b);
    if (e == -1.0)
      return mlir::pk::DivOp::create(builder, loc, number(1.0), b);
    if (e == 1.0)
      return b;
    if (e == 0.0)
      return number(1.0);
  }
  mlir::Value e = materialize(builder, exponent, dtype, shape, op);
  mlir::Value result = mlir::pk::PowOp::create(builder, loc, b, e);
  if ((dtype == DType::F32 || dtype == DType::F64) &&
      exponentRepeatsAcrossLoop(base, exponent, shape, inPlace)) {
    // NumPy's float32/float64 power loop takes sqrt(x) for an exponent
    // of 0.5 held in its one repeated element; sqrt differs from pow at
    // -inf (nan, not inf) and -0.0 (-0.0, not 0.0).
    mlir::Value half = materialize(
        builder, Operand::fromFloat(0.5, exponent.where()), dtype, shape, op);
    mlir::Value isHalf = mlir::pk::EqualOp::create(builder, loc, e, half);
    mlir::Value root = mlir::pk::SqrtOp::create(builder, loc, b);
    result = mlir::pk::SelectOp::create(builder, loc, isHalf, root, result);
  }
  return result;
}

bool exponentRepeatsAcrossLoop(const Operand &base, const Operand &exponent,
                               const Shape &result, bool inPlace) {
  Shape exponentShape = shapeOf(exponent);
  if (llvm::any_of(exponentShape, [](int64_t d) { return d != 1; }))
    return false;
  if (exponentShape.empty() || inPlace)
    return true;
  Shape baseShape = shapeOf(base);
  bool trivial =
      exponentShape == result && (baseShape.empty() || baseShape == result);
  return !trivial;
}

mlir::Value integerPower(mlir::OpBuilder &builder, mlir::Value value,
                         uint64_t exponent, mlir::Location loc) {
  mlir::Value result;
  for (mlir::Value square = value; exponent; exponent >>= 1) {
    if (exponent & 1)
      result = result ? mlir::Value(mlir::pk::MulOp::create(builder, loc,
                                                            result, square))
                      : square;
    if (exponent > 1)
      square = mlir::pk::MulOp::create(builder, loc, square, square);
  }
  if (result)
    return result;
  auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
  return mlir::pk::ConstantOp::create(
      builder, loc,
      mlir::DenseElementsAttr::get(
          type, builder.getIntegerAttr(type.getElementType(), 1)));
}

mlir::Value buildAbsolute(mlir::OpBuilder &builder, const Operand &operand) {
  return mlir::pk::AbsOp::create(builder, location(builder, operand.where()),
                                 irOf(operand.getValue()));
}

mlir::Value buildSelect(mlir::OpBuilder &builder, const Operand &condition,
                        const Operand &a, const Operand &b) {
  const std::string op = "where";
  Shape valueShape = broadcastOperands(a, b, op);
  Shape conditionShape = shapeOf(condition);
  std::optional<Shape> shape = broadcastShapes(conditionShape, valueShape);
  if (!shape)
    fail(condition.where(), op,
         "condition of shape " + formatShape(conditionShape) +
             " and values of shape " + formatShape(valueShape) +
             " cannot be broadcast together");
  DType dtype = resultType(a, b);
  // np.where converts Python integers with a C cast: one the integer
  // dtype cannot hold wraps (where arithmetic would raise).
  // Python integers from 2^63 to 2^64 convert as uint64 first, and only
  // larger ones raise (OverflowError).
  auto converted = [&](const Operand &value) {
    if (arrayType(value) || value.getKind() != Operand::Kind::Integer ||
        !isInteger(dtype))
      return value;
    std::optional<int64_t> number =
        value.isBigInteger() ? value.wrappedToInt64()
                             : std::optional<int64_t>(value.getInteger());
    if (!number || (fitsIn(*number, dtype) && !value.isBigInteger()))
      return value;
    unsigned bits = unsigned(itemSize(dtype)) * 8;
    llvm::APInt wrapped = llvm::APInt(64, uint64_t(*number)).trunc(bits);
    if (!isUnsignedInteger(dtype))
      return Operand::fromInteger(wrapped.getSExtValue(), value.where());
    if (dtype == DType::U64 && wrapped.isNegative())
      return Operand::fromUnsignedBigInteger(wrapped.getZExtValue(),
                                             value.where());
    return Operand::fromInteger(int64_t(wrapped.getZExtValue()), value.where());
  };
  mlir::Value c = materialize(builder, condition, DType::Bool, *shape, op);
  mlir::Value t = materialize(builder, converted(a), dtype, *shape, op);
  mlir::Value f = materialize(builder, converted(b), dtype, *shape, op);
  return mlir::pk::SelectOp::create(
      builder, location(builder, condition.where()), c, t, f);
}

mlir::Value buildNegate(mlir::OpBuilder &builder, const Operand &operand) {
  mlir::Value value = irOf(operand.getValue());
  if (dtypeOf(value) == DType::Bool)
    fail(operand.where(), "negative",
         "the boolean negative, the `-` operator, is not supported (as in "
         "NumPy); cast to a number type first with pk::cast",
         TraceError::Category::Type);
  return mlir::pk::NegOp::create(builder, location(builder, operand.where()),
                                 value);
}

mlir::Value buildCast(mlir::OpBuilder &builder, const Operand &operand,
                      DType dtype) {
  mlir::Value value = irOf(operand.getValue());
  return materialize(builder, operand, dtype, shapeOf(value), "cast");
}

} // namespace detail
} // namespace pk
