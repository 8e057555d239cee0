//===- DType.cpp - array element types and NumPy's rules for them ---------===//

#include "picokernel/Support/DType.h"
#include "picokernel/Support/DTypeIR.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/bit.h"

#include <algorithm>

namespace pk {

namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view shortName;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", "i1", 1},       {DType::I8, "int8", "i8", 1},
    {DType::I16, "int16", "i16", 2},      {DType::I32, "int32", "i32", 4},
    {DType::I64, "int64", "i64", 8},      {DType::F16, "float16", "f16", 2},
    {DType::BF16, "bfloat16", "bf16", 2}, {DType::F32, "float32", "f32", 4},
    {DType::F64, "float64", "f64", 8},    {DType::U8, "uint8", "ui8", 1},
    {DType::U16, "uint16", "ui16", 2},    {DType::U32, "uint32", "ui32", 4},
    {DType::U64, "uint64", "ui64", 8},
};

static_assert(std::size(kDTypes) == kNumDTypes, "a row per dtype, in order");

const DTypeInfo &info(DType dtype) { return kDTypes[size_t(dtype)]; }

/// Bits of integer precision a type holds exactly (its significand for
/// floats), which decides NumPy's int/float promotion.
int exactBits(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 8; // NumPy: int8 fits float16, int16 does not.
  case DType::F32:
    return 16; // int16 fits float32, int32 does not.
  default:
    return 64;
  }
}
} // namespace

std::string_view dtypeName(DType dtype) { return info(dtype).name; }
std::string_view dtypeShortName(DType dtype) { return info(dtype).shortName; }
size_t itemSize(DType dtype) { return info(dtype).size; }

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo &entry : kDTypes)
    if (entry.name == name || entry.shortName == name)
      return entry.dtype;
  return std::nullopt;
}

bool isFloat(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 ||
         dtype == DType::F64;
}

bool isSignedInteger(DType dtype) {
  return dtype == DType::I8 || dtype == DType::I16 || dtype == DType::I32 ||
         dtype == DType::I64;
}

bool isUnsignedInteger(DType dtype) {
  return dtype == DType::U8 || dtype == DType::U16 || dtype == DType::U32 ||
         dtype == DType::U64;
}

bool isInteger(DType dtype) {
  return isSignedInteger(dtype) || isUnsignedInteger(dtype);
}

std::optional<DType> integerOfSize(size_t bytes, bool isUnsigned) {
  static constexpr DType kSigned[] = {DType::I8, DType::I16, DType::I32,
                                      DType::I64};
  static constexpr DType kUnsigned[] = {DType::U8, DType::U16, DType::U32,
                                        DType::U64};
  if (bytes == 0 || bytes > 8 || !llvm::isPowerOf2_64(bytes))
    return std::nullopt;
  size_t index = llvm::countr_zero(bytes);
  return isUnsigned ? kUnsigned[index] : kSigned[index];
}

DType withSignedness(DType integer, bool isUnsigned) {
  return *integerOfSize(itemSize(integer), isUnsigned);
}

mlir::Type toMlirType(DType dtype, mlir::MLIRContext &context) {
  switch (dtype) {
  case DType::Bool:
    return mlir::IntegerType::get(&context, 1);
  case DType::I8:
    return mlir::IntegerType::get(&context, 8);
  case DType::I16:
    return mlir::IntegerType::get(&context, 16);
  case DType::I32:
    return mlir::IntegerType::get(&context, 32);
  case DType::I64:
    return mlir::IntegerType::get(&context, 64);
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    return mlir::IntegerType::get(&context, unsigned(itemSize(dtype)) * 8,
                                  mlir::IntegerType::Unsigned);
  case DType::F16:
    return mlir::Float16Type::get(&context);
  case DType::BF16:
    return mlir::BFloat16Type::get(&context);
  case DType::F32:
    return mlir::Float32Type::get(&context);
  case DType::F64:
    return mlir::Float64Type::get(&context);
  }
  return {};
}

std::optional<DType> fromMlirType(mlir::Type type) {
  for (const DTypeInfo &entry : kDTypes)
    if (toMlirType(entry.dtype, *type.getContext()) == type)
      return entry.dtype;
  return std::nullopt;
}

DType promoteTypes(DType a, DType b) {
  if (a == b || b == DType::Bool)
    return a;
  if (a == DType::Bool)
    return b;
  if (isInteger(a) && isInteger(b)) {
    if (isUnsignedInteger(a) == isUnsignedInteger(b))
      return itemSize(a) >= itemSize(b) ? a : b;
    // Mixed signs: the signed one if wider, else a signed integer twice
    // the unsigned one's width (none holds uint64 and int64: float64).
    DType signedType = isUnsignedInteger(a) ? b : a;
    DType unsignedType = isUnsignedInteger(a) ? a : b;
    if (itemSize(signedType) > itemSize(unsignedType))
      return signedType;
    if (itemSize(unsignedType) == 8)
      return DType::F64;
    return *integerOfSize(itemSize(unsignedType) * 2, /*isUnsigned=*/false);
  }
  if (isFloat(a) && isFloat(b)) {
    if ((a == DType::F16 && b == DType::BF16) ||
        (a == DType::BF16 && b == DType::F16))
      return DType::F32;
    return std::max(a, b);
  }
  // One integer, one float: the float if it holds the integer exactly,
  // else the next float that does.
  DType intType = isInteger(a) ? a : b;
  DType floatType = isInteger(a) ? b : a;
  int intBits = int(itemSize(intType)) * 8;
  for (DType candidate : {floatType, DType::F32, DType::F64})
    if (candidate >= floatType && exactBits(candidate) >= intBits)
      return candidate;
  return DType::F64;
}

bool canCastSameKind(DType from, DType to) {
  if (from == to || from == DType::Bool)
    return true;
  if (isUnsignedInteger(from))
    return isInteger(to) || isFloat(to);
  if (isSignedInteger(from))
    return isSignedInteger(to) || isFloat(to);
  return isFloat(from) && isFloat(to);
}

} // namespace pk
