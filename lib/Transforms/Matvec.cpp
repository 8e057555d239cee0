//===- Matvec.cpp - products pk-vectorize-matvec vectorizes ---------------===//

#include "Matvec.h"

namespace mlir::pk {

std::optional<Matvec> matchMatvec(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  // (Vectors of i1 are bits, where memory holds a byte per boolean: the
  // operands of a boolean product stay scalar.)
  for (Value operand : op->getOperands()) {
    Type element = getElementTypeOrSelf(operand.getType());
    if (!element.isIntOrFloat() || element.isInteger(1))
      return std::nullopt;
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.size() != 1)
    return std::nullopt;
  linalg::ContractionDimensions &found = *dims;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto toBatches = [&](SmallVector<unsigned, 2> &from, auto isBatch) {
    for (unsigned dim : llvm::make_filter_range(from, isBatch))
      found.batch.push_back(dim);
    llvm::erase_if(from, isBatch);
  };
  auto isUnit = [&](unsigned dim) { return ranges[dim] == 1; };
  toBatches(found.m, isUnit);
  toBatches(found.n, isUnit);
  bool matrixLeft = found.n.empty();
  if (!matrixLeft && !found.m.empty())
    return std::nullopt; // a product of matrices
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap matrix = maps[matrixLeft ? 0 : 1];
  AffineMap vector = maps[matrixLeft ? 1 : 0];
  if (!matrix.isProjectedPermutation() || !vector.isProjectedPermutation())
    return std::nullopt;
  // The matrix's dimension `fromEnd` places from its last.
  auto matrixDim = [&](unsigned fromEnd) -> std::optional<unsigned> {
    if (matrix.getNumResults() < fromEnd)
      return std::nullopt;
    return matrix.getDimPosition(matrix.getNumResults() - fromEnd);
  };
  SmallVector<unsigned, 2> &rowsOrColumns = matrixLeft ? found.m : found.n;
  std::optional<unsigned> last = matrixDim(1);
  if (matrixLeft ? last != found.k.front()
                 : !last || !llvm::is_contained(rowsOrColumns, *last))
    return std::nullopt;
  // A @ x's row: its innermost in the matrix.
  std::optional<unsigned> kept = last;
  for (unsigned fromEnd = 2; matrixLeft && fromEnd <= matrix.getNumResults();
       ++fromEnd)
    if (llvm::is_contained(rowsOrColumns, *(kept = matrixDim(fromEnd))))
      break;
  toBatches(rowsOrColumns, [&](unsigned dim) { return dim != *kept; });
  llvm::sort(found.batch);
  return Matvec{found, matrixLeft};
}

} // namespace mlir::pk
