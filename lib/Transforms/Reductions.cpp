//===- Reductions.cpp - what a reduction's body combines ------------------===//

#include "Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::pk {

Operation *getCombiner(linalg::GenericOp op) {
  SmallVector<Operation *> combiners;
  if (op.getNumDpsInits() != 1 ||
      !matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return nullptr;
  return combiners.front();
}

bool hasRegroupableCombiner(linalg::GenericOp op) {
  Operation *combiner = getCombiner(op);
  if (!combiner)
    return false;
  if (auto add = dyn_cast<arith::AddFOp>(combiner))
    return arith::bitEnumContainsAll(add.getFastmath(),
                                     arith::FastMathFlags::reassoc);
  return isa<arith::MaximumFOp, arith::MinimumFOp, arith::AddIOp,
             arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
             arith::OrIOp, arith::AndIOp, arith::XOrIOp>(combiner);
}

bool hasPlainIdentity(Type type) {
  if (isa<IntegerType>(type))
    return true;
  auto floatType = dyn_cast<FloatType>(type);
  return floatType &&
         llvm::APFloat::semanticsHasInf(floatType.getFloatSemantics());
}

} // namespace mlir::pk
