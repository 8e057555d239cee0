//===- SinkIndexComputationsForSpirv.cpp - host sizes, kernel arithmetic --===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSINKINDEXCOMPUTATIONSFORSPIRV
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Constants and pure arithmetic on scalars: what a kernel recomputes more
/// cheaply than it reads. memref.dim, which reads a buffer, is not.
bool computesInKernel(Operation *op) {
  if (op->getNumRegions() != 0 || !isPure(op))
    return false;
  if (!isa<arith::ArithDialect>(op->getDialect()))
    return false;
  auto scalar = [](Type type) { return type.isIntOrIndexOrFloat(); };
  return llvm::all_of(op->getOperandTypes(), scalar) &&
         llvm::all_of(op->getResultTypes(), scalar);
}

struct SinkIndexComputationsForSpirvPass
    : public mlir::pk::impl::PkSinkIndexComputationsForSpirvBase<
          SinkIndexComputationsForSpirvPass> {
  void runOnOperation() override {
    // A size read from a view is the view's size operand (upstream folds
    // no memref.dim of a reinterpret_cast): one value per size class, one
    // kernel argument.
    getOperation().walk([](memref::DimOp dim) {
      auto view = dim.getSource().getDefiningOp<memref::ReinterpretCastOp>();
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!view || !index || *index >= view.getType().getRank())
        return;
      OpFoldResult size = view.getMixedSizes()[*index];
      if (auto value = dyn_cast<Value>(size))
        dim.replaceAllUsesWith(value);
    });
    // The sizes and strides of a buffer from the host (views folded into
    // loads delinearize with them): its metadata is read where the buffer
    // is defined, and only the index values enter the kernel.
    getOperation().walk([](memref::ExtractStridedMetadataOp metadata) {
      Value source = metadata.getSource();
      auto launch = metadata->getParentOfType<gpu::LaunchOp>();
      if (!launch || launch.getBody().isAncestor(source.getParentRegion()))
        return;
      if (auto defined = source.getDefiningOp())
        metadata->moveAfter(defined);
      else
        metadata->moveBefore(&source.getParentBlock()->front());
    });
    WalkResult result = getOperation().walk([](gpu::LaunchOp launch) {
      return failed(sinkOperationsIntoLaunchOp(launch, computesInKernel))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
