//===- Pipelines.cpp - picokernel's named pass pipelines ------------------===//

#include "picokernel/Pipelines/Pipelines.h"
#include "picokernel/Conversion/Passes.h"
#include "picokernel/Dialect/Pk/Transforms/Passes.h"
#include "picokernel/Support/Environment.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// Math on 16-bit floats and bfloat16 arithmetic in float32 (rounded back
/// after each op, as NumPy computes them), and conversions to the 16-bit
/// floats as plain instructions or bit operations: no compiler-rt helper
/// (which a JIT'd kernel may not find) and no bf16 left for targets
/// without it.
static void addNarrowFloatEmulation(OpPassManager &pm) {
  pm.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions bf16InFloat32;
  bf16InFloat32.sourceTypeStrs = {"bf16"};
  bf16InFloat32.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(bf16InFloat32));
  pm.addPass(mlir::pk::createPkExpandNarrowFloatConversions());
}

void mlir::pk::buildPkToLinalgPipeline(OpPassManager &pm) {
  pm.addNestedPass<KernelOp>(createPkForwardStores());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertPkToLinalg());
  pm.addPass(createCanonicalizerPass());
}

void mlir::pk::buildPkFusionPipeline(OpPassManager &pm) {
  // Trees of single-use elementwise ops in one step each (linear in their
  // size); upstream's pairwise fusion does the rest. Both keep loop bodies
  // within kMaxFusedBodyOps operations.
  pm.addNestedPass<func::FuncOp>(createPkFuseElementwiseTrees());
  pm.addPass(createPkFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::pk::buildPkCpuTilingPipeline(OpPassManager &pm,
                                        const CpuPipelineOptions &options) {
  PkPackMatmulOptions pack;
  pack.vectorBits = options.vectorBits;
  pm.addNestedPass<func::FuncOp>(createPkPackMatmul(pack));
  // Packs of fills become fills of the packed tiles.
  pm.addPass(createCanonicalizerPass());
  PkVectorizePackedMatmulOptions vectorize;
  vectorize.parallelThreshold = options.parallelThreshold;
  pm.addNestedPass<func::FuncOp>(createPkVectorizePackedMatmul(vectorize));
  PkVectorizeMatvecOptions matvec;
  matvec.vectorBits = options.vectorBits;
  matvec.parallelThreshold = options.parallelThreshold;
  pm.addNestedPass<func::FuncOp>(createPkVectorizeMatvec(matvec));
  // softmax, norms: reductions and the ops reading them in tiles of rows.
  PkFuseRowsOptions rows;
  rows.parallelThreshold = options.parallelThreshold;
  pm.addNestedPass<func::FuncOp>(createPkFuseRows(rows));
  // Long reductions in blocks: partial results in parallel, then a combine
  // (a tree of short sums, as accurate as NumPy's pairwise summation).
  pm.addNestedPass<func::FuncOp>(createPkSplitReductions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Whether `value` is a temporary of at most kSmallBuffer bytes with a
/// static shape, allocated outside every loop: the slots of a long sum's
/// blocks (up to 64 blocks) and its pairwise levels, a small product. On
/// the stack, they cost no malloc and free per call: float32 sums of 2048
/// to 10,000 elements ran 1.15-1.2x faster, of 60,000 and a 4x5 matmul
/// with a bias 1.05x. Inside a loop, an alloca would grow the stack on
/// every iteration; the size bound keeps a kernel of thousands of
/// reductions within a thread's stack.
static bool isSmallBufferOutsideLoops(Value value) {
  constexpr int64_t kSmallBuffer = 256;
  auto type = dyn_cast<MemRefType>(value.getType());
  Operation *alloc = value.getDefiningOp();
  if (!type || !alloc || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() ||
      alloc->getParentOfType<LoopLikeOpInterface>())
    return false;
  int64_t bits = type.getNumElements() * type.getElementTypeBitWidth();
  return bits <= 8 * kSmallBuffer;
}

void mlir::pk::buildPkBufferizationPipeline(OpPassManager &pm,
                                            bool smallBuffersOnStack) {
  // Elementwise updates of a ref compute into it; computations write
  // straight into the `restrict` destinations.
  pm.addNestedPass<func::FuncOp>(createPkComputeInPlace());
  // Stores of the kernel's arrays after every read of their old contents.
  pm.addNestedPass<func::FuncOp>(createPkOrderRefWrites());
  // Inserts update private copies of values used elsewhere: empty-tensor
  // elimination would compute such a value in the insert's destination.
  pm.addNestedPass<func::FuncOp>(createPkCopySharedInsertDestinations());
  // Inits that CSE merged are made again for each op writing into them:
  // empty-tensor elimination would put one op's result where the other
  // accumulates.
  pm.addNestedPass<func::FuncOp>(createPkUnshareInits());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  if (smallBuffersOnStack)
    pm.addNestedPass<func::FuncOp>(
        bufferization::createPromoteBuffersToStackPass(
            isSmallBufferOutsideLoops));
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createPkCopyViewsWithLinalg());
}

void mlir::pk::buildPkToLLVMPipeline(OpPassManager &pm,
                                     const CpuPipelineOptions &options) {
  // Before anything declares a library function: a kernel named `erf` or
  // `malloc` must not stand for it.
  pm.addPass(createPkRenameKernelFunctions());
  PkLowerLinalgToLoopsOptions loops;
  loops.parallelThreshold = options.parallelThreshold;
  pm.addNestedPass<func::FuncOp>(createPkLowerLinalgToLoops(loops));
  // The register tiles' vector transfers as loads and stores of vectors.
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // bfloat16 arithmetic in float32, and conversions to the 16-bit floats
  // without compiler-rt helpers (which a JIT'd kernel may not find).
  addNarrowFloatEmulation(pm);
  // bf16 moves as i16: x86's LLVM backend would round a copied bf16 value
  // through float32 with vcvtneps2bf16, which flushes subnormals to zero.
  pm.addPass(createPkStoreBF16AsI16());
  // float32 tanh (gelu's cost) as arithmetic that vectorizes at full width.
  PkInlineCpuMathOptions math;
  math.vectorBits = options.vectorBits;
  pm.addNestedPass<func::FuncOp>(createPkInlineCpuMath(math));
  // Column panels of matmuls (scf.forall) run in parallel like loops.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createConvertParallelLoopsToOpenMP());
  pm.addPass(createConvertSCFToOpenMPPass());
  // The OpenMP loop bodies sit in memref.alloca_scope ops; the canonicalizer
  // inlines those without allocas. Left in place they become stacksave /
  // stackrestore around each iteration, which keeps LLVM from vectorizing
  // loops that call a function (libm's erf).
  pm.addPass(createCanonicalizerPass());
  // Views' offsets and strides as affine maps, then arithmetic.
  pm.addPass(createPkExpandShapesAsCasts());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Memrefs first: the remaining alloca scopes must be lowered while they
  // still hold a single block.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertToLLVMPass());
  // Math ops LLVM has no intrinsic for (erf) are all that is left of the
  // math dialect: libm calls, whose func ops convert-to-llvm lowers next.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createPkNameCInterfacesAfterKernels());
  // NumPy's bools: any nonzero byte is true, where LLVM reads an i1's bit.
  pm.addPass(createPkLoadBoolsAsBytes());
  pm.addPass(createCanonicalizerPass());
}

void mlir::pk::buildPkCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options) {
  for (const std::string &stage : cpuStageNames())
    buildCpuStage(pm, stage, options);
}

namespace mlir::pk {
namespace {
/// Bufferized linalg to outlined GPU kernels, all in one gpu.module, and
/// the host function launching them: what SPIR-V and NVVM share.
void addGpuKernels(OpPassManager &pm, int64_t blockSize) {
  // Matmuls as tiled kernels that stage their operands in shared memory,
  // reductions as a workgroup per output that combines in shared memory;
  // everything else one thread per element of its output.
  pm.addNestedPass<func::FuncOp>(createPkTileMatmulForGpu());
  pm.addNestedPass<func::FuncOp>(createPkReduceInWorkgroups());
  pm.addNestedPass<func::FuncOp>(createPkParallelLoopsOutermost());
  pm.addNestedPass<func::FuncOp>(createPkAddUnitParallelLoop());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // Loads and stores through views index the whole buffers instead: only
  // whole buffers become kernel arguments (SPIR-V drops the offset of some
  // views, such as 0-d ones).
  pm.addPass(memref::createFoldMemRefAliasOpsPass());
  pm.addNestedPass<func::FuncOp>(createPkLinearizeDynamicBuffersForGpu());
  PkTileParallelLoopsForGpuOptions tiling;
  tiling.workgroupSize = blockSize;
  pm.addNestedPass<func::FuncOp>(createPkTileParallelLoopsForGpu(tiling));
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createLowerAffinePass());
  // The folded views' index arithmetic divides rounding down.
  pm.addPass(createPkExpandFloorDivForSpirv());
  pm.addPass(createCanonicalizerPass());
  // (One value per size: each becomes a kernel argument.)
  pm.addPass(createCSEPass());
  // Index computations fold into the kernels, so that only buffers and
  // dynamic sizes remain as kernel arguments.
  pm.addNestedPass<func::FuncOp>(createPkSinkIndexComputationsForSpirv());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createPkMergeGpuModules());
}

/// The stages before the GPU's own: linalg, fused, long reductions split,
/// bufferized.
void addGpuFrontStages(OpPassManager &pm) {
  buildPkToLinalgPipeline(pm);
  buildPkFusionPipeline(pm);
  // Long reductions as blocks, a workgroup each (pk-reduce-in-workgroups),
  // then one workgroup combines the blocks' results: a single workgroup
  // would reduce them all.
  PkSplitReductionsOptions split;
  split.pairwise = false;
  pm.addNestedPass<func::FuncOp>(createPkSplitReductions(split));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildPkBufferizationPipeline(pm, /*smallBuffersOnStack=*/false);
}
} // namespace
} // namespace mlir::pk

void mlir::pk::buildPkToSpirvPipeline(OpPassManager &pm,
                                      const SpirvPipelineOptions &options) {
  // SPIR-V for Vulkan has no bfloat16: its arithmetic runs in float32, its
  // conversions as bit operations, and its arrays are stored as i16.
  addNarrowFloatEmulation(pm);
  pm.addPass(createPkStoreBF16AsI16());
  mlir::pk::addGpuKernels(pm, options.workgroupSize);
  PkPrepareSpirvKernelsOptions prepare;
  prepare.vulkanVersion = options.vulkanVersion;
  pm.addPass(createPkPrepareSpirvKernels(prepare));
  // Math ops inside the kernels become GLSL extended instructions first;
  // those GLSL lacks (erf) become polynomials, and fmod (OpFRem is
  // inexact) an exact integer computation.
  pm.addNestedPass<gpu::GPUModuleOp>(createPkExactRemFForSpirv());
  PkApproximateMathForSpirvOptions math;
  math.float64 = options.float64;
  pm.addNestedPass<gpu::GPUModuleOp>(createPkApproximateMathForSpirv(math));
  // Some drivers stop a thread after so many loop iterations (llvmpipe:
  // 65535): a kernel that needs more is an error, not a partial result.
  PkCheckLoopBudgetOptions budget;
  budget.maxIterations = options.maxLoopIterations;
  pm.addNestedPass<gpu::GPUModuleOp>(createPkCheckLoopBudget(budget));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertMathToSPIRVPass());
  pm.addPass(createConvertGPUToSPIRVPass());
  OpPassManager &spirvModule = pm.nest<spirv::ModuleOp>();
  spirvModule.addPass(spirv::createSPIRVLowerABIAttributesPass());
  PkIeeeFloatsForSpirvOptions ieee;
  ieee.widths = options.specialFloatWidthsOrDefault();
  spirvModule.addPass(createPkIeeeFloatsForSpirv(ieee));
  spirvModule.addPass(spirv::createSPIRVUpdateVCEPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::pk::buildPkSpirvPipeline(OpPassManager &pm,
                                    const SpirvPipelineOptions &options) {
  mlir::pk::addGpuFrontStages(pm);
  buildPkToSpirvPipeline(pm, options);
}

void mlir::pk::buildPkToNvvmPipeline(OpPassManager &pm,
                                     const CudaPipelineOptions &options) {
  // bfloat16 arithmetic in float32, rounded after each op, as on the CPU
  // (sm_80 has no bfloat16 add); float16 math in float32.
  addNarrowFloatEmulation(pm);
  mlir::pk::addGpuKernels(pm, options.blockSize);
  pm.addPass(createPkLinearizeLargeGrids());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip.empty() ? std::string(::pk::defaults::kCudaChip)
                                     : std::string(options.chip);
  target.optLevel = ::pk::defaults::kOptLevel;
  if (options.ptxVersion != 0)
    target.features = "+ptx" + std::to_string(options.ptxVersion);
  pm.addPass(createGpuNVVMAttachTarget(target));
  // Before anything reads the target: LLVM aborts on a PTX version that the
  // chip does not allow.
  pm.addPass(createPkCheckNvvmTarget());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createPkSharedAllocsAsAttributions());
  // LLVM's NVPTX frem is x - y * trunc(x / y), inexact as SPIR-V's.
  kernels.addPass(createPkExactRemFForSpirv());
  kernels.addPass(createSCFToControlFlowPass());
  // Buffers as MLIR's memref descriptors (pointers, offset, sizes and
  // strides, each a parameter); math as libdevice calls, and what libdevice
  // lacks (integer abs, bit counts) as LLVM intrinsics.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  PkCheckLibdeviceOptions libdevice;
  libdevice.toolkit = options.toolkit;
  pm.addPass(createPkCheckLibdevice(libdevice));
}

void mlir::pk::buildPkCudaPipeline(OpPassManager &pm,
                                   const CudaPipelineOptions &options) {
  mlir::pk::addGpuFrontStages(pm);
  buildPkToNvvmPipeline(pm, options);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit.empty() ? ::pk::cudaToolkitPath()
                                               : std::string(options.toolkit);
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

const std::vector<std::string> &mlir::pk::cpuStageNames() {
  static const std::vector<std::string> names = {"linalg", "fused", "tiled",
                                                 "bufferized", "llvm"};
  return names;
}

bool mlir::pk::buildCpuStage(OpPassManager &pm, const std::string &stage,
                             const CpuPipelineOptions &options) {
  if (stage == "linalg")
    buildPkToLinalgPipeline(pm);
  else if (stage == "fused")
    buildPkFusionPipeline(pm);
  else if (stage == "tiled")
    buildPkCpuTilingPipeline(pm, options);
  else if (stage == "bufferized")
    buildPkBufferizationPipeline(pm, /*smallBuffersOnStack=*/true);
  else if (stage == "llvm")
    buildPkToLLVMPipeline(pm, options);
  else
    return false;
  return true;
}

void mlir::pk::registerPkPipelines() {
  PassPipelineRegistration<>(
      "pk-to-linalg-pipeline",
      "pk kernels to linalg on tensors (stage 'linalg')",
      [](OpPassManager &pm) { buildPkToLinalgPipeline(pm); });
  PassPipelineRegistration<>(
      "pk-fusion-pipeline",
      "fuse elementwise linalg chains into one generic (stage 'fused')",
      [](OpPassManager &pm) { buildPkFusionPipeline(pm); });
  PassPipelineRegistration<CpuPipelineOptions>(
      "pk-cpu-tiling-pipeline",
      "pack large matmuls and tile them into vector FMAs (stage 'tiled')",
      buildPkCpuTilingPipeline);
  PassPipelineRegistration<>(
      "pk-bufferization-pipeline",
      "bufferize into the callers' buffers (stage 'bufferized')",
      [](OpPassManager &pm) {
        buildPkBufferizationPipeline(pm, /*smallBuffersOnStack=*/true);
      });
  PassPipelineRegistration<CpuPipelineOptions>(
      "pk-to-llvm-pipeline",
      "bufferized linalg to loops and the LLVM dialect (stage 'llvm')",
      buildPkToLLVMPipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "pk-cpu-pipeline", "pk kernels all the way to the LLVM dialect",
      buildPkCpuPipeline);
  PassPipelineRegistration<SpirvPipelineOptions>(
      "pk-to-spirv-pipeline",
      "bufferized linalg to GPU kernels in a spirv.module (stage 'spirv')",
      buildPkToSpirvPipeline);
  PassPipelineRegistration<SpirvPipelineOptions>(
      "pk-spirv-pipeline",
      "pk kernels to SPIR-V kernels for Vulkan, plus their host function",
      buildPkSpirvPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "pk-to-nvvm-pipeline",
      "bufferized linalg to GPU kernels in NVVM for NVIDIA GPUs (stage "
      "'nvvm')",
      buildPkToNvvmPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "pk-cuda-pipeline",
      "pk kernels to PTX (or cubin) for NVIDIA GPUs, plus their host "
      "function",
      buildPkCudaPipeline);
}

std::string mlir::pk::loweredKernelFunction(llvm::StringRef kernel) {
  return (mlir::pk::kKernelSymbolPrefix + kernel).str();
}
