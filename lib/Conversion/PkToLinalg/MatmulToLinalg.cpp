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
// Broadcast batches
//===----------------------------------------------------------------------===//

/// A batched product's operand as the tensor it reads: a pk.broadcast's
/// source where it stretches batch dimensions, and for each dimension of
/// the operand (batch..., rows, columns), the source's dimension, or -1
/// where the broadcast adds or stretches it.
struct BatchOperand {
  Value source;
  SmallVector<int64_t> dimOf;
};

BatchOperand readBatchOperand(ConversionPatternRewriter &rewriter,
                              Value original, Value converted) {
  int64_t rank = cast<RankedTensorType>(original.getType()).getRank();
  BatchOperand operand{converted, llvm::to_vector(llvm::seq<int64_t>(rank))};
  auto broadcast = original.getDefiningOp<BroadcastOp>();
  Value source =
      broadcast ? rewriter.getRemappedValue(broadcast.getOperand()) : Value();
  if (!source)
    return operand;
  auto target = cast<RankedTensorType>(original.getType());
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t offset = rank - sourceType.getRank();
  SmallVector<int64_t> dimOf;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = d - offset;
    bool own =
        s >= 0 && (sourceType.getDimSize(s) != 1 || target.getDimSize(d) == 1);
    // (The rows and columns are never broadcast by `@`.)
    if (!own && d >= rank - 2)
      return operand;
    dimOf.push_back(own ? s : -1);
  }
  return {source, dimOf};
}

/// `operand.source` rearranged as the dimensions `order` of the operand
/// (a copy, unless the source is already that), read through a map that
/// skips the dimensions the broadcast added and reads index 0 of those it
/// stretched.
Value gather(OpBuilder &b, Location loc, const BatchOperand &operand,
             ArrayRef<int64_t> order, RankedTensorType operandType) {
  auto sourceType = cast<RankedTensorType>(operand.source.getType());
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  SmallVector<AffineExpr> reads(sourceType.getRank(),
                                b.getAffineConstantExpr(0));
  bool identity = sourceType.getRank() == int64_t(order.size());
  for (auto [loop, d] : llvm::enumerate(order)) {
    shape.push_back(operandType.getDimSize(d));
    int64_t s = operand.dimOf[d];
    identity = identity && s == int64_t(loop);
    if (s < 0)
      continue;
    reads[s] = b.getAffineDimExpr(loop);
    if (ShapedType::isDynamic(shape.back()))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, operand.source, s));
  }
  if (identity)
    return operand.source;
  Value empty = tensor::EmptyOp::create(
      b, loc, shape, sourceType.getElementType(), dynamicSizes);
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps = {
      AffineMap::get(order.size(), 0, reads, context),
      AffineMap::getMultiDimIdentityMap(order.size(), context)};
  SmallVector<utils::IteratorType> iterators(order.size(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, empty.getType(), operand.source, empty, maps, iterators,
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, args[0]);
             })
      .getResult(0);
}

/// The batch dimensions of a batched product by the operands that read
/// them: both (or neither, of size 1), A alone, B alone.
struct BatchDims {
  SmallVector<int64_t> shared, lhsOnly, rhsOnly;
};

/// `lhs` and `rhs`'s batch dimensions (see BatchDims); none where no batch
/// dimension is read by one operand alone.
std::optional<BatchDims> classifyBatches(const BatchOperand &lhs,
                                         const BatchOperand &rhs,
                                         RankedTensorType resultType) {
  BatchDims dims;
  for (int64_t d = 0; d < resultType.getRank() - 2; ++d) {
    int64_t size = resultType.getDimSize(d);
    bool inLhs = lhs.dimOf[d] >= 0, inRhs = rhs.dimOf[d] >= 0;
    if (!inLhs && !inRhs && size != 1)
      return std::nullopt;
    (size == 1 || (inLhs && inRhs) ? dims.shared
     : inLhs                       ? dims.lhsOnly
                                   : dims.rhsOnly)
        .push_back(d);
  }
  if (dims.lhsOnly.empty() && dims.rhsOnly.empty())
    return std::nullopt;
  return dims;
}

/// The groups that collapse A (gathered as [shared], lhsOnly, M, K) to
/// [shared] x (lhsOnly, M) x K, B ([shared], K, rhsOnly, N) to [shared] x K
/// x (rhsOnly, N), and expand C from [shared] x (lhsOnly, M) x (rhsOnly, N).
struct MatrixGroups {
  SmallVector<ReassociationIndices> a, b, c;
};

MatrixGroups matrixGroups(const BatchDims &dims) {
  int64_t s = dims.shared.size(), l = dims.lhsOnly.size(),
          r = dims.rhsOnly.size();
  auto range = [](int64_t from, int64_t to) {
    return ReassociationIndices(llvm::to_vector(llvm::seq(from, to)));
  };
  MatrixGroups groups;
  if (s > 0) {
    groups.a.push_back(range(0, s));
    groups.b.push_back(range(0, s));
    groups.c.push_back(range(0, s));
  }
  groups.a.append({range(s, s + l + 1), range(s + l + 1, s + l + 2)});
  groups.b.append({range(s, s + 1), range(s + 1, s + r + 2)});
  groups.c.append({range(s, s + l + 1), range(s + l + 1, s + l + r + 2)});
  return groups;
}

/// The product of `a` and `b` collapsed by `groups` (a matmul, or a
/// batch_matmul over shared batch dimensions), into a zero-filled tensor.
Value multiplyMatrices(OpBuilder &builder, Location loc, Value a, Value b,
                       const MatrixGroups &groups, Type element) {
  auto collapse = [&](Value tensor, ArrayRef<ReassociationIndices> into) {
    if (int64_t(into.size()) ==
        cast<RankedTensorType>(tensor.getType()).getRank())
      return tensor;
    return Value(tensor::CollapseShapeOp::create(builder, loc, tensor, into));
  };
  Value aMatrix = collapse(a, groups.a), bMatrix = collapse(b, groups.b);
  auto aType = cast<RankedTensorType>(aMatrix.getType());
  auto bType = cast<RankedTensorType>(bMatrix.getType());
  SmallVector<int64_t> shape(aType.getShape().drop_back());
  shape.push_back(bType.getShape().back());
  SmallVector<Value> sizes;
  for (auto [d, size] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(size))
      sizes.push_back(
          d + 1 < shape.size()
              ? Value(tensor::DimOp::create(builder, loc, aMatrix, d))
              : Value(tensor::DimOp::create(builder, loc, bMatrix, d)));
  Value zero = arith::ConstantOp::create(builder, loc, element,
                                         builder.getZeroAttr(element));
  Value empty = tensor::EmptyOp::create(builder, loc, shape, element, sizes);
  Value init = linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
  SmallVector<Value, 2> inputs{aMatrix, bMatrix};
  if (groups.a.size() == 3)
    return linalg::BatchMatmulOp::create(builder, loc, init.getType(), inputs,
                                         init)
        .getResult(0);
  return linalg::MatmulOp::create(builder, loc, init.getType(), inputs, init)
      .getResult(0);
}

/// A batched product whose operands are pk.broadcasts along some batch
/// dimensions (NumPy's (2, 3, 1, K) @ (3, K, N)) as one matmul or
/// batch_matmul of their sources: batch dimensions of A alone join its
/// rows, those of B alone its columns (A, B and C rearranged by copies
/// where those dimensions move), so that the product packs into register
/// tiles and reads each matrix of B once, where a contraction over the
/// broadcast B would run as a loop nest. Null where no batch dimension is
/// broadcast. (With dynamic sizes, C's expansion may hold several in a
/// group: pk-expand-shapes-as-casts views it as MLIR 22's
/// expand-strided-metadata cannot.)
Value buildBroadcastBatches(ConversionPatternRewriter &rewriter, MatmulOp op,
                            Value lhsValue, Value rhsValue,
                            RankedTensorType resultType) {
  int64_t rank = resultType.getRank(), batch = rank - 2;
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  if (batch < 1 || lhsType.getRank() != rank || rhsType.getRank() != rank)
    return nullptr;
  BatchOperand lhs = readBatchOperand(rewriter, op.getLhs(), lhsValue);
  BatchOperand rhs = readBatchOperand(rewriter, op.getRhs(), rhsValue);
  std::optional<BatchDims> dims = classifyBatches(lhs, rhs, resultType);
  if (!dims)
    return nullptr;

  Location loc = op.getLoc();
  int64_t rows = batch, columns = batch + 1;
  auto concat = [](ArrayRef<ArrayRef<int64_t>> parts) {
    SmallVector<int64_t> all;
    for (ArrayRef<int64_t> part : parts)
      all.append(part.begin(), part.end());
    return all;
  };
  SmallVector<int64_t> lhsOrder =
      concat({dims->shared, dims->lhsOnly, {rows, columns}});
  SmallVector<int64_t> rhsOrder =
      concat({dims->shared, {rows}, dims->rhsOnly, {columns}});
  SmallVector<int64_t> productOrder =
      concat({dims->shared, dims->lhsOnly, {rows}, dims->rhsOnly, {columns}});
  Value a = gather(rewriter, loc, lhs, lhsOrder, lhsType);
  Value b = gather(rewriter, loc, rhs, rhsOrder, rhsType);
  MatrixGroups groups = matrixGroups(*dims);
  Type element = resultType.getElementType();
  Value product = multiplyMatrices(rewriter, loc, a, b, groups, element);

  // C: [shared] x (lhsOnly, M) x (rhsOnly, N) expanded, then moved into the
  // result's order (batch..., M, N). Dynamic sizes: M and A's batch
  // dimensions from A, N and B's from B (in A's order, `columns` is K).
  SmallVector<OpFoldResult> expandedSizes;
  SmallVector<int64_t> expandedShape;
  for (int64_t d : productOrder) {
    int64_t size = resultType.getDimSize(d);
    expandedShape.push_back(size);
    if (!ShapedType::isDynamic(size)) {
      expandedSizes.push_back(rewriter.getIndexAttr(size));
      continue;
    }
    auto inA = llvm::find(ArrayRef(lhsOrder).drop_back(), d);
    expandedSizes.push_back(Value(
        d != columns && inA != lhsOrder.end() - 1
            ? tensor::DimOp::create(rewriter, loc, a, inA - lhsOrder.begin())
            : tensor::DimOp::create(rewriter, loc, b,
                                    llvm::find(rhsOrder, d) -
                                        rhsOrder.begin())));
  }
  Value expanded = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(expandedShape, element), product,
      groups.c, expandedSizes);
  BatchOperand c{expanded, SmallVector<int64_t>(rank, -1)};
  for (auto [position, d] : llvm::enumerate(productOrder))
    c.dimOf[d] = position;
  return gather(rewriter, loc, c, llvm::to_vector(llvm::seq<int64_t>(rank)),
                resultType);
}

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
    if (Value product = buildBroadcastBatches(rewriter, op, adaptor.getLhs(),
                                              adaptor.getRhs(), resultType)) {
      rewriter.replaceOp(op, product);
      return success();
    }
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
