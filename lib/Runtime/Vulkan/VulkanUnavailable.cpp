//===- VulkanUnavailable.cpp - the Vulkan API in a CPU-only build ---------===//
//
// Built instead of the Vulkan runtime when PK_ENABLE_VULKAN is OFF: the same
// API, reporting that no Vulkan device can be used, so that callers and
// tests see a clear error instead of a link failure.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Runtime/VulkanKernel.h"

namespace pk {

namespace {
constexpr const char *kNotBuilt =
    "vulkan: this picokernel was built without the Vulkan runtime "
    "(PK_ENABLE_VULKAN=OFF; install libvulkan-dev and rebuild)";
} // namespace

struct VulkanKernel::Impl {};

VulkanKernel::VulkanKernel() = default;
VulkanKernel::~VulkanKernel() = default;

std::unique_ptr<VulkanKernel> VulkanKernel::compile(mlir::ModuleOp,
                                                    const VulkanOptions &) {
  throw VulkanError(kNotBuilt);
}

void VulkanKernel::run(void *const *, const int64_t *const *) const {
  throw VulkanError(kNotBuilt);
}

uint64_t VulkanKernel::deviceBytes() const { return 0; }

std::string vulkanDeviceName() { throw VulkanError(kNotBuilt); }

bool vulkanAvailable(std::string *why) {
  if (why)
    *why = kNotBuilt;
  return false;
}

VulkanRunTimes lastVulkanRunTimes() { return {}; }

} // namespace pk
