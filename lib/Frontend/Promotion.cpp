//===- Promotion.cpp - NumPy's type promotion and constants --------------===//

#include "OpBuilders.h"

namespace pk {
namespace detail {

mlir::Location location(mlir::Builder &builder, const SourceLoc &where) {
  if (where.file.empty())
    return builder.getUnknownLoc();
  return mlir::FileLineColLoc::get(builder.getContext(), where.file, where.line,
                                   where.column);
}

mlir::RankedTensorType tensorType(mlir::Builder &builder, const Shape &shape,
                                  DType dtype) {
  return mlir::RankedTensorType::get(shape,
                                     toMlirType(dtype, *builder.getContext()));
}

Shape shapeOf(mlir::Value value) {
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  return Shape(type.getShape().begin(), type.getShape().end());
}

DType dtypeOf(mlir::Value value) {
  return *fromMlirType(
      llvm::cast<mlir::RankedTensorType>(value.getType()).getElementType());
}

Shape shapeOf(const Operand &operand) {
  if (operand.getKind() == Operand::Kind::Value)
    return shapeOf(irOf(operand.getValue()));
  if (operand.getKind() == Operand::Kind::Array)
    return operand.getArray().shape;
  return {};
}

mlir::TypedAttr scalarAttr(mlir::Builder &builder, const Operand &number,
                           DType dtype, const std::string &op) {
  mlir::MLIRContext &context = *builder.getContext();
  mlir::Type type = toMlirType(dtype, context);
  // uint64 holds the big integers below 2^64 exactly.
  if (dtype == DType::U64 && number.isBigInteger())
    if (std::optional<int64_t> bits = number.wrappedToInt64())
      return mlir::IntegerAttr::get(type, llvm::APInt(64, uint64_t(*bits)));
  bool isFloatNumber =
      number.getKind() == Operand::Kind::Float || number.isBigInteger();
  if (number.isBigInteger() && !isFloat(dtype))
    fail(number.where(), op,
         "integer " + formatBigInteger(number) + " does not fit in " +
             quoted(dtype) +
             " (NumPy raises OverflowError: Python int too large to "
             "convert to C long)",
         TraceError::Category::Overflow);
  if (number.isBigInteger() && std::isinf(number.getFloat()))
    fail(number.where(), op,
         "integer " + formatBigInteger(number) +
             " is too large to convert to " + quoted(dtype) +
             " (NumPy raises OverflowError: int too large to convert to "
             "float)",
         TraceError::Category::Overflow);
  if (isFloat(dtype)) {
    const llvm::fltSemantics &semantics =
        llvm::cast<mlir::FloatType>(type).getFloatSemantics();
    llvm::APFloat value(isFloatNumber ? number.getFloat()
                                      : double(number.getInteger()));
    if (!isFloatNumber) {
      value = llvm::APFloat(semantics);
      value.convertFromAPInt(llvm::APInt(64, number.getInteger(), true),
                             /*IsSigned=*/true,
                             llvm::APFloat::rmNearestTiesToEven);
    } else {
      bool losesInfo = false;
      value.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    }
    return mlir::FloatAttr::get(type, value);
  }
  if (dtype == DType::Bool)
    return mlir::IntegerAttr::get(
        type, llvm::APInt(1, isFloatNumber ? number.getFloat() != 0.0
                                           : number.getInteger() != 0));
  int64_t value = number.getInteger();
  if (isFloatNumber) {
    // As NumPy's `int_array[...] = 2.7`: truncation toward zero.
    double truncated = std::trunc(number.getFloat());
    if (dtype == DType::U64 && truncated >= 0x1p63 && truncated < 0x1p64)
      return mlir::IntegerAttr::get(type, llvm::APInt(64, uint64_t(truncated)));
    if (!std::isfinite(truncated) || truncated < -0x1p63 || truncated >= 0x1p63)
      fail(number.where(), op,
           "the number " + std::to_string(number.getFloat()) +
               " cannot be converted to " + quoted(dtype),
           TraceError::Category::Overflow);
    value = int64_t(truncated);
  }
  if (!fitsIn(value, dtype))
    fail(number.where(), op,
         "integer scalar " + std::to_string(value) + " is out of bounds for " +
             quoted(dtype) + " (NumPy raises OverflowError)",
         TraceError::Category::Overflow);
  return mlir::IntegerAttr::get(
      type, llvm::APInt(type.getIntOrFloatBitWidth(), value,
                        /*isSigned=*/isSignedInteger(dtype)));
}

std::string formatBigInteger(const Operand &number) {
  if (std::optional<int64_t> bits = number.wrappedToInt64())
    return std::to_string(uint64_t(*bits));
  if (std::isinf(number.getFloat()))
    return number.getFloat() > 0 ? ">= 2^1024" : "<= -2^1024";
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", number.getFloat());
  return text;
}

bool fitsIn(int64_t value, DType dtype) {
  unsigned bits = unsigned(itemSize(dtype)) * 8;
  if (isUnsignedInteger(dtype))
    return value >= 0 && (bits >= 64 || value < (int64_t(1) << bits));
  if (bits >= 64)
    return true;
  int64_t limit = int64_t(1) << (bits - 1);
  return value >= -limit && value < limit;
}

mlir::Value materialize(mlir::OpBuilder &builder, const Operand &operand,
                        DType dtype, const Shape &shape,
                        const std::string &op) {
  mlir::Location loc = location(builder, operand.where());
  mlir::Value value;
  switch (operand.getKind()) {
  case Operand::Kind::Value:
    value = irOf(operand.getValue());
    break;
  case Operand::Kind::Array:
    value = constantArray(builder, operand.getArray(), loc);
    break;
  default: {
    auto splat = [&](const Shape &splatShape, DType splatType) {
      auto type = tensorType(builder, splatShape, splatType);
      return mlir::pk::ConstantOp::create(
          builder, loc,
          mlir::DenseElementsAttr::get(
              type, llvm::ArrayRef<mlir::Attribute>(
                        scalarAttr(builder, operand, splatType, op))));
    };
    // A NumPy integer scalar of another dtype wraps into an unsigned dtype,
    // as NumPy's assignment casts it (`uint8_ref[...] = np.uint32(2**32 - 1)`
    // is 255; into a signed dtype NumPy checks the value, as below).
    std::optional<DType> own = operand.numberType();
    if (own && *own != dtype && isInteger(*own) && isUnsignedInteger(dtype)) {
      value = splat({}, *own);
      break;
    }
    return splat(shape, dtype);
  }
  }
  if (dtypeOf(value) != dtype)
    value = mlir::pk::CastOp::create(
        builder, loc, tensorType(builder, shapeOf(value), dtype), value);
  if (shapeOf(value) != shape)
    value = mlir::pk::BroadcastOp::create(
        builder, loc, tensorType(builder, shape, dtype), value);
  return value;
}

std::optional<DType> arrayType(const Operand &operand) {
  if (operand.getKind() == Operand::Kind::Value)
    return dtypeOf(irOf(operand.getValue()));
  if (operand.getKind() == Operand::Kind::Array)
    return operand.getArray().dtype;
  return operand.numberType();
}

mlir::Value constantArray(mlir::OpBuilder &builder,
                          const Operand::ConstantArray &array,
                          mlir::Location loc) {
  auto type = tensorType(builder, array.shape, array.dtype);
  mlir::DenseElementsAttr attr;
  if (array.dtype == DType::Bool) {
    llvm::SmallVector<bool> bits(array.bytes.begin(), array.bytes.end());
    attr = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
  } else {
    attr = mlir::DenseElementsAttr::getFromRawBuffer(
        type,
        llvm::ArrayRef<char>(reinterpret_cast<const char *>(array.bytes.data()),
                             array.bytes.size()));
  }
  return mlir::pk::ConstantOp::create(builder, loc, attr);
}

DType resultType(const Operand &lhs, const Operand &rhs) {
  std::optional<DType> lhsType = arrayType(lhs), rhsType = arrayType(rhs);
  if (lhsType && rhsType)
    return promoteTypes(*lhsType, *rhsType);
  if (!lhsType && !rhsType) // two Python numbers: Python's own kinds
    return std::max(weakType(lhs), weakType(rhs));
  DType dtype = lhsType ? *lhsType : *rhsType;
  const Operand &number = lhsType ? rhs : lhs;
  switch (number.getKind()) {
  case Operand::Kind::Float:
    return isFloat(dtype) ? dtype : DType::F64;
  case Operand::Kind::Integer:
    return dtype == DType::Bool ? DType::I64 : dtype;
  default:
    return dtype;
  }
}

DType weakType(const Operand &number) {
  switch (number.getKind()) {
  case Operand::Kind::Bool:
    return DType::Bool;
  case Operand::Kind::Integer:
    return DType::I64;
  default:
    return DType::F64;
  }
}

Shape broadcastOperands(const Operand &lhs, const Operand &rhs,
                        const std::string &op) {
  Shape lhsShape = shapeOf(lhs), rhsShape = shapeOf(rhs);
  std::optional<Shape> shape = broadcastShapes(lhsShape, rhsShape);
  if (!shape)
    fail(lhs.where(), op,
         "operands of shapes " + formatShape(lhsShape) + " and " +
             formatShape(rhsShape) + " cannot be broadcast together");
  return *shape;
}

} // namespace detail
} // namespace pk
