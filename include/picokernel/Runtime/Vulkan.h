//===- Vulkan.h - run pk kernels through Vulkan -----------------*- C++ -*-===//
//
// A pk kernel compiled with the SPIR-V pipeline runs on a Vulkan device:
// any GPU driver, or the CPU through Mesa's lavapipe. The host side of the
// compiled kernel (dispatches, temporaries, copies, constants) becomes one
// pre-recorded command buffer over device buffers that are created once per
// compiled kernel; a call copies the inputs in, submits, and copies the
// outputs back.
//
// PK_VULKAN_DEVICE selects the device: an index into the list, or a part of
// its name ("llvmpipe"); the default is the first discrete GPU, else the
// first device.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_VULKAN_H
#define PICOKERNEL_RUNTIME_VULKAN_H

#include "picokernel/Support/Defaults.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace pk {

/// Vulkan failed; what() names the call and the VkResult.
class VulkanError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct VulkanOptions {
  /// Threads per workgroup.
  int64_t workgroupSize = defaults::kWorkgroupSize;
  /// The Vulkan version kernels are compiled for ("1.0" to "1.3"); the
  /// device must support it.
  std::string vulkanVersion = defaults::kVulkanVersion;
};

/// The selected device ("llvmpipe (LLVM 15.0.6, 256 bits)"), or throws
/// VulkanError when there is no usable Vulkan device.
std::string vulkanDeviceName();

/// Whether a Vulkan device can be used; if not, `why` says why.
bool vulkanAvailable(std::string *why = nullptr);

/// Where the time of this thread's last VulkanKernel::run went.
struct VulkanRunTimes {
  double uploadSeconds = 0;   ///< inputs copied into device buffers
  double computeSeconds = 0;  ///< submit and wait for the dispatches
  double downloadSeconds = 0; ///< outputs copied back
};
VulkanRunTimes lastVulkanRunTimes();

} // namespace pk

#endif // PICOKERNEL_RUNTIME_VULKAN_H
