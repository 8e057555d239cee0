//===- VulkanKernel.cpp - run pk kernels through Vulkan -------------------===//

#include "picokernel/Runtime/Vulkan.h"
#include "picokernel/Support/Diagnostics.h"
#include "picokernel/Target/SPIRV.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace pk {

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

void check(VkResult result, const char *call) {
  if (result != VK_SUCCESS)
    throw VulkanError(std::string("vulkan: ") + call + " failed: " +
                      resultName(result));
}

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

  static Device &get() {
    static Device *device = [] {
      auto *created = new Device();
      created->open();
      return created;
    }();
    return *device;
  }

  void open() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "picokernel";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo instanceInfo{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instanceInfo.pApplicationInfo = &app;
    check(vkCreateInstance(&instanceInfo, nullptr, &instance),
          "vkCreateInstance");
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
      throw VulkanError(std::string("vulkan: device ") +
                        properties.deviceName +
                        " supports only Vulkan 1.0; picokernel needs 1.1");
    if (std::strncmp(properties.deviceName, "llvmpipe", 8) == 0)
      maxLoopIterations = 65535;

    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> familyProperties(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families,
                                             familyProperties.data());
    queueFamily = families;
    for (uint32_t i = 0; i < families; ++i)
      if (familyProperties[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        queueFamily = i;
        break;
      }
    if (queueFamily == families)
      throw VulkanError(std::string("vulkan: device ") +
                        properties.deviceName + " has no compute queue");

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

  /// PK_VULKAN_DEVICE (an index or part of a name), else the first discrete
  /// GPU, else the first device.
  static VkPhysicalDevice select(const std::vector<VkPhysicalDevice> &devices) {
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

  uint32_t memoryType(uint32_t allowed, VkMemoryPropertyFlags wanted) const {
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) &&
          (memory.memoryTypes[i].propertyFlags & wanted) == wanted)
        return i;
    throw VulkanError("vulkan: no host-visible, coherent memory for buffers");
  }
};

/// A host-visible buffer, mapped for its whole life.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void *mapped = nullptr;
  VkDeviceSize bytes = 0;
};

/// One step of the compiled host function.
struct Step {
  enum Kind { Dispatch, Copy } kind;
  // Dispatch: pipeline index and grid; Copy: source and target buffers.
  unsigned pipeline = 0;
  uint32_t grid[3] = {1, 1, 1};
  unsigned source = 0, target = 0;
};

} // namespace

struct VulkanKernel::Impl {
  Device &device = Device::get();
  std::vector<Buffer> buffers; // parameters first, then temporaries
  VkShaderModule shader = VK_NULL_HANDLE;
  struct Pipeline {
    VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
  };
  std::vector<Pipeline> pipelines;
  VkDescriptorPool descriptorPool = VK_NULL_HANDLE;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::vector<Step> steps;
  mutable std::mutex running; // one call at a time uses the buffers

  ~Impl() {
    VkDevice d = device.device;
    if (fence)
      vkDestroyFence(d, fence, nullptr);
    if (commandPool)
      vkDestroyCommandPool(d, commandPool, nullptr);
    if (descriptorPool)
      vkDestroyDescriptorPool(d, descriptorPool, nullptr);
    for (Pipeline &p : pipelines) {
      if (p.pipeline)
        vkDestroyPipeline(d, p.pipeline, nullptr);
      if (p.layout)
        vkDestroyPipelineLayout(d, p.layout, nullptr);
      if (p.setLayout)
        vkDestroyDescriptorSetLayout(d, p.setLayout, nullptr);
    }
    if (shader)
      vkDestroyShaderModule(d, shader, nullptr);
    for (Buffer &b : buffers) {
      if (b.buffer)
        vkDestroyBuffer(d, b.buffer, nullptr);
      if (b.memory)
        vkFreeMemory(d, b.memory, nullptr);
    }
  }

  unsigned addBuffer(VkDeviceSize bytes, const std::string &what) {
    if (bytes > device.properties.limits.maxStorageBufferRange)
      throw VulkanError("vulkan: " + what + " needs " + std::to_string(bytes) +
                        " bytes, more than this device's storage buffer "
                        "limit of " +
                        std::to_string(device.properties.limits.maxStorageBufferRange) +
                        " bytes");
    Buffer buffer;
    buffer.bytes = std::max<VkDeviceSize>(bytes, 4);
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = buffer.bytes;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(device.device, &info, nullptr, &buffer.buffer),
          "vkCreateBuffer");
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device.device, buffer.buffer, &requirements);
    VkMemoryAllocateInfo allocation{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocation.allocationSize = requirements.size;
    allocation.memoryTypeIndex = device.memoryType(
        requirements.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                         VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    buffers.push_back(buffer); // destroyed with the kernel even on failure
    Buffer &added = buffers.back();
    check(vkAllocateMemory(device.device, &allocation, nullptr, &added.memory),
          "vkAllocateMemory");
    check(vkBindBufferMemory(device.device, added.buffer, added.memory, 0),
          "vkBindBufferMemory");
    check(vkMapMemory(device.device, added.memory, 0, VK_WHOLE_SIZE, 0,
                      &added.mapped),
          "vkMapMemory");
    return buffers.size() - 1;
  }
};

namespace {

size_t paramBytes(const CompiledParam &param) {
  size_t elements = 1;
  for (int64_t dim : param.shape)
    elements *= size_t(dim);
  return elements * itemSize(param.dtype);
}

int64_t bytesOf(mlir::MemRefType type) {
  int64_t elements = type.getNumElements();
  int64_t width = type.getElementTypeBitWidth();
  return elements * std::max<int64_t>(1, width / 8);
}

} // namespace

VulkanKernel::VulkanKernel() : impl(std::make_unique<Impl>()) {}
VulkanKernel::~VulkanKernel() = default;

uint64_t VulkanKernel::deviceBytes() const {
  uint64_t total = 0;
  for (const Buffer &buffer : impl->buffers)
    total += buffer.bytes;
  return total;
}

std::string vulkanDeviceName() {
  return Device::get().properties.deviceName;
}

bool vulkanAvailable(std::string *why) {
  try {
    Device::get();
    return true;
  } catch (const VulkanError &error) {
    if (why)
      *why = error.what();
    return false;
  }
}

std::unique_ptr<VulkanKernel> VulkanKernel::compile(mlir::ModuleOp module,
                                                    const VulkanOptions &options) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  std::unique_ptr<VulkanKernel> kernel(new VulkanKernel());
  kernel->describe(module);
  Impl &impl = *kernel->impl;
  prepareContextForCompilation(*module.getContext());

  llvm::SmallVector<uint32_t> binary;
  {
    DiagnosticCollector diagnostics(module.getContext());
    mlir::pk::SpirvPipelineOptions spirv;
    spirv.workgroupSize = options.workgroupSize;
    spirv.vulkanVersion = "1.1";
    spirv.specialFloatWidths = impl.device.preservedFloatWidths;
    spirv.maxLoopIterations = impl.device.maxLoopIterations;
    spirv.float64 = impl.device.float64;
    if (mlir::failed(mlir::pk::compileToSpirv(module, spirv, binary)))
      throw CompileError("compile: the SPIR-V pipeline failed on kernel '" +
                         kernel->kernelName + "':\n" + diagnostics.text());
  }
  kernel->compileTimes.pipelineSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  start = Clock::now();

  // PK_SPIRV_DUMP_DIR keeps every compiled module, for spirv-val and
  // spirv-dis (the tests validate all of them).
  const char *dir = std::getenv("PK_SPIRV_DUMP_DIR");
  if (dir && *dir && !binary.empty()) {
    static std::atomic<unsigned> counter{0};
    std::string path = std::string(dir) + "/" + kernel->kernelName + "-" +
                       std::to_string(counter++) + ".spv";
    std::error_code error;
    llvm::raw_fd_ostream file(path, error);
    if (error)
      throw CompileError("compile: cannot write " + path + ": " +
                         error.message());
    file.write(reinterpret_cast<const char *>(binary.data()),
               binary.size() * sizeof(uint32_t));
    file.close();
    if (file.has_error()) { // cleared: an unchecked one would abort
      std::string message = file.error().message();
      file.clear_error();
      throw CompileError("compile: cannot write " + path + ": " + message);
    }
  }

  auto host = module.lookupSymbol<mlir::func::FuncOp>(kernel->kernelName);
  if (!host)
    throw CompileError("compile: no host function for kernel '" +
                       kernel->kernelName + "'");

  // Buffers: the parameters, then every temporary and constant.
  llvm::DenseMap<mlir::Value, unsigned> bufferOf;
  for (auto [i, arg] : llvm::enumerate(host.getArguments()))
    bufferOf[arg] = impl.addBuffer(
        bytesOf(llvm::cast<mlir::MemRefType>(arg.getType())),
        "argument '" + std::to_string(i) + "'");

  Device &device = impl.device;
  // A kernel that only copies whole arrays dispatches nothing.
  if (!binary.empty()) {
    VkShaderModuleCreateInfo shaderInfo{
        VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    shaderInfo.codeSize = binary.size() * sizeof(uint32_t);
    shaderInfo.pCode = binary.data();
    check(
        vkCreateShaderModule(device.device, &shaderInfo, nullptr, &impl.shader),
        "vkCreateShaderModule");
  }

  llvm::StringMap<unsigned> pipelineOf;
  std::vector<std::vector<unsigned>> bindings; // per pipeline, buffer ids
  for (mlir::Operation &op : host.getBody().front()) {
    if (auto launch = llvm::dyn_cast<mlir::gpu::LaunchFuncOp>(op)) {
      Step step{Step::Dispatch};
      mlir::Value sizes[3] = {launch.getGridSizeX(), launch.getGridSizeY(),
                              launch.getGridSizeZ()};
      for (int d = 0; d < 3; ++d) {
        llvm::APInt value;
        if (!mlir::matchPattern(sizes[d], mlir::m_ConstantInt(&value)))
          throw CompileError("compile: kernel '" + kernel->kernelName +
                             "' has a grid size unknown at compile time");
        step.grid[d] = uint32_t(value.getZExtValue());
      }
      std::vector<unsigned> args;
      for (mlir::Value operand : launch.getKernelOperands()) {
        auto found = bufferOf.find(operand);
        if (found == bufferOf.end())
          throw CompileError("compile: kernel '" + kernel->kernelName +
                             "' passes a non-buffer value to the GPU");
        args.push_back(found->second);
      }
      step.pipeline = impl.pipelines.size();
      impl.pipelines.push_back({});
      bindings.push_back(args);
      pipelineOf[launch.getKernelName().getValue()] = step.pipeline;
      Impl::Pipeline &pipeline = impl.pipelines.back();

      std::vector<VkDescriptorSetLayoutBinding> layoutBindings(args.size());
      for (size_t b = 0; b < args.size(); ++b)
        layoutBindings[b] = {uint32_t(b), VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                             VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
      VkDescriptorSetLayoutCreateInfo setInfo{
          VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
      setInfo.bindingCount = uint32_t(layoutBindings.size());
      setInfo.pBindings = layoutBindings.data();
      check(vkCreateDescriptorSetLayout(device.device, &setInfo, nullptr,
                                        &pipeline.setLayout),
            "vkCreateDescriptorSetLayout");
      VkPipelineLayoutCreateInfo layoutInfo{
          VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
      layoutInfo.setLayoutCount = 1;
      layoutInfo.pSetLayouts = &pipeline.setLayout;
      // pk-ieee-floats-for-spirv reads float zeros from a push constant.
      VkPushConstantRange zeroRange{VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                    sizeof(float)};
      layoutInfo.pushConstantRangeCount = 1;
      layoutInfo.pPushConstantRanges = &zeroRange;
      check(vkCreatePipelineLayout(device.device, &layoutInfo, nullptr,
                                   &pipeline.layout),
            "vkCreatePipelineLayout");
      std::string entry = launch.getKernelName().getValue().str();
      VkComputePipelineCreateInfo pipelineInfo{
          VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
      // Dispatches larger than the device's workgroup-count limit are split
      // with vkCmdDispatchBase.
      pipelineInfo.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;
      pipelineInfo.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
      pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
      pipelineInfo.stage.module = impl.shader;
      pipelineInfo.stage.pName = entry.c_str();
      pipelineInfo.layout = pipeline.layout;
      check(vkCreateComputePipelines(device.device, device.pipelineCache, 1,
                                     &pipelineInfo, nullptr, &pipeline.pipeline),
            "vkCreateComputePipelines");
      impl.steps.push_back(step);
    } else if (auto alloc = llvm::dyn_cast<mlir::memref::AllocOp>(op)) {
      bufferOf[alloc.getResult()] =
          impl.addBuffer(bytesOf(alloc.getType()), "a temporary");
    } else if (auto global = llvm::dyn_cast<mlir::memref::GetGlobalOp>(op)) {
      auto definition = module.lookupSymbol<mlir::memref::GlobalOp>(
          global.getNameAttr());
      auto value = llvm::dyn_cast_or_null<mlir::DenseElementsAttr>(
          definition ? definition.getInitialValueAttr() : mlir::Attribute());
      if (!value)
        throw CompileError("compile: constant '" + global.getName().str() +
                           "' has no dense value");
      unsigned id = impl.addBuffer(bytesOf(global.getType()), "a constant");
      bufferOf[global.getResult()] = id;
      // Splats hold one element: expand them into the buffer.
      llvm::ArrayRef<char> raw = value.getRawData();
      size_t element = std::max<size_t>(1, value.getElementType().getIntOrFloatBitWidth() / 8);
      char *out = static_cast<char *>(impl.buffers[id].mapped);
      if (value.isSplat() && value.getElementType().getIntOrFloatBitWidth() > 1)
        for (int64_t i = 0; i < value.getNumElements(); ++i)
          std::memcpy(out + i * element, raw.data(), element);
      else if (value.getElementType().isInteger(1))
        for (auto [i, bit] : llvm::enumerate(value.getValues<bool>()))
          out[i] = bit;
      else
        std::memcpy(out, raw.data(), raw.size());
    } else if (llvm::isa<mlir::memref::ExpandShapeOp,
                         mlir::memref::CollapseShapeOp,
                         mlir::memref::SubViewOp>(op)) {
      // A reshape of a contiguous buffer is the same buffer. So is a view:
      // its static offset and strides are in its type, from which the
      // kernels index the whole buffer.
      auto found = bufferOf.find(op.getOperand(0));
      if (found == bufferOf.end())
        throw CompileError("compile: kernel '" + kernel->kernelName +
                           "' reshapes a value that is not a buffer");
      bufferOf[op.getResult(0)] = found->second;
    } else if (auto copy = llvm::dyn_cast<mlir::memref::CopyOp>(op)) {
      // Copies of views are kernels (pk-copy-views-with-linalg).
      for (mlir::Value side : {copy.getSource(), copy.getTarget()})
        if (!llvm::isa<mlir::AffineMapAttr>(
                llvm::cast<mlir::MemRefType>(side.getType()).getLayout()))
          throw CompileError("compile: kernel '" + kernel->kernelName +
                             "' copies a part of a buffer on the host");
      Step step{Step::Copy};
      step.source = bufferOf.lookup(copy.getSource());
      step.target = bufferOf.lookup(copy.getTarget());
      impl.steps.push_back(step);
    } else if (llvm::isa<mlir::memref::DeallocOp, mlir::arith::ConstantOp,
                         mlir::func::ReturnOp>(op)) {
      continue;
    } else {
      throw CompileError("compile: kernel '" + kernel->kernelName +
                         "' needs host operation '" +
                         op.getName().getStringRef().str() +
                         "', which the Vulkan backend does not run");
    }
  }

  // Descriptor sets, written once: the buffers never change.
  VkDescriptorPoolSize poolSize{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 0};
  for (const auto &args : bindings)
    poolSize.descriptorCount += uint32_t(args.size());
  poolSize.descriptorCount = std::max<uint32_t>(poolSize.descriptorCount, 1);
  VkDescriptorPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  poolInfo.maxSets = std::max<uint32_t>(uint32_t(impl.pipelines.size()), 1);
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &poolSize;
  check(vkCreateDescriptorPool(device.device, &poolInfo, nullptr,
                               &impl.descriptorPool),
        "vkCreateDescriptorPool");
  for (size_t p = 0; p < impl.pipelines.size(); ++p) {
    VkDescriptorSetAllocateInfo setAllocation{
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    setAllocation.descriptorPool = impl.descriptorPool;
    setAllocation.descriptorSetCount = 1;
    setAllocation.pSetLayouts = &impl.pipelines[p].setLayout;
    check(vkAllocateDescriptorSets(device.device, &setAllocation,
                                   &impl.pipelines[p].set),
          "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos;
    for (unsigned id : bindings[p])
      infos.push_back({impl.buffers[id].buffer, 0, VK_WHOLE_SIZE});
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (size_t b = 0; b < infos.size(); ++b) {
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = impl.pipelines[p].set;
      writes[b].dstBinding = uint32_t(b);
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    vkUpdateDescriptorSets(device.device, uint32_t(writes.size()),
                           writes.data(), 0, nullptr);
  }

  // The whole host function as one command buffer, recorded once.
  VkCommandPoolCreateInfo commandPoolInfo{
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  commandPoolInfo.queueFamilyIndex = device.queueFamily;
  check(vkCreateCommandPool(device.device, &commandPoolInfo, nullptr,
                            &impl.commandPool),
        "vkCreateCommandPool");
  VkCommandBufferAllocateInfo commandInfo{
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  commandInfo.commandPool = impl.commandPool;
  commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  commandInfo.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device.device, &commandInfo, &impl.commands),
        "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(vkBeginCommandBuffer(impl.commands, &begin), "vkBeginCommandBuffer");
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const uint32_t *limits = device.properties.limits.maxComputeWorkGroupCount;
  for (const Step &step : impl.steps) {
    if (step.kind == Step::Dispatch) {
      const Impl::Pipeline &pipeline = impl.pipelines[step.pipeline];
      vkCmdBindPipeline(impl.commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                        pipeline.pipeline);
      vkCmdBindDescriptorSets(impl.commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                              pipeline.layout, 0, 1, &pipeline.set, 0, nullptr);
      const float zero = 0.0f;
      vkCmdPushConstants(impl.commands, pipeline.layout,
                         VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof zero, &zero);
      for (uint32_t z = 0; z < step.grid[2]; z += limits[2])
        for (uint32_t y = 0; y < step.grid[1]; y += limits[1])
          for (uint32_t x = 0; x < step.grid[0]; x += limits[0])
            vkCmdDispatchBase(impl.commands, x, y, z,
                              std::min(limits[0], step.grid[0] - x),
                              std::min(limits[1], step.grid[1] - y),
                              std::min(limits[2], step.grid[2] - z));
    } else {
      VkBufferCopy region{0, 0,
                          std::min(impl.buffers[step.source].bytes,
                                   impl.buffers[step.target].bytes)};
      vkCmdCopyBuffer(impl.commands, impl.buffers[step.source].buffer,
                      impl.buffers[step.target].buffer, 1, &region);
    }
    vkCmdPipelineBarrier(impl.commands,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                             VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                             VK_PIPELINE_STAGE_TRANSFER_BIT,
                         0, 1, &barrier, 0, nullptr, 0, nullptr);
  }
  check(vkEndCommandBuffer(impl.commands), "vkEndCommandBuffer");
  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(device.device, &fenceInfo, nullptr, &impl.fence),
        "vkCreateFence");
  kernel->compileTimes.codegenSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  return kernel;
}

namespace {
thread_local VulkanRunTimes lastRun;
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}
} // namespace

VulkanRunTimes lastVulkanRunTimes() { return lastRun; }

void VulkanKernel::run(void *const *data) const {
  std::lock_guard<std::mutex> lock(impl->running);
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].read)
      std::memcpy(impl->buffers[i].mapped, data[i],
                  paramBytes(parameters[i]));
  lastRun.uploadSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  Device &device = impl->device;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &impl->commands;
  {
    std::lock_guard<std::mutex> queue(device.queueMutex);
    check(vkQueueSubmit(device.queue, 1, &submit, impl->fence),
          "vkQueueSubmit");
  }
  check(vkWaitForFences(device.device, 1, &impl->fence, VK_TRUE, UINT64_MAX),
        "vkWaitForFences");
  check(vkResetFences(device.device, 1, &impl->fence), "vkResetFences");
  lastRun.computeSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].written)
      std::memcpy(data[i], impl->buffers[i].mapped, paramBytes(parameters[i]));
  lastRun.downloadSeconds = secondsSince(start);
}

} // namespace pk
