//===- Device.h - the Vulkan device picokernel runs on ----------*- C++ -*-===//
//
// The instance, the selected device and its compute queue, created on first
// use and kept for the process, and RAII owners for the Vulkan objects that
// compiled kernels create on it. Private to the Vulkan runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_RUNTIME_VULKAN_DEVICE_H
#define PICOKERNEL_LIB_RUNTIME_VULKAN_DEVICE_H

#include "picokernel/Runtime/Vulkan.h"

#include "Loader.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <mutex>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace pk::vulkan {

/// Throws VulkanError naming `call` unless `result` is VK_SUCCESS.
void check(VkResult result, const char *call);

/// A Vulkan object of type T owned by a device, destroyed with `Destroy`
/// (vkDestroyBuffer, vkFreeMemory, ...: Loader.h's pointers) when its owner
/// goes.
template <typename T,
          void (*&Destroy)(VkDevice, T, const VkAllocationCallbacks *)>
class Owned {
public:
  Owned() = default;
  explicit Owned(VkDevice device) : device(device) {}
  Owned(Owned &&other) noexcept
      : device(other.device),
        handle(std::exchange(other.handle, VK_NULL_HANDLE)) {}
  Owned &operator=(Owned &&other) noexcept {
    if (this != &other) {
      reset();
      device = other.device;
      handle = std::exchange(other.handle, VK_NULL_HANDLE);
    }
    return *this;
  }
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  ~Owned() { reset(); }

  T get() const { return handle; }
  /// Where a vkCreate* call writes the new handle.
  T *out() { return &handle; }
  const T *address() const { return &handle; }

private:
  void reset() {
    if (handle)
      Destroy(device, handle, nullptr);
    handle = VK_NULL_HANDLE;
  }
  VkDevice device = VK_NULL_HANDLE;
  T handle = VK_NULL_HANDLE;
};

/// The instance, the selected device and its compute queue: created on first
/// use, kept for the process.
struct Device {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  VkPipelineCache pipelineCache = VK_NULL_HANDLE;
  std::mutex queueMutex; // vkQueueSubmit needs external synchronization
  /// The float widths whose NaNs, infinities and signed zeros the device
  /// keeps as IEEE says when asked (SignedZeroInfNanPreserve).
  llvm::SmallVector<unsigned> preservedFloatWidths;
  /// Loop iterations a thread may run before the driver stops it, 0 for
  /// no limit: llvmpipe ends a shader after 65535 (LP_MAX_TGSI_LOOP_
  /// ITERATIONS) and keeps what it computed so far.
  int64_t maxLoopIterations = 0;
  /// Whether kernels may compute in float64 (shaderFloat64).
  bool float64 = false;
  /// The process that opened the device.
  pid_t openedBy = 0;

  /// The device, opened on first use (throws VulkanError when none can be).
  static Device &get();

  /// Whether this process was forked from the one that opened the device:
  /// the driver's threads and the device's locks are the parent's, and the
  /// child would wait for them for ever.
  bool forked() const;
  /// Throws VulkanError where forked().
  void checkNotForked() const;

  /// A memory type among `allowed` with the `wanted` properties.
  uint32_t memoryType(uint32_t allowed, VkMemoryPropertyFlags wanted) const;

private:
  void open();
  /// The first queue family of the device that runs compute shaders.
  uint32_t computeQueueFamily() const;
  /// PK_VULKAN_DEVICE (an index or part of a name), else the first discrete
  /// GPU, else the first device.
  static VkPhysicalDevice select(const std::vector<VkPhysicalDevice> &devices);
};

} // namespace pk::vulkan

#endif // PICOKERNEL_LIB_RUNTIME_VULKAN_DEVICE_H
