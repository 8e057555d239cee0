//===- SharedAllocsAsAttributions.cpp - shared memory of GPU kernels ------===//

#include "GpuKernels.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSHAREDALLOCSASATTRIBUTIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

constexpr int64_t kSharedAlignment = 16;

bool isShared(MemRefType type) {
  Attribute space = type.getMemorySpace();
  if (auto number = dyn_cast_or_null<IntegerAttr>(space))
    return number.getInt() == mlir::pk::kWorkgroupMemorySpace;
  return gpu::GPUDialect::isWorkgroupMemoryAddressSpace(space);
}

struct SharedAllocsAsAttributionsPass
    : public mlir::pk::impl::PkSharedAllocsAsAttributionsBase<
          SharedAllocsAsAttributionsPass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp kernel) {
      SmallVector<memref::AllocOp> allocs;
      kernel.walk([&](memref::AllocOp alloc) {
        MemRefType type = alloc.getType();
        if (isShared(type) && type.hasStaticShape())
          allocs.push_back(alloc);
      });
      for (memref::AllocOp alloc : allocs) {
        BlockArgument shared =
            kernel.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
        // Aligned for vector loads (LLVM assumes 16 bytes where it
        // vectorizes shared-memory accesses), or as the alloc asked.
        int64_t alignment = std::max<int64_t>(kSharedAlignment,
                                              alloc.getAlignment().value_or(0));
        kernel.setWorkgroupAttributionAttr(
            kernel.getNumWorkgroupAttributions() - 1,
            LLVM::LLVMDialect::getAlignAttrName(),
            IntegerAttr::get(IntegerType::get(&getContext(), 64), alignment));
        for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        alloc.replaceAllUsesWith(shared);
        alloc.erase();
      }
    });
  }
};

} // namespace
