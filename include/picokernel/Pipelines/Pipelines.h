//===- Pipelines.h - picokernel's named pass pipelines ----------*- C++ -*-===//
//
// The CPU compilation of a pk module, as stages that can be run and
// inspected one at a time (pk-opt --pk-<stage>-pipeline) or all at once
// (--pk-cpu-pipeline):
//
//   linalg      pk-forward-stores, convert-pk-to-linalg: linalg on tensors
//   fused       linalg-fuse-elementwise-ops: one generic per elementwise chain
//   tiled       large matmuls packed into panels and tiled into register
//               tiles of vector FMAs, long reductions split into parallel
//               blocks and a combine (CPU only)
//   bufferized  one-shot-bufferize into the caller's buffers, deallocation
//   llvm        loops (outermost parallel via OpenMP when large), LLVM dialect
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PIPELINES_PIPELINES_H
#define PICOKERNEL_PIPELINES_PIPELINES_H

#include "picokernel/Support/Defaults.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>
#include <vector>

namespace mlir::pk {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  Option<int64_t> parallelThreshold{
      *this, "parallel-threshold",
      llvm::cl::desc("Iteration count from which a loop nest runs on all "
                     "cores through OpenMP (0: always serial)"),
      llvm::cl::init(::pk::defaults::kParallelThreshold)};
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Bits in one vector register of the target, which "
                     "sizes the matmuls' register tiles (0: the host's)"),
      llvm::cl::init(0)};
};

struct SpirvPipelineOptions : public PassPipelineOptions<SpirvPipelineOptions> {
  Option<int64_t> workgroupSize{
      *this, "workgroup-size",
      llvm::cl::desc("Threads per workgroup (the tile size of the innermost "
                     "parallel dimension)"),
      llvm::cl::init(::pk::defaults::kWorkgroupSize)};
  Option<std::string> vulkanVersion{
      *this, "vulkan-version",
      llvm::cl::desc("Target Vulkan version: 1.0, 1.1, 1.2 or 1.3"),
      llvm::cl::init(std::string(::pk::defaults::kVulkanVersion))};
  ListOption<unsigned> specialFloatWidths{
      *this, "special-float-widths",
      llvm::cl::desc("Float widths whose NaNs, infinities and signed zeros "
                     "follow IEEE (SignedZeroInfNanPreserve; default 16, 32, "
                     "64, which Vulkan 1.2 devices generally preserve)")};
  Option<bool> float64{
      *this, "float64",
      llvm::cl::desc("The device computes in float64 (shaderFloat64): "
                     "float32 pow is computed through it, correctly rounded"),
      llvm::cl::init(true)};
  Option<int64_t> maxLoopIterations{
      *this, "max-loop-iterations",
      llvm::cl::desc("Loop iterations the device lets one thread run before "
                     "it stops it (llvmpipe: 65535; 0: no limit): kernels "
                     "that need more fail to compile"),
      llvm::cl::init(0)};
  /// The widths to preserve: the option's, or all three when it is unset.
  SmallVector<unsigned> specialFloatWidthsOrDefault() const {
    if (!specialFloatWidths.hasValue())
      return {16, 32, 64};
    return SmallVector<unsigned>(specialFloatWidths.begin(),
                                 specialFloatWidths.end());
  }
};

struct CudaPipelineOptions : public PassPipelineOptions<CudaPipelineOptions> {
  Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block (the tile size of the innermost "
                     "parallel dimension)"),
      llvm::cl::init(::pk::defaults::kCudaBlockSize)};
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target NVIDIA architecture (sm_80: Ampere and later, "
                     "whose drivers compile the PTX for their device)"),
      llvm::cl::init(std::string(::pk::defaults::kCudaChip))};
  Option<unsigned> ptxVersion{
      *this, "ptx-version",
      llvm::cl::desc("PTX ISA version times ten (80: PTX 8.0; 0: the oldest "
                     "that the chip allows)"),
      llvm::cl::init(0)};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary makes: isa (PTX text), bin "
                     "(a cubin, through the toolkit's ptxas) or fatbin"),
      llvm::cl::init("isa")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory, for libdevice (math "
                     "functions) and ptxas (default: CUDA_ROOT, CUDA_HOME, "
                     "CUDA_PATH, then /usr/local/cuda)"),
      llvm::cl::init("")};
};

void buildPkToLinalgPipeline(OpPassManager &pm);
void buildPkFusionPipeline(OpPassManager &pm);
void buildPkCpuTilingPipeline(OpPassManager &pm,
                              const CpuPipelineOptions &options);
/// Bufferization into the callers' buffers; with `smallBuffersOnStack`
/// (the CPU's), small temporaries outside loops live on the stack.
void buildPkBufferizationPipeline(OpPassManager &pm, bool smallBuffersOnStack);
void buildPkToLLVMPipeline(OpPassManager &pm,
                           const CpuPipelineOptions &options);
/// All five stages.
void buildPkCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Bufferized linalg to GPU kernels in one spirv.module (plus the host
/// function launching them): parallel loops tiled into workgroups,
/// gpu.launch, outlining, entry-point ABI and target environment,
/// convert-gpu-to-spirv, ABI lowering and VCE update.
void buildPkToSpirvPipeline(OpPassManager &pm,
                            const SpirvPipelineOptions &options);
/// linalg, fused, bufferized, then the SPIR-V stage.
void buildPkSpirvPipeline(OpPassManager &pm,
                          const SpirvPipelineOptions &options);

/// Bufferized linalg to GPU kernels in one gpu.module of NVVM (LLVM
/// dialect) with its #nvvm.target, plus the host function launching them:
/// the GPU tiling and outlining shared with SPIR-V, the target checked,
/// then convert-gpu-to-nvvm with math as libdevice calls (stage 'nvvm').
void buildPkToNvvmPipeline(OpPassManager &pm,
                           const CudaPipelineOptions &options);
/// linalg, fused, bufferized, nvvm, then gpu-module-to-binary: the kernels
/// as a gpu.binary of PTX (or cubin).
void buildPkCudaPipeline(OpPassManager &pm, const CudaPipelineOptions &options);

/// The stage names, in order: "linalg", "fused", "tiled", "bufferized",
/// "llvm".
const std::vector<std::string> &cpuStageNames();
/// Adds the passes of one stage (by name) to `pm`; false if unknown.
bool buildCpuStage(OpPassManager &pm, const std::string &stage,
                   const CpuPipelineOptions &options);

/// Registers --pk-cpu-pipeline, --pk-spirv-pipeline, --pk-cuda-pipeline and
/// the stage pipelines.
void registerPkPipelines();

/// The LLVM function a kernel named `kernel` becomes in the CPU pipeline
/// ("kernel.erf": pk-rename-kernel-functions); its C interface keeps the
/// kernel's name (`_mlir_ciface_erf`).
std::string loweredKernelFunction(llvm::StringRef kernel);

} // namespace mlir::pk

#endif // PICOKERNEL_PIPELINES_PIPELINES_H
