//===- SliceSizes.cpp - the sizes of slices of dimensions that vary -------===//

#include "SliceSizes.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace pk {

FailureOr<SliceDimension> planSliceDimension(Attribute index, SizeExpr full) {
  SliceDimension plan;
  auto range = dyn_cast<ArrayAttr>(index);
  if (!range) {
    if (!isa<IntegerAttr>(index))
      return failure();
    plan.keepStatic = "it takes an element at a fixed index of a dimension "
                      "whose size varies";
    return plan;
  }
  if (range.size() != 3 || !isa<IntegerAttr>(range[2]))
    return failure();
  auto bound = [&](int i) -> std::optional<int64_t> {
    if (auto value = dyn_cast<IntegerAttr>(range[i]))
      return value.getInt();
    return std::nullopt;
  };
  std::optional<int64_t> start = bound(0), stop = bound(1);
  int64_t step = *bound(2);
  if (step < 0) {
    plan.keepStatic = "it slices a dimension whose size varies backwards";
    return plan;
  }
  // x[s:-t:q]: the start counts from the start, the stop from the end.
  if (step == 0 || start.value_or(0) < 0 || stop.value_or(0) > 0 ||
      (stop && *stop == 0)) {
    plan.keepStatic = "it takes a slice of fixed length (x[-3:], x[:4]) of "
                      "a dimension whose size varies";
    return plan;
  }
  // Bounds far outside any array (x[2**62:]) stay static rather than
  // overflow.
  int64_t cut, shift, offset, combinedStep;
  if (llvm::SubOverflow(start.value_or(0), stop.value_or(0), cut) ||
      llvm::MulOverflow(cut, full.step, shift) ||
      llvm::AddOverflow(full.offset, shift, offset) ||
      llvm::MulOverflow(full.step, step, combinedStep)) {
    plan.keepStatic = "it slices a dimension whose size varies with bounds "
                      "too large to count";
    return plan;
  }
  plan.size = SizeExpr{full.cls, offset, combinedStep};
  plan.start = start.value_or(0);
  plan.step = step;
  return plan;
}

} // namespace pk
