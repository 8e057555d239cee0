//===- SpirvCompiler.cpp - pk kernels to SPIR-V and a host plan -----------===//

#include "picokernel/Compiler/SpirvCompiler.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

int64_t elementBytes(MemRefType type) {
  return std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// The bytes of a buffer of static sizes; 0 for dynamic ones, whose size
/// the plan computes at dispatch.
int64_t bytesOf(MemRefType type) {
  return type.hasStaticShape() ? type.getNumElements() * elementBytes(type) : 0;
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
    VulkanPlan::Buffer buffer;
    buffer.bytes = uint64_t(bytes);
    buffer.what = std::move(what);
    plan.buffers.push_back(std::move(buffer));
    return plan.buffers.size() - 1;
  }

  LogicalResult planOp(Operation &op) {
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
      return planLaunch(launch);
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      return planAllocation(alloc);
    if (auto global = dyn_cast<memref::GetGlobalOp>(op))
      return planConstant(global);
    if (auto cast = dyn_cast<memref::ReinterpretCastOp>(op)) {
      // A view from the first element (pk-to-linalg's views by size class):
      // the kernels index its buffer with its strides.
      if (!isConstantIntValue(cast.getMixedOffsets().front(), 0))
        return cast.emitError("the Vulkan backend cannot view a buffer from "
                              "an offset computed at run time");
    }
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
            memref::ReinterpretCastOp>(op)) {
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
    if (auto branch = dyn_cast<scf::IfOp>(op))
      return planBranch(branch);
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return planStore(store);
    // Sizes and their arithmetic: computed where a launch or an allocation
    // needs them (sizeOf).
    if (isa<memref::DeallocOp, memref::DimOp, memref::ExtractStridedMetadataOp,
            func::ReturnOp, scf::YieldOp>(op) ||
        isa<arith::ArithDialect>(op.getDialect()))
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
      if (matchPattern(sizes[d], m_ConstantInt(&value))) {
        step.grid[d] = uint32_t(value.getZExtValue());
        continue;
      }
      FailureOr<unsigned> size = sizeOf(sizes[d]);
      if (failed(size))
        return failure();
      step.gridOf[d] = int(*size);
    }
    for (Value operand : launch.getKernelOperands()) {
      if (operand.getType().isIndex()) {
        // A dynamic size: a small buffer the host fills at dispatch, one
        // per size whatever the dispatches that read it.
        FailureOr<unsigned> size = sizeOf(operand);
        if (failed(size))
          return failure();
        auto [held, added] = sizeBuffer.try_emplace(*size, 0);
        if (added) {
          held->second = addBuffer(4, "a size");
          plan.buffers[held->second].valueOf = int(*size);
        }
        step.bindings.push_back(held->second);
        continue;
      }
      auto found = bufferOf.find(operand);
      if (found == bufferOf.end())
        return launch.emitError("a non-buffer value is passed to the GPU");
      step.bindings.push_back(found->second);
    }
    addStep(std::move(step));
    return success();
  }

  void addStep(VulkanPlan::Step step) {
    step.when = condition;
    plan.steps.push_back(std::move(step));
  }

  /// A branch on the sizes: the steps of each side run when its condition
  /// holds at dispatch.
  LogicalResult planBranch(scf::IfOp branch) {
    if (branch.getNumResults() != 0)
      return branch.emitError(
          "the Vulkan backend cannot run a host branch that yields values");
    FailureOr<unsigned> holds = sizeOf(branch.getCondition());
    if (failed(holds))
      return failure();
    unsigned fails =
        instruction(VulkanPlan::SizeInstruction::Cmp, {*holds, constant(0)},
                    int64_t(arith::CmpIPredicate::eq));
    int outer = condition;
    for (auto [side, region] : llvm::zip(std::array<unsigned, 2>{*holds, fails},
                                         branch->getRegions())) {
      condition = int(side);
      if (outer != VulkanPlan::kStatic)
        condition = int(instruction(VulkanPlan::SizeInstruction::And,
                                    {unsigned(outer), side}));
      for (Block &block : region)
        for (Operation &op : block)
          if (failed(planOp(op)))
            return failure();
    }
    condition = outer;
    return success();
  }

  /// A scalar the host computes from the sizes (a mean's count) stored
  /// into a buffer of one element: an update of it, in order with the
  /// dispatches.
  LogicalResult planStore(memref::StoreOp store) {
    MemRefType type = store.getMemRefType();
    auto found = bufferOf.find(store.getMemRef());
    Type element = type.getElementType();
    unsigned width = element.getIntOrFloatBitWidth();
    if (found == bufferOf.end() || !type.hasStaticShape() ||
        type.getNumElements() != 1 || width % 8 != 0 || width > 64)
      return store.emitError("the Vulkan backend stores on the host only "
                             "into buffers of one element");
    FailureOr<unsigned> value = sizeOf(store.getValueToStore());
    if (failed(value))
      return failure();
    VulkanPlan::Step step;
    step.kind = VulkanPlan::Step::Update;
    step.target = found->second;
    step.valueOf = int(*value);
    step.elementBytes = width / 8;
    step.isFloat = isa<FloatType>(element);
    step.isBFloat16 = element.isBF16();
    addStep(std::move(step));
    return success();
  }

  LogicalResult planAllocation(memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    unsigned id = addBuffer(bytesOf(type), "a temporary");
    bufferOf[alloc.getResult()] = id;
    plan.buffers[id].when = condition;
    if (type.hasStaticShape())
      return success();
    // Its bytes: the element size times every size.
    FailureOr<unsigned> bytes =
        sizeProduct(alloc, alloc.getResult(),
                    llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())),
                    constant(elementBytes(type)));
    if (failed(bytes))
      return failure();
    plan.buffers[id].bytesOf = int(*bytes);
    return success();
  }

  unsigned constant(int64_t value) {
    VulkanPlan::SizeInstruction constant;
    constant.value = value;
    plan.sizes.push_back(constant);
    return unsigned(plan.sizes.size() - 1);
  }

  unsigned instruction(VulkanPlan::SizeInstruction::Kind kind,
                       ArrayRef<unsigned> operands, int64_t value = 0) {
    VulkanPlan::SizeInstruction step;
    step.kind = kind;
    step.value = value;
    llvm::copy(operands, step.operands);
    plan.sizes.push_back(step);
    return unsigned(plan.sizes.size() - 1);
  }

  /// The size instruction that computes `value` (an index) at dispatch.
  FailureOr<unsigned> sizeOf(Value value) {
    auto found = sizeInstruction.find(value);
    if (found != sizeInstruction.end())
      return found->second;
    FailureOr<unsigned> result = computeSize(value);
    if (succeeded(result))
      sizeInstruction[value] = *result;
    return result;
  }

  FailureOr<unsigned> sizeOf(OpFoldResult size) {
    if (std::optional<int64_t> known = getConstantIntValue(size))
      return constant(*known);
    return sizeOf(cast<Value>(size));
  }

  FailureOr<unsigned> computeSize(Value value) {
    using Kind = VulkanPlan::SizeInstruction::Kind;
    if (std::optional<int64_t> known = getConstantIntValue(value))
      return constant(*known);
    Operation *op = value.getDefiningOp();
    if (auto dim = dyn_cast_or_null<memref::DimOp>(op))
      return dimensionSize(dim);
    if (auto metadata = dyn_cast_or_null<memref::ExtractStridedMetadataOp>(op))
      return metadataValue(metadata, cast<OpResult>(value).getResultNumber());
    // An instruction on the sizes of the op's operands.
    auto onOperands = [&](Kind kind) -> FailureOr<unsigned> {
      SmallVector<unsigned, 3> operands;
      for (Value operand : op->getOperands()) {
        FailureOr<unsigned> size = sizeOf(operand);
        if (failed(size))
          return failure();
        operands.push_back(*size);
      }
      return instruction(kind, operands);
    };
    if (isa_and_nonnull<arith::AddIOp>(op))
      return onOperands(Kind::Add);
    if (isa_and_nonnull<arith::SubIOp>(op))
      return onOperands(Kind::Sub);
    if (isa_and_nonnull<arith::MulIOp>(op))
      return onOperands(Kind::Mul);
    if (isa_and_nonnull<arith::DivSIOp>(op))
      return onOperands(Kind::DivS);
    if (isa_and_nonnull<arith::CeilDivSIOp>(op))
      return onOperands(Kind::CeilDivS);
    if (isa_and_nonnull<arith::FloorDivSIOp>(op))
      return onOperands(Kind::FloorDivS);
    if (isa_and_nonnull<arith::RemSIOp>(op))
      return onOperands(Kind::RemS);
    if (isa_and_nonnull<arith::MinSIOp>(op))
      return onOperands(Kind::MinS);
    if (isa_and_nonnull<arith::MaxSIOp>(op))
      return onOperands(Kind::MaxS);
    if (isa_and_nonnull<arith::AndIOp>(op))
      return onOperands(Kind::And);
    if (isa_and_nonnull<arith::OrIOp>(op))
      return onOperands(Kind::Or);
    if (isa_and_nonnull<arith::XOrIOp>(op))
      return onOperands(Kind::Xor);
    if (auto compare = dyn_cast_or_null<arith::CmpIOp>(op)) {
      FailureOr<unsigned> comparison = onOperands(Kind::Cmp);
      if (succeeded(comparison))
        plan.sizes[*comparison].value = int64_t(compare.getPredicate());
      return comparison;
    }
    if (isa_and_nonnull<arith::SelectOp>(op))
      return onOperands(Kind::Select);
    // Conversions keep the value: an update converts it to the element
    // type it stores.
    if (isa_and_nonnull<arith::IndexCastOp, arith::IndexCastUIOp,
                        arith::SIToFPOp, arith::UIToFPOp, arith::ExtSIOp,
                        arith::ExtUIOp>(op))
      return sizeOf(op->getOperand(0));
    if (op)
      return op->emitError("the Vulkan backend cannot compute '")
             << op->getName() << "' on the host";
    return module.emitError("the Vulkan backend cannot compute a value that "
                            "is not a size on the host");
  }

  /// A buffer's size: a parameter's at dispatch, a view's or an
  /// allocation's from their operands.
  FailureOr<unsigned> dimensionSize(memref::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index || !isa<MemRefType>(dim.getSource().getType()))
      return dim.emitError("the Vulkan backend reads sizes of constant "
                           "dimensions of buffers only");
    return sizeOfDimension(dim, dim.getSource(), *index);
  }

  FailureOr<unsigned> sizeOfDimension(Operation *reader, Value buffer,
                                      int64_t index) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.isDynamicDim(index))
      return constant(type.getDimSize(index));
    Operation *made = buffer.getDefiningOp();
    if (auto cast = dyn_cast_or_null<memref::ReinterpretCastOp>(made))
      return sizeOf(cast.getMixedSizes()[index]);
    if (auto view = dyn_cast_or_null<memref::SubViewOp>(made)) {
      // The dimension of the view's, among its source's not dropped.
      llvm::SmallBitVector dropped = view.getDroppedDims();
      int64_t kept = -1;
      SmallVector<OpFoldResult> sizes = view.getMixedSizes();
      for (auto [d, size] : llvm::enumerate(sizes))
        if (!dropped.test(d) && ++kept == index)
          return sizeOf(size);
    }
    if (auto alloc = dyn_cast_or_null<memref::AllocOp>(made))
      return sizeOf(alloc.getDynamicSizes()[type.getDynamicDimIndex(index)]);
    if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(made))
      return sizeOf(expand.getMixedOutputShape()[index]);
    if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(made))
      return sizeProduct(reader, collapse.getSrc(),
                         collapse.getReassociationIndices()[index],
                         constant(1));
    if (auto parameter = dyn_cast<BlockArgument>(buffer);
        parameter && parameter.getOwner()->isEntryBlock() &&
        isa<func::FuncOp>(parameter.getOwner()->getParentOp())) {
      unsigned size = instruction(VulkanPlan::SizeInstruction::Dim, {},
                                  int64_t(parameter.getArgNumber()));
      plan.sizes[size].dim = unsigned(index);
      return size;
    }
    InFlightDiagnostic error = reader->emitError(
        "the Vulkan backend cannot read the size of a buffer");
    if (made)
      error << " made by '" << made->getName() << "'";
    return error;
  }

  /// A size, stride or the offset of a buffer's metadata: from its sizes
  /// where its layout is the identity, from a view's operands otherwise.
  FailureOr<unsigned> metadataValue(memref::ExtractStridedMetadataOp metadata,
                                    unsigned result) {
    Value source = metadata.getSource();
    auto type = cast<MemRefType>(source.getType());
    int64_t rank = type.getRank();
    // Results: base buffer, offset, sizes, strides.
    if (result >= 2 && result < 2 + unsigned(rank))
      return sizeOfDimension(metadata, source, result - 2);
    if (auto view = source.getDefiningOp<memref::ReinterpretCastOp>())
      return sizeOf(result == 1 ? view.getMixedOffsets().front()
                                : view.getMixedStrides()[result - 2 - rank]);
    if (!type.getLayout().isIdentity() || result == 0)
      return metadata.emitError("the Vulkan backend reads the layout of "
                                "parameters, allocations and their views only");
    if (result == 1)
      return constant(0);
    // A row-major stride: the product of the sizes after its dimension.
    return sizeProduct(
        metadata, source,
        llvm::to_vector(llvm::seq<int64_t>(result - 1 - rank, rank)),
        constant(1));
  }

  /// `start` times the sizes of `buffer`'s dimensions `dims`.
  FailureOr<unsigned> sizeProduct(Operation *reader, Value buffer,
                                  ArrayRef<int64_t> dims, unsigned start) {
    unsigned product = start;
    for (int64_t d : dims) {
      FailureOr<unsigned> size = sizeOfDimension(reader, buffer, d);
      if (failed(size))
        return failure();
      product = instruction(VulkanPlan::SizeInstruction::Mul, {product, *size});
    }
    return product;
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
    addStep(std::move(step));
    return success();
  }

  ModuleOp module;
  VulkanPlan &plan;
  llvm::DenseMap<Value, unsigned> bufferOf;
  llvm::DenseMap<Value, unsigned> sizeInstruction;
  /// The buffer holding each size instruction's value for the kernels.
  llvm::DenseMap<unsigned, unsigned> sizeBuffer;
  /// The size instruction that decides whether the steps planned now run
  /// (inside host branches).
  int condition = VulkanPlan::kStatic;
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
