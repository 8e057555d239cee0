//===- VectorWidth.h - the widest vector registers of a CPU -----*- C++ -*-===//
//
// One fact used by the matmul tiling (for the host) and by the AOT compile
// (for its target CPU): how wide a CPU's vector registers are, from its
// LLVM feature names.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_VECTORWIDTH_H
#define PICOKERNEL_SUPPORT_VECTORWIDTH_H

#include <cstdint>

namespace pk {

/// The widest vector registers, in bits, of a CPU for which `has(name)`
/// tells whether it has the LLVM feature `name` ("avx512f", "avx").
template <typename HasFeature> int64_t widestVectorBits(HasFeature has) {
  if (has("avx512f"))
    return 512;
  if (has("avx"))
    return 256;
  return 128;
}

} // namespace pk

#endif // PICOKERNEL_SUPPORT_VECTORWIDTH_H
