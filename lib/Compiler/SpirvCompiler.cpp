//===- SpirvCompiler.cpp - pk kernels to SPIR-V and a host plan -----------===//

#include "picokernel/Compiler/SpirvCompiler.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "llvm/ADT/DenseMap.h"

#include <cstring>

using namespace mlir;
using mlir::pk::VulkanPlan;

LogicalResult mlir::pk::compileToSpirv(ModuleOp module,
                                       const SpirvPipelineOptions &options,
                                       SmallVectorImpl<uint32_t> &binary) {
  for (KernelOp kernel : module.getOps<KernelOp>())
    if (kernel.hasDynamicSizes())
      return kernel.emitError("kernel '")
             << kernel.getSymName()
             << "' has dynamic sizes: kernels for Vulkan take static sizes "
                "only, for now";
  PassManager pm(module.getContext());
  buildPkSpirvPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  auto spirvModules = llvm::to_vector(module.getOps<spirv::ModuleOp>());
  binary.clear();
  if (spirvModules.empty())
    return success();
  if (spirvModules.size() != 1)
    return module.emitError("expected one pk.kernel to compile to SPIR-V, got ")
           << spirvModules.size();
  return spirv::serialize(spirvModules.front(), binary);
}

namespace {

int64_t bytesOf(MemRefType type) {
  int64_t width = type.getElementTypeBitWidth();
  return type.getNumElements() * std::max<int64_t>(1, width / 8);
}

/// How messages name kernel argument `index`: by its parameter's name where
/// its location carries one (the tracers give every parameter a NameLoc),
/// else by position.
std::string argumentName(BlockArgument arg, size_t index) {
  SmallVector<Location> pending = {arg.getLoc()};
  while (!pending.empty()) {
    Location loc = pending.pop_back_val();
    if (auto named = dyn_cast<NameLoc>(loc))
      return "argument '" + named.getName().str() + "'";
    if (auto fused = dyn_cast<FusedLoc>(loc))
      pending.append(fused.getLocations().rbegin(),
                     fused.getLocations().rend());
  }
  return "argument " + std::to_string(index);
}

/// Reads a host function (launches, allocations, constants, views and
/// copies) into the steps and buffers of a plan.
class HostPlanner {
public:
  HostPlanner(ModuleOp module, VulkanPlan &plan) : module(module), plan(plan) {}

  LogicalResult run(func::FuncOp host) {
    for (auto [i, arg] : llvm::enumerate(host.getArguments()))
      bufferOf[arg] = addBuffer(bytesOf(cast<MemRefType>(arg.getType())),
                                argumentName(arg, i));
    for (Operation &op : host.getBody().front())
      if (failed(planOp(op)))
        return failure();
    return success();
  }

private:
  unsigned addBuffer(int64_t bytes, std::string what) {
    plan.buffers.push_back({uint64_t(bytes), std::move(what), {}});
    return plan.buffers.size() - 1;
  }

  LogicalResult planOp(Operation &op) {
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
      return planLaunch(launch);
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      bufferOf[alloc.getResult()] =
          addBuffer(bytesOf(alloc.getType()), "a temporary");
      return success();
    }
    if (auto global = dyn_cast<memref::GetGlobalOp>(op))
      return planConstant(global);
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp>(
            op)) {
      // A reshape of a contiguous buffer is the same buffer. So is a view:
      // its static offset and strides are in its type, from which the
      // kernels index the whole buffer.
      auto found = bufferOf.find(op.getOperand(0));
      if (found == bufferOf.end())
        return op.emitError("the Vulkan backend cannot reshape a value that "
                            "is not a buffer");
      bufferOf[op.getResult(0)] = found->second;
      return success();
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      return planCopy(copy);
    if (isa<memref::DeallocOp, arith::ConstantOp, func::ReturnOp>(op))
      return success();
    return op.emitError("the Vulkan backend does not run host operation '")
           << op.getName() << "'";
  }

  LogicalResult planLaunch(gpu::LaunchFuncOp launch) {
    if (plan.spirv.empty())
      return launch.emitError("a dispatch without GPU code");
    VulkanPlan::Step step;
    step.kind = VulkanPlan::Step::Dispatch;
    step.entryPoint = launch.getKernelName().getValue().str();
    Value sizes[3] = {launch.getGridSizeX(), launch.getGridSizeY(),
                      launch.getGridSizeZ()};
    for (int d = 0; d < 3; ++d) {
      APInt value;
      if (!matchPattern(sizes[d], m_ConstantInt(&value)))
        return launch.emitError("grid size unknown at compile time");
      step.grid[d] = uint32_t(value.getZExtValue());
    }
    for (Value operand : launch.getKernelOperands()) {
      auto found = bufferOf.find(operand);
      if (found == bufferOf.end())
        return launch.emitError("a non-buffer value is passed to the GPU");
      step.bindings.push_back(found->second);
    }
    plan.steps.push_back(std::move(step));
    return success();
  }

  LogicalResult planConstant(memref::GetGlobalOp global) {
    auto definition =
        module.lookupSymbol<memref::GlobalOp>(global.getNameAttr());
    auto value = dyn_cast_or_null<DenseElementsAttr>(
        definition ? definition.getInitialValueAttr() : Attribute());
    if (!value)
      return global.emitError("constant '")
             << global.getName() << "' has no dense value";
    unsigned id = addBuffer(bytesOf(global.getType()), "a constant");
    bufferOf[global.getResult()] = id;
    VulkanPlan::Buffer &buffer = plan.buffers[id];
    // A splat stays one element (a large one is filled in on the device's
    // side, after the buffer's size is checked); i1 elements are bytes.
    ArrayRef<char> raw = value.getRawData();
    unsigned width = value.getElementType().getIntOrFloatBitWidth();
    size_t element = std::max<size_t>(1, width / 8);
    if (value.isSplat()) {
      buffer.splat = true;
      if (value.getElementType().isInteger(1))
        buffer.contents.assign(1, char(value.getSplatValue<bool>()));
      else
        buffer.contents.assign(raw.begin(), raw.begin() + element);
    } else if (value.getElementType().isInteger(1)) {
      for (bool bit : value.getValues<bool>())
        buffer.contents.push_back(char(bit));
    } else {
      buffer.contents.assign(raw.begin(), raw.end());
    }
    return success();
  }

  LogicalResult planCopy(memref::CopyOp copy) {
    // Copies of views are kernels (pk-copy-views-with-linalg).
    for (Value side : {copy.getSource(), copy.getTarget()})
      if (!isa<AffineMapAttr>(cast<MemRefType>(side.getType()).getLayout()))
        return copy.emitError(
            "the Vulkan backend cannot copy a part of a buffer on the host");
    VulkanPlan::Step step;
    step.kind = VulkanPlan::Step::Copy;
    step.source = bufferOf.lookup(copy.getSource());
    step.target = bufferOf.lookup(copy.getTarget());
    plan.steps.push_back(std::move(step));
    return success();
  }

  ModuleOp module;
  VulkanPlan &plan;
  llvm::DenseMap<Value, unsigned> bufferOf;
};

} // namespace

FailureOr<VulkanPlan>
mlir::pk::compileForVulkan(ModuleOp module,
                           const SpirvPipelineOptions &options) {
  auto kernels = llvm::to_vector(module.getOps<KernelOp>());
  if (kernels.size() != 1)
    return module.emitError("expected one pk.kernel to compile, got ")
           << kernels.size();
  std::string name = kernels.front().getSymName().str();
  VulkanPlan plan;
  SmallVector<uint32_t> binary;
  if (failed(compileToSpirv(module, options, binary)))
    return failure();
  plan.spirv.assign(binary.begin(), binary.end());
  auto host = module.lookupSymbol<func::FuncOp>(name);
  if (!host)
    return module.emitError("no host function for kernel '") << name << "'";
  if (failed(HostPlanner(module, plan).run(host)))
    return failure();
  return plan;
}
