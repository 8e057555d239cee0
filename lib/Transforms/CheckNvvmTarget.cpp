//===- CheckNvvmTarget.cpp - what NVIDIA GPUs allow -----------------------===//

#include "GpuKernels.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

namespace mlir::pk {
#define GEN_PASS_DEF_PKCHECKNVVMTARGET
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

constexpr StringLiteral kTriple = "nvptx64-nvidia-cuda";
constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxBlockSize[3] = {1024, 1024, 64};

/// The oldest PTX version (times ten) each architecture allows, as LLVM 22's
/// NVPTX backend requires it (NVPTXSubtarget.cpp's getMinPTXVersionForSM,
/// after the PTX ISA's release history): it aborts the process on an older
/// one.
constexpr std::pair<StringLiteral, unsigned> kOldestPtx[] = {
    {"sm_70", 60},   {"sm_72", 61},   {"sm_75", 63},   {"sm_80", 70},
    {"sm_86", 71},   {"sm_87", 74},   {"sm_88", 90},   {"sm_89", 78},
    {"sm_90", 78},   {"sm_90a", 80},  {"sm_100", 86},  {"sm_100a", 86},
    {"sm_100f", 88}, {"sm_101", 86},  {"sm_101a", 86}, {"sm_101f", 88},
    {"sm_103", 88},  {"sm_103a", 88}, {"sm_103f", 88}, {"sm_110", 90},
    {"sm_110a", 90}, {"sm_110f", 90}, {"sm_120", 87},  {"sm_120a", 87},
    {"sm_120f", 88}, {"sm_121", 88},  {"sm_121a", 88}, {"sm_121f", 88}};

/// What LLVM's NVPTX backend knows of an architecture.
struct Architecture {
  /// LLVM knows the chip, and so does kOldestPtx.
  bool known = false;
  /// The PTX versions (times ten) LLVM can emit.
  SmallVector<unsigned> ptxVersions;
  /// The oldest PTX version the chip allows.
  unsigned oldestPtx = 0;
};

/// Asks LLVM's NVPTX target about `chip`; an error message where this LLVM
/// has no NVPTX target.
FailureOr<Architecture> describe(StringRef triple, StringRef chip,
                                 std::string &error) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
  });
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!target)
    return failure();
  // (For no chip in particular: LLVM warns on stderr about one it does not
  // know.)
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(llvm::Triple(triple), "", ""));
  if (!info) {
    error = "LLVM cannot describe the NVPTX target";
    return failure();
  }
  Architecture architecture;
  for (const auto &[name, oldest] : kOldestPtx)
    if (name == chip) {
      architecture.known = info->isCPUStringValid(chip);
      architecture.oldestPtx = oldest;
    }
  for (const llvm::SubtargetFeatureKV &feature :
       info->getAllProcessorFeatures()) {
    unsigned version = 0;
    StringRef key(feature.Key);
    if (key.consume_front("ptx") && !key.getAsInteger(10, version))
      architecture.ptxVersions.push_back(version);
  }
  return architecture;
}

std::string ptxName(unsigned version) {
  return std::to_string(version / 10) + "." + std::to_string(version % 10);
}

struct CheckNvvmTargetPass
    : public mlir::pk::impl::PkCheckNvvmTargetBase<CheckNvvmTargetPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      for (Attribute attribute : module.getTargetsAttr()
                                     ? module.getTargetsAttr().getValue()
                                     : ArrayRef<Attribute>()) {
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(attribute);
        if (!target) {
          module.emitError("not an NVIDIA target: ") << attribute;
          ok = false;
          continue;
        }
        ok &= succeeded(checkTarget(module, target));
      }
    });
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      ok &= succeeded(checkLaunch(launch));
    });
    if (!ok)
      signalPassFailure();
  }

  LogicalResult checkTarget(gpu::GPUModuleOp module,
                            NVVM::NVVMTargetAttr target) {
    if (target.getTriple() != kTriple)
      return module.emitError("NVIDIA GPUs are compiled for as ")
             << kTriple << " (CUDA has no 32-bit PTX any more), not "
             << target.getTriple();
    StringRef chip = target.getChip();
    std::string error;
    FailureOr<Architecture> architecture =
        describe(target.getTriple(), chip, error);
    if (failed(architecture))
      return module.emitError("cannot compile for NVIDIA GPUs: ") << error;
    if (!architecture->known)
      return module.emitError("unsupported NVIDIA architecture '")
             << chip
             << "' (sm_70 and later that LLVM knows, such as sm_80 "
                "or sm_90)";
    // The PTX version LLVM emits: the newest asked for, else the chip's
    // oldest.
    unsigned effective = architecture->oldestPtx;
    std::optional<unsigned> asked;
    for (StringRef feature : llvm::split(target.getFeatures(), ',')) {
      StringRef version = feature.trim();
      if (version.empty())
        continue;
      unsigned ptx = 0;
      // (Other features, such as +sm_90, would change the architecture
      // behind the chip's back.)
      if (!version.consume_front("+ptx") || version.getAsInteger(10, ptx))
        return module.emitError("unsupported target feature '")
               << feature.trim()
               << "' (only +ptx<version>; the architecture is the chip)";
      if (!llvm::is_contained(architecture->ptxVersions, ptx))
        return module.emitError("unknown PTX version ")
               << ptxName(ptx) << " (ptx-version " << ptx << "; LLVM knows "
               << ptxName(*llvm::min_element(architecture->ptxVersions))
               << " to "
               << ptxName(*llvm::max_element(architecture->ptxVersions)) << ")";
      asked = std::max(asked.value_or(0), ptx);
    }
    if (asked && *asked < architecture->oldestPtx)
      return module.emitError("PTX ")
             << ptxName(*asked) << " is older than " << chip << " allows ("
             << ptxName(architecture->oldestPtx) << " and later)";
    if (asked)
      effective = *asked;
    return checkParameters(module, effective);
  }

  /// Each buffer is a memref descriptor (two pointers, an offset, a size
  /// and a stride per dimension), each other argument 8 bytes or less:
  /// ptxas allows 4352 bytes of them per kernel before PTX 8.1, 32764 from.
  LogicalResult checkParameters(gpu::GPUModuleOp module, unsigned ptx) {
    int64_t limit = ptx >= 81 ? 32764 : 4352;
    for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      int64_t bytes = 0;
      for (Type type : kernel.getArgumentTypes())
        if (auto memref = dyn_cast<MemRefType>(type))
          bytes += 8 * (3 + 2 * memref.getRank());
        else
          bytes += 8;
      if (bytes > limit)
        return kernel.emitError("the kernel takes ")
               << bytes << " bytes of parameters (its arrays' pointers, "
               << "sizes and strides), more than PTX " << ptxName(ptx)
               << " allows (" << limit
               << "): fewer arrays, or PTX 8.1 or later (ptx-version=81, "
                  "for CUDA 12.1 drivers and later)";
    }
    return success();
  }

  LogicalResult checkLaunch(gpu::LaunchFuncOp launch) {
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    Value blockSizes[3] = {block.x, block.y, block.z};
    Value gridSizes[3] = {grid.x, grid.y, grid.z};
    int64_t threads = 1;
    const char *names[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) {
      APInt size;
      if (matchPattern(blockSizes[i], m_ConstantInt(&size))) {
        if (size.getSExtValue() > kMaxBlockSize[i])
          return launch.emitError("a block of ")
                 << size.getSExtValue() << " threads in " << names[i]
                 << ": NVIDIA GPUs allow " << kMaxBlockSize[i];
        threads *= size.getSExtValue();
      }
      if (matchPattern(gridSizes[i], m_ConstantInt(&size)) &&
          size.getSExtValue() > mlir::pk::kCudaMaxGridSize[i])
        return launch.emitError("a grid of ")
               << size.getSExtValue() << " blocks in " << names[i]
               << ": NVIDIA GPUs allow " << mlir::pk::kCudaMaxGridSize[i];
    }
    if (threads > kMaxThreadsPerBlock)
      return launch.emitError("a block of ")
             << threads << " threads: NVIDIA GPUs allow "
             << kMaxThreadsPerBlock;
    return success();
  }
};

} // namespace
