//===- KernelSignature.h - what a compiled kernel takes ---------*- C++ -*-===//
//
// The calling convention of a compiled pk.kernel, read once from the IR by
// every compile path (JIT, Vulkan, ahead-of-time objects): its name and, per
// parameter, the array it expects and whether it reads or writes it.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_COMPILER_KERNELSIGNATURE_H
#define PICOKERNEL_COMPILER_KERNELSIGNATURE_H

#include "picokernel/Support/DType.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
namespace pk {
class KernelOp;
} // namespace pk
} // namespace mlir

namespace pk {

/// A parameter of a compiled kernel: one distinct, C-contiguous array.
struct CompiledParam {
  std::string name;
  Shape shape;
  DType dtype;
  bool read = false;    ///< the kernel loads it
  bool written = false; ///< the kernel stores to it

  size_t elements() const;
  size_t bytes() const { return elements() * itemSize(dtype); }
};

struct KernelSignature {
  std::string name;
  std::vector<CompiledParam> params;
};

/// The signature of `kernel` (its parameters are refs of pk element types,
/// as the verifier ensures).
KernelSignature signatureOf(mlir::pk::KernelOp kernel);

} // namespace pk

#endif // PICOKERNEL_COMPILER_KERNELSIGNATURE_H
