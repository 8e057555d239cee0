//===- VulkanKernel.cpp - run pk kernels through Vulkan -------------------===//
//
// A kernel compiles to a VulkanPlan (Compiler/SpirvCompiler.h); this file
// only executes plans: device buffers for the plan's buffers, one compute
// pipeline and descriptor set per dispatch, and the whole plan recorded
// once into a command buffer that each call submits.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "picokernel/Runtime/VulkanKernel.h"

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Compiler/SpirvCompiler.h"
#include "picokernel/Support/Diagnostics.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace pk {

// The runtime's helpers and Loader.h's Vulkan functions.
using namespace vulkan;

namespace {

/// A host-visible buffer, mapped for its whole life.
struct Buffer {
  Owned<VkDeviceMemory, vkFreeMemory> memory;
  Owned<VkBuffer, vkDestroyBuffer> buffer;
  void *mapped = nullptr;
  VkDeviceSize bytes = 0;
};

/// What one dispatch binds and runs.
struct Pipeline {
  Owned<VkDescriptorSetLayout, vkDestroyDescriptorSetLayout> setLayout;
  Owned<VkPipelineLayout, vkDestroyPipelineLayout> layout;
  Owned<VkPipeline, vkDestroyPipeline> pipeline;
};

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// PK_SPIRV_DUMP_DIR keeps every compiled module, for spirv-val and
/// spirv-dis (the tests validate all of them).
void dumpSpirv(const std::string &kernelName,
               const std::vector<uint32_t> &binary) {
  const char *dir = std::getenv("PK_SPIRV_DUMP_DIR");
  if (!dir || !*dir || binary.empty())
    return;
  static std::atomic<unsigned> counter{0};
  std::string path = std::string(dir) + "/" + kernelName + "-" +
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

/// VK_API_VERSION of "1.x", or 0 when `version` is not one.
uint32_t apiVersion(const std::string &version) {
  if (version.size() != 3 || version[0] != '1' || version[1] != '.' ||
      version[2] < '0' || version[2] > '9')
    return 0;
  return VK_MAKE_API_VERSION(0, 1, uint32_t(version[2] - '0'), 0);
}

} // namespace

/// What depends on the arrays' sizes: the buffers, the descriptor sets
/// that bind them and the commands, recorded once per set of sizes.
struct Sized {
  std::vector<int64_t> shapes; // the parameters' sizes, one after another
  std::vector<Buffer> buffers; // the plan's, parameters first
  std::vector<size_t> parameterBytes; // what a call uploads and downloads
  Owned<VkDescriptorPool, vkDestroyDescriptorPool> descriptorPool;
  std::vector<VkDescriptorSet> sets; // per plan step; freed with the pool
  Owned<VkCommandPool, vkDestroyCommandPool> commandPool;
  VkCommandBuffer commands = VK_NULL_HANDLE; // freed with the pool
};

struct VulkanKernel::Impl {
  Device &device = Device::get();
  mlir::pk::VulkanPlan plan;
  bool dynamic = false; // some parameter has a dynamic size
  // Destroyed in reverse order: what depends on the sizes first.
  Owned<VkShaderModule, vkDestroyShaderModule> shader;
  std::vector<Pipeline> pipelines; // per plan step; empty for copies
  uint32_t dispatchCount = 0;
  Owned<VkFence, vkDestroyFence> fence;
  std::unique_ptr<Sized> sized;
  mutable std::mutex running; // one call at a time uses the buffers

  void createPipelines();
  /// Buffers, descriptor sets and commands for parameters of sizes
  /// `shapes` (null for a plan of static sizes), unless the last call's
  /// had the same.
  void prepare(const std::vector<CompiledParam> &parameters,
               const int64_t *const *shapes);

private:
  void createBuffers(Sized &state, const std::vector<CompiledParam> &parameters,
                     const int64_t *const *shapes,
                     const std::vector<int64_t> &sizes);
  void addBuffer(Sized &state, const mlir::pk::VulkanPlan::Buffer &planned,
                 uint64_t bytes);
  void writeDescriptorSets(Sized &state);
  void recordCommands(Sized &state, const std::vector<int64_t> &sizes);
};

void VulkanKernel::Impl::addBuffer(Sized &state,
                                   const mlir::pk::VulkanPlan::Buffer &planned,
                                   uint64_t bytes) {
  VkDeviceSize limit = device.properties.limits.maxStorageBufferRange;
  if (bytes > limit)
    throw VulkanError("vulkan: " + planned.what + " needs " +
                      std::to_string(bytes) +
                      " bytes, more than this device's storage buffer "
                      "limit of " +
                      std::to_string(limit) + " bytes");
  Buffer &buffer = state.buffers.emplace_back();
  buffer.bytes = std::max<VkDeviceSize>(bytes, 4);
  buffer.buffer = decltype(buffer.buffer)(device.device);
  buffer.memory = decltype(buffer.memory)(device.device);
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = buffer.bytes;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device.device, &info, nullptr, buffer.buffer.out()),
        "vkCreateBuffer");
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device.device, buffer.buffer.get(),
                                &requirements);
  VkMemoryAllocateInfo allocation{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocation.allocationSize = requirements.size;
  allocation.memoryTypeIndex = device.memoryType(
      requirements.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  check(vkAllocateMemory(device.device, &allocation, nullptr,
                         buffer.memory.out()),
        "vkAllocateMemory");
  check(vkBindBufferMemory(device.device, buffer.buffer.get(),
                           buffer.memory.get(), 0),
        "vkBindBufferMemory");
  check(vkMapMemory(device.device, buffer.memory.get(), 0, VK_WHOLE_SIZE, 0,
                    &buffer.mapped),
        "vkMapMemory");
  if (planned.contents.empty())
    return;
  // A splat's one element repeats through the buffer: the part written
  // so far is copied after itself.
  char *target = static_cast<char *>(buffer.mapped);
  size_t filled = std::min<size_t>(planned.contents.size(), bytes);
  std::memcpy(target, planned.contents.data(), filled);
  while (planned.splat && filled && filled < bytes) {
    size_t more = std::min<size_t>(filled, bytes - filled);
    std::memcpy(target + filled, target, more);
    filled += more;
  }
}

void VulkanKernel::Impl::prepare(const std::vector<CompiledParam> &parameters,
                                 const int64_t *const *shapes) {
  // (Compared in place: most calls bring the last call's sizes.)
  auto sameAsLast = [&] {
    if (!sized || !shapes)
      return false;
    size_t k = 0;
    for (size_t i = 0; i < parameters.size(); ++i)
      for (size_t d = 0; d < parameters[i].shape.size(); ++d)
        if (k >= sized->shapes.size() || sized->shapes[k++] != shapes[i][d])
          return false;
    return k == sized->shapes.size();
  };
  if (sameAsLast())
    return;
  std::vector<int64_t> flat;
  if (shapes)
    for (size_t i = 0; i < parameters.size(); ++i)
      flat.insert(flat.end(), shapes[i],
                  shapes[i] + parameters[i].shape.size());
  std::vector<int64_t> sizes;
  if (plan.hasDynamicSizes() && (!shapes || !plan.evaluateSizes(shapes, sizes)))
    throw VulkanError("vulkan: the sizes of these arrays overflow the "
                      "kernel's index arithmetic");
  sized.reset(); // the old buffers first: both may not fit
  auto state = std::make_unique<Sized>();
  state->shapes = std::move(flat);
  createBuffers(*state, parameters, shapes, sizes);
  for (auto [id, planned] : llvm::enumerate(plan.buffers)) {
    if (planned.valueOf == mlir::pk::VulkanPlan::kStatic)
      continue;
    // SPIR-V's index is an int32.
    int64_t value = sizes[planned.valueOf];
    if (value < INT32_MIN || value > INT32_MAX)
      throw VulkanError("vulkan: a size of " + std::to_string(value) +
                        " does not fit the GPU's 32-bit indices");
    int32_t narrow = int32_t(value);
    std::memcpy(state->buffers[id].mapped, &narrow, sizeof narrow);
  }
  writeDescriptorSets(*state);
  recordCommands(*state, sizes);
  sized = std::move(state);
}

void VulkanKernel::Impl::createBuffers(
    Sized &state, const std::vector<CompiledParam> &parameters,
    const int64_t *const *shapes, const std::vector<int64_t> &sizes) {
  state.buffers.reserve(plan.buffers.size());
  for (auto [id, planned] : llvm::enumerate(plan.buffers)) {
    uint64_t bytes = planned.bytes;
    if (id < parameters.size()) {
      // Kernels index with SPIR-V's 32-bit index.
      uint64_t elements = 1;
      for (size_t d = 0; d < parameters[id].shape.size(); ++d)
        elements *= uint64_t(shapes ? shapes[id][d] : parameters[id].shape[d]);
      bool withinLimit = elements * itemSize(parameters[id].dtype) <=
                         device.properties.limits.maxStorageBufferRange;
      if (elements > uint64_t(INT32_MAX) && withinLimit)
        throw VulkanError("vulkan: " + planned.what + " has " +
                          std::to_string(elements) +
                          " elements, more than the GPU's 32-bit indices "
                          "reach (2^31 - 1)");
      bytes = elements * itemSize(parameters[id].dtype);
      state.parameterBytes.push_back(bytes);
    } else if (planned.when != mlir::pk::VulkanPlan::kStatic &&
               sizes[planned.when] == 0) {
      bytes = 4; // for steps that do not run with these sizes
    } else if (planned.bytesOf != mlir::pk::VulkanPlan::kStatic) {
      bytes = uint64_t(std::max<int64_t>(0, sizes[planned.bytesOf]));
    }
    addBuffer(state, planned, bytes);
  }
}

void VulkanKernel::Impl::createPipelines() {
  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  fence = decltype(fence)(device.device);
  check(vkCreateFence(device.device, &fenceInfo, nullptr, fence.out()),
        "vkCreateFence");
  if (plan.spirv.empty())
    return; // a kernel that only copies whole arrays dispatches nothing
  shader = decltype(shader)(device.device);
  VkShaderModuleCreateInfo shaderInfo{
      VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  shaderInfo.codeSize = plan.spirv.size() * sizeof(uint32_t);
  shaderInfo.pCode = plan.spirv.data();
  check(vkCreateShaderModule(device.device, &shaderInfo, nullptr, shader.out()),
        "vkCreateShaderModule");
  pipelines.resize(plan.steps.size());
  for (auto [index, step] : llvm::enumerate(plan.steps)) {
    if (step.kind != mlir::pk::VulkanPlan::Step::Dispatch)
      continue;
    Pipeline &pipeline = pipelines[index];
    ++dispatchCount;
    pipeline.setLayout = decltype(pipeline.setLayout)(device.device);
    pipeline.layout = decltype(pipeline.layout)(device.device);
    pipeline.pipeline = decltype(pipeline.pipeline)(device.device);
    std::vector<VkDescriptorSetLayoutBinding> bindings(step.bindings.size());
    for (size_t b = 0; b < bindings.size(); ++b)
      bindings[b] = {uint32_t(b), VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                     VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo setInfo{
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    setInfo.bindingCount = uint32_t(bindings.size());
    setInfo.pBindings = bindings.data();
    check(vkCreateDescriptorSetLayout(device.device, &setInfo, nullptr,
                                      pipeline.setLayout.out()),
          "vkCreateDescriptorSetLayout");
    VkPipelineLayoutCreateInfo layoutInfo{
        VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layoutInfo.setLayoutCount = 1;
    layoutInfo.pSetLayouts = pipeline.setLayout.address();
    // pk-ieee-floats-for-spirv reads float zeros from a push constant.
    VkPushConstantRange zeroRange{VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                  sizeof(float)};
    layoutInfo.pushConstantRangeCount = 1;
    layoutInfo.pPushConstantRanges = &zeroRange;
    check(vkCreatePipelineLayout(device.device, &layoutInfo, nullptr,
                                 pipeline.layout.out()),
          "vkCreatePipelineLayout");
    VkComputePipelineCreateInfo pipelineInfo{
        VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    // Dispatches larger than the device's workgroup-count limit are split
    // with vkCmdDispatchBase.
    pipelineInfo.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;
    pipelineInfo.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipelineInfo.stage.module = shader.get();
    pipelineInfo.stage.pName = step.entryPoint.c_str();
    pipelineInfo.layout = pipeline.layout.get();
    check(vkCreateComputePipelines(device.device, device.pipelineCache, 1,
                                   &pipelineInfo, nullptr,
                                   pipeline.pipeline.out()),
          "vkCreateComputePipelines");
  }
}

void VulkanKernel::Impl::writeDescriptorSets(Sized &state) {
  VkDescriptorPoolSize poolSize{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 0};
  for (const mlir::pk::VulkanPlan::Step &step : plan.steps)
    poolSize.descriptorCount += uint32_t(step.bindings.size());
  poolSize.descriptorCount = std::max<uint32_t>(poolSize.descriptorCount, 1);
  VkDescriptorPoolCreateInfo poolInfo{
      VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  poolInfo.maxSets = std::max<uint32_t>(dispatchCount, 1);
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &poolSize;
  state.descriptorPool = decltype(state.descriptorPool)(device.device);
  check(vkCreateDescriptorPool(device.device, &poolInfo, nullptr,
                               state.descriptorPool.out()),
        "vkCreateDescriptorPool");
  state.sets.assign(plan.steps.size(), VK_NULL_HANDLE);
  for (auto [index, step] : llvm::enumerate(plan.steps)) {
    if (step.kind != mlir::pk::VulkanPlan::Step::Dispatch)
      continue;
    VkDescriptorSetAllocateInfo setAllocation{
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    setAllocation.descriptorPool = state.descriptorPool.get();
    setAllocation.descriptorSetCount = 1;
    setAllocation.pSetLayouts = pipelines[index].setLayout.address();
    check(vkAllocateDescriptorSets(device.device, &setAllocation,
                                   &state.sets[index]),
          "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos;
    for (unsigned id : step.bindings)
      infos.push_back({state.buffers[id].buffer.get(), 0, VK_WHOLE_SIZE});
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (size_t b = 0; b < infos.size(); ++b) {
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = state.sets[index];
      writes[b].dstBinding = uint32_t(b);
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    vkUpdateDescriptorSets(device.device, uint32_t(writes.size()),
                           writes.data(), 0, nullptr);
  }
}

/// The bits of `value` as the element an update step stores (little-endian,
/// in the low bytes).
uint64_t elementBits(const mlir::pk::VulkanPlan::Step &step, int64_t value) {
  uint64_t bits = uint64_t(value);
  if (step.isFloat) {
    llvm::APFloat number(static_cast<double>(value));
    bool lost = false;
    const llvm::fltSemantics &semantics =
        step.elementBytes == 2   ? (step.isBFloat16 ? llvm::APFloat::BFloat()
                                                    : llvm::APFloat::IEEEhalf())
        : step.elementBytes == 4 ? llvm::APFloat::IEEEsingle()
                                 : llvm::APFloat::IEEEdouble();
    number.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
    bits = number.bitcastToAPInt().getZExtValue();
  }
  if (step.elementBytes < 8)
    bits &= (uint64_t(1) << (8 * step.elementBytes)) - 1;
  return bits;
}

void VulkanKernel::Impl::recordCommands(Sized &state,
                                        const std::vector<int64_t> &sizes) {
  // The whole plan as one command buffer, recorded once per set of sizes.
  VkCommandPoolCreateInfo commandPoolInfo{
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  commandPoolInfo.queueFamilyIndex = device.queueFamily;
  state.commandPool = decltype(state.commandPool)(device.device);
  check(vkCreateCommandPool(device.device, &commandPoolInfo, nullptr,
                            state.commandPool.out()),
        "vkCreateCommandPool");
  VkCommandBufferAllocateInfo commandInfo{
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  commandInfo.commandPool = state.commandPool.get();
  commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  commandInfo.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device.device, &commandInfo, &state.commands),
        "vkAllocateCommandBuffers");
  VkCommandBuffer commands = state.commands;
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask =
      VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask =
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const uint32_t *limits = device.properties.limits.maxComputeWorkGroupCount;
  for (auto [index, step] : llvm::enumerate(plan.steps)) {
    if (step.when != mlir::pk::VulkanPlan::kStatic && sizes[step.when] == 0)
      continue;
    if (step.kind == mlir::pk::VulkanPlan::Step::Update) {
      uint64_t bits = elementBits(step, sizes[step.valueOf]);
      uint32_t words[2] = {uint32_t(bits), uint32_t(bits >> 32)};
      vkCmdUpdateBuffer(commands, state.buffers[step.target].buffer.get(), 0,
                        step.elementBytes > 4 ? 8 : 4, words);
    } else if (step.kind == mlir::pk::VulkanPlan::Step::Dispatch) {
      uint32_t grid[3];
      for (int d = 0; d < 3; ++d) {
        int64_t count = step.gridOf[d] == mlir::pk::VulkanPlan::kStatic
                            ? int64_t(step.grid[d])
                            : sizes[step.gridOf[d]];
        if (count > int64_t(UINT32_MAX))
          throw VulkanError("vulkan: a grid of " + std::to_string(count) +
                            " workgroups is too large to dispatch");
        grid[d] = uint32_t(std::max<int64_t>(count, 0));
      }
      const Pipeline &pipeline = pipelines[index];
      vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                        pipeline.pipeline.get());
      vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                              pipeline.layout.get(), 0, 1, &state.sets[index],
                              0, nullptr);
      const float zero = 0.0f;
      vkCmdPushConstants(commands, pipeline.layout.get(),
                         VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof zero, &zero);
      for (uint32_t z = 0; z < grid[2]; z += limits[2])
        for (uint32_t y = 0; y < grid[1]; y += limits[1])
          for (uint32_t x = 0; x < grid[0]; x += limits[0])
            vkCmdDispatchBase(commands, x, y, z,
                              std::min(limits[0], grid[0] - x),
                              std::min(limits[1], grid[1] - y),
                              std::min(limits[2], grid[2] - z));
    } else {
      VkBufferCopy region{0, 0,
                          std::min(state.buffers[step.source].bytes,
                                   state.buffers[step.target].bytes)};
      vkCmdCopyBuffer(commands, state.buffers[step.source].buffer.get(),
                      state.buffers[step.target].buffer.get(), 1, &region);
    }
    vkCmdPipelineBarrier(
        commands,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        0, 1, &barrier, 0, nullptr, 0, nullptr);
  }
  check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
}

VulkanKernel::VulkanKernel() : impl(std::make_unique<Impl>()) {}
VulkanKernel::~VulkanKernel() = default;

uint64_t VulkanKernel::deviceBytes() const {
  // (A forked child's kernels hold nothing it can use, nor their lock.)
  if (impl->device.forked())
    return 0;
  std::lock_guard<std::mutex> lock(impl->running);
  uint64_t total = 0;
  if (impl->sized)
    for (const Buffer &buffer : impl->sized->buffers)
      total += buffer.bytes;
  return total;
}

std::unique_ptr<VulkanKernel>
VulkanKernel::compile(mlir::ModuleOp module, const VulkanOptions &options) {
  auto start = Clock::now();
  std::unique_ptr<VulkanKernel> kernel(new VulkanKernel());
  kernel->describe(module);
  Impl &impl = *kernel->impl;
  Device &device = impl.device;
  uint32_t version = apiVersion(options.vulkanVersion);
  if (version == 0)
    throw CompileError("compile: unknown Vulkan version '" +
                       options.vulkanVersion + "' (1.0 to 1.3)");
  if (device.properties.apiVersion < version)
    throw VulkanError(std::string("vulkan: device ") +
                      device.properties.deviceName +
                      " does not support "
                      "Vulkan " +
                      options.vulkanVersion);
  mlir::pk::prepareContextForCompilation(*module.getContext());

  mlir::pk::SpirvPipelineOptions spirv;
  spirv.workgroupSize = options.workgroupSize;
  spirv.vulkanVersion = options.vulkanVersion;
  spirv.specialFloatWidths = device.preservedFloatWidths;
  spirv.maxLoopIterations = device.maxLoopIterations;
  spirv.float64 = device.float64;
  DiagnosticCollector diagnostics(module.getContext());
  mlir::FailureOr<mlir::pk::VulkanPlan> plan =
      mlir::pk::compileForVulkan(module, spirv);
  if (mlir::failed(plan))
    throw CompileError("compile: the SPIR-V pipeline failed on kernel '" +
                       kernel->name() + "':\n" + diagnostics.text());
  kernel->compileTimes.pipelineSeconds = secondsSince(start);
  start = Clock::now();

  dumpSpirv(kernel->name(), plan->spirv);
  impl.plan = std::move(*plan);
  impl.dynamic = kernel->hasDynamicSizes();
  impl.createPipelines();
  if (!impl.dynamic)
    impl.prepare(kernel->params(), nullptr);
  kernel->compileTimes.codegenSeconds = secondsSince(start);
  return kernel;
}

namespace {
thread_local VulkanRunTimes lastRun;
} // namespace

VulkanRunTimes lastVulkanRunTimes() { return lastRun; }

void VulkanKernel::run(void *const *data, const int64_t *const *shapes) const {
  impl->device.checkNotForked(); // before the lock a parent's thread held
  std::lock_guard<std::mutex> lock(impl->running);
  auto start = Clock::now();
  const std::vector<CompiledParam> &parameters = params();
  if (impl->dynamic)
    impl->prepare(parameters, shapes);
  const std::vector<Buffer> &buffers = impl->sized->buffers;
  const std::vector<size_t> &bytes = impl->sized->parameterBytes;
  for (size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].read)
      std::memcpy(buffers[i].mapped, data[i], bytes[i]);
  lastRun.uploadSeconds = secondsSince(start);
  start = Clock::now();
  Device &device = impl->device;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &impl->sized->commands;
  {
    std::lock_guard<std::mutex> queue(device.queueMutex);
    check(vkQueueSubmit(device.queue, 1, &submit, impl->fence.get()),
          "vkQueueSubmit");
  }
  check(vkWaitForFences(device.device, 1, impl->fence.address(), VK_TRUE,
                        UINT64_MAX),
        "vkWaitForFences");
  check(vkResetFences(device.device, 1, impl->fence.address()),
        "vkResetFences");
  lastRun.computeSeconds = secondsSince(start);
  start = Clock::now();
  for (size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].written)
      std::memcpy(data[i], buffers[i].mapped, bytes[i]);
  lastRun.downloadSeconds = secondsSince(start);
}

} // namespace pk
