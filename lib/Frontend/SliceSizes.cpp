//===- SliceSizes.cpp - the sizes of slices of dimensions that vary -------===//

#include "SliceSizes.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace pk {

/// Sets `plan` to start `back` elements before the end of a dimension of
/// size `full`; false if that offset overflows.
static bool planFromEnd(SliceDimension &plan, SizeExpr full, int64_t back) {
  SizeExpr offset = full;
  int64_t shift;
  if (llvm::MulOverflow(back, full.step, shift) ||
      llvm::AddOverflow(full.offset, shift, offset.offset))
    return false;
  plan.fromEnd = back;
  plan.offset = offset;
  return true;
}

/// The slice `[start:stop:step]` of every dimension long enough to hold
/// it, where both bounds count from the start (none is negative, and the
/// one the walk ends at is given) or it is empty for every size: its first
/// index and size. None where its indices follow the end.
static std::optional<std::pair<int64_t, int64_t>>
fixedSlice(std::optional<int64_t> start, std::optional<int64_t> stop,
           int64_t step) {
  // Empty for every size: forwards to index 0 (x[-1:0]), backwards to the
  // last index (x[5:-1:-1]), or both bounds from the end with the stop no
  // further than the start (x[-1:-3], x[:-1:-1]).
  int64_t first = start.value_or(step > 0 ? 0 : -1);
  if ((step > 0 && stop == 0) || (step < 0 && first >= 0 && stop == -1) ||
      (first < 0 && stop && *stop < 0 &&
       (step > 0 ? *stop <= first : *stop >= first)))
    return std::make_pair(int64_t(0), int64_t(0));
  if (start.value_or(0) < 0 || stop.value_or(0) < 0)
    return std::nullopt;
  if (step > 0) {
    if (!stop)
      return std::nullopt;
    int64_t first = start.value_or(0);
    return std::make_pair(
        first,
        std::max<int64_t>(0, llvm::divideCeilSigned(*stop - first, step)));
  }
  if (!start)
    return std::nullopt;
  // Backwards down to `stop` (exclusive), or to index 0.
  int64_t end = stop.value_or(-1);
  return std::make_pair(
      *start, std::max<int64_t>(0, llvm::divideCeilSigned(end - *start, step)));
}

/// The slice `[start:stop:step]` of every dimension long enough to hold
/// it, where it starts counting from the end and takes a constant number
/// of elements (x[-3:], x[-3:-1], x[:-3:-1]): how far before the end it
/// starts, and its size. None otherwise (bounds far outside any array
/// included).
static std::optional<std::pair<int64_t, int64_t>>
endSlice(std::optional<int64_t> start, std::optional<int64_t> stop,
         int64_t step) {
  constexpr int64_t kFar = -(int64_t(1) << 62);
  int64_t first = start.value_or(-1);
  if (first >= 0 || first < kFar || (step > 0 && !start))
    return std::nullopt;
  // Forwards to the end or to a stop counted from it; backwards to a stop
  // counted from the end (to index 0 the size follows the dimension's).
  int64_t end;
  if (step > 0 && !stop)
    end = 0;
  else if (stop && *stop < 0 && *stop >= kFar)
    end = *stop;
  else
    return std::nullopt;
  int64_t size = llvm::divideCeilSigned(end - first, step);
  if (size <= 0)
    return std::nullopt;
  return std::make_pair(-first, size);
}

FailureOr<SliceDimension> planSliceDimension(Attribute index, SizeExpr full) {
  SliceDimension plan;
  auto range = dyn_cast<ArrayAttr>(index);
  if (!range) {
    auto position = dyn_cast<IntegerAttr>(index);
    if (!position)
      return failure();
    plan.fixedSize = 1;
    if (position.getInt() < -(int64_t(1) << 62)) {
      plan.keepStatic = "it takes an element too far from the end of a "
                        "dimension whose size varies";
      return plan;
    }
    if (position.getInt() >= 0) {
      plan.start = position.getInt();
      return plan;
    }
    if (!planFromEnd(plan, full, -position.getInt()))
      plan.keepStatic = "it takes an element too far from the end of a "
                        "dimension whose size varies";
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
  if (step == 0)
    return failure();
  if (std::optional<std::pair<int64_t, int64_t>> fixed =
          fixedSlice(start, stop, step)) {
    plan.start = fixed->first;
    plan.fixedSize = fixed->second;
    plan.step = step;
    return plan;
  }
  if (std::optional<std::pair<int64_t, int64_t>> fromEnd =
          endSlice(start, stop, step)) {
    plan.fixedSize = fromEnd->second;
    plan.step = step;
    if (!planFromEnd(plan, full, fromEnd->first))
      plan.keepStatic = "it slices a dimension whose size varies too far "
                        "from its end";
    return plan;
  }
  // Backwards from a start counted from the end down to index 0
  // (x[::-1], x[-3::-2]): ceil((n - c + 1) / k) elements from n - c, for
  // every size (none where n < c).
  if (step < 0 && !stop && start.value_or(-1) < 0 &&
      start.value_or(-1) >= -(int64_t(1) << 62)) {
    int64_t back = -start.value_or(-1), shift, offset, combinedStep;
    if (!planFromEnd(plan, full, back) ||
        llvm::MulOverflow(back - 1, full.step, shift) ||
        llvm::AddOverflow(full.offset, shift, offset) ||
        llvm::MulOverflow(full.step, -step, combinedStep)) {
      plan.keepStatic = "it slices a dimension whose size varies too far "
                        "from its end";
      return plan;
    }
    plan.size = SizeExpr{full.cls, offset, combinedStep};
    plan.step = step;
    return plan;
  }
  if (step < 0) {
    plan.keepStatic = "it slices a dimension whose size varies backwards "
                      "from a start counted from its start to a stop "
                      "counted from its end";
    return plan;
  }
  // x[s:-t:q]: the start counts from the start, the stop from the end.
  if (start.value_or(0) < 0) {
    plan.keepStatic = "it slices a dimension whose size varies from its "
                      "end to a stop counted from its start";
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

std::string formatSliceIndex(Attribute index) {
  if (auto position = dyn_cast<IntegerAttr>(index))
    return std::to_string(position.getInt());
  auto range = dyn_cast<ArrayAttr>(index);
  if (!range || range.size() != 3)
    return "?";
  auto bound = [&](int i) {
    auto value = dyn_cast<IntegerAttr>(range[i]);
    return value ? std::to_string(value.getInt()) : std::string();
  };
  std::string text = bound(0) + ":" + bound(1);
  if (bound(2) != "1")
    text += ":" + bound(2);
  return text;
}

} // namespace pk
