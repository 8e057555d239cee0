//===- DLPack.cpp - DLPack tensors as kernel arguments --------------------===//

#include "picokernel/Kernel/DLPack.h"

#include <iterator>
#include <optional>
#include <string>

namespace pk::detail {

namespace {

// DLPack's enumerators (dlpack.h, DLDeviceType and DLDataTypeCode), which
// are part of its stable ABI.
enum DLPackDevice : int32_t {
  kCPU = 1,
  kCUDAHost = 3,
  kROCMHost = 11,
  kCUDAManaged = 13
};
enum DLPackCode : uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kBfloat = 4,
  kComplex = 5,
  kBool = 6
};

/// picokernel's dtype for a DLPack (code, bits), if it has one.
std::optional<DType> dtypeOf(uint8_t code, uint8_t bits) {
  switch (code) {
  case kInt:
    switch (bits) {
    case 8:
      return i8;
    case 16:
      return i16;
    case 32:
      return i32;
    case 64:
      return i64;
    }
    break;
  case kUInt:
    switch (bits) {
    case 8:
      return u8;
    case 16:
      return u16;
    case 32:
      return u32;
    case 64:
      return u64;
    }
    break;
  case kFloat:
    switch (bits) {
    case 16:
      return f16;
    case 32:
      return f32;
    case 64:
      return f64;
    }
    break;
  case kBfloat:
    if (bits == 16)
      return bf16;
    break;
  case kBool:
    if (bits == 8)
      return boolean;
    break;
  }
  return std::nullopt;
}

std::string describe(uint8_t code, uint8_t bits, uint16_t lanes) {
  static const char *const names[] = {"int",    "uint",    "float", "handle",
                                      "bfloat", "complex", "bool"};
  std::string text = code < std::size(names)
                         ? names[code] + std::to_string(bits)
                         : "code " + std::to_string(code) + " (" +
                               std::to_string(bits) + " bits)";
  if (lanes != 1)
    text += "x" + std::to_string(lanes);
  return text;
}

} // namespace

ArrayView arrayViewOfDLPack(const DLPackFields &fields, bool readOnly) {
  if (fields.deviceType != kCPU && fields.deviceType != kCUDAHost &&
      fields.deviceType != kROCMHost && fields.deviceType != kCUDAManaged)
    throw ArgumentError("a DLPack tensor on device type " +
                        std::to_string(fields.deviceType) +
                        " is not in host memory; picokernel's CPU kernels "
                        "take kDLCPU (1), kDLCUDAHost (3), kDLROCMHost (11) "
                        "or kDLCUDAManaged (13) tensors");
  std::optional<DType> dtype = dtypeOf(fields.code, fields.bits);
  if (!dtype || fields.lanes != 1)
    throw ArgumentError("a DLPack tensor of dtype " +
                        describe(fields.code, fields.bits, fields.lanes) +
                        " has no picokernel dtype");
  if (fields.ndim < 0 || (fields.ndim > 0 && !fields.shape))
    throw ArgumentError("a DLPack tensor has " + std::to_string(fields.ndim) +
                        " dimensions and no shape to match");
  auto rank = size_t(fields.ndim);
  // (No offset from a null pointer: the kernel's check names it.)
  char *data = static_cast<char *>(fields.data);
  ArrayView view{data ? data + fields.byteOffset : nullptr, *dtype,
                 std::span<const int64_t>(fields.shape, rank)};
  if (fields.strides)
    view.strides = std::span<const int64_t>(fields.strides, rank);
  view.readOnly = readOnly;
  return view;
}

} // namespace pk::detail
