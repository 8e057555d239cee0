//===- PrepareSpirvKernels.cpp - SPIR-V target and entry-point ABI --------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKPREPARESPIRVKERNELS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct PrepareSpirvKernelsPass
    : public mlir::pk::impl::PkPrepareSpirvKernelsBase<
          PrepareSpirvKernelsPass> {
  using PkPrepareSpirvKernelsBase::PkPrepareSpirvKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() > 1) {
      gpuModules[1].emitError("expected one gpu.module of kernels (run "
                              "pk-merge-gpu-modules first)");
      return signalPassFailure();
    }
    std::optional<spirv::Version> version = spirvVersionFor(vulkanVersion);
    if (!version) {
      module.emitError("unsupported vulkan-version '")
          << vulkanVersion << "' (supported: 1.0, 1.1, 1.2, 1.3)";
      return signalPassFailure();
    }
    if (gpuModules.empty())
      return;
    MLIRContext *context = &getContext();
    // Every element type a kernel may use, stored in buffers: the
    // capabilities Vulkan drivers commonly offer (lavapipe, NVIDIA, AMD,
    // MoltenVK for 8/16-bit storage).
    auto triple = spirv::VerCapExtAttr::get(
        *version,
        {spirv::Capability::Shader, spirv::Capability::Int8,
         spirv::Capability::Int16, spirv::Capability::Int64,
         spirv::Capability::Float16, spirv::Capability::Float64,
         spirv::Capability::StorageBuffer8BitAccess,
         spirv::Capability::StorageBuffer16BitAccess,
         spirv::Capability::SignedZeroInfNanPreserve},
        {spirv::Extension::SPV_KHR_storage_buffer_storage_class,
         spirv::Extension::SPV_KHR_8bit_storage,
         spirv::Extension::SPV_KHR_16bit_storage,
         spirv::Extension::SPV_KHR_float_controls},
        context);
    module->setAttr(spirv::getTargetEnvAttrName(),
                    spirv::TargetEnvAttr::get(
                        triple, spirv::getDefaultResourceLimits(context)));
    // nsw/nuw would become NoSignedWrap decorations, which SPIR-V before 1.4
    // only has through an extension; they are hints, drop them.
    gpuModules.front().walk([&](arith::ArithIntegerOverflowFlagsInterface op) {
      op->setAttr(op.getIntegerOverflowAttrName(),
                  arith::IntegerOverflowFlagsAttr::get(
                      context, arith::IntegerOverflowFlags::none));
    });
    for (auto kernel : gpuModules.front().getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      std::optional<DenseI32ArrayAttr> block = kernel.getKnownBlockSizeAttr();
      SmallVector<int32_t, 3> size = {1, 1, 1};
      if (block && *block)
        size.assign(block->asArrayRef().begin(), block->asArrayRef().end());
      kernel->setAttr(spirv::getEntryPointABIAttrName(),
                      spirv::getEntryPointABIAttr(context, size));
    }
  }

  /// The SPIR-V version to target for a Vulkan version: the newest that
  /// Vulkan 1.1 guarantees (1.3) from 1.1 on. (With 1.4 and later, the ABI
  /// lowering lists buffers among entry-point interfaces while the VCE
  /// update may still pick an older module version, which validation
  /// rejects.)
  static std::optional<spirv::Version> spirvVersionFor(StringRef vulkan) {
    return llvm::StringSwitch<std::optional<spirv::Version>>(vulkan)
        .Case("1.0", spirv::Version::V_1_0)
        .Cases({"1.1", "1.2", "1.3"}, spirv::Version::V_1_3)
        .Default(std::nullopt);
  }
};

} // namespace
