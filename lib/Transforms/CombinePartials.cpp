//===- CombinePartials.cpp - merging a split reduction's partials ---------===//

#include "CombinePartials.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::pk {
namespace {

/// A generic's body that yields `combiner` of its (value, accumulator)
/// arguments.
auto combinerBody(Operation *combiner) {
  return [combiner](OpBuilder &nested, Location loc, ValueRange args) {
    Operation *clone = nested.clone(*combiner);
    clone->setOperands({args[1], args[0]});
    linalg::YieldOp::create(nested, loc, clone->getResult(0));
  };
}

/// `combiner` applied element by element to `lhs` and `rhs` (a value and an
/// accumulator of the same shape) into `dest`, which is read only when it
/// is `rhs`.
Value combineElementwise(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value dest, Operation *combiner) {
  auto type = cast<RankedTensorType>(dest.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> inputs = {lhs};
  if (rhs != dest)
    inputs.push_back(rhs);
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(b, loc, type, inputs, dest, maps, iterators,
                                   combinerBody(combiner))
      .getResult(0);
}

/// Rows [offset, offset + size) of `tensor` along dimension 0, as slice
/// offsets, sizes and strides.
struct Rows {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

Rows rowsOf(OpBuilder &b, Location loc, Value tensor, OpFoldResult offset,
            OpFoldResult size) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, tensor);
  Rows rows{SmallVector<OpFoldResult>(sizes.size(), b.getIndexAttr(0)), sizes,
            SmallVector<OpFoldResult>(sizes.size(), b.getIndexAttr(1))};
  rows.offsets[0] = offset;
  rows.sizes[0] = size;
  return rows;
}

Value extractRows(OpBuilder &b, Location loc, Value tensor, OpFoldResult offset,
                  OpFoldResult size) {
  Rows rows = rowsOf(b, loc, tensor, offset, size);
  return tensor::ExtractSliceOp::create(b, loc, tensor, rows.offsets,
                                        rows.sizes, rows.strides);
}

Value insertRows(OpBuilder &b, Location loc, Value source, Value dest,
                 OpFoldResult offset, OpFoldResult size) {
  Rows rows = rowsOf(b, loc, dest, offset, size);
  return tensor::InsertSliceOp::create(b, loc, source, dest, rows.offsets,
                                       rows.sizes, rows.strides);
}

/// Rows `half` = count/2 and `left` = count - half of a level of `count`.
std::pair<OpFoldResult, OpFoldResult> halves(OpBuilder &b, Location loc,
                                             OpFoldResult count) {
  AffineExpr n = b.getAffineDimExpr(0);
  auto apply = [&](AffineExpr expr) {
    return affine::makeComposedFoldedAffineApply(b, loc, expr, {count});
  };
  return {apply(n.floorDiv(2)), apply(n - n.floorDiv(2))};
}

/// One level of the pairwise combine: the first `count` rows of `from`
/// become count - count/2 rows, the first rows of `to` (returned with
/// their count): to[i] = from[i] + from[left + i], and to[half] =
/// from[half] when count is odd.
std::pair<Value, OpFoldResult> pairwiseLevel(OpBuilder &b, Location loc,
                                             Value from, Value to,
                                             OpFoldResult count,
                                             Operation *combiner) {
  auto [half, left] = halves(b, loc, count);
  OpFoldResult zero = b.getIndexAttr(0);
  Value low = extractRows(b, loc, from, zero, half);
  Value high = extractRows(b, loc, from, left, half);
  Value sums = extractRows(b, loc, to, zero, half);
  sums = combineElementwise(b, loc, high, low, sums, combiner);
  to = insertRows(b, loc, sums, to, zero, half);
  // The odd middle row (none where count is even).
  AffineExpr l = b.getAffineDimExpr(0), h = b.getAffineDimExpr(1);
  OpFoldResult odd =
      affine::makeComposedFoldedAffineApply(b, loc, l - h, {left, half});
  if (getConstantIntValue(odd) != 0) {
    Value middle = extractRows(b, loc, from, half, odd);
    to = insertRows(b, loc, middle, to, half, odd);
  }
  return {to, left};
}

/// A new tensor like `p` with `rows` rows.
Value emptyRows(OpBuilder &b, Location loc, Value p, OpFoldResult rows) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, p);
  sizes[0] = rows;
  return tensor::EmptyOp::create(
      b, loc, sizes, cast<RankedTensorType>(p.getType()).getElementType());
}

} // namespace

Value combineInto(OpBuilder &b, Location loc, Value value, Value init,
                  Operation *combiner) {
  return combineElementwise(b, loc, value, init, init, combiner);
}

Value combinePairwise(OpBuilder &b, Location loc, Value partials,
                      OpFoldResult count, Operation *combiner) {
  Value p = partials;
  if (std::optional<int64_t> rows = getConstantIntValue(count)) {
    // A new tensor per level: summed in place, bufferization would copy
    // the halves it cannot tell apart.
    for (int64_t n = *rows; n > 1; n -= n / 2)
      std::tie(p, count) = pairwiseLevel(
          b, loc, p, emptyRows(b, loc, p, halves(b, loc, count).second), count,
          combiner);
  } else {
    // The partials and a scratch tensor take turns, two levels a step (the
    // second copies the total back where one is left), so that the loop
    // carries the same two buffers throughout. (One tensor combined in
    // place, bufferization copied its halves each level; a new tensor a
    // level, it copied the loop's tensor each step.)
    auto type = cast<RankedTensorType>(p.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = ShapedType::kDynamic;
    auto loopType = RankedTensorType::get(shape, type.getElementType());
    if (type != loopType)
      p = tensor::CastOp::create(b, loc, loopType, p);
    Value scratch = emptyRows(b, loc, p, halves(b, loc, count).second);
    if (scratch.getType() != loopType)
      scratch = tensor::CastOp::create(b, loc, loopType, scratch);
    auto loop = scf::WhileOp::create(
        b, loc, TypeRange{loopType, loopType, b.getIndexType()},
        ValueRange{p, scratch, getValueOrCreateConstantIndexOp(b, loc, count)},
        [](OpBuilder &nested, Location loc, ValueRange args) {
          Value one = arith::ConstantIndexOp::create(nested, loc, 1);
          Value more = arith::CmpIOp::create(
              nested, loc, arith::CmpIPredicate::sgt, args[2], one);
          scf::ConditionOp::create(nested, loc, more, args);
        },
        [&](OpBuilder &nested, Location loc, ValueRange args) {
          auto [halved, rows] =
              pairwiseLevel(nested, loc, args[0], args[1], args[2], combiner);
          auto [quartered, left] =
              pairwiseLevel(nested, loc, halved, args[0], rows, combiner);
          scf::YieldOp::create(
              nested, loc,
              ValueRange{quartered, halved,
                         getValueOrCreateConstantIndexOp(nested, loc, left)});
        });
    p = loop.getResult(0);
  }
  Rows first = rowsOf(b, loc, p, b.getIndexAttr(0), b.getIndexAttr(1));
  auto type = cast<RankedTensorType>(p.getType());
  auto resultType = RankedTensorType::get(type.getShape().drop_front(),
                                          type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, resultType, p, first.offsets,
                                        first.sizes, first.strides);
}

Value reduceInto(OpBuilder &b, Location loc, Value partials, Value init,
                 Operation *combiner) {
  int64_t rank = cast<RankedTensorType>(partials.getType()).getRank();
  SmallVector<AffineExpr> outputExprs;
  for (int64_t dim = 1; dim < rank; ++dim)
    outputExprs.push_back(b.getAffineDimExpr(dim));
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, outputExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[0] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(b, loc, init.getType(), partials, init, maps,
                                   iterators, combinerBody(combiner))
      .getResult(0);
}

} // namespace mlir::pk
