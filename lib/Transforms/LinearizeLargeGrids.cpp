//===- LinearizeLargeGrids.cpp - tall grids launched along x --------------===//

#include "GpuKernels.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLINEARIZELARGEGRIDS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

using mlir::pk::kCudaMaxGridSize;

/// The launch's grid sizes, where all three are constants.
std::optional<std::array<int64_t, 3>> constantGrid(gpu::LaunchFuncOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  std::array<int64_t, 3> sizes;
  Value values[3] = {grid.x, grid.y, grid.z};
  for (int i = 0; i < 3; ++i) {
    APInt size;
    if (!matchPattern(values[i], m_ConstantInt(&size)))
      return std::nullopt;
    sizes[i] = size.getSExtValue();
  }
  return sizes;
}

/// In `kernel`, the block index and grid sizes of `grid`, recovered from a
/// linear block index along x.
void delinearize(gpu::GPUFuncOp kernel, std::array<int64_t, 3> grid) {
  SmallVector<gpu::BlockIdOp> ids;
  SmallVector<gpu::GridDimOp> dims;
  kernel.walk([&](gpu::BlockIdOp id) { ids.push_back(id); });
  kernel.walk([&](gpu::GridDimOp dim) { dims.push_back(dim); });
  OpBuilder b(kernel.getBody());
  Location loc = kernel.getLoc();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value linear = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value sizeX = constant(grid[0]), sizeY = constant(grid[1]);
  Value rest = arith::DivUIOp::create(b, loc, linear, sizeX);
  Value index[3] = {arith::RemUIOp::create(b, loc, linear, sizeX),
                    arith::RemUIOp::create(b, loc, rest, sizeY),
                    arith::DivUIOp::create(b, loc, rest, sizeY)};
  Value size[3] = {sizeX, sizeY, constant(grid[2])};
  for (gpu::BlockIdOp id : ids) {
    id.replaceAllUsesWith(index[static_cast<int>(id.getDimension())]);
    id.erase();
  }
  for (gpu::GridDimOp dim : dims) {
    dim.replaceAllUsesWith(size[static_cast<int>(dim.getDimension())]);
    dim.erase();
  }
}

struct LinearizeLargeGridsPass
    : public mlir::pk::impl::PkLinearizeLargeGridsBase<
          LinearizeLargeGridsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Kernels launched more than once keep their grids (their launches may
    // differ).
    llvm::DenseMap<Operation *, int> launches;
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (Operation *kernel =
              SymbolTable::lookupNearestSymbolFrom(launch, launch.getKernel()))
        ++launches[kernel];
    });
    module.walk([&](gpu::LaunchFuncOp launch) {
      std::optional<std::array<int64_t, 3>> grid = constantGrid(launch);
      if (!grid || ((*grid)[1] <= kCudaMaxGridSize[1] &&
                    (*grid)[2] <= kCudaMaxGridSize[2]))
        return;
      int64_t total = 1;
      for (int64_t size : *grid)
        if (size < 1 || llvm::MulOverflow(total, size, total))
          return;
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (total > kCudaMaxGridSize[0] || !kernel || launches[kernel] != 1)
        return; // (pk-check-nvvm-target names the grid)
      delinearize(kernel, *grid);
      if (kernel.getKnownGridSizeAttr())
        kernel.setKnownGridSizeAttr(DenseI32ArrayAttr::get(
            &getContext(), {static_cast<int32_t>(total), 1, 1}));
      OpBuilder b(launch);
      Value one = arith::ConstantIndexOp::create(b, launch.getLoc(), 1);
      Value all = arith::ConstantIndexOp::create(b, launch.getLoc(), total);
      launch.getGridSizeXMutable().assign(all);
      launch.getGridSizeYMutable().assign(one);
      launch.getGridSizeZMutable().assign(one);
    });
  }
};

} // namespace
