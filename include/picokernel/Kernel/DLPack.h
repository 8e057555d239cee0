//===- DLPack.h - DLPack tensors as kernel arguments ------------*- C++ -*-===//
//
// DLPack is the C ABI through which PyTorch, JAX, CuPy, TensorFlow and NumPy
// hand arrays to each other without copies. pk::fromDLPack views a DLPack
// tensor's memory as a pk::ArrayView:
//
//   // a, b, c, o: DLTensor pointers (&managed->dl_tensor from a framework)
//   fma({pk::fromDLPack(*a), pk::fromDLPack(*b), pk::fromDLPack(*c),
//        pk::fromDLPack(*o)});
//
// It reads the fields by name (data, device, ndim, dtype, shape, strides,
// byte_offset), so it takes DLPack's own DLTensor, and any struct laid out
// by the same specification, without this header including dlpack.h. The
// view points into the tensor's shape and strides: it is valid while the
// tensor is.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_KERNEL_DLPACK_H
#define PICOKERNEL_KERNEL_DLPACK_H

#include "picokernel/Kernel/Kernel.h"

#include <cstdint>

namespace pk {

namespace detail {
/// A DLTensor's fields, as fromDLPack reads them.
struct DLPackFields {
  void *data;
  int32_t deviceType;
  int32_t ndim;
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
  const int64_t *shape;
  const int64_t *strides;
  uint64_t byteOffset;
};

/// Checks `fields` and makes the view (see fromDLPack).
ArrayView arrayViewOfDLPack(const DLPackFields &fields, bool readOnly);
} // namespace detail

/// The ArrayView of a DLPack tensor the CPU can read (kDLCPU, the host
/// memory CUDA and ROCm pin, kDLCUDAHost and kDLROCMHost, or CUDA's managed
/// memory, kDLCUDAManaged, which the caller has synchronized) whose dtype
/// picokernel has: int and uint of 8 to 64 bits, float16/32/64, bfloat16 and
/// bool (kDLBool, 8 bits), one lane. DLPack strides count elements, as
/// ArrayView's do; a tensor without strides is C-contiguous. `readOnly`
/// marks an array kernels must not write (DLPack 1.0's read-only flag is
/// on the managed tensor, not the DLTensor). Throws ArgumentError for
/// anything else: device memory, complex or other dtypes, vector lanes, a
/// negative rank.
template <typename Tensor>
ArrayView fromDLPack(const Tensor &tensor, bool readOnly = false) {
  return detail::arrayViewOfDLPack(
      {tensor.data, static_cast<int32_t>(tensor.device.device_type),
       static_cast<int32_t>(tensor.ndim),
       static_cast<uint8_t>(tensor.dtype.code),
       static_cast<uint8_t>(tensor.dtype.bits),
       static_cast<uint16_t>(tensor.dtype.lanes), tensor.shape, tensor.strides,
       static_cast<uint64_t>(tensor.byte_offset)},
      readOnly);
}

} // namespace pk

#endif // PICOKERNEL_KERNEL_DLPACK_H
