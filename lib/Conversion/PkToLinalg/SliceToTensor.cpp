//===- SliceToTensor.cpp - pk slices to tensor slices ---------------------===//

#include "PkToLinalgPatterns.h"
#include "picokernel/Conversion/PkToLinalg/PkToLinalg.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::pk;

namespace {

//===----------------------------------------------------------------------===//
// Slices: tensor.extract_slice / insert_slice, which bufferize to subviews
//===----------------------------------------------------------------------===//

/// A pk slice as tensor slices see it: strides are positive there, so a
/// dimension with a negative stride reads the same elements starting from
/// its other end, and is reversed separately. The tensor slice keeps every
/// dimension (`sizes`); the dimensions pk drops are reshaped away on their
/// own, because rank-reducing slices of strided views can be ambiguous
/// about which unit dimension they drop (MLIR 22's SubViewOp::getDroppedDims
/// crashed on `o[0, ::2, :]` of a (1, 13, 1) array).
struct ForwardSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  /// For each dimension of the slice value (after dropped dimensions), the
  /// number of elements when it walks backwards (dynamic: ShapedType's
  /// kDynamic), or 0.
  SmallVector<int64_t> reversedSizes;
  /// The full-rank tensor type of the slice.
  RankedTensorType fullType;
  /// How the full-rank dimensions group into the slice value's dimensions
  /// (each dropped unit dimension joins a kept neighbour).
  SmallVector<ReassociationIndices> reassociation;
  bool dropsDimensions = false;

  bool anyReversed() const {
    return llvm::any_of(reversedSizes, [](int64_t size) {
      return size > 1 || ShapedType::isDynamic(size);
    });
  }
};

/// `op`'s forward slice; `adaptor` gives its dynamic offsets and sizes.
template <typename SliceOp, typename Adaptor>
ForwardSlice forwardSlice(OpBuilder &builder, Location loc, SliceOp op,
                          Adaptor adaptor, RankedTensorType sliceType) {
  ForwardSlice slice;
  SmallVector<OpFoldResult> mixedSizes =
      getMixedValues(op.getSizes(), adaptor.getDynamicSizes(), builder);
  SmallVector<OpFoldResult> mixedOffsets =
      getMixedValues(op.getOffsets(), adaptor.getDynamicOffsets(), builder);
  ArrayRef<int64_t> sliceShape = sliceType.getShape();
  size_t kept = 0;
  ReassociationIndices pending;
  for (auto [d, mixedOffset, size, stride, mixedSize] : llvm::enumerate(
           mixedOffsets, op.getSizes(), op.getStrides(), mixedSizes)) {
    // Dynamic sizes walk forwards, or backwards from an offset counted
    // from the end (the verifier checks it).
    bool dynamic = ShapedType::isDynamic(size);
    bool backwards = stride < 0 && (dynamic || size > 0);
    pending.push_back(d);
    // Same greedy matching of kept dimensions as the verifier.
    if (kept < sliceShape.size() && sliceShape[kept] == size) {
      slice.reversedSizes.push_back(backwards ? size : 0);
      slice.reassociation.push_back(pending);
      pending.clear();
      ++kept;
    }
    if (dynamic && !backwards) {
      slice.offsets.push_back(mixedOffset);
      slice.sizes.push_back(mixedSize);
      slice.strides.push_back(builder.getIndexAttr(stride));
      continue;
    }
    if (dynamic) {
      // From its last index, offset + (size - 1) * stride (0 when empty).
      auto constant = [&](int64_t value) {
        return arith::ConstantIndexOp::create(builder, loc, value).getResult();
      };
      Value count = cast<Value>(mixedSize);
      Value span = arith::MulIOp::create(
          builder, loc, arith::SubIOp::create(builder, loc, count, constant(1)),
          constant(stride));
      Value last =
          arith::AddIOp::create(builder, loc, cast<Value>(mixedOffset), span);
      Value empty = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::eq, count, constant(0));
      slice.offsets.push_back(
          arith::SelectOp::create(builder, loc, empty, constant(0), last)
              .getResult());
      slice.sizes.push_back(mixedSize);
      slice.strides.push_back(builder.getIndexAttr(-stride));
      continue;
    }
    // An empty slice may start anywhere in pk; tensor slices want bounds.
    // A backwards one starts at its last index (offsets counted from the
    // end are values).
    int64_t shift = backwards ? (size - 1) * stride : 0;
    OpFoldResult first = builder.getIndexAttr(0);
    if (size != 0) {
      if (std::optional<int64_t> offset = getConstantIntValue(mixedOffset))
        first = builder.getIndexAttr(*offset + shift);
      else if (shift == 0)
        first = mixedOffset;
      else
        first = arith::AddIOp::create(
                    builder, loc, cast<Value>(mixedOffset),
                    arith::ConstantIndexOp::create(builder, loc, shift))
                    .getResult();
    }
    int64_t step = size <= 1 ? 1 : backwards ? -stride : stride;
    slice.offsets.push_back(first);
    slice.sizes.push_back(builder.getIndexAttr(size));
    slice.strides.push_back(builder.getIndexAttr(step));
  }
  if (!pending.empty() && !slice.reassociation.empty())
    llvm::append_range(slice.reassociation.back(), pending);
  slice.dropsDimensions = sliceShape.size() != op.getSizes().size();
  slice.fullType =
      RankedTensorType::get(op.getSizes(), sliceType.getElementType());
  return slice;
}

/// `value` with the dimensions `reversed` marks read backwards, where one
/// of them has a dynamic size: each element gathered from index
/// `size - 1 - i` of its dimension (linalg's maps take no sizes). Loops
/// over it load backwards consecutively, which LLVM vectorizes.
Value gatherReversed(OpBuilder &builder, Location loc, Value value,
                     ArrayRef<bool> reversed) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<Value> dynamicSizes, lastIndices;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value size = tensor::DimOp::create(builder, loc, value, d);
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(size);
    lastIndices.push_back(arith::SubIOp::create(
        builder, loc, size, arith::ConstantIndexOp::create(builder, loc, 1)));
  }
  Value init = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                       type.getElementType(), dynamicSizes);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto gather = linalg::GenericOp::create(
      builder, loc, type, ValueRange(), ValueRange{init},
      ArrayRef<AffineMap>{builder.getMultiDimIdentityMap(type.getRank())},
      iterators, [&](OpBuilder &body, Location at, ValueRange) {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          Value index = linalg::IndexOp::create(body, at, d);
          indices.push_back(reversed[d] ? arith::SubIOp::create(
                                              body, at, lastIndices[d], index)
                                              .getResult()
                                        : index);
        }
        Value element = tensor::ExtractOp::create(body, at, value, indices);
        linalg::YieldOp::create(body, at, element);
      });
  return gather.getResult(0);
}

/// `value` with dimension d read backwards wherever reversedSizes[d] > 1
/// (or is dynamic).
Value reverseDimensions(OpBuilder &builder, Location loc, Value value,
                        ArrayRef<int64_t> reversedSizes) {
  if (llvm::any_of(reversedSizes, ShapedType::isDynamic)) {
    SmallVector<bool> reversed;
    for (int64_t size : reversedSizes)
      reversed.push_back(size > 1 || ShapedType::isDynamic(size));
    return gatherReversed(builder, loc, value, reversed);
  }
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<AffineExpr> exprs;
  for (auto [d, size] : llvm::enumerate(reversedSizes)) {
    AffineExpr index = builder.getAffineDimExpr(d);
    exprs.push_back(size > 1 ? builder.getAffineConstantExpr(size - 1) - index
                             : index);
  }
  AffineMap map =
      AffineMap::get(type.getRank(), 0, exprs, builder.getContext());
  return buildElementwise(
      builder, loc, type, value, map,
      [](OpBuilder &, Location, ValueRange args, Type) { return args[0]; });
}

struct ExtractSliceLowering : public OpConversionPattern<ExtractSliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ExtractSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = toSignless(cast<RankedTensorType>(op.getType()));
    ForwardSlice slice = forwardSlice(rewriter, loc, op, adaptor, resultType);
    // No elements (a dimension of size 0 next to dynamic ones): a new
    // tensor, as tensor slices want offsets inside every dimension.
    Value result =
        llvm::is_contained(slice.fullType.getShape(), 0)
            ? tensor::EmptyOp::create(rewriter, loc, slice.sizes,
                                      slice.fullType.getElementType())
                  .getResult()
            : tensor::ExtractSliceOp::create(rewriter, loc, slice.fullType,
                                             adaptor.getSource(), slice.offsets,
                                             slice.sizes, slice.strides)
                  .getResult();
    if (slice.dropsDimensions)
      result = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                               result, slice.reassociation);
    if (slice.anyReversed())
      result = reverseDimensions(rewriter, loc, result, slice.reversedSizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct InsertSliceLowering : public OpConversionPattern<InsertSliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(InsertSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Inserting no elements changes nothing (pk.insert_slice folds that
    // where the sizes are all static).
    if (llvm::is_contained(op.getSource().getType().getShape(), 0)) {
      rewriter.replaceOp(op, adaptor.getDest());
      return success();
    }
    ForwardSlice slice = forwardSlice(rewriter, loc, op, adaptor,
                                      toSignless(op.getSource().getType()));
    Value source = adaptor.getSource();
    if (slice.anyReversed())
      source = reverseDimensions(rewriter, loc, source, slice.reversedSizes);
    if (slice.dropsDimensions)
      source = tensor::ExpandShapeOp::create(rewriter, loc, slice.fullType,
                                             source, slice.reassociation);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, source, adaptor.getDest(), slice.offsets, slice.sizes,
        slice.strides);
    return success();
  }
};

/// pk.slice_size: max(0, ceil((size - offset) / step)).
struct SliceSizeLowering : public OpConversionPattern<SliceSizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceSizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       buildSliceSize(rewriter, op.getLoc(), adaptor.getSize(),
                                      op.getOffset(), op.getStep()));
    return success();
  }
};

} // namespace

Value mlir::pk::buildSliceSize(OpBuilder &builder, Location loc, Value size,
                               int64_t offset, int64_t step) {
  auto constant = [&](int64_t value) {
    return arith::ConstantIndexOp::create(builder, loc, value).getResult();
  };
  if (offset != 0)
    size = arith::SubIOp::create(builder, loc, size, constant(offset));
  if (step != 1)
    size = arith::CeilDivSIOp::create(builder, loc, size, constant(step));
  return arith::MaxSIOp::create(builder, loc, size, constant(0));
}

void mlir::pk::populatePkSliceConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<ExtractSliceLowering, InsertSliceLowering, SliceSizeLowering>(
      typeConverter, patterns.getContext());
}
