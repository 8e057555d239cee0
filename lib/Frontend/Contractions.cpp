//===- Contractions.cpp - reductions and matmul of traced values ---------===//

#include "OpBuilders.h"

namespace pk {
namespace detail {

mlir::Value buildReduce(mlir::OpBuilder &builder, ReduceKind kind,
                        const Operand &operand, const Axes &given,
                        bool keepdims) {
  const std::optional<std::vector<int64_t>> &requested = given.get();
  static const char *names[] = {"sum", "max", "min", "mean"};
  std::string op = names[int(kind)];
  Shape shape = shapeOf(operand);
  int64_t rank = int64_t(shape.size());
  std::vector<int64_t> axes;
  if (!requested) {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  } else {
    for (int64_t axis : *requested) {
      // NumPy's sum, max and min of a 0-d array take axis 0 and -1, as
      // an integer (not in a tuple; its mean takes neither).
      if (rank == 0 && (axis == 0 || axis == -1) && given.isInteger() &&
          kind != ReduceKind::Mean)
        continue;
      if (axis < -rank || axis >= rank)
        fail(operand.where(), op,
             "axis " + std::to_string(axis) +
                 " is out of bounds for array of dimension " +
                 std::to_string(rank),
             TraceError::Category::Axis);
      axes.push_back(axis < 0 ? axis + rank : axis);
    }
  }
  for (size_t i = 0; i < axes.size(); ++i)
    if (std::count(axes.begin(), axes.end(), axes[i]) > 1)
      fail(operand.where(), op, "duplicate value in 'axis'");
  std::sort(axes.begin(), axes.end());

  DType dtype = *arrayType(operand);
  DType compute = dtype;
  // NumPy sums bools and signed integers in int64, unsigned ones in uint64,
  // and averages them in float64; it accumulates float16 in float32 (and so
  // does bfloat16 here).
  if (kind == ReduceKind::Sum && !isFloat(dtype))
    compute = isUnsignedInteger(dtype) ? DType::U64 : DType::I64;
  if (kind == ReduceKind::Mean && !isFloat(dtype))
    compute = DType::F64;
  if ((kind == ReduceKind::Sum || kind == ReduceKind::Mean) &&
      (dtype == DType::F16 || dtype == DType::BF16))
    compute = DType::F32;
  DType resultDType = compute == DType::F32 && isFloat(dtype) ? dtype : compute;

  Shape resultShape;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    if (reduced)
      count *= shape[d];
    if (!reduced || keepdims)
      resultShape.push_back(reduced ? 1 : shape[d]);
  }
  if ((kind == ReduceKind::Max || kind == ReduceKind::Min) &&
      llvm::any_of(axes, [&](int64_t d) { return shape[d] == 0; }))
    fail(operand.where(), op,
         std::string("zero-size array to reduction operation ") +
             (kind == ReduceKind::Max ? "maximum" : "minimum") +
             " which has no identity");
  mlir::Location loc = location(builder, operand.where());
  // Nothing to reduce: the value itself, in the result's dtype.
  if (axes.empty())
    return materialize(builder, operand, resultDType, shape, op);

  mlir::Value x = materialize(builder, operand, compute, shape, op);
  auto resultType = tensorType(builder, resultShape, compute);
  mlir::Value result;
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    result = mlir::pk::ReduceSumOp::create(builder, loc, resultType, x, axes,
                                           keepdims);
    break;
  case ReduceKind::Max:
    result = mlir::pk::ReduceMaxOp::create(builder, loc, resultType, x, axes,
                                           keepdims);
    break;
  case ReduceKind::Min:
    result = mlir::pk::ReduceMinOp::create(builder, loc, resultType, x, axes,
                                           keepdims);
    break;
  }
  if (kind == ReduceKind::Mean) {
    auto countAttr = mlir::DenseElementsAttr::get(
        resultType,
        llvm::ArrayRef<mlir::Attribute>(scalarAttr(
            builder, Operand::fromFloat(double(count), operand.where()),
            compute, op)));
    mlir::Value divisor = mlir::pk::ConstantOp::create(builder, loc, countAttr);
    result = mlir::pk::DivOp::create(builder, loc, result, divisor);
  }
  if (compute != resultDType)
    result = mlir::pk::CastOp::create(
        builder, loc, tensorType(builder, resultShape, resultDType), result);
  return result;
}

mlir::Value buildMatmul(mlir::OpBuilder &builder, const Operand &lhs,
                        const Operand &rhs) {
  const std::string op = "matmul";
  for (const Operand *operand : {&lhs, &rhs})
    if (!arrayType(*operand) || shapeOf(*operand).empty())
      fail(operand->where(), op,
           "operands must be arrays of at least one dimension (NumPy's @ "
           "rejects scalars with a ValueError; use * to scale)",
           TraceError::Category::Value);
  Shape lhsShape = shapeOf(lhs), rhsShape = shapeOf(rhs);
  size_t lhsRank = lhsShape.size(), rhsRank = rhsShape.size();
  int64_t lhsK = lhsShape.back();
  int64_t rhsK = rhsShape[rhsRank == 1 ? 0 : rhsRank - 2];
  if (lhsK != rhsK)
    fail(lhs.where(), op,
         "shapes " + formatShape(lhsShape) + " @ " + formatShape(rhsShape) +
             " do not align: the contracted dimensions are " +
             std::to_string(lhsK) + " and " + std::to_string(rhsK));

  // Batch dimensions broadcast against each other, explicitly.
  Shape lhsTarget = lhsShape, rhsTarget = rhsShape;
  Shape batch;
  if (lhsRank >= 2 && rhsRank >= 2) {
    Shape lhsBatch(lhsShape.begin(), lhsShape.end() - 2);
    Shape rhsBatch(rhsShape.begin(), rhsShape.end() - 2);
    std::optional<Shape> common = broadcastShapes(lhsBatch, rhsBatch);
    if (!common)
      fail(lhs.where(), op,
           "batch dimensions " + formatShape(lhsBatch) + " and " +
               formatShape(rhsBatch) + " of shapes " + formatShape(lhsShape) +
               " @ " + formatShape(rhsShape) + " cannot be broadcast together");
    batch = *common;
    lhsTarget = batch;
    lhsTarget.insert(lhsTarget.end(), lhsShape.end() - 2, lhsShape.end());
    rhsTarget = batch;
    rhsTarget.insert(rhsTarget.end(), rhsShape.end() - 2, rhsShape.end());
  } else if (lhsRank >= 2) {
    batch.assign(lhsShape.begin(), lhsShape.end() - 2);
  } else if (rhsRank >= 2) {
    batch.assign(rhsShape.begin(), rhsShape.end() - 2);
  }
  Shape result = batch;
  if (lhsRank >= 2)
    result.push_back(lhsShape[lhsRank - 2]);
  if (rhsRank >= 2)
    result.push_back(rhsShape.back());

  DType dtype = resultType(lhs, rhs);
  // ml_dtypes gives bfloat16 no matmul loop: NumPy computes bfloat16 @ in
  // float32 and returns float32.
  if (dtype == DType::BF16)
    dtype = DType::F32;
  // NumPy's bool @ bool is "any(a and b)": sums of products of 0.0 and 1.0
  // in float32 (vector FMAs), tested nonzero. Exact: a sum of non-negative
  // floats is at least each of its terms, however it is rounded or
  // ordered, so it is nonzero where one product is. float16 products
  // accumulate in float32, rounded once (NumPy's half-precision dot).
  DType computeType = dtype == DType::Bool                          ? DType::F32
                      : dtype == DType::F16 || dtype == DType::BF16 ? DType::F32
                                                                    : dtype;
  mlir::Location loc = location(builder, lhs.where());
  mlir::Value l = materialize(builder, lhs, computeType, lhsTarget, op);
  mlir::Value r = materialize(builder, rhs, computeType, rhsTarget, op);
  mlir::Value product = mlir::pk::MatmulOp::create(
      builder, loc, tensorType(builder, result, computeType), l, r);
  if (computeType != dtype)
    product = mlir::pk::CastOp::create(
        builder, loc, tensorType(builder, result, dtype), product);
  return product;
}

} // namespace detail
} // namespace pk
