//===- Indexing.cpp - NumPy's basic indexing of traced values ------------===//

#include "OpBuilders.h"

#include "picokernel/Frontend/Generalize.h"

namespace pk {
namespace detail {

/// NumPy's basic indexing, with NumPy's errors (IndexError for positions
/// out of bounds and too many indices).
ResolvedIndex resolveIndex(const Shape &shape, const Index &index,
                           const std::string &op) {
  if (index.items.size() > shape.size())
    fail(index.where, op,
         "too many indices for array: array is " +
             std::to_string(shape.size()) + "-dimensional, but " +
             std::to_string(index.items.size()) + " were indexed",
         TraceError::Category::Index);
  ResolvedIndex resolved;
  for (auto [axis, n] : llvm::enumerate(shape)) {
    IndexItem item =
        axis < index.items.size() ? index.items[axis] : IndexItem(all);
    if (item.isPosition()) {
      int64_t position = item.getPosition();
      if (position < -n || position >= n)
        fail(index.where, op,
             "index " + std::to_string(position) +
                 " is out of bounds for axis " + std::to_string(axis) +
                 " with size " + std::to_string(n),
             TraceError::Category::Index);
      resolved.offsets.push_back(position < 0 ? position + n : position);
      resolved.sizes.push_back(1);
      resolved.strides.push_back(1);
      continue;
    }
    const Slice &range = item.getSlice();
    if (range.step == 0)
      fail(index.where, op, "slice step cannot be zero");
    // Steps longer than the dimension select at most the start; clamping
    // them keeps the arithmetic below in range.
    int64_t limit = std::max<int64_t>(n, 1);
    int64_t step = std::clamp(range.step, -limit, limit);
    bool backwards = step < 0;
    // Python's slice.indices().
    auto clampPosition = [&](std::optional<int64_t> given, int64_t absent) {
      if (!given)
        return absent;
      int64_t position = *given;
      if (position < 0)
        return position < -n ? (backwards ? int64_t(-1) : int64_t(0))
                             : position + n;
      return position >= n ? (backwards ? n - 1 : n) : position;
    };
    int64_t start = clampPosition(range.start, backwards ? n - 1 : 0);
    int64_t stop = clampPosition(range.stop, backwards ? -1 : n);
    int64_t size = backwards
                       ? (stop < start ? (start - stop - 1) / -step + 1 : 0)
                       : (start < stop ? (stop - start - 1) / step + 1 : 0);
    resolved.offsets.push_back(size == 0 ? 0 : start);
    resolved.sizes.push_back(size);
    // A stride means nothing for fewer than two elements: 1 keeps such
    // slices plain (and views of them contiguous).
    resolved.strides.push_back(size <= 1 ? 1 : step);
    resolved.shape.push_back(size);
  }
  return resolved;
}

void recordIndex(mlir::Operation *slice, const std::vector<IndexItem> &items,
                 size_t rank) {
  mlir::Builder builder(slice->getContext());
  auto bound = [&](std::optional<int64_t> value) -> mlir::Attribute {
    if (!value)
      return builder.getUnitAttr();
    return builder.getI64IntegerAttr(*value);
  };
  llvm::SmallVector<mlir::Attribute> dims;
  for (size_t axis = 0; axis < rank; ++axis) {
    IndexItem item = axis < items.size() ? items[axis] : IndexItem(all);
    if (item.isPosition()) {
      dims.push_back(builder.getI64IntegerAttr(item.getPosition()));
      continue;
    }
    const Slice &range = item.getSlice();
    dims.push_back(
        builder.getArrayAttr({bound(range.start), bound(range.stop),
                              builder.getI64IntegerAttr(range.step)}));
  }
  slice->setAttr(kIndexAttrName, builder.getArrayAttr(dims));
}

mlir::Value buildSlice(mlir::OpBuilder &builder, const Operand &value,
                       const Index &index) {
  mlir::Value source = irOf(value.getValue());
  ResolvedIndex part = resolveIndex(shapeOf(source), index, "indexing");
  auto slice = mlir::pk::ExtractSliceOp::create(
      builder, location(builder, index.where),
      tensorType(builder, part.shape, dtypeOf(source)), source, part.offsets,
      part.sizes, part.strides);
  recordIndex(slice, index.items, part.offsets.size());
  return slice;
}

Operand withShape(mlir::OpBuilder &builder, const Operand &value,
                  const Shape &shape,
                  llvm::function_ref<Value(mlir::Value)> wrap) {
  if (value.getKind() == Operand::Kind::Array) {
    const Operand::ConstantArray &array = value.getArray();
    return Operand::fromArray(array.dtype, shape, array.bytes, value.where());
  }
  mlir::Value source = irOf(value.getValue());
  Shape sourceShape = shapeOf(source);
  size_t rank = sourceShape.size();
  llvm::SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
  auto part = mlir::pk::ExtractSliceOp::create(
      builder, location(builder, value.where()),
      tensorType(builder, shape, dtypeOf(source)), source, offsets, sourceShape,
      strides);
  recordIndex(part, {}, rank);
  return Operand(wrap(part), value.where());
}

} // namespace detail
} // namespace pk
