//===- GeneralizeRewrite.cpp - the first trace made the dynamic kernel ----===//
//
// What the comparison of the two traces learned, applied: dynamic types,
// the sizes broadcasts and slices take (pk.dim, pk.slice_size), and counts
// of elements computed from the sizes (pk.count).
//
//===----------------------------------------------------------------------===//

#include "Generalizer.h"

using namespace mlir;
using namespace mlir::pk;

namespace pk {

Value Generalizer::sizeOfClass(int k) {
  if (Value size = classSizes.lookup(k))
    return size;
  Block &body = kernel.getBodyBlock();
  for (auto [index, shape] : llvm::enumerate(parameterShapes))
    for (auto [d, size] : llvm::enumerate(shape))
      if (size == symbols[k].first &&
          cast<RefType>(kernel.getArgumentTypes()[index]).getShape()[d] ==
              ShapedType::kDynamic) {
        OpBuilder builder = OpBuilder::atBlockBegin(&body);
        Value dim = DimOp::create(builder, kernel.getLoc(),
                                  body.getArgument(index), int64_t(d));
        classSizes[k] = dim;
        return dim;
      }
  llvm_unreachable("every size class is some parameter's size");
}

Value Generalizer::sizeValue(const SizeExpr &size) {
  Value n = sizeOfClass(size.cls);
  if (size.offset == 0 && size.step == 1)
    return n;
  if (Value value = sizeValues[size])
    return value;
  OpBuilder builder(kernel.getContext());
  builder.setInsertionPointAfter(n.getDefiningOp());
  Value value =
      SliceSizeOp::create(builder, kernel.getLoc(), n, size.offset, size.step);
  sizeValues[size] = value;
  return value;
}

SmallVector<SeenSize> Generalizer::seenSizes() const {
  SmallVector<SeenSize> seen;
  for (auto &[values, size] : sizesSeen)
    if (size)
      seen.push_back({*size, values.first, values.second});
  return seen;
}

Value Generalizer::countValue(OpBuilder &builder, Location loc, ShapedType type,
                              const CountPlan &plan) {
  SmallVector<Value> sizes;
  for (const SizeExpr &size : plan.sizes)
    sizes.push_back(sizeValue(size));
  return CountOp::create(builder, loc,
                         RankedTensorType::get({}, type.getElementType()),
                         sizes, plan.factor);
}

void Generalizer::rewriteSlices() {
  for (SlicePlan &plan : slices) {
    SmallVector<int64_t> offsets, sizes;
    SmallVector<Value> dynamicOffsets, dynamicSizes;
    auto original = [&](auto op) {
      offsets.assign(op.getOffsets().begin(), op.getOffsets().end());
      sizes.assign(op.getSizes().begin(), op.getSizes().end());
    };
    if (auto extract = dyn_cast<ExtractSliceOp>(plan.op))
      original(extract);
    else
      original(cast<InsertSliceOp>(plan.op));
    for (auto [d, size, offset] : llvm::enumerate(plan.sizes, plan.offsets)) {
      if (offset) {
        offsets[d] = ShapedType::kDynamic;
        dynamicOffsets.push_back(sizeValue(*offset));
      }
      if (!size)
        continue;
      if (!offset)
        offsets[d] = plan.starts[d];
      sizes[d] = ShapedType::kDynamic;
      dynamicSizes.push_back(sizeValue(*size));
    }
    auto rewrite = [&](auto op) {
      op.setOffsets(offsets);
      op.setSizes(sizes);
      op.setStrides(plan.steps);
      op.getDynamicOffsetsMutable().assign(dynamicOffsets);
      op.getDynamicSizesMutable().assign(dynamicSizes);
    };
    if (auto extract = dyn_cast<ExtractSliceOp>(plan.op))
      rewrite(extract);
    else
      rewrite(cast<InsertSliceOp>(plan.op));
  }
}

void Generalizer::rewriteSizedOps() {
  // Broadcasts and splats take their dynamic sizes as operands: which
  // ones is read before the types change.
  SmallVector<std::pair<Operation *, SmallVector<SizeExpr>>> sized;
  for (auto [value, type] : newTypes) {
    Operation *op = value.getDefiningOp();
    if (!op || !isa<BroadcastOp, ConstantOp>(op))
      continue;
    SmallVector<SizeExpr> sizes;
    for (int64_t d = 0; d < cast<RankedTensorType>(type).getRank(); ++d)
      if (std::optional<SizeExpr> size = *sizeOfDim(value, d))
        sizes.push_back(*size);
    sized.push_back({op, std::move(sizes)});
  }
  for (auto [value, type] : newTypes)
    value.setType(type);
  if (newKernelType)
    kernel.setFunctionType(*newKernelType);

  for (auto &[op, sizeExprs] : sized) {
    auto merged = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> sizes;
    for (const SizeExpr &size : sizeExprs)
      sizes.push_back(sizeValue(size));
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      broadcast.getSizesMutable().assign(sizes);
      continue;
    }
    // A splat of a dynamic shape: a scalar (or a count) broadcast to it.
    auto constant = cast<ConstantOp>(op);
    auto splat = cast<SplatElementsAttr>(constant.getValue());
    OpBuilder builder(constant);
    auto scalarType = RankedTensorType::get({}, merged.getElementType());
    auto count = llvm::find_if(
        counts, [&](auto &entry) { return entry.first == constant; });
    Value scalar =
        count != counts.end()
            ? countValue(builder, constant.getLoc(), merged, count->second)
            : ConstantOp::create(
                  builder, constant.getLoc(),
                  SplatElementsAttr::get(scalarType,
                                         splat.getSplatValue<Attribute>()));
    if (count != counts.end())
      counts.erase(count);
    Value broadcast =
        BroadcastOp::create(builder, constant.getLoc(), merged, scalar, sizes);
    constant.getResult().replaceAllUsesWith(broadcast);
    constant.erase();
  }
  // Counts of a shape that stays the same (a 0-d mean of everything).
  for (auto &[constant, plan] : counts) {
    OpBuilder builder(constant);
    auto type = cast<RankedTensorType>(constant.getType());
    Value count = countValue(builder, constant.getLoc(), type, plan);
    if (type.getRank() > 0)
      count = BroadcastOp::create(builder, constant.getLoc(), type, count);
    constant.getResult().replaceAllUsesWith(count);
    constant.erase();
  }
  counts.clear();
}

} // namespace pk
