//===- DType.h - array element types and NumPy's rules for them -*- C++ -*-===//
//
// The element types picokernel arrays can have, named as NumPy names them,
// with NumPy's type promotion rules. Shared by the tracers and the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_DTYPE_H
#define PICOKERNEL_SUPPORT_DTYPE_H

#include "picokernel/Support/Shape.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pk {

// New dtypes go at the end: the enumerators' values are part of the guard
// and disk-cache keys.
enum class DType : uint8_t {
  Bool,
  I8,
  I16,
  I32,
  I64,
  F16,
  BF16,
  F32,
  F64,
  U8,
  U16,
  U32,
  U64
};

/// How many dtypes there are (the enumerators are 0 to kNumDTypes - 1).
inline constexpr size_t kNumDTypes = size_t(DType::U64) + 1;

inline constexpr DType boolean = DType::Bool;
inline constexpr DType i8 = DType::I8;
inline constexpr DType i16 = DType::I16;
inline constexpr DType i32 = DType::I32;
inline constexpr DType i64 = DType::I64;
inline constexpr DType u8 = DType::U8;
inline constexpr DType u16 = DType::U16;
inline constexpr DType u32 = DType::U32;
inline constexpr DType u64 = DType::U64;
inline constexpr DType f16 = DType::F16;
inline constexpr DType bf16 = DType::BF16;
inline constexpr DType f32 = DType::F32;
inline constexpr DType f64 = DType::F64;

/// NumPy's name: "bool", "int8", ..., "uint64", "float16", "bfloat16".
std::string_view dtypeName(DType dtype);
/// MLIR's name of the element type: "i1", "i8", ..., "ui8", "bf16", "f32".
std::string_view dtypeShortName(DType dtype);
/// Accepts NumPy's names and the short names.
std::optional<DType> parseDType(std::string_view name);

size_t itemSize(DType dtype);
bool isFloat(DType dtype);
/// Signed and unsigned integers; bool is not an integer here.
bool isInteger(DType dtype);
bool isUnsignedInteger(DType dtype);
bool isSignedInteger(DType dtype);
/// The integer of the same width and the other signedness.
DType withSignedness(DType integer, bool isUnsigned);
/// The integer of `bytes` bytes (1, 2, 4 or 8) and the given signedness;
/// none for other sizes.
std::optional<DType> integerOfSize(size_t bytes, bool isUnsigned);

/// NumPy's result_type for two arrays: bool < integers < floats, the wider
/// of two of a kind, a signed and an unsigned integer in the smallest
/// signed integer that holds both (uint8 with int8 is int16; uint64 with a
/// signed integer is float64), and an integer with a float computes in a
/// float wide enough to hold it (int8 and uint8 with float16 are float16,
/// int16 with float16 is float32, int32 with float32 is float64).
/// bfloat16 mixes like float16, and float16 with bfloat16 is float32.
DType promoteTypes(DType a, DType b);

/// NumPy's can_cast(from, to, "same_kind"): bool to anything, unsigned
/// integers to any integer, signed ones to signed ones, integers to
/// floats, within the floats (how stores and in-place operators convert).
bool canCastSameKind(DType from, DType to);

} // namespace pk

#endif // PICOKERNEL_SUPPORT_DTYPE_H
