//===- ReductionToLinalg.cpp - pk reductions to linalg.generic ------------===//

#include "PkToLinalgPatterns.h"
#include "picokernel/Conversion/PkToLinalg/PkToLinalg.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::pk;

namespace {

enum class Reduction { Sum, Max, Min };

/// A reduction as a linalg.generic with reduction iterators over the axes,
/// accumulating from the operation's identity; kept dimensions are
/// re-inserted with tensor.expand_shape (a view, no copy).
template <typename PkOp, Reduction kind>
struct ReduceLowering : public OpConversionPattern<PkOp> {
  using OpConversionPattern<PkOp>::OpConversionPattern;

  /// The identity of the reduction of `element`s (as pk types them; the
  /// attribute is signless).
  static TypedAttr identity(OpBuilder &b, Type element) {
    if (auto floatType = dyn_cast<FloatType>(element)) {
      if (kind == Reduction::Sum)
        return b.getFloatAttr(element, 0.0);
      return b.getFloatAttr(element,
                            APFloat::getInf(floatType.getFloatSemantics(),
                                            kind == Reduction::Max));
    }
    unsigned width = element.getIntOrFloatBitWidth();
    Type bits = toSignless(element);
    if (kind == Reduction::Sum)
      return b.getIntegerAttr(bits, 0);
    if (width == 1) // booleans: max is "any", min is "all"
      return b.getIntegerAttr(bits, kind == Reduction::Max ? 0 : 1);
    if (element.isUnsignedInteger())
      return b.getIntegerAttr(bits, kind == Reduction::Max
                                        ? APInt::getMinValue(width)
                                        : APInt::getMaxValue(width));
    return b.getIntegerAttr(bits, kind == Reduction::Max
                                      ? APInt::getSignedMinValue(width)
                                      : APInt::getSignedMaxValue(width));
  }

  static Value combine(OpBuilder &b, Location loc, Type element, Value acc,
                       Value x) {
    bool isFloat = isa<FloatType>(element), isBool = element.isInteger(1);
    bool isUnsigned = element.isUnsignedInteger();
    switch (kind) {
    case Reduction::Sum:
      // Reassociation lets LLVM keep several partial sums in vector lanes
      // (a chain of dependent adds runs at one add per latency): the sum is
      // then blocked, closer to NumPy's pairwise sum than a serial one.
      return isFloat ? Value(arith::AddFOp::create(
                           b, loc, acc, x, arith::FastMathFlags::reassoc))
                     : Value(arith::AddIOp::create(b, loc, acc, x));
    case Reduction::Max:
      // NaN-propagating maximum and minimum are associative: the flag only
      // lets LLVM vectorize.
      return isFloat      ? Value(arith::MaximumFOp::create(
                                b, loc, acc, x, arith::FastMathFlags::reassoc))
             : isBool     ? Value(arith::OrIOp::create(b, loc, acc, x))
             : isUnsigned ? Value(arith::MaxUIOp::create(b, loc, acc, x))
                          : Value(arith::MaxSIOp::create(b, loc, acc, x));
    case Reduction::Min:
      return isFloat      ? Value(arith::MinimumFOp::create(
                                b, loc, acc, x, arith::FastMathFlags::reassoc))
             : isBool     ? Value(arith::AndIOp::create(b, loc, acc, x))
             : isUnsigned ? Value(arith::MinUIOp::create(b, loc, acc, x))
                          : Value(arith::MinSIOp::create(b, loc, acc, x));
    }
    llvm_unreachable("unknown reduction");
  }

  LogicalResult
  matchAndRewrite(PkOp op, typename PkOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto operandType = cast<RankedTensorType>(op.getOperand().getType());
    auto resultType = toSignless(cast<RankedTensorType>(op.getType()));
    Type semanticElement = operandType.getElementType();
    Type element = toSignless(semanticElement);
    int64_t rank = operandType.getRank();

    SmallVector<int64_t> reducedShape, keptDims;
    SmallVector<AffineExpr> outputExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < rank; ++d) {
      if (op.isReduced(d)) {
        iterators.push_back(utils::IteratorType::reduction);
        continue;
      }
      iterators.push_back(utils::IteratorType::parallel);
      reducedShape.push_back(operandType.getDimSize(d));
      keptDims.push_back(d);
      outputExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    auto reducedType = RankedTensorType::get(reducedShape, element);
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, sizesOf(rewriter, loc, adaptor.getOperand(), keptDims),
        element);
    Value start = arith::ConstantOp::create(
        rewriter, loc, element, identity(rewriter, semanticElement));
    Value init =
        linalg::FillOp::create(rewriter, loc, start, empty).getResult(0);
    SmallVector<AffineMap> maps = {
        rewriter.getMultiDimIdentityMap(rank),
        AffineMap::get(rank, 0, outputExprs, rewriter.getContext())};
    Value reduced =
        linalg::GenericOp::create(
            rewriter, loc, reducedType, adaptor.getOperand(), init, maps,
            iterators,
            [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
              linalg::YieldOp::create(
                  b, bodyLoc,
                  combine(b, bodyLoc, semanticElement, args[1], args[0]));
            })
            .getResult(0);
    if (reducedType != resultType) {
      // keep_dims: each reduced dimension joins the group of the kept
      // dimension before it (leading ones the first group).
      SmallVector<ReassociationIndices> groups(reducedShape.size());
      ReassociationIndices leading;
      int64_t group = -1;
      for (int64_t d = 0; d < rank; ++d) {
        if (!op.isReduced(d)) {
          groups[++group].append(leading.begin(), leading.end());
          leading.clear();
          groups[group].push_back(d);
        } else if (group < 0) {
          leading.push_back(d);
        } else {
          groups[group].push_back(d);
        }
      }
      reduced = tensor::ExpandShapeOp::create(rewriter, loc, resultType,
                                              reduced, groups);
    }
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

} // namespace

void mlir::pk::populatePkReductionConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ReduceSumOp, Reduction::Sum>,
               ReduceLowering<ReduceMaxOp, Reduction::Max>,
               ReduceLowering<ReduceMinOp, Reduction::Min>>(
      typeConverter, patterns.getContext());
}
