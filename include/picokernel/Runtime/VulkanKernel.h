//===- VulkanKernel.h - a pk kernel compiled for Vulkan ---------*- C++ -*-===//
//
// A kernel's module through the SPIR-V pipeline into one pre-recorded
// command buffer over device buffers made once (Runtime/Vulkan.h has the
// options and the device queries). The kernel layer caches these.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_VULKANKERNEL_H
#define PICOKERNEL_RUNTIME_VULKANKERNEL_H

#include "picokernel/Runtime/Executable.h"
#include "picokernel/Runtime/Vulkan.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <memory>

namespace pk {

class VulkanKernel : public Executable {
public:
  /// Compiles the one pk.kernel in `module` (rewritten in place) for the
  /// selected Vulkan device. Throws CompileError or VulkanError.
  static std::unique_ptr<VulkanKernel>
  compile(mlir::ModuleOp module, const VulkanOptions &options = {});
  ~VulkanKernel() override;

  void run(void *const *data, const int64_t *const *shapes) const override;
  uint64_t deviceBytes() const override;

  struct Impl;

private:
  VulkanKernel();
  std::unique_ptr<Impl> impl;
};

} // namespace pk

#endif // PICOKERNEL_RUNTIME_VULKANKERNEL_H
