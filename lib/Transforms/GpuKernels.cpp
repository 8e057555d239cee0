//===- GpuKernels.cpp - what a hand-built GPU kernel may use --------------===//

#include "GpuKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::pk {

bool hasSelfContainedBody(linalg::LinalgOp op) {
  Region &body = op->getRegion(0);
  WalkResult result = body.walk([&](Operation *inner) {
    if (isa<linalg::IndexOp>(inner))
      return WalkResult::interrupt();
    for (Value operand : inner->getOperands())
      if (!body.isAncestor(operand.getParentRegion()) &&
          !operand.getDefiningOp<arith::ConstantOp>())
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

bool isStorableInSharedMemory(Type type) {
  return isa<FloatType>(type) ||
         (isa<IntegerType>(type) && type.getIntOrFloatBitWidth() >= 8);
}

} // namespace mlir::pk
