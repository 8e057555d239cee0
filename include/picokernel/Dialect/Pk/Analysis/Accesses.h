//===- Accesses.h - which elements each stored array reads ------*- C++ -*-===//
//
// For each ref a kernel stores, which elements of which refs each of its
// elements reads, as affine maps of its indices: what a scheduler that
// splits arrays into blocks (picokernel.dask) needs to know to give each
// block the inputs it reads (pointwise dimensions, halos of stencils,
// dimensions reduced or contracted whole).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_DIALECT_PK_ANALYSIS_ACCESSES_H
#define PICOKERNEL_DIALECT_PK_ANALYSIS_ACCESSES_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace mlir::pk {

/// One index of a read, as a function of the stored array's indices `o`
/// and the indices `r` that reductions and contractions run over.
struct IndexTerm {
  enum class Kind {
    Stored,   ///< stride * o[var] + offset
    Reduced,  ///< stride * r[var] + offset, r[var] over the reduction's range
    Constant, ///< offset (a broadcast dimension of size 1, an integer index)
    Unknown,  ///< depends on o[var] (var >= 0) or on anything (var == -1)
  };
  Kind kind = Kind::Unknown;
  int64_t var = -1;
  int64_t stride = 1;
  int64_t offset = 0;

  bool operator==(const IndexTerm &other) const {
    return kind == other.kind && var == other.var && stride == other.stride &&
           offset == other.offset;
  }
};

/// How the partial results of blocks of a reduction combine.
enum class CombineKind { None, Sum, Max, Min, Mean };

/// A read of the initial contents of argument `ref` (its position in the
/// kernel's parameters), one term per dimension.
struct ReadAccess {
  unsigned ref = 0;
  llvm::SmallVector<IndexTerm> indices;
};

/// A reduction index `r[id]`: what combines its values and how many it
/// takes (a contraction sums).
struct ReductionIndex {
  int64_t id = 0;
  CombineKind kind = CombineKind::Sum;
  int64_t size = 0;
};

/// A part of the range of index `index` (its offset and stride unused)
/// that a slice store (`o[1:-1] = ...`) writes: all but the first `before`
/// and the last `after` of its values, or a part the analysis cannot say
/// (both -1). Elsewhere the array keeps what the store's destination holds.
struct WrittenPart {
  IndexTerm index;
  int64_t before = -1;
  int64_t after = -1;

  bool operator==(const WrittenPart &other) const {
    return index == other.index && before == other.before &&
           after == other.after;
  }
};

/// What the array stored into argument `ref` reads.
struct StoreAccesses {
  unsigned ref = 0;
  std::vector<ReadAccess> reads;
  std::vector<WrittenPart> parts;
  std::vector<ReductionIndex> reductions;
  /// When the stored value is a sum, max, min or mean over `combined` (and
  /// casts that commute with combining), computed last: a block of the
  /// reduced dimensions gives a partial result that combines with the
  /// others by `combine`.
  CombineKind combine = CombineKind::None;
  llvm::SmallVector<int64_t> combined;
};

/// The accesses of each ref `kernel` stores, in the order of its stores.
/// The kernel has static shapes and has been through ForwardStores (each
/// ref loaded before any store and stored at most once); fails with a
/// diagnostic otherwise.
FailureOr<std::vector<StoreAccesses>> analyzeAccesses(KernelOp kernel);

} // namespace mlir::pk

#endif // PICOKERNEL_DIALECT_PK_ANALYSIS_ACCESSES_H
