//===- Device.cpp - the Vulkan device picokernel runs on ------------------===//

#include "Device.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

namespace pk::vulkan {

namespace {

const char *resultName(VkResult result) {
  switch (result) {
#define PK_CASE(name)                                                          \
  case name:                                                                   \
    return #name;
    PK_CASE(VK_SUCCESS)
    PK_CASE(VK_NOT_READY)
    PK_CASE(VK_TIMEOUT)
    PK_CASE(VK_INCOMPLETE)
    PK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    PK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    PK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    PK_CASE(VK_ERROR_DEVICE_LOST)
    PK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    PK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    PK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    PK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    PK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    PK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    PK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    PK_CASE(VK_ERROR_FRAGMENTED_POOL)
    PK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    PK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef PK_CASE
  default:
    return "VK_ERROR_UNKNOWN";
  }
}

/// PK_VULKAN_LOOP_LIMIT, which replaces a driver's loop limit (0: none):
/// for a driver whose limit differs, or arrays known to be small.
int64_t loopLimitFromEnvironment(int64_t driverLimit) {
  const char *limit = std::getenv("PK_VULKAN_LOOP_LIMIT");
  if (!limit || !*limit)
    return driverLimit;
  char *end = nullptr;
  long long value = std::strtoll(limit, &end, 10);
  if (*end != '\0' || value < 0)
    throw VulkanError(
        std::string("vulkan: PK_VULKAN_LOOP_LIMIT must be a "
                    "number of loop iterations (0: none), not '") +
        limit + "'");
  return value;
}

} // namespace

void check(VkResult result, const char *call) {
  if (result != VK_SUCCESS)
    throw VulkanError(std::string("vulkan: ") + call +
                      " failed: " + resultName(result));
}

Device &Device::get() {
  static Device *device = [] {
    auto *created = new Device();
    created->open();
    created->openedBy = getpid();
    return created;
  }();
  device->checkNotForked();
  return *device;
}

bool Device::forked() const { return getpid() != openedBy; }

void Device::checkNotForked() const {
  if (forked())
    throw VulkanError(
        "vulkan: this process was forked from the one that opened the Vulkan "
        "device, which a forked child cannot use; open it in the child only "
        "(multiprocessing's 'spawn' or 'forkserver' start method) or use the "
        "CPU backend there");
}

void Device::open() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "picokernel";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo instanceInfo{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instanceInfo.pApplicationInfo = &app;
  loadVulkan();
  check(vkCreateInstance(&instanceInfo, nullptr, &instance),
        "vkCreateInstance");
  loadInstanceFunctions(instance);
  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance, &count, nullptr),
        "vkEnumeratePhysicalDevices");
  if (count == 0)
    throw VulkanError("vulkan: no Vulkan device (install a GPU driver, or "
                      "mesa-vulkan-drivers for lavapipe on the CPU)");
  std::vector<VkPhysicalDevice> devices(count);
  check(vkEnumeratePhysicalDevices(instance, &count, devices.data()),
        "vkEnumeratePhysicalDevices");
  physical = select(devices);
  vkGetPhysicalDeviceProperties(physical, &properties);
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  if (properties.apiVersion < VK_API_VERSION_1_1)
    throw VulkanError(std::string("vulkan: device ") + properties.deviceName +
                      " supports only Vulkan 1.0; picokernel needs 1.1");
  if (std::strncmp(properties.deviceName, "llvmpipe", 8) == 0)
    maxLoopIterations = 65535;
  maxLoopIterations = loopLimitFromEnvironment(maxLoopIterations);

  queueFamily = computeQueueFamily();

  // The element types kernels compute on and store in buffers: enable
  // whatever the device offers of 8/16-bit arithmetic and storage, and of
  // 64-bit types (a kernel needing more fails at pipeline creation).
  std::vector<const char *> extensions;
  uint32_t extensionCount = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount,
                                       nullptr);
  std::vector<VkExtensionProperties> available(extensionCount);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount,
                                       available.data());
  auto offer = [&](const char *name) {
    for (const VkExtensionProperties &extension : available)
      if (std::strcmp(extension.extensionName, name) == 0) {
        extensions.push_back(name);
        return true;
      }
    return false;
  };
  VkPhysicalDeviceShaderFloat16Int8Features float16Int8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice8BitStorageFeatures storage8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  void *chain = &storage16; // core in Vulkan 1.1
  if (offer(VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) {
    storage8.pNext = chain;
    chain = &storage8;
  }
  if (offer(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) {
    float16Int8.pNext = chain;
    chain = &float16Int8;
  }
  // Float controls: without them NaN, infinity and signed-zero results
  // are undefined (lavapipe's x / 0.0 was garbage).
  if (offer(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME)) {
    VkPhysicalDeviceFloatControlsPropertiesKHR controls{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES_KHR};
    VkPhysicalDeviceProperties2 properties2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    properties2.pNext = &controls;
    vkGetPhysicalDeviceProperties2(physical, &properties2);
    if (controls.shaderSignedZeroInfNanPreserveFloat16)
      preservedFloatWidths.push_back(16);
    if (controls.shaderSignedZeroInfNanPreserveFloat32)
      preservedFloatWidths.push_back(32);
    if (controls.shaderSignedZeroInfNanPreserveFloat64)
      preservedFloatWidths.push_back(64);
  }
  VkPhysicalDeviceFeatures2 features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = chain;
  vkGetPhysicalDeviceFeatures2(physical, &features); // fills the chain too
  VkPhysicalDeviceFeatures2 enabled{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enabled.pNext = chain; // enable exactly what is supported
  enabled.features.shaderInt16 = features.features.shaderInt16;
  enabled.features.shaderInt64 = features.features.shaderInt64;
  enabled.features.shaderFloat64 = features.features.shaderFloat64;
  float64 = features.features.shaderFloat64;

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queueInfo.queueFamilyIndex = queueFamily;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  VkDeviceCreateInfo deviceInfo{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  deviceInfo.pNext = &enabled;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queueInfo;
  deviceInfo.enabledExtensionCount = uint32_t(extensions.size());
  deviceInfo.ppEnabledExtensionNames = extensions.data();
  check(vkCreateDevice(physical, &deviceInfo, nullptr, &device),
        "vkCreateDevice");
  vkGetDeviceQueue(device, queueFamily, 0, &queue);
  VkPipelineCacheCreateInfo cacheInfo{
      VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  check(vkCreatePipelineCache(device, &cacheInfo, nullptr, &pipelineCache),
        "vkCreatePipelineCache");
}

VkPhysicalDevice Device::select(const std::vector<VkPhysicalDevice> &devices) {
  std::vector<VkPhysicalDeviceProperties> all(devices.size());
  for (size_t i = 0; i < devices.size(); ++i)
    vkGetPhysicalDeviceProperties(devices[i], &all[i]);
  if (const char *wanted = std::getenv("PK_VULKAN_DEVICE"); wanted && *wanted) {
    char *end = nullptr;
    unsigned long index = std::strtoul(wanted, &end, 10);
    if (end && *end == '\0' && index < devices.size())
      return devices[index];
    for (size_t i = 0; i < devices.size(); ++i)
      if (std::strstr(all[i].deviceName, wanted))
        return devices[i];
    std::string names;
    for (size_t i = 0; i < devices.size(); ++i)
      names += (names.empty() ? "" : ", ") + std::to_string(i) + ": " +
               all[i].deviceName;
    throw VulkanError(std::string("vulkan: PK_VULKAN_DEVICE='") + wanted +
                      "' matches no device (" + names + ")");
  }
  for (size_t i = 0; i < devices.size(); ++i)
    if (all[i].deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
      return devices[i];
  return devices.front();
}

uint32_t Device::computeQueueFamily() const {
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> familyProperties(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families,
                                           familyProperties.data());
  for (uint32_t i = 0; i < families; ++i)
    if (familyProperties[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
      return i;
  throw VulkanError(std::string("vulkan: device ") + properties.deviceName +
                    " has no compute queue");
}

uint32_t Device::memoryType(uint32_t allowed,
                            VkMemoryPropertyFlags wanted) const {
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
    if ((allowed & (1u << i)) &&
        (memory.memoryTypes[i].propertyFlags & wanted) == wanted)
      return i;
  throw VulkanError("vulkan: no host-visible, coherent memory for buffers");
}

} // namespace pk::vulkan

namespace pk {

std::string vulkanDeviceName() {
  return vulkan::Device::get().properties.deviceName;
}

bool vulkanAvailable(std::string *why) {
  try {
    vulkan::Device::get();
    return true;
  } catch (const VulkanError &error) {
    if (why)
      *why = error.what();
    return false;
  }
}

} // namespace pk
