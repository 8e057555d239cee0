//===- ElementwiseToLinalg.cpp - elementwise pk ops, casts and broadcasts -===//

#include "PkToLinalgPatterns.h"
#include "picokernel/Conversion/PkToLinalg/PkToLinalg.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::pk;

//===----------------------------------------------------------------------===//
// Elementwise operations: linalg.generic with parallel iterators
//===----------------------------------------------------------------------===//

Value mlir::pk::buildElementwise(OpBuilder &builder, Location loc,
                                 RankedTensorType resultType, ValueRange inputs,
                                 ArrayRef<AffineMap> inputMaps,
                                 ScalarBuilder body, ValueRange dynamicSizes) {
  Type semanticElement = resultType.getElementType();
  resultType = toSignless(resultType);
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  while (maps.size() < inputs.size())
    maps.push_back(builder.getMultiDimIdentityMap(rank));
  maps.push_back(builder.getMultiDimIdentityMap(rank));
  SmallVector<Value> sizes(dynamicSizes);
  if (sizes.empty()) {
    for (auto [d, size] : llvm::enumerate(resultType.getShape())) {
      if (!ShapedType::isDynamic(size))
        continue;
      // An input dimension indexed by result dimension d has its size.
      Value found;
      for (auto [input, map] : llvm::zip(inputs, maps)) {
        auto inputType = cast<RankedTensorType>(input.getType());
        for (auto [j, expr] : llvm::enumerate(map.getResults()))
          if (!found && expr == builder.getAffineDimExpr(d) &&
              inputType.isDynamicDim(j))
            found = tensor::DimOp::create(builder, loc, input, j);
      }
      if (!found)
        return Value();
      sizes.push_back(found);
    }
  }
  Value init = tensor::EmptyOp::create(builder, loc, resultType.getShape(),
                                       resultType.getElementType(), sizes);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        Value result = body(b, bodyLoc, args.drop_back(), semanticElement);
        linalg::YieldOp::create(b, bodyLoc, result);
      });
  return generic.getResult(0);
}

SmallVector<OpFoldResult> mlir::pk::sizesOf(OpBuilder &builder, Location loc,
                                            Value tensor,
                                            ArrayRef<int64_t> dims) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : dims)
    sizes.push_back(tensor::getMixedSize(builder, loc, tensor, d));
  return sizes;
}

namespace {

/// Replaces `op` (one result) by a generic computing `body` on the elements
/// of `operands`, the converted operands.
LogicalResult replaceByElementwise(Operation *op, ValueRange operands,
                                   ScalarBuilder body,
                                   ConversionPatternRewriter &rewriter) {
  Value result = buildElementwise(
      rewriter, op->getLoc(),
      cast<RankedTensorType>(op->getResult(0).getType()), operands, {}, body);
  if (!result)
    return rewriter.notifyMatchFailure(op, "no operand has its sizes");
  rewriter.replaceOp(op, result);
  return success();
}

/// Lowers an elementwise pk op to a generic whose body computes
/// `body(operand elements..., element type)`: the result's element type, or
/// the operands' for a comparison (whose result is bool), as pk types it
/// (unsigned integers stay unsigned there; the elements are signless).
template <typename PkOp, Value (*body)(OpBuilder &, Location, ValueRange, Type),
          bool byOperandType = false>
struct ElementwiseLowering : public OpConversionPattern<PkOp> {
  using OpConversionPattern<PkOp>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PkOp op, typename PkOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(
        byOperandType ? op->getOperand(0).getType() : op.getType());
    return replaceByElementwise(
        op, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args, Type) {
          return body(b, loc, args, element);
        },
        rewriter);
  }
};

/// pk.cast converts each element by both its types as pk types them (an
/// unsigned source widens with zeros and converts to floats as unsigned).
struct CastLowering : public OpConversionPattern<CastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getOperand().getType());
    return replaceByElementwise(
        op, adaptor.getOperand(),
        [&](OpBuilder &b, Location loc, ValueRange args, Type to) {
          return convertElement(b, loc, args[0], from, to);
        },
        rewriter);
  }
};

struct BroadcastLowering : public OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> from = op.getOperand().getType().getShape();
    ArrayRef<int64_t> to = op.getType().getShape();
    // NumPy alignment: operand dimension i is result dimension offset + i;
    // a stretched dimension of size 1 always reads index 0.
    size_t offset = to.size() - from.size();
    SmallVector<AffineExpr> exprs;
    for (auto [i, dim] : llvm::enumerate(from))
      exprs.push_back(dim == 1 && to[offset + i] != 1
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(offset + i));
    AffineMap map = AffineMap::get(to.size(), 0, exprs, rewriter.getContext());
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), adaptor.getOperand(), map,
        [](OpBuilder &, Location, ValueRange args, Type) { return args[0]; },
        adaptor.getSizes());
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::pk::populatePkElementwiseConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns
      .add<ElementwiseLowering<NegOp, negBody>, CastLowering, BroadcastLowering,
           ElementwiseLowering<AbsOp, absBody>,
           ElementwiseLowering<SelectOp, selectBody>,
           ElementwiseLowering<
               PowOp, inFloat32<floatOrIntBody<math::PowFOp, math::PowFOp>>>>(
          typeConverter, patterns.getContext());
  // The table's binary operations, comparisons and math functions.
#define PK_BINARY(Kind, name, Op, ...)                                         \
  patterns.add<ElementwiseLowering<Op, __VA_ARGS__>>(typeConverter,            \
                                                     patterns.getContext());
#define PK_COMPARISON(Kind, name, Op, Float, Signed, Unsigned)                 \
  patterns.add<ElementwiseLowering<                                            \
      Op,                                                                      \
      compareBody<arith::CmpFPredicate::Float, arith::CmpIPredicate::Signed,   \
                  arith::CmpIPredicate::Unsigned>,                             \
      /*byOperandType=*/true>>(typeConverter, patterns.getContext());
#define PK_MATH_FUNCTION(Kind, name, Op, ...)                                  \
  patterns.add<ElementwiseLowering<Op, __VA_ARGS__>>(typeConverter,            \
                                                     patterns.getContext());
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
}
