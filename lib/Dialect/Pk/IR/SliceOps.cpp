//===- SliceOps.cpp - slices of arrays: bounds, sizes and folds -----------===//
//
// pk.extract_slice, pk.insert_slice and pk.slice_size: the rules that keep
// every index a slice touches inside its array, for static sizes here and
// for sizes that vary together with verifySizeClasses.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Support/Shape.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::pk;
using ::pk::formatShape;

LogicalResult SliceSizeOp::verify() {
  // I64Attr reads back as uint64_t.
  int64_t offset = getOffset(), step = getStep();
  if (step < 1)
    return emitOpError() << "step " << step
                         << " must be positive: the slice walks forwards";
  if (offset < 0)
    return emitOpError() << "offset " << offset
                         << " is negative: a slice starts inside its array";
  return success();
}

OpFoldResult SliceSizeOp::fold(FoldAdaptor) {
  // Every index from 0 on: the whole dimension.
  if (getOffset() == 0 && getStep() == 1)
    return getSize();
  return {};
}

/// Checks a dimension whose size varies (`full` is dynamic): a constant
/// offset, and a size computed from the sizes (which verifySizeClasses
/// checks against the dimension's) or a constant one, whose indices are
/// inside the dimension when it has enough elements (a minimum size the
/// caller checks: computeSizeClasses). A dynamic offset (counted from the
/// end, which verifySizeClasses checks) takes a constant size, or walks
/// backwards with a dynamic one (`x[::-1]`).
static LogicalResult verifyDynamicDimension(Operation *op, size_t d,
                                            int64_t offset, int64_t size,
                                            int64_t stride, bool dynamicSize) {
  bool dynamicOffset = ShapedType::isDynamic(offset);
  if (dynamicOffset && dynamicSize && stride > 0)
    return op->emitOpError()
           << "dimension " << d
           << " starts at an index counted from the end and has a dynamic "
              "size: it must walk backwards";
  if (!dynamicOffset && offset < 0)
    return op->emitOpError() << "dimension " << d << " starts at index "
                             << offset << ", before the array";
  if (!dynamicOffset && dynamicSize && stride < 0)
    return op->emitOpError() << "dimension " << d
                             << " has a dynamic size from a constant offset: "
                                "it must walk forwards";
  int64_t span, last;
  if (dynamicSize || size == 0)
    return success();
  if (llvm::MulOverflow(size - 1, stride, span) ||
      (!dynamicOffset && (llvm::AddOverflow(offset, span, last) || last < 0)))
    return op->emitOpError()
           << "dimension " << d << " takes " << size << " elements from index "
           << (dynamicOffset ? std::string("(a value)")
                             : std::to_string(offset))
           << " with stride " << stride << ", past the start of the array";
  return success();
}

/// Checks the rules shared by extract_slice and insert_slice: one offset,
/// size and stride per dimension of `full`, one value per dynamic size,
/// every index touched inside `full` (for every size of the dimensions that
/// vary), and `slice` equal to `sizes` with some dimensions of size 1
/// dropped.
static LogicalResult
verifySlice(Operation *op, ArrayRef<int64_t> full, ArrayRef<int64_t> offsets,
            ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
            ValueRange dynamicOffsets, ValueRange dynamicSizes,
            ArrayRef<int64_t> slice, StringRef sliceName) {
  size_t rank = full.size();
  if (offsets.size() != rank || sizes.size() != rank || strides.size() != rank)
    return op->emitOpError()
           << "needs one offset, size and stride per dimension of the " << rank
           << "-d array, got " << offsets.size() << ", " << sizes.size()
           << " and " << strides.size();
  if (size_t(llvm::count_if(sizes, ShapedType::isDynamic)) !=
      dynamicSizes.size())
    return op->emitOpError()
           << "needs one value per dynamic size, got " << dynamicSizes.size();
  if (size_t(llvm::count_if(offsets, ShapedType::isDynamic)) !=
      dynamicOffsets.size())
    return op->emitOpError() << "needs one value per dynamic offset, got "
                             << dynamicOffsets.size();
  for (size_t d = 0; d < rank; ++d) {
    bool dynamicSize = ShapedType::isDynamic(sizes[d]);
    if (ShapedType::isDynamic(offsets[d]) && !ShapedType::isDynamic(full[d]))
      return op->emitOpError() << "dimension " << d << " has " << full[d]
                               << " elements: its offset must be a constant";
    if (!dynamicSize && sizes[d] < 0)
      return op->emitOpError()
             << "size " << sizes[d] << " of dimension " << d << " is negative";
    if (strides[d] == 0)
      return op->emitOpError() << "stride of dimension " << d << " is zero";
    if (ShapedType::isDynamic(full[d])) {
      if (failed(verifyDynamicDimension(op, d, offsets[d], sizes[d], strides[d],
                                        dynamicSize)))
        return failure();
      continue;
    }
    if (dynamicSize)
      return op->emitOpError()
             << "dimension " << d << " has " << full[d]
             << " elements: its slice size must be a constant";
    if (sizes[d] == 0)
      continue;
    int64_t span, last;
    bool overflow = llvm::MulOverflow(sizes[d] - 1, strides[d], span) ||
                    llvm::AddOverflow(offsets[d], span, last);
    auto inside = [&](int64_t index) { return index >= 0 && index < full[d]; };
    if (overflow || !inside(offsets[d]) || !inside(last))
      return op->emitOpError()
             << "dimension " << d << " takes " << sizes[d]
             << " elements from index " << offsets[d] << " with stride "
             << strides[d] << ", outside the " << full[d]
             << " elements of the array";
  }
  // Greedy matching finds the dropped dimensions: matching a size-1
  // dimension instead of dropping it never prevents a later match.
  size_t matched = 0;
  for (int64_t size : sizes) {
    if (matched < slice.size() && slice[matched] == size)
      ++matched;
    else if (size != 1)
      break;
  }
  if (matched != slice.size() ||
      llvm::count_if(sizes, [](int64_t s) { return s != 1; }) >
          llvm::count_if(slice, [](int64_t s) { return s != 1; }))
    return op->emitOpError()
           << "the " << sliceName << " shape " << formatShape(slice)
           << " is not the slice sizes " << formatShape(sizes)
           << " with some dimensions of size 1 dropped";
  return success();
}

/// Whether the slice is the whole of an array of shape `full`, in order.
static bool isWholeArray(ArrayRef<int64_t> full, ArrayRef<int64_t> offsets,
                         ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  return full == sizes && llvm::none_of(full, ShapedType::isDynamic) &&
         llvm::all_of(offsets, [](int64_t o) { return o == 0; }) &&
         llvm::all_of(strides, [](int64_t s) { return s == 1; });
}

SmallVector<OpFoldResult> ExtractSliceOp::getMixedOffsets() {
  return getMixedValues(getOffsets(), getDynamicOffsets(), getContext());
}

SmallVector<OpFoldResult> ExtractSliceOp::getMixedSizes() {
  return getMixedValues(getSizes(), getDynamicSizes(), getContext());
}

LogicalResult ExtractSliceOp::verify() {
  return verifySlice(*this, getSource().getType().getShape(), getOffsets(),
                     getSizes(), getStrides(), getDynamicOffsets(),
                     getDynamicSizes(), getType().getShape(), "result");
}

OpFoldResult ExtractSliceOp::fold(FoldAdaptor adaptor) {
  if (getSource().getType() == getType() &&
      isWholeArray(getType().getShape(), getOffsets(), getSizes(),
                   getStrides()))
    return getSource();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSource());
      splat && getType().hasStaticShape())
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

SmallVector<OpFoldResult> InsertSliceOp::getMixedOffsets() {
  return getMixedValues(getOffsets(), getDynamicOffsets(), getContext());
}

SmallVector<OpFoldResult> InsertSliceOp::getMixedSizes() {
  return getMixedValues(getSizes(), getDynamicSizes(), getContext());
}

LogicalResult InsertSliceOp::verify() {
  return verifySlice(*this, getDest().getType().getShape(), getOffsets(),
                     getSizes(), getStrides(), getDynamicOffsets(),
                     getDynamicSizes(), getSource().getType().getShape(),
                     "inserted");
}

OpFoldResult InsertSliceOp::fold(FoldAdaptor) {
  // Inserting no elements changes nothing.
  if (getSource().getType().hasStaticShape() &&
      getSource().getType().getNumElements() == 0)
    return getDest();
  // Overwriting every element in order leaves nothing of the destination.
  if (getSource().getType() == getType() &&
      isWholeArray(getType().getShape(), getOffsets(), getSizes(),
                   getStrides()))
    return getSource();
  return {};
}
