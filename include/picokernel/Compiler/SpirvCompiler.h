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
/// Where the kernel has dynamic sizes, some byte counts, grids and kernel
/// arguments are computed at dispatch from the parameters' sizes: by the
/// plan's `sizes` program, whose results the other fields name by index.
struct VulkanPlan {
  /// One step of the size program: its result is the value of the
  /// instruction's index. Integer arithmetic on int64 as MLIR's index.
  struct SizeInstruction {
    enum Kind {
      Constant, ///< `value`
      Dim,      ///< size `dim` of parameter `value`
      Add,
      Sub,
      Mul,
      DivS, ///< truncating, as arith.divsi
      CeilDivS,
      FloorDivS,
      RemS,
      MinS,
      MaxS,
      And, ///< bitwise, as on i1 conditions
      Or,
      Xor,
      Cmp,   ///< `value` is the arith::CmpIPredicate; 1 or 0
      Select ///< operands: condition, then, else
    } kind = Constant;
    int64_t value = 0;
    unsigned dim = 0;
    unsigned operands[3] = {0, 0, 0};
  };
  static constexpr int kStatic = -1;
  struct Buffer {
    /// Its size; for a parameter of dynamic sizes, computed from the array.
    uint64_t bytes = 0;
    /// A temporary of dynamic sizes: the size instruction that gives its
    /// bytes.
    int bytesOf = kStatic;
    /// A kernel argument that is a size: the size instruction whose value
    /// the buffer holds, as an int32 (SPIR-V's index).
    int valueOf = kStatic;
    /// Allocated for a step that runs only when this size instruction is
    /// nonzero: with its bytes then, 4 bytes otherwise.
    int when = kStatic;
    /// What it holds, for messages: "argument '0'", "a temporary".
    std::string what;
    /// A constant's initial contents: all `bytes` of them, or one element
    /// repeated through the buffer when `splat`; empty otherwise.
    std::vector<char> contents;
    bool splat = false;
  };
  struct Step {
    enum Kind { Dispatch, Copy, Update } kind = Dispatch;
    /// Runs only when this size instruction is nonzero (a branch on the
    /// sizes); always with kStatic.
    int when = kStatic;
    /// Dispatch: the SPIR-V entry point, its grid of workgroups and the
    /// buffers bound to its descriptor set, in binding order.
    std::string entryPoint;
    uint32_t grid[3] = {1, 1, 1};
    /// The size instructions of a grid computed at dispatch (kStatic where
    /// `grid` holds it).
    int gridOf[3] = {kStatic, kStatic, kStatic};
    std::vector<unsigned> bindings;
    /// Copy: whole buffers. Update: `target`'s one element becomes the
    /// value of size instruction `valueOf`, as an element of
    /// `elementBytes` bytes, an integer or (`isFloat`) an IEEE float (2
    /// bytes: `isBFloat16` picks bfloat16 over half).
    unsigned source = 0, target = 0;
    int valueOf = kStatic;
    unsigned elementBytes = 0;
    bool isFloat = false, isBFloat16 = false;
  };
  /// The GPU kernels; empty when the kernel only copies whole arrays.
  std::vector<uint32_t> spirv;
  /// The kernel's parameters first (in order), then temporaries, constants
  /// and sizes.
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  /// Empty for a kernel of static sizes.
  std::vector<SizeInstruction> sizes;

  bool hasDynamicSizes() const { return !sizes.empty(); }
  /// Runs the size program on the parameters' sizes (`shapes[i]`, the sizes
  /// of parameter i) into `values`; false when a division by zero or an
  /// overflow makes it meaningless.
  bool evaluateSizes(const int64_t *const *shapes,
                     std::vector<int64_t> &values) const;
};

/// Compiles the pk kernel in `module` (rewritten in place) for a Vulkan
/// device: compileToSpirv, then the plan of its host function. Diagnostics
/// go to the module's context.
FailureOr<VulkanPlan> compileForVulkan(ModuleOp module,
                                       const SpirvPipelineOptions &options);

} // namespace mlir::pk

#endif // PICOKERNEL_COMPILER_SPIRVCOMPILER_H
