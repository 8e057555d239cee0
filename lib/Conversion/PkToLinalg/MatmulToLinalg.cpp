//===- MatmulToLinalg.cpp - pk.matmul to linalg contractions --------------===//

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

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

struct MatmulLowering : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Integer products wrap the same with or without a sign.
    auto resultType = toSignless(cast<RankedTensorType>(op.getType()));
    Type element = resultType.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc, element,
                                           rewriter.getZeroAttr(element));
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, resultType.getShape(), element,
        dynamicResultSizes(rewriter, loc, resultType, adaptor.getLhs(),
                           adaptor.getRhs()));
    Value init =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);

    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    int64_t lhsRank = op.getLhs().getType().getRank();
    int64_t rhsRank = op.getRhs().getType().getRank();
    SmallVector<Value, 2> inputs{lhs, rhs};
    Operation *product = nullptr;
    if (lhsRank == 2 && rhsRank == 2)
      product =
          linalg::MatmulOp::create(rewriter, loc, resultType, inputs, init);
    else if (lhsRank == 3 && rhsRank == 3)
      product = linalg::BatchMatmulOp::create(rewriter, loc, resultType, inputs,
                                              init);
    else if (lhsRank == 2 && rhsRank == 1)
      product =
          linalg::MatvecOp::create(rewriter, loc, resultType, inputs, init);
    else if (lhsRank == 1 && rhsRank == 2)
      product =
          linalg::VecmatOp::create(rewriter, loc, resultType, inputs, init);
    else if (lhsRank == 1 && rhsRank == 1)
      product = linalg::DotOp::create(rewriter, loc, resultType, inputs, init);
    else
      product = buildContraction(rewriter, loc, resultType, lhs, rhs, lhsRank,
                                 rhsRank, init);
    rewriter.replaceOp(op, product->getResult(0));
    return success();
  }

  /// The result's dynamic sizes, read from the operands: the batch
  /// dimensions of the operand that has them, A's rows, B's columns.
  static SmallVector<Value> dynamicResultSizes(OpBuilder &b, Location loc,
                                               RankedTensorType resultType,
                                               Value lhs, Value rhs) {
    int64_t lhsRank = cast<RankedTensorType>(lhs.getType()).getRank();
    int64_t rhsRank = cast<RankedTensorType>(rhs.getType()).getRank();
    // (operand, dimension) of each result dimension.
    SmallVector<std::pair<Value, int64_t>> sources;
    Value batched = lhsRank >= rhsRank ? lhs : rhs;
    int64_t batch = std::max(lhsRank, rhsRank) - 2;
    for (int64_t d = 0; d < batch; ++d)
      sources.push_back({batched, d});
    if (lhsRank >= 2)
      sources.push_back({lhs, lhsRank - 2});
    if (rhsRank >= 2)
      sources.push_back({rhs, rhsRank - 1});
    SmallVector<Value> sizes;
    for (auto [d, size] : llvm::enumerate(resultType.getShape()))
      if (ShapedType::isDynamic(size))
        sizes.push_back(
            tensor::DimOp::create(b, loc, sources[d].first, sources[d].second));
    return sizes;
  }

  /// The batched shapes the named ops do not cover (more than one batch
  /// dimension, or a batched operand with a vector), as one generic.
  static Operation *buildContraction(OpBuilder &b, Location loc,
                                     RankedTensorType resultType, Value lhs,
                                     Value rhs, int64_t lhsRank,
                                     int64_t rhsRank, Value init) {
    int64_t batch = std::max(lhsRank, rhsRank) - 2;
    bool hasM = lhsRank >= 2, hasN = rhsRank >= 2;
    // Loop order: batch..., [m], [n], k.
    unsigned numLoops = batch + hasM + hasN + 1;
    auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
    SmallVector<AffineExpr> batchExprs;
    for (int64_t i = 0; i < batch; ++i)
      batchExprs.push_back(dim(i));
    AffineExpr m = dim(batch), n = dim(batch + hasM), k = dim(numLoops - 1);

    SmallVector<AffineExpr> lhsExprs, rhsExprs, outExprs(batchExprs);
    if (lhsRank >= 2) {
      lhsExprs = batchExprs;
      lhsExprs.append({m, k});
      outExprs.push_back(m);
    } else {
      lhsExprs = {k};
    }
    if (rhsRank >= 2) {
      rhsExprs = batchExprs;
      rhsExprs.append({k, n});
      outExprs.push_back(n);
    } else {
      rhsExprs = {k};
    }
    MLIRContext *context = b.getContext();
    SmallVector<AffineMap> maps = {
        AffineMap::get(numLoops, 0, lhsExprs, context),
        AffineMap::get(numLoops, 0, rhsExprs, context),
        AffineMap::get(numLoops, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    return linalg::GenericOp::create(
        b, loc, resultType, ValueRange{lhs, rhs}, init, maps, iterators,
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          Value sum;
          if (isa<FloatType>(args[0].getType())) {
            Value prod = arith::MulFOp::create(nb, nloc, args[0], args[1]);
            sum = arith::AddFOp::create(nb, nloc, args[2], prod);
          } else {
            Value prod = arith::MulIOp::create(nb, nloc, args[0], args[1]);
            sum = arith::AddIOp::create(nb, nloc, args[2], prod);
          }
          linalg::YieldOp::create(nb, nloc, sum);
        });
  }
};

} // namespace

void mlir::pk::populatePkMatmulConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<MatmulLowering>(typeConverter, patterns.getContext());
}
