//===- GpuKernels.h - what a hand-built GPU kernel may use ------*- C++ -*-===//
//
// Private to the transforms: shared memory and the bodies of linalg ops that
// pk-tile-matmul-for-gpu and pk-reduce-in-workgroups copy into the
// `gpu.launch` kernels they build.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_GPUKERNELS_H
#define PICOKERNEL_LIB_TRANSFORMS_GPUKERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pk {

/// The memory space of workgroup-shared memory: SPIR-V's Workgroup storage
/// class under the Vulkan mapping, and NVVM's shared address space.
constexpr unsigned kWorkgroupMemorySpace = 3;

/// Blocks an NVIDIA GPU's grid may hold in x, y and z (CUDA's limits,
/// checked by pk-check-nvvm-target; pk-linearize-large-grids moves grids
/// beyond them in y or z onto x).
constexpr int64_t kCudaMaxGridSize[3] = {(int64_t(1) << 31) - 1, 65535, 65535};

/// Whether the op's body can be copied into a kernel as is: it reads only
/// its block arguments, values it defines and constants, and not the loop
/// indices.
bool hasSelfContainedBody(linalg::LinalgOp op);

/// Element types shared memory holds as they are in SPIR-V (booleans have
/// no storage layout).
bool isStorableInSharedMemory(Type type);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_GPUKERNELS_H
