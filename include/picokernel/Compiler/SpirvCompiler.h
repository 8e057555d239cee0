//===- SpirvCompiler.h - pk kernels to SPIR-V and a host plan ---*- C++ -*-===//
//
// The GPU half of the compile driver: the SPIR-V pipeline turns a pk kernel
// into GPU kernels (one spirv.module) and a host function that launches
// them. The host function becomes a VulkanPlan, all that a GPU runtime
// needs to run the kernel (buffers, dispatches, copies, constants), so that
// runtimes execute plans and never read MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_COMPILER_SPIRVCOMPILER_H
#define PICOKERNEL_COMPILER_SPIRVCOMPILER_H

#include "picokernel/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::pk {

/// Compiles the pk kernel in `module` (rewritten in place) with the SPIR-V
/// pipeline and serializes its kernels, one entry point per dispatch, into
/// `binary`, which stays empty when nothing runs on the GPU (the kernel only
/// copies whole arrays, or its arrays are empty). Diagnostics go to the
/// module's context.
LogicalResult compileToSpirv(ModuleOp module,
                             const SpirvPipelineOptions &options,
                             SmallVectorImpl<uint32_t> &binary);

/// What the host side of a kernel compiled for the GPU does, in order.
struct VulkanPlan {
  struct Buffer {
    uint64_t bytes = 0;
    /// What it holds, for messages: "argument '0'", "a temporary".
    std::string what;
    /// A constant's initial contents: all `bytes` of them, or one element
    /// repeated through the buffer when `splat`; empty otherwise.
    std::vector<char> contents;
    bool splat = false;
  };
  struct Step {
    enum Kind { Dispatch, Copy } kind = Dispatch;
    /// Dispatch: the SPIR-V entry point, its grid of workgroups and the
    /// buffers bound to its descriptor set, in binding order.
    std::string entryPoint;
    uint32_t grid[3] = {1, 1, 1};
    std::vector<unsigned> bindings;
    /// Copy: whole buffers.
    unsigned source = 0, target = 0;
  };
  /// The GPU kernels; empty when the kernel only copies whole arrays.
  std::vector<uint32_t> spirv;
  /// The kernel's parameters first (in order), then temporaries and
  /// constants.
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
};

/// Compiles the pk kernel in `module` (rewritten in place) for a Vulkan
/// device: compileToSpirv, then the plan of its host function. Diagnostics
/// go to the module's context.
FailureOr<VulkanPlan> compileForVulkan(ModuleOp module,
                                       const SpirvPipelineOptions &options);

} // namespace mlir::pk

#endif // PICOKERNEL_COMPILER_SPIRVCOMPILER_H
