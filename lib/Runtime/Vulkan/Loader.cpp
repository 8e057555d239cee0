//===- Loader.cpp - the Vulkan loader, opened when first needed -----------===//

#include "Loader.h"

#include "picokernel/Runtime/Vulkan.h"

#include <string>

#include <dlfcn.h>

namespace pk::vulkan {

#define PK_DEFINE_VULKAN_FUNCTION(name) PFN_##name name = nullptr;
PK_DEFINE_VULKAN_FUNCTION(vkCreateInstance)
PK_VULKAN_INSTANCE_FUNCTIONS(PK_DEFINE_VULKAN_FUNCTION)
#undef PK_DEFINE_VULKAN_FUNCTION

namespace {
PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;

/// Vulkan's loader library: the versioned name, as the loader's
/// documentation asks of applications that open it.
constexpr const char *kLoader = "libvulkan.so.1";
} // namespace

void loadVulkan() {
  if (getInstanceProcAddr)
    return;
  // Kept open for the process: the device lives until exit.
  void *library = dlopen(kLoader, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    throw VulkanError(std::string("vulkan: cannot open the Vulkan loader ") +
                      kLoader + " (" + (why ? why : "not found") +
                      "): install it (Debian: libvulkan1) and a driver "
                      "(mesa-vulkan-drivers for lavapipe on the CPU)");
  }
  auto found = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
      dlsym(library, "vkGetInstanceProcAddr"));
  if (!found)
    throw VulkanError(std::string("vulkan: ") + kLoader +
                      " has no vkGetInstanceProcAddr: it is not a Vulkan "
                      "loader");
  vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(
      found(VK_NULL_HANDLE, "vkCreateInstance"));
  if (!vkCreateInstance)
    throw VulkanError(std::string("vulkan: ") + kLoader +
                      " has no vkCreateInstance");
  getInstanceProcAddr = found;
}

void loadInstanceFunctions(VkInstance instance) {
#define PK_LOAD_VULKAN_FUNCTION(name)                                          \
  name = reinterpret_cast<PFN_##name>(getInstanceProcAddr(instance, #name));   \
  if (!name)                                                                   \
    throw VulkanError("vulkan: the Vulkan loader has no " #name                \
                      " (picokernel needs Vulkan 1.1)");
  PK_VULKAN_INSTANCE_FUNCTIONS(PK_LOAD_VULKAN_FUNCTION)
#undef PK_LOAD_VULKAN_FUNCTION
}

} // namespace pk::vulkan
