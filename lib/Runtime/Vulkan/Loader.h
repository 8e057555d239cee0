//===- Loader.h - the Vulkan loader, opened when first needed ---*- C++ -*-===//
//
// picokernel does not link the Vulkan loader (libvulkan.so.1): a process on
// a machine without one imports picokernel and runs CPU kernels. The loader
// is opened when the Vulkan device is first needed, and Vulkan's functions
// are reached through these pointers, which carry the functions' own names
// (Vulkan's prototypes are left out: VK_NO_PROTOTYPES). Private to the
// Vulkan runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_RUNTIME_VULKAN_LOADER_H
#define PICOKERNEL_LIB_RUNTIME_VULKAN_LOADER_H

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

/// The functions the runtime calls, each with its own name.
#define PK_VULKAN_INSTANCE_FUNCTIONS(X)                                        \
  X(vkEnumeratePhysicalDevices)                                                \
  X(vkGetPhysicalDeviceProperties)                                             \
  X(vkGetPhysicalDeviceProperties2)                                            \
  X(vkGetPhysicalDeviceFeatures2)                                              \
  X(vkGetPhysicalDeviceMemoryProperties)                                       \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  X(vkEnumerateDeviceExtensionProperties)                                      \
  X(vkCreateDevice)                                                            \
  X(vkGetDeviceQueue)                                                          \
  X(vkCreatePipelineCache)                                                     \
  X(vkCreateBuffer)                                                            \
  X(vkDestroyBuffer)                                                           \
  X(vkGetBufferMemoryRequirements)                                             \
  X(vkAllocateMemory)                                                          \
  X(vkFreeMemory)                                                              \
  X(vkBindBufferMemory)                                                        \
  X(vkMapMemory)                                                               \
  X(vkCreateShaderModule)                                                      \
  X(vkDestroyShaderModule)                                                     \
  X(vkCreateDescriptorSetLayout)                                               \
  X(vkDestroyDescriptorSetLayout)                                              \
  X(vkCreatePipelineLayout)                                                    \
  X(vkDestroyPipelineLayout)                                                   \
  X(vkCreateComputePipelines)                                                  \
  X(vkDestroyPipeline)                                                         \
  X(vkCreateDescriptorPool)                                                    \
  X(vkDestroyDescriptorPool)                                                   \
  X(vkAllocateDescriptorSets)                                                  \
  X(vkUpdateDescriptorSets)                                                    \
  X(vkCreateCommandPool)                                                       \
  X(vkDestroyCommandPool)                                                      \
  X(vkAllocateCommandBuffers)                                                  \
  X(vkBeginCommandBuffer)                                                      \
  X(vkEndCommandBuffer)                                                        \
  X(vkCmdBindPipeline)                                                         \
  X(vkCmdBindDescriptorSets)                                                   \
  X(vkCmdPushConstants)                                                        \
  X(vkCmdUpdateBuffer)                                                         \
  X(vkCmdCopyBuffer)                                                           \
  X(vkCmdPipelineBarrier)                                                      \
  X(vkCmdDispatchBase)                                                         \
  X(vkCreateFence)                                                             \
  X(vkDestroyFence)                                                            \
  X(vkResetFences)                                                             \
  X(vkWaitForFences)                                                           \
  X(vkQueueSubmit)

namespace pk::vulkan {

#define PK_DECLARE_VULKAN_FUNCTION(name) extern PFN_##name name;
PK_DECLARE_VULKAN_FUNCTION(vkCreateInstance)
PK_VULKAN_INSTANCE_FUNCTIONS(PK_DECLARE_VULKAN_FUNCTION)
#undef PK_DECLARE_VULKAN_FUNCTION

/// Opens the Vulkan loader and finds vkCreateInstance; throws VulkanError
/// where there is no loader. (Called by Device::get, once at a time.)
void loadVulkan();

/// Finds the other functions through `instance` (device functions through
/// the loader's dispatch); throws VulkanError for one it lacks.
void loadInstanceFunctions(VkInstance instance);

} // namespace pk::vulkan

#endif // PICOKERNEL_LIB_RUNTIME_VULKAN_LOADER_H
