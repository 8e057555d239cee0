//===- Matvec.h - products pk-vectorize-matvec vectorizes -------*- C++ -*-===//
//
// Private to the transforms: which contractions are matrix-vector
// products (either side), dot products or batches of them, and their
// dimensions, as pk-vectorize-matvec tiles them.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_TRANSFORMS_MATVEC_H
#define PICOKERNEL_LIB_TRANSFORMS_MATVEC_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <optional>

namespace mlir::pk {

/// A contraction of a matrix with a vector (either side) or of two vectors
/// (a dot product: no rows), possibly batched: its dimensions, and whether
/// the matrix is on the left.
struct Matvec {
  linalg::ContractionDimensions dims;
  bool matrixLeft;
  bool hasRows() const { return !matrixLeft || !dims.m.empty(); }
  unsigned row() const { return matrixLeft ? dims.m.front() : dims.k.front(); }
  unsigned column() const {
    return matrixLeft ? dims.k.front() : dims.n.front();
  }
};

/// `op` as a matrix-vector product whose matrix rows are contiguous
/// (its last indexing dimension is the matrix's column), if it is one.
/// Rows or columns of one (a product with a K x 1 or 1 x K matrix) and
/// the matrix's rows or columns other than the row (A @ x: the innermost)
/// or column (x @ A: the last) are batches, tiles of one.
std::optional<Matvec> matchMatvec(linalg::LinalgOp op);

} // namespace mlir::pk

#endif // PICOKERNEL_LIB_TRANSFORMS_MATVEC_H
